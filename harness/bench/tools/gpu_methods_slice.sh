#!/usr/bin/env bash
# Issue 30, item 5: a researcher's run with the OFFLINE model: every method on a 10-op slice of
# the suite, SEEDS seeds each, at one equal budget, then the leaderboard built from it.
# It shows the plumbing and the statistics; the offline model's kernels say nothing about the
# methods (docs/records/methods-gpu-slice.md says so).
#
#   bash harness/bench/tools/gpu_methods_slice.sh                  # on the GPU: --device cuda, all 3 seeds
#   SEEDS="0" bash harness/bench/tools/gpu_methods_slice.sh        # one seed per call (then SKIP_RUNS=1 to build)
#   DEVICE=cpu OPS=relu,softmax bash harness/bench/tools/gpu_methods_slice.sh   # the CPU stand-in
#
# Knobs: OUT (copied back), RES (the store), DEVICE, SEEDS, BUDGET (per op, every method; one-shot
# takes 1), OPS, METHODS, JOBS (ops in parallel per run), PAR (runs in parallel, across seeds too),
# CW (compile workers per run), FINAL_SESSIONS (judging sessions of each op's final kernel; empty:
# the CLI's default, 3 on cuda), DEADLINE_S (no run is started after it; the summary says which
# are left: run again with the same OUT, finished ops are kept), SKIP_RUNS=1 (only build), PACK=1
# (logs, store and site packed into OUT/slice.tgz: a device call brings few files back). Eval
# options keep judgements short: small shapes, short timing, the eager baseline only.
# RESUME_FROM=DIR: a store from an earlier call (unpacked from its slice.tgz into a folder that a
# device call carries, e.g. .gpu-carry/slice-results with carry [".gpu-carry"]) is copied into RES
# first: the same run ids then resume, their finished ops kept (a device call starts with $OUT empty).
set -u
OUT=${OUT:-gpu-methods-slice-out}; mkdir -p "$OUT"
RES=${RES:-$OUT/results}
DEVICE=${DEVICE:-cuda}
SEEDS=${SEEDS:-"0 1 2"}
BUDGET=${BUDGET:-2}
OPS=${OPS:-relu,leaky_relu,sigmoid,tanh,gelu,softmax,layer_norm,sum_dim,matmul_square,gemm_bias_relu}
METHODS=${METHODS:-"evoengineer-free evoengineer-insight evoengineer-full funsearch eoh ai-cuda-engineer best-of-n one-shot"}
JOBS=${JOBS:-4}
PAR=${PAR:-4}
CW=${CW:-4}
DEADLINE_S=${DEADLINE_S:-400}
FINAL_SESSIONS=${FINAL_SESSIONS:-}
FS=(); [ -z "$FINAL_SESSIONS" ] || FS=(--final-sessions "$FINAL_SESSIONS")
LOGS="$OUT/logs"; mkdir -p "$LOGS"
if [ -n "${RESUME_FROM:-}" ]; then mkdir -p "$RES" && cp -r "$RESUME_FROM"/. "$RES"/; fi
EVAL=(--eval-option profile=small --eval-option max_timing_s=0.2 --eval-option correctness_trials=2
      --eval-option baselines=eager)
export PYTHONUNBUFFERED=1
t0=$(date +%s)
python3 -m harness doctor 2>&1 | head -8 > "$LOGS/doctor.txt"

one_run() {  # method seed cap_s: at the cap, SIGUSR1 (every thread's stack into the log), then SIGTERM
  local m=$1 s=$2 id="slice-$1-s$2" t=$(date +%s) pid w rc
  KH_DUMP_STACKS=1 python3 -m harness run --method "$m" --llm offline --ops "$OPS" --device "$DEVICE" \
    --budget "$BUDGET" --seed "$s" --executor local --jobs "$JOBS" --compile-workers "$CW" --results "$RES" --run-id "$id" \
    "${FS[@]}" "${EVAL[@]}" > "$LOGS/$id.log" 2>&1 &
  pid=$!
  ( sleep "$3"; kill -USR1 "$pid" 2>/dev/null; sleep 2; kill -TERM "$pid" 2>/dev/null ) &
  w=$!
  wait "$pid"; rc=$?
  kill "$w" 2>/dev/null
  echo "$id exit=$rc wall_s=$(( $(date +%s) - t ))" >> "$OUT/runs.txt"
}

if [ "${SKIP_RUNS:-0}" != 1 ]; then
  left="" n=0
  for s in $SEEDS; do
    for m in $METHODS; do
      el=$(( $(date +%s) - t0 ))
      if [ "$el" -ge "$DEADLINE_S" ]; then left="$left $m/s$s"; continue; fi
      one_run "$m" "$s" $(( DEADLINE_S + 60 - el )) &  # a started run may go a minute past the deadline
      n=$((n + 1))
      if [ $((n % PAR)) = 0 ]; then wait; fi
    done
  done
  wait
  [ -z "$left" ] || echo "RUNS NOT STARTED:$left (run again with the same OUT)"
fi
cat "$OUT/runs.txt" 2>/dev/null
python3 -m harness leaderboard build --results "$RES" --out "$OUT/site" > "$OUT/build.log" 2>&1
echo "leaderboard build exit=$? ($(ls "$OUT/site" 2>/dev/null | wc -l) files)"
python3 harness/bench/tools/methods_slice_summary.py "$RES" > "$OUT/summary.txt" 2>&1
echo "total wall_s=$(( $(date +%s) - t0 ))"
cat "$OUT/summary.txt"
if [ "${PACK:-0}" = 1 ]; then
  tar czf "$OUT/slice.tgz" -C "$OUT" logs site "${RES#"$OUT"/}" 2>/dev/null && rm -rf "$LOGS" "$OUT/site" "$RES"
fi
