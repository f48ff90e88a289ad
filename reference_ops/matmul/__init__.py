"""Reference ops of category 'matmul' (one KernelBench-format file per op)."""
