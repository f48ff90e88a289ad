#!/usr/bin/env bash
# The eleventh session's check on one GPU (issue 16; one device call, under 10 minutes, fresh machine).
#   two  scripts/gpu_two.sh's parts E W 1 C: the conformance set's CUDA rows and probe #38 once (W),
#        then twice more as copies (1): judged per minute, GPU-held, one verdict per kernel in every
#        run and copy; the Triton rows through the judging worker's overlay cache (autotune results
#        of the warm-apart worker reused), the copies' arenas presized from the op's first judgement
#   K    red-team cases one at a time on --device=cuda:0 (the worker's one-GPU view with an index):
#        probe #38, cheat #35 (a new autotune key every call: still a timeout, not a cache write
#        error), the honest Triton softmax
# Summary in $OUT/summary.txt; each batch run in $OUT/<run>.tgz; cases in $OUT/cases.jsonl.
set -u
OUT=${OUT:-gpu-session11-out}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
export PATH=/opt/torch/.venv/bin:$PATH
START=$(date +%s)
PARTS=${TWO_PARTS:-E W 1 C} BUDGET=${TWO_BUDGET:-420} OUT="$OUT" bash scripts/gpu_two.sh > /dev/null 2>&1
left=$(( START + 570 - $(date +%s) ))
if [ "$left" -gt 60 ]; then
  timeout "$left" python3 scripts/gpu_cases.py --device=cuda:0 ${CASES:-gpu_probe_38_one_gpu gpu_cheat_35_autotune_every_call honest_triton_softmax} \
    > "$OUT/cases.jsonl" 2> "$OUT/cases.err"
  echo "cases exit $? after $(( $(date +%s) - START )) s" >> "$OUT/summary.txt"
  tail -c 3000 "$OUT/cases.err" > "$OUT/cases.err.tail"; rm -f "$OUT/cases.err"
else
  echo "cases: no time left ($left s)" >> "$OUT/summary.txt"
fi
cat "$OUT/summary.txt" "$OUT/cases.jsonl" 2>/dev/null
