#!/usr/bin/env bash
# One device call (< 10 min): the whole GPU red team (5 cheats + 7 honest CUDA/Triton kernels
# + the device-independent cheats), then the same honest kernel judged in two separate sessions.
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
for i in $(seq 1 "${REPEATS:-2}"); do
  timeout 70 python3 -m harness eval tests/adversarial/tasks/relu.py tests/adversarial/candidates/honest_cuda_relu.py \
    --device cuda --mode final --max-timing-s 3 --json > "$OUT/repeat$i.json" 2> "$OUT/repeat$i.err"
done
grep -E "PASSED|FAILED|ERROR|XFAIL|XPASS|passed|failed|PYTEST_EXIT|s call" "$OUT/redteam.log" | tail -45
python3 - "$OUT" <<'PY'
import json, sys, pathlib
for i in (1, 2):
    p = pathlib.Path(sys.argv[1]) / f"repeat{i}.json"
    try:
        v = json.loads(p.read_text()); m = v["timings"]["candidate"]
        print(f"repeat{i}: {v['status']} median {m['median_us']:.2f} us CI [{m['ci_low_us']:.2f}, {m['ci_high_us']:.2f}] n={m['n']}")
    except Exception as e:
        print(f"repeat{i}: no verdict ({e})")
PY
