"""Reference ops of category 'convolution' (one KernelBench-format file per op)."""
