#!/usr/bin/env bash
# The repeat check of issue #3 (one device call, about 4 min): the same honest kernel judged in
# separate `harness eval` sessions, with the timing lead (sandbox/timing/measure.py) and, as a control,
# without it (KH_TIMING_LEAD_US=0: the start event then also measures how late the host
# launched). GPU clocks are logged before and after every session. The side-stream cheats that
# the lead concerns are judged first. Outputs under $OUT; the summary is printed last.
set -u
OUT=${OUT:-gpu-repeat-out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
clocks() { nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw,clocks_throttle_reasons.active \
  --format=csv,noheader 2>&1 | sed "s/^/$1 /" >> "$OUT/clocks.txt"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import sys, torch; print(sys.version.split()[0], torch.__version__, torch.version.cuda)"; nproc; } > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
if [ -z "${SKIP_WARM:-}" ]; then timeout 150 python3 harness/bench/tools/gpu_warm.py honest_cuda_relu 2>&1 | tail -3; fi
if [ -z "${SKIP_CHEATS:-}" ]; then
  timeout ${CHEATS_S:-200} python3 -m pytest -q -rA -p no:cacheprovider tests/adversarial/test_redteam_gpu.py \
    -k "side_stream or honest_cuda_relu" > "$OUT/side_stream.log" 2>&1
  echo "PYTEST_EXIT $?" >> "$OUT/side_stream.log"
  grep -E "PASSED|FAILED|ERROR|passed|failed|PYTEST_EXIT" "$OUT/side_stream.log" | tail -8
fi
run() {  # name [VAR=value ...]
  local name=$1; shift
  clocks "before-$name"
  env "$@" timeout 90 python3 -m harness eval tests/adversarial/tasks/relu.py \
    tests/adversarial/candidates/honest_cuda_relu.py --device cuda --mode final --max-timing-s 3 --json \
    > "$OUT/$name.json" 2> "$OUT/$name.err"
  clocks "after-$name"
}
for i in $(seq 1 "${REPEATS:-2}"); do run "lead$i"; done
[ -z "${NO_CONTROL:-}" ] && run "nolead" KH_TIMING_LEAD_US=0
cat "$OUT/clocks.txt"
python3 harness/bench/tools/repeat_summary.py "$OUT"/lead*.json "$OUT"/nolead.json
