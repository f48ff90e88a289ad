#!/usr/bin/env bash
# Session 30, call 2 (the two-H200 kind): issue 27 goal 2 on published kernels for the first time.
# A public KernelBench leaderboard's published solutions (carried as .pub/, data only), N of them picked by
# harness/bench/tools/gpu_published.py (levels 1-2, mixed by content hash), each judged against the current
# KernelBench task file (.kb/) at its current sizes: final mode, --max-timing-s 2, both GPUs, fresh caches,
# compile workers = CPUs - 1 (the eval-batch default).
#   P1  the batch from nothing: judged a minute, first verdict, compile times under the full load
#   P2  the same manifest again into a new folder (builds all cache hits): the judging side's own rate
# CPU (vmstat) and GPU (nvidia-smi) use sampled every 5 s. Needs KH_COMMIT, `carry: [".whl", ".kb", ".pub"]`.
set -u
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
W=/var/tmp/s30b; mkdir -p $W; START=$(date +%s); CALL_S=${CALL_S:-560}; N=${N:-80}; P1_S=${P1_S:-400}
left() { echo $(( START + CALL_S - $(date +%s) )); }
export HARNESS_CACHE=$W/cache; rm -rf $HARNESS_CACHE
{ date -u; nvidia-smi -L; echo "cores $(nproc)"; echo "KH_COMMIT=$KH_COMMIT"; nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1;
  python3 -c "import sys, torch; print(sys.version.split()[0], torch.__version__, torch.version.cuda)"; } > $W/env.txt 2>&1
T=harness/bench/tools/gpu_published.py
python3 $T manifest --leaderboard .pub --kernelbench .kb/KernelBench --n $N --out $W/pub.jsonl >> $W/env.txt 2>&1
vmstat -n 5 > $W/vmstat.log & VM=$!
nvidia-smi --query-gpu=index,utilization.gpu,memory.used --format=csv,noheader -l 5 > $W/smi.log 2>&1 & SM=$!
batch() {  # name seconds
  local t0; t0=$(date +%s.%N)
  timeout "$2" python3 -m harness eval-batch $W/pub.jsonl --out $W/$1 --mode final --device cuda --max-timing-s 2 \
    --allow-degenerate > $W/$1.log 2>&1
  echo "$1: eval-batch exit $? after $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s" >> $W/env.txt
  python3 $T summary $W/$1 "$t0" --json $W/$1-summary.json >> $W/env.txt 2>&1
}
batch p1 $P1_S
[ "$(left)" -gt 60 ] && batch p2 $(( $(left) - 15 ))
kill $VM $SM 2>/dev/null
cp $W/env.txt $OUT/
( cd $W && tar czf $OUT/s30-call2.tgz --exclude='*.so' --exclude='*.o' *.log *.json pub.jsonl p1/results.jsonl p1/verdicts \
    p2/results.jsonl p2/verdicts ) 2>/dev/null
cat $W/env.txt; tail -5 $W/p1.log
echo "=== cpu busy (100 - idle), every 5 s"; awk 'NR>2 {printf "%d ", 100-$15} END {print ""}' $W/vmstat.log | cut -c1-900
