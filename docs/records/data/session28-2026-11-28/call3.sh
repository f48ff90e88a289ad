#!/usr/bin/env bash
# Session 28, call 3 (the two-H200 kind), the last of the session's device time: the red team and the
# GPU tests after this session's judge changes (the device arena made at its size before the lock; the
# reference worker's exit after the device is given up), then goal 1 again.
#   GPU 0  integrity (red team, honest kernels, lane tests, relu repeats)
#   GPU 1  gpu tests of the device arena and the one-kernel compare (test_devarena.py now asserts the
#          presize, one map in all, and the reference's exit after the release), then held-suite on the
#          KernelBench level-2 tasks for what time is left
# Needs KH_COMMIT and `carry: [".whl", ".kb"]`.
set -u
export PYTHONUNBUFFERED=1
W=/var/tmp/s28c; mkdir -p $W; START=$(date +%s); CALL_S=${CALL_S:-490}
left() { echo $(( START + CALL_S - $(date +%s) )); }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > $W/pip.log 2>&1 || echo "pip install failed" >> $W/pip.log
export PYTHONPATH=/tmp/site
{ date -u; nvidia-smi -L; echo "cores $(nproc)"; echo "KH_COMMIT=$KH_COMMIT"; nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1; } > $W/env.txt 2>&1
H=harness/bench/tools/gpu_held_suite.py
( export CUDA_VISIBLE_DEVICES=0
  L=$(left); BUDGET=$(( L - 30 )) timeout $(( L - 5 )) python3 -m harness.bench run integrity \
    --out $W/integ --limit-s $(( L - 10 )) > $W/integ-run.log 2>&1; echo "integrity exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt ) & A=$!
( export CUDA_VISIBLE_DEVICES=1
  mkdir -p $W/gt; OUT=$W/gt timeout 150 python3 harness/bench/tools/gpu_tests.py --nodes tests/evaluator/test_devarena.py \
    tests/evaluator/test_fused_compare.py --budget-s 140 --out $W/gt > $W/gt.log 2>&1
  echo "gpu tests exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt
  timeout $(( $(left) - 20 )) python3 $H --out $W/hkb --jobs 12 --timing-s 1.0 --kernelbench .kb/KernelBench/level2 \
    --kernelbench-only > $W/hkb.log 2>&1; echo "held-kb2 exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt
  python3 $H --out $W/hkb --summary-only > /dev/null 2>&1 ) & B=$!
wait $A $B
for d in integ hkb; do cp $W/$d/summary.txt $OUT/$d-summary.txt 2>/dev/null; done
cp $W/env.txt $OUT/ 2>/dev/null
cp $W/gt/*.json $OUT/ 2>/dev/null
( cd $W && tar czf $OUT/s28-call3.tgz --exclude='*.so' --exclude='*.o' *.log gt integ/logs.tgz integ/output.log \
    hkb/batch/verdicts ) 2>/dev/null
cat $W/env.txt; tail -12 $W/gt.log
for d in integ hkb; do echo "=== $d"; tail -16 $OUT/$d-summary.txt 2>/dev/null; done
