"""Reference ops of category 'softmax' (one KernelBench-format file per op)."""
