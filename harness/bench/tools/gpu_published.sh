#!/usr/bin/env bash
# Issue 27 goal 2 on published kernels: a public KernelBench leaderboard's solutions judged as one batch
# (harness/bench/tools/gpu_published.py picks them), from empty caches, then again with the caches warm.
#   PUB     the leaderboard checkout or extract (data.json and solutions/; default .pub, carried as data)
#   KB      a KernelBench checkout's KernelBench/ folder (levelL/N_Name.py; default .kb/KernelBench)
#   N       how many solutions (default 80)     JOBS  compile workers (default: half the CPUs)
#   P1_S    the cold batch's cap in seconds (default 400); the warm batch gets what is left of BUDGET
#   RULES   strict (default) or partial
# Final mode, --max-timing-s 2, every visible GPU. CPU (vmstat) and GPU (nvidia-smi) sampled every 5 s; each batch's
# CPU seconds by process role (cpu_roles.py: judging, build and check workers, compilers, the parent).
# Summary in $OUT/summary.txt (one JSON line a batch: rates, first verdict, compile times, GPU shares,
# waits); verdicts in $OUT/published.tgz.
set -u
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-gpu-published-out}; mkdir -p "$OUT"; START=$(date +%s); BUDGET=${BUDGET:-560}
W=${WORK:-/var/tmp/kh-published}; rm -rf "$W"; mkdir -p "$W"
export HARNESS_CACHE=$W/cache
PUB=${PUB:-.pub}; KB=${KB:-.kb/KernelBench}; N=${N:-80}; P1_S=${P1_S:-400}
JOBS=${JOBS:-$(( ($(nproc) + 1) / 2 ))}; RULES=${RULES:-strict}
SUM="$OUT/summary.txt"; T=harness/bench/tools/gpu_published.py
left() { echo $(( START + BUDGET - $(date +%s) )); }
{ date -u; nvidia-smi -L; echo "cores $(nproc) jobs $JOBS rules $RULES"; git log --oneline -1 2>/dev/null; } > "$SUM" 2>&1
python3 $T manifest --leaderboard "$PUB" --kernelbench "$KB" --n "$N" --out "$W/pub.jsonl" >> "$SUM" 2>&1 || { cat "$SUM"; exit 2; }
vmstat -n 5 > "$W/vmstat.log" & VM=$!
nvidia-smi --query-gpu=index,utilization.gpu,memory.used --format=csv,noheader -l 5 > "$W/smi.log" 2>&1 & SM=$!
batch() {  # name seconds
  local t0 cr; t0=$(date +%s.%N)
  python3 harness/bench/tools/cpu_roles.py --out "$W/$1-cpu.json" & cr=$!  # CPU seconds by role
  timeout "$2" python3 -m harness eval-batch "$W/pub.jsonl" --out "$W/$1" --mode final --device cuda --max-timing-s 2 \
    --allow-degenerate --rules "$RULES" --jobs "$JOBS" > "$W/$1.log" 2>&1
  echo "$1: eval-batch exit $? after $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s" >> "$SUM"
  kill $cr; wait $cr; echo "$1 cpu: $(cat "$W/$1-cpu.json")" >> "$SUM"
  grep -h "^task check:" "$W/$1.log" >> "$SUM"  # where the check's time went (sandbox/intake/taskcheck.py)
  python3 $T summary "$W/$1" "$t0" --json "$W/$1-summary.json" >> "$SUM" 2>&1
}
batch cold "$P1_S"
[ "$(left)" -gt 60 ] && batch warm $(( $(left) - 15 ))
kill $VM $SM 2>/dev/null
echo "cpu busy % every 5 s: $(awk 'NR>2 {printf "%d ", 100-$15}' "$W/vmstat.log")" >> "$SUM"
( cd "$W" && tar czf "$OUT/published.tgz" --exclude='*.so' --exclude='*.o' ./*.log ./*.json pub.jsonl \
    cold/results.jsonl cold/verdicts warm/results.jsonl warm/verdicts ) 2>/dev/null
echo "done after $(( $(date +%s) - START )) s" >> "$SUM"
cat "$SUM"
