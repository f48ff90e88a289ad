"""Stage 5, timing: the timing protocol (EVAL_RULES T1-T7) against both workers, its wall-clock
cross-checks and control callable, the statistics, baselines kept per op, and speed of light."""
