#!/usr/bin/env bash
# One device call (< 10 min): the whole GPU red team (5 cheats + 7 honest CUDA/Triton kernels
# + the device-independent cheats), then the repeat check of scripts/gpu_repeat.sh.
# CUDA extensions are built first, in parallel, into the evaluator's build cache
# (scripts/gpu_warm.py), so the tests' time goes to judging. Outputs under $OUT.
set -u
OUT=${OUT:-gpu-redteam-out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import sys, torch; print(sys.version.split()[0], torch.__version__, torch.version.cuda)"; nproc; } > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
timeout 150 python3 scripts/gpu_warm.py --all-cuda --jobs 10 2>&1 | tee "$OUT/warm.log"
timeout ${REDTEAM_S:-280} python3 -m pytest -v -rA -p no:cacheprovider --durations=30 \
  tests/adversarial/test_redteam_gpu.py > "$OUT/redteam.log" 2>&1
echo "PYTEST_EXIT $?" >> "$OUT/redteam.log"
grep -E "PASSED|FAILED|ERROR|XFAIL|XPASS|passed|failed|PYTEST_EXIT|s call" "$OUT/redteam.log" | tail -45
# the repeat check (scripts/gpu_repeat.sh: same kernel, separate sessions, lead and control)
SKIP_WARM=1 SKIP_CHEATS=1 OUT="$OUT/repeat" bash scripts/gpu_repeat.sh
