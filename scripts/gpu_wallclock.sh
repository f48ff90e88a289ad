#!/usr/bin/env bash
# The parent-clock cross-check on the GPU (sandbox/wallclock.py): the honest CUDA relu judged in
# REPEATS separate `harness eval` runs (gaps printed), then the kernels that hide work just above
# and just below the floor, the other timing cheats and an honest Triton kernel (scripts/gpu_cases.py).
set -u
OUT=${OUT:-gpu-wallclock-out}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
REDTEAM_S=1 REPEATS=${REPEATS:-6} OUT=$OUT bash scripts/gpu_repeat_relu.sh 2>&1 | grep -v PYTEST_EXIT
timeout ${CASES_S:-300} python3 scripts/gpu_cases.py ${CASES:-gpu_cheat_34_hidden_tail gpu_probe_34b_tail_below_floor \
  honest_triton_relu gpu_cheat_04_side_stream gpu_cheat_05_thread_launch gpu_cheat_07_event_patch} 2>&1 | tee "$OUT/cases.log" \
  | grep -v "^\s*$" | tail -20
