"""Reference ops of category 'loss' (one KernelBench-format file per op)."""
