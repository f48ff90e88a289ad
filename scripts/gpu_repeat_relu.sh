#!/usr/bin/env bash
# The honest CUDA relu judged in N separate `harness eval` runs (final mode), one line each:
# status, rule, candidate median and CI, the wall-clock check's gaps (sandbox/wallclock.py). Then the failing GPU red-team cases.
set -u
OUT=${OUT:-gpu-repeat-relu-out}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
timeout 120 python3 scripts/gpu_warm.py ${WARM:-honest_cuda_relu honest_triton_relu honest_triton_softmax} > "$OUT/warm.log" 2>&1
for i in $(seq 1 "${REPEATS:-8}"); do
  timeout 90 python3 -m harness eval tests/adversarial/tasks/relu.py tests/adversarial/candidates/honest_cuda_relu.py \
    --device cuda --mode final --max-timing-s 3 --json > "$OUT/relu$i.json" 2> "$OUT/relu$i.err"
  python3 - "$OUT/relu$i.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1])); m = v.get("timings", {}).get("candidate", {}); g = v.get("evidence", {}).get("gap_us", {}); tl = v.get("evidence", {}).get("tail_us", {})
print(sys.argv[1].rsplit("/", 1)[-1], v["status"], v.get("rule"), "median", m.get("median_us"), "CI", m.get("ci_low_us"), m.get("ci_high_us"),
      "parent gap cand/control", g.get("candidate"), g.get("control"), "excess", g.get("excess"), "thr", g.get("threshold"),
      "tail cand/control", tl.get("candidate"), tl.get("control"), "excess", tl.get("excess"), "thr", tl.get("threshold"),
      "total_s", v["durations_s"].get("total"))
PY
done
timeout ${REDTEAM_S:-240} python3 -m pytest -q -rA -p no:cacheprovider --timeout 150 tests/adversarial/test_redteam_gpu.py \
  -k "${K:-04b or triton or isolation_attack_is_contained_on_gpu or host_socket}" > "$OUT/redteam.log" 2>&1
echo "PYTEST_EXIT $?" >> "$OUT/redteam.log"; grep -E "PASSED|FAILED|passed|failed|PYTEST_EXIT" "$OUT/redteam.log" | tail -16
grep -E "^E  .*status=" "$OUT/redteam.log" | cut -c1-300 | head -8
