#!/usr/bin/env bash
# The sixth session's GPU checks, one phase per device call (each under 10 minutes), every
# result in one log per phase under $OUT (a device call brings back only a few files):
#   PHASE=A  the 2.5 GiB-output data path (scripts/gpu_datapath.py) and the red-team cases that
#            the protocol changes touch (scripts/gpu_cases.py)
#   PHASE=B  the conformance set's CUDA rows (scripts/gpu_conformance.py)
#   PHASE=C  the honest CUDA relu in REPEATS separate `harness eval` runs (stops at C_S seconds)
#   PHASE=D  the conformance set's Triton rows, then phase C in the time left
set -u
OUT=${OUT:-gpu-session6-out}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1; START=$(date +%s)
compact() {  # one line per gpu_cases.py verdict, without the raw samples
  python3 -c '
import json, sys
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    d = json.loads(line); t = d.get("tail_us") or {}; g = d.get("gap_us") or {}
    print(d["case"], "OK" if d["ok"] else "MISMATCH", d["status"], d["rule"], "median", d["median_us"],
          "tail excess/thr", t.get("excess"), t.get("threshold"), "parent excess/thr", g.get("excess"), g.get("threshold"),
          "wall", d["wall_s"], (d.get("message") or "")[:160] if not d["ok"] else "")' "$1"
}
case "${PHASE:-A}" in
A)
  timeout 150 python3 scripts/gpu_warm.py honest_cuda_relu > "$OUT/A-warm.log" 2>&1; tail -2 "$OUT/A-warm.log"
  if [ -z "${SKIP_DATAPATH:-}" ]; then
    timeout 240 python3 scripts/gpu_datapath.py > "$OUT/A-datapath.log" 2>&1; echo "datapath exit $?"; tail -8 "$OUT/A-datapath.log"
  fi
  timeout ${CASES_S:-300} python3 scripts/gpu_cases.py ${CASES:-honest_cuda_relu honest_triton_relu gpu_probe_34b_tail_below_floor \
    gpu_cheat_34_hidden_tail gpu_cheat_35_autotune_every_call gpu_cheat_04b_side_stream_lead gpu_cheat_33_gpu_hang \
    gpu_cheat_01_stale_memory honest_cuda_matmul} > "$OUT/A-cases.log" 2>&1
  echo "cases exit $?"; compact "$OUT/A-cases.log"; grep -v '^{' "$OUT/A-cases.log" | tail -5
  ;;
B)
  for only in ${ONLY:-cuda_inline triton}; do
    timeout ${B_S:-280} python3 scripts/gpu_conformance.py --only "$only" > "$OUT/B-$only.log" 2>&1
    echo "conformance $only exit $?"; grep -v '^{' "$OUT/B-$only.log" | tail -25
  done
  ;;
C|D)
  if [ "${PHASE}" = D ]; then  # the conformance set's Triton rows while the relu's extension builds
    timeout 150 python3 scripts/gpu_warm.py honest_cuda_relu > "$OUT/C-warm.log" 2>&1 &
    WARM_PID=$!
    timeout ${D_S:-250} python3 scripts/gpu_conformance.py --only triton > "$OUT/B-triton.log" 2>&1
    echo "conformance triton exit $?"; grep -v '^{' "$OUT/B-triton.log" | tail -16
    wait $WARM_PID
  else
    timeout 100 python3 scripts/gpu_warm.py honest_cuda_relu > "$OUT/C-warm.log" 2>&1
  fi
  END=$(( START + ${C_S:-560} ))
  for i in $(seq 1 "${REPEATS:-20}"); do
    if [ $(( $(date +%s) + 35 )) -gt $END ]; then echo "stopped before run $i: time"; break; fi
    timeout 60 python3 -m harness eval tests/adversarial/tasks/relu.py tests/adversarial/candidates/honest_cuda_relu.py \
      --device cuda --mode final --max-timing-s "${TIMING_S:-2}" --json > "$OUT/C-relu.json" 2> "$OUT/C-relu.err"
    python3 - "$OUT/C-relu.json" "$i" <<'PY' | tee -a "$OUT/C-summary.txt"
import json, sys
try:
    v = json.load(open(sys.argv[1]))
except Exception as e:
    print("run", sys.argv[2], "no verdict", e); sys.exit()
m = v.get("timings", {}).get("candidate") or {}; e = v.get("evidence", {})
t = e.get("tail_us") or {}; g = e.get("gap_us") or {}
print("run", sys.argv[2], v["status"], v.get("rule"), "median", m.get("median_us"), "CI", m.get("ci_low_us"), m.get("ci_high_us"),
      "tail excess", t.get("excess"), "parent excess", g.get("excess"), "total_s", v["durations_s"].get("total"))
PY
  done
  ;;
esac
