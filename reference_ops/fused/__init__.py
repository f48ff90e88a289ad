"""Reference ops of category 'fused' (one KernelBench-format file per op)."""
