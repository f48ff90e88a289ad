"""Reference ops of category 'activation' (one KernelBench-format file per op)."""
