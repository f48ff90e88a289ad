#!/usr/bin/env bash
# One device call (< 10 min) for the end-of-session GPU evidence: the GPU red-team cases not yet
# covered, an offline EvoEngineer run with CUDA candidates on 3 ops (in the background, it is
# mostly nvcc time), and the same honest kernel judged in two separate sessions.
set -u
OUT=${OUT:-gpu-final-out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
( timeout 540 python3 -m harness run --method evoengineer --llm offline --ops relu,softmax,matmul_square \
    --device cuda --budget 3 --seed 0 --results "$OUT/results" --run-id gpu-evoengineer > "$OUT/run.log" 2>&1
  echo "RUN_EXIT $?" >> "$OUT/run.log" ) &
timeout 400 python3 -m pytest -v -rA -p no:cacheprovider --durations=20 \
  "tests/adversarial/test_redteam_gpu.py" -k "honest or device_independent" \
  "tests/evaluator/test_gpu.py::test_side_stream_kernel_is_rejected" > "$OUT/redteam.log" 2>&1
echo "PYTEST_EXIT $?" >> "$OUT/redteam.log"
for i in 1 2; do
  timeout 50 python3 -m harness eval tests/adversarial/tasks/relu.py tests/adversarial/candidates/honest_cuda_relu.py \
    --device cuda --mode feedback --json > "$OUT/repeat$i.json" 2> "$OUT/repeat$i.err"
done
wait
grep -E "PASSED|FAILED|ERROR|XFAIL|passed|failed|PYTEST_EXIT" "$OUT/redteam.log" | tail -25
tail -20 "$OUT/run.log"
python3 - "$OUT" <<'PY'
import json, sys, pathlib
for i in (1, 2):
    p = pathlib.Path(sys.argv[1]) / f"repeat{i}.json"
    try:
        v = json.loads(p.read_text()); m = v["timings"]["candidate"]
        print(f"repeat{i}: {v['status']} median {m['median_us']:.1f} us CI [{m['ci_low_us']:.1f}, {m['ci_high_us']:.1f}] n={m['n']}")
    except Exception as e:
        print(f"repeat{i}: no verdict ({e})")
PY
