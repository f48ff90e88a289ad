#!/usr/bin/env bash
# Session 30, call 3 (planned on the two-H200 kind, which was no longer lent: run on one H200, 16 cores,
# with JOBS=8, half the cores as on the two-GPU host): call 2's published-kernel batch again, from nothing, after this
# session's changes (62e9ca7 and after):
#   - the GPU's memory reserved by the judge from its arena on (sandbox/lane/gpumem.py), not by weighting the
#     executor's slots through both workers' start-up (call 2: GPUs busy 0.30-0.48, slot waits up to 142 s);
#   - the batch's task check beside the builds and split over the GPUs (call 2: 150 s of it, alone, first);
#   - an idle GPU takes a unit whose build has not started (its judgement builds it beside its workers'
#     start-up; call 2's warm rerun: first verdict 31.8 s, prebuild then judgement one after the other);
#   - 16 compile workers (--jobs 16) instead of 31 on 32 cores: each build's two compiles then have a core
#     each (call 2: median compile 29 s under 31 builds at once).
# Predicted (before the run): P1 check ~75 s beside the builds, compile median 15-19 s, first verdict 80-100 s,
# GPU busy 0.6-0.7, 20-24 a minute after the first; P2 first verdict 20-25 s, 22-26 a minute, memory waits ~0-3 s.
#   P1  the batch from nothing (same manifest as call 2: N=80, the same pick)
#   P2  the same manifest again into a new folder (builds cached), for the time left
# CPU (vmstat) and GPU (nvidia-smi) sampled every 5 s. Needs KH_COMMIT, `carry: [".whl", ".kb", ".pub"]`.
set -u
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
W=/var/tmp/s30c; mkdir -p $W; START=$(date +%s); CALL_S=${CALL_S:-535}; N=${N:-80}; P1_S=${P1_S:-400}
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
    --allow-degenerate --jobs ${JOBS:-16} > $W/$1.log 2>&1
  echo "$1: eval-batch exit $? after $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s" >> $W/env.txt
  python3 $T summary $W/$1 "$t0" --json $W/$1-summary.json >> $W/env.txt 2>&1
}
batch p1 $P1_S
[ "$(left)" -gt 60 ] && batch p2 $(( $(left) - 15 ))
kill $VM $SM 2>/dev/null
cp $W/env.txt $OUT/
( cd $W && tar czf $OUT/s30-call3.tgz --exclude='*.so' --exclude='*.o' *.log *.json pub.jsonl p1/results.jsonl p1/verdicts \
    p2/results.jsonl p2/verdicts ) 2>/dev/null
cat $W/env.txt; tail -5 $W/p1.log
echo "=== cpu busy (100 - idle), every 5 s"; awk 'NR>2 {printf "%d ", 100-$15} END {print ""}' $W/vmstat.log | cut -c1-900
