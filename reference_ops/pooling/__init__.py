"""Reference ops of category 'pooling' (one KernelBench-format file per op)."""
