#!/usr/bin/env bash
# Session 26, call 2 (the four-GPU kind, warm after call 1): issue 27 goal 3 after one intra-op thread per GPU worker
# worker (no inductor compile pool in the reference's tree under the GPU hold). The same scenario and
# settings as session 21's call 2 (2.41x): the warm pass, four GPUs with four copies, then GPU 0 with two.
# Everything lands in /var/tmp/s26b and is packed into $OUT. KH_COMMIT must be set.
set -u
export PYTHONUNBUFFERED=1
W=/var/tmp/s26b; mkdir -p $W; START=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > $W/pip.log 2>&1 || echo "pip install failed" >> $W/pip.log
export PYTHONPATH=/tmp/site
{ date -u; nvidia-smi -L; echo "cores $(nproc)"; echo "KH_COMMIT=$KH_COMMIT"
  python3 -c "import sys, torch, triton; print(sys.version.split()[0], torch.__version__, torch.version.cuda, 'triton', triton.__version__, 'GPUs', torch.cuda.device_count())"; } > $W/env.txt 2>&1
( while sleep 15; do echo "$(( $(date +%s) - START )) s loadavg $(cut -d' ' -f1-3 /proc/loadavg) procs $(ls /proc | grep -c '^[0-9]')"; done ) > $W/load.txt 2>&1 & M=$!
( CUDA_VISIBLE_DEVICES=3 timeout 120 python3 harness/bench/tools/gpu_held_suite.py --out $W/hkb --jobs 12 --timing-s 1.0 \
    --kernelbench .kb/KernelBench/level2 --kb-limit 20 --kernelbench-only > $W/hkb.log 2>&1
  python3 harness/bench/tools/gpu_held_suite.py --out $W/hkb --summary-only > /dev/null 2>&1; echo "held-kb done at $(( $(date +%s) - START )) s" >> $W/env.txt ) &
COPIES1=2 PARTS="E W 2 1 C" BUDGET=${BUDGET:-535} timeout ${CALL_S:-580} python3 -m harness.bench run four-gpu \
  --out $W/fg --limit-s ${LIMIT_S:-550} > $W/fg-run.log 2>&1
echo "four-gpu exit $? after $(( $(date +%s) - START )) s" >> $W/env.txt
kill $M
cp $W/env.txt $W/load.txt $W/fg-run.log $OUT/ 2>/dev/null
cp $W/hkb/summary.txt $OUT/hkb-summary.txt 2>/dev/null
cp $W/fg/summary.txt $OUT/four-gpu-summary.txt 2>/dev/null
cp /var/tmp/kh-two-work/runs.jsonl $OUT/four-gpu-runs.jsonl 2>/dev/null
( cd $W/fg && tar czf $OUT/four-gpu.tgz . ) 2>/dev/null
cat $W/env.txt; tail -45 $OUT/hkb-summary.txt; cat $OUT/four-gpu-summary.txt 2>/dev/null | tail -30
