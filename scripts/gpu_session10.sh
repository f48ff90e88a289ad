#!/usr/bin/env bash
# The tenth session's GPU checks (issue 16; one device call, under 10 minutes, fresh machine).
#   P  the compile baseline's first call on the GPU under cProfile (scripts/gpu_compile_first.py),
#      twice on one inductor cache: cold, then warm (what every judgement after an op's first sees)
#   then scripts/gpu_session9.sh's parts with the defaults of this session (baseline book off):
#   R  the honest CUDA relu's GPU-held time, RUNS judgements in one process
#   B  the conformance set's CUDA rows through `harness eval-batch` (then T: verdicts in one tar, the trees removed)
# Summary in $OUT/summary.txt (part P in $OUT/compile-first-*.txt).
set -u; export START0=$(date +%s)
OUT=${OUT:-gpu-session10-out}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
export HARNESS_CACHE=${HARNESS_CACHE:-$(mktemp -d /var/tmp/kh-s10-XXXX)}
if [[ " ${PARTS10:-P R B T} " == *" P "* ]]; then
  ind=$(mktemp -d /var/tmp/kh-s10-ind-XXXX)
  for run in cold warm; do
    TORCHINDUCTOR_CACHE_DIR=$ind timeout 200 python3 scripts/gpu_compile_first.py > "$OUT/compile-first-$run.txt" 2>&1
    echo "compile-first $run exit $?: $(head -1 "$OUT/compile-first-$run.txt")" >> "$OUT/part-p.txt"
  done
fi
rest=$(echo " ${PARTS10:-P R B T} " | sed 's/ P / /g')
SUM10="$OUT/part-p.txt"
HELD_ARGS="" PARTS="$rest" OUT="$OUT" bash scripts/gpu_session9.sh
[ -f "$SUM10" ] && cat "$SUM10" | tee -a "$OUT/summary.txt"
