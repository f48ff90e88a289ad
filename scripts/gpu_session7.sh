#!/usr/bin/env bash
# The seventh session's GPU checks: the whole GPU red team on the final evaluator, split over
# device calls of under 10 minutes (each starts on a fresh machine: its CUDA candidates are built
# first, in parallel, scripts/gpu_warm.py), then the honest CUDA relu in separate runs.
#   PART=A  the GPU cheats (test_gpu_cheat_is_caught_with_its_rule), after a smoke judgement of the
#           honest CUDA relu that shows the build order CUDA judgements get (sandbox/buildphase.py);
#           if that is not "sealed" and valid, the rest of every part runs with KH_BUILD_APART=cpu
#   PART=B  the honest GPU kernels and the device-independent cheats
#   PART=C  the isolation rows on the GPU, then the relu repeats in the time left
#   PART=D  NODES (pytest node ids) then the relu repeats
#   PART=R  the relu repeats only (REPEATS runs, stops at R_S seconds after the start)
# One summary file per part under $OUT ($OUT/<part>-summary.txt); the full pytest log beside it.
set -u
OUT=${OUT:-gpu-session7-out}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1; START=$(date +%s)
PART=${PART:-A}; SUM="$OUT/$PART-summary.txt"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import sys, torch; print(sys.version.split()[0], torch.__version__, torch.version.cuda)"
  git log --oneline -1 2>/dev/null; } > "$SUM" 2>&1

verdict_line() {  # one line per harness-eval verdict
  python3 - "$1" "$2" <<'PY'
import json, sys
try:
    v = json.load(open(sys.argv[1]))
except Exception as e:
    print(sys.argv[2], "no verdict", e); sys.exit()
m = v.get("timings", {}).get("candidate") or {}; e = v.get("evidence", {})
t = e.get("tail_us") or {}; g = e.get("gap_us") or {}; ba = e.get("build_apart") or {}
print(sys.argv[2], v["status"], v.get("rule"), "median", m.get("median_us"), "CI", m.get("ci_low_us"), m.get("ci_high_us"),
      "tail", t.get("excess"), "parent", g.get("excess"), "check_bg", e.get("check_bg_us"), "frozen", e.get("frozen_checks"),
      "order", ba.get("order"), "total_s", v["durations_s"].get("total"), (v.get("message") or "")[:200] if v["status"] != "valid" else "")
PY
}
relu() {  # $1 = label
  timeout 90 python3 -m harness eval tests/adversarial/tasks/relu.py tests/adversarial/candidates/honest_cuda_relu.py \
    --device cuda --mode final --max-timing-s "${TIMING_S:-2}" --json > "$OUT/relu.json" 2> "$OUT/relu.err"
  verdict_line "$OUT/relu.json" "$1" | tee -a "$SUM"
}
redteam() {  # $1 = -k expression, $2 = seconds
  timeout "$2" python3 -m pytest -v -rA -p no:cacheprovider --durations=40 tests/adversarial/test_redteam_gpu.py \
    -k "$1" > "$OUT/$PART-redteam.log" 2>&1
  echo "PYTEST_EXIT $?" >> "$OUT/$PART-redteam.log"
  grep -E "PASSED|FAILED|ERROR|XFAIL|XPASS|passed|failed|PYTEST_EXIT|s call|^E " "$OUT/$PART-redteam.log" \
    | grep -v "^tests.*PASSED$" | tail -80 >> "$SUM"
  grep -cE "PASSED" "$OUT/$PART-redteam.log" | sed 's/^/passed lines: /' >> "$SUM"
}
warm() { timeout "${WARM_S:-200}" python3 scripts/gpu_warm.py --jobs 12 "$@" >> "$SUM" 2>&1; }

case "$PART" in
A)
  warm honest_cuda_relu gpu_cheat_01_stale_memory gpu_cheat_02_torch_matmul gpu_cheat_04_side_stream \
    gpu_cheat_04b_side_stream_lead gpu_cheat_05_thread_launch gpu_cheat_07_event_patch gpu_cheat_33_gpu_hang \
    gpu_cheat_34_hidden_tail gpu_cheat_36_out_rewrite
  relu smoke
  if ! grep -q "^smoke valid .*order sealed" "$SUM"; then
    echo "smoke: not sealed+valid: the rest runs with KH_BUILD_APART=cpu" | tee -a "$SUM"; export KH_BUILD_APART=cpu
  fi
  redteam "test_gpu_cheat_is_caught" $(( START + 585 - $(date +%s) ))
  ;;
B)
  warm honest_cuda_relu honest_cuda_sum honest_cuda_matmul honest_cuda_conv2d honest_cuda_gemm_bias_relu gpu_probe_34b_tail_below_floor
  redteam "honest or device_independent" $(( START + 585 - $(date +%s) ))
  ;;
C)
  warm honest_cuda_relu
  redteam "isolation or host_socket" ${C_S:-260}
  for i in $(seq 1 "${REPEATS:-20}"); do
    [ $(( $(date +%s) + 35 )) -gt $(( START + 580 )) ] && { echo "stopped before run $i: time" >> "$SUM"; break; }
    relu "run $i"
  done
  ;;
D)  # NODES: pytest node ids of test_redteam_gpu.py (what an earlier part left), then the relu repeats
  warm honest_cuda_relu ${WARM_EXTRA:-}
  timeout ${D_S:-200} python3 -m pytest -v -rA -p no:cacheprovider --durations=20 $NODES > "$OUT/D-redteam.log" 2>&1
  echo "PYTEST_EXIT $?" >> "$OUT/D-redteam.log"
  grep -E "PASSED|FAILED|ERROR|passed|failed|PYTEST_EXIT|^E .*status=" "$OUT/D-redteam.log" | grep -v "^tests.*PASSED$" | tail -30 >> "$SUM"
  for i in $(seq 1 "${REPEATS:-20}"); do
    [ $(( $(date +%s) + 35 )) -gt $(( START + ${R_S:-580} )) ] && { echo "stopped before run $i: time" >> "$SUM"; break; }
    relu "run $i"
  done
  ;;
R)
  warm honest_cuda_relu
  for i in $(seq 1 "${REPEATS:-20}"); do
    [ $(( $(date +%s) + 30 )) -gt $(( START + ${R_S:-585} )) ] && { echo "stopped before run $i: time" >> "$SUM"; break; }
    relu "run $i"
  done
  ;;
esac
echo "part $PART done in $(( $(date +%s) - START )) s" >> "$SUM"
cat "$SUM"
