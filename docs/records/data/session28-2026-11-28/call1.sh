#!/usr/bin/env bash
# Session 28, call 1 (the four-H200 kind). Issue 27 goal 3 first: why the same CUDA kernels hold a GPU
# twice as long when the other three GPUs judge too (session 26: 3.49 s against 1.72 s median, arena
# requests 0.55 against 0.05 s, no run-queue wait). Then goal 1 where session 27 stopped.
#   1 (all GPUs quiet but for the test)  gpu_driverlock.py: driver calls on GPU 0 (alloc, IPC export and
#     map, memset, a context made and released) while CUDA contexts are made and torn down on GPUs 1-3,
#     paced and unpaced, and on GPU 0 itself
#   2 gpu_contention.py: the relu kernel judged 8 times in feedback mode on GPU 0, quiet and with the
#     context churn on GPUs 1-3 (per-request medians)
#   3 at once: GPU 1 held-suite on KernelBench level 2 (the one-kernel compare should now engage:
#     compare_fused.outputs); GPU 2 held-suite on level-1 tasks 31-100 (integrity waits for the next call)
# Needs KH_COMMIT and `carry: [".whl", ".kb"]`. At most 8 files come back: one tgz and the summaries.
set -u
export PYTHONUNBUFFERED=1
W=/var/tmp/s28a; mkdir -p $W; START=$(date +%s); CALL_S=${CALL_S:-588}
left() { echo $(( START + CALL_S - $(date +%s) )); }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > $W/pip.log 2>&1 || echo "pip install failed" >> $W/pip.log
export PYTHONPATH=/tmp/site
{ date -u; nvidia-smi -L; echo "cores $(nproc)"; echo "KH_COMMIT=$KH_COMMIT"; nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1
  python3 -c "import sys, torch, triton; print(sys.version.split()[0], torch.__version__, torch.version.cuda, 'triton', triton.__version__, 'GPUs', torch.cuda.device_count())"; } > $W/env.txt 2>&1
timeout 110 python3 harness/bench/tools/gpu_driverlock.py --out $W/dl --phase-s 12 --phases quiet,other,other-max,same > $W/dl.log 2>&1
echo "driverlock exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt
timeout 170 python3 harness/bench/tools/gpu_contention.py --out $W/ct --units 6 --loads none,ctx:4 > $W/ct.log 2>&1
echo "contention exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt
H=harness/bench/tools/gpu_held_suite.py
( export CUDA_VISIBLE_DEVICES=1
  timeout $(( $(left) - 25 )) python3 $H --out $W/hkb --jobs 12 --timing-s 1.0 --kernelbench .kb/KernelBench/level2 \
    --kernelbench-only > $W/hkb.log 2>&1; echo "held-kb2 exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt
  python3 $H --out $W/hkb --summary-only > /dev/null 2>&1 ) & B=$!
( export CUDA_VISIBLE_DEVICES=2
  timeout $(( $(left) - 25 )) python3 $H --out $W/hk1 --jobs 12 --timing-s 1.0 --kernelbench .kb/KernelBench/level1 \
    --kernelbench-only --kb-from 30 > $W/hk1.log 2>&1; echo "held-kb1 exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt
  python3 $H --out $W/hk1 --summary-only > /dev/null 2>&1 ) & C=$!
wait $B $C
for d in hkb hk1 dl ct; do cp $W/$d/summary.txt $OUT/$d-summary.txt 2>/dev/null; done
cp $W/env.txt $OUT/ 2>/dev/null
( cd $W && tar czf $OUT/s28-call1.tgz --exclude='*.so' --exclude='*.o' *.log dl ct/run-*/verdicts ct/run-*/results.jsonl \
    hkb/batch/verdicts hk1/batch/verdicts ) 2>/dev/null
cat $W/env.txt; cat $OUT/dl-summary.txt $OUT/ct-summary.txt 2>/dev/null
for d in hkb hk1; do echo "=== $d"; tail -22 $OUT/$d-summary.txt 2>/dev/null; done
