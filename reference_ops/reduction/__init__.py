"""Reference ops of category 'reduction' (one KernelBench-format file per op)."""
