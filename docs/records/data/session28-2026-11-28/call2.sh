#!/usr/bin/env bash
# Session 28, call 2 (the four-H200 kind), after the two changes call 1 pointed to (driver calls made
# while one GPU is held wait behind contexts made and torn down on the other GPUs):
#   - the device arena made at its sizes before the lock (remembered, else the task's estimate, within
#     a budget of GPU memory / 16), not grown under it;
#   - the reference worker's exit after the device is given up (the candidate's stays inside).
# 1 `four-gpu` with session 26's settings (COPIES1=2 PARTS="E W 2 1 C"): issue 27 goal 3, 2.67x then
# 2 gpu_driverlock.py, quiet and with churn on GPUs 1-3, now also timing a context made with
#   CUDA_DEVICE_MAX_CONNECTIONS=1 (fewer channels: cheaper to make?)
# 3 gpu_contention.py again (the relu kernel on GPU 0, quiet and with context churn on GPUs 1-3): call 1
#   had held 1.01 s quiet and 2.19 s with the churn
# Needs KH_COMMIT and `carry: [".whl", ".kb"]`.
set -u
export PYTHONUNBUFFERED=1
W=/var/tmp/s28b; mkdir -p $W; START=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > $W/pip.log 2>&1 || echo "pip install failed" >> $W/pip.log
export PYTHONPATH=/tmp/site
{ date -u; nvidia-smi -L; echo "cores $(nproc)"; echo "KH_COMMIT=$KH_COMMIT"; nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1; } > $W/env.txt 2>&1
( while sleep 15; do echo "$(( $(date +%s) - START )) s loadavg $(cut -d' ' -f1-3 /proc/loadavg) procs $(ls /proc | grep -c '^[0-9]')"; done ) > $W/load.txt 2>&1 & M=$!
COPIES1=2 PARTS="E W 2 1 C" BUDGET=400 timeout 410 python3 -m harness.bench run four-gpu \
  --out $W/fg --limit-s 405 > $W/fg-run.log 2>&1
echo "four-gpu exit $? after $(( $(date +%s) - START )) s" >> $W/env.txt
kill $M
timeout 40 python3 harness/bench/tools/gpu_driverlock.py --out $W/dl --phase-s 10 --phases quiet,other > $W/dl.log 2>&1
echo "driverlock exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt
L=$(( 505 - ($(date +%s) - START) ))
[ $L -gt 60 ] && timeout $L python3 harness/bench/tools/gpu_contention.py --out $W/ct --units 5 --loads none,ctx:4 > $W/ct.log 2>&1
echo "contention exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt
cp $W/env.txt $W/load.txt $OUT/ 2>/dev/null
cp $W/fg/summary.txt $OUT/four-gpu-summary.txt 2>/dev/null
cp $W/ct/summary.txt $OUT/ct-summary.txt 2>/dev/null; cp $W/dl/summary.txt $OUT/dl-summary.txt 2>/dev/null
cp /var/tmp/kh-two-work/runs.jsonl $OUT/four-gpu-runs.jsonl 2>/dev/null
( cd $W && tar czf $OUT/s28-call2.tgz --exclude='*.so' --exclude='*.o' *.log fg dl ct/run-*/verdicts ct/run-*/results.jsonl ) 2>/dev/null
cat $W/env.txt; tail -30 $OUT/four-gpu-summary.txt 2>/dev/null; cat $OUT/dl-summary.txt $OUT/ct-summary.txt 2>/dev/null
