#!/usr/bin/env bash
# One device call (< 10 min): does the jail (sandbox/isolation/jail.py) hold and let CUDA work on
# the lent GPU machine (root, no system bubblewrap)? Environment and `harness doctor` (each
# isolation layer as a started jail saw it), a CUDA + Triton smoke test inside a jail, the CUDA
# extensions warmed into the build cache's shared tier, then the whole GPU red team (cheats,
# honest CUDA/Triton kernels, and the native isolation attacks). Outputs under $OUT.
set -u
OUT=${OUT:-gpu-isolation-out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
{ date -u; id; uname -r; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import sys, torch; print(sys.executable, sys.version.split()[0], torch.__version__, torch.version.cuda)"; nproc; } > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
timeout 120 python3 -m harness doctor > "$OUT/doctor.txt" 2>&1; grep -E "isolation|gpu|nvcc|triton" "$OUT/doctor.txt"
timeout 120 python3 scripts/jail_smoke.py > "$OUT/jail_smoke.txt" 2>&1; echo "jail_smoke exit $?"; tail -12 "$OUT/jail_smoke.txt"
timeout 150 python3 scripts/gpu_warm.py --all-cuda --jobs 10 > "$OUT/warm.log" 2>&1; tail -3 "$OUT/warm.log"
timeout ${REDTEAM_S:-300} python3 -m pytest -v -rA -p no:cacheprovider --durations=25 --timeout 200 \
  tests/adversarial/test_redteam_gpu.py > "$OUT/redteam.log" 2>&1
echo "PYTEST_EXIT $?" >> "$OUT/redteam.log"
grep -E "PASSED|FAILED|ERROR|XFAIL|XPASS|passed|failed|PYTEST_EXIT" "$OUT/redteam.log" | tail -40
