"""Reference ops of category 'normalization' (one KernelBench-format file per op)."""
