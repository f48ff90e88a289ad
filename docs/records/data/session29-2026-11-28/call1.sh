#!/usr/bin/env bash
# Session 29, call 1 (the two-H200 kind): what session 28 could not run, and #34's miss diagnosed.
#   GPU 0  integrity (red team, honest kernels, lane tests, relu repeats); every red-team verdict kept
#          whole (KH_REDTEAM_VERDICTS), so a missed #34 shows its tail samples; then #34 judged alone
#          (gpu_cases.py prints its tail evidence) for the time left
#   GPU 1  gpu tests of the device arena and the one-kernel compare (session 28's presize assertions);
#          held-suite on KernelBench level-1 tasks 38-46 (38 L1Norm, 39 L2Norm, 45 AvgPool2D: session
#          28's false runtime_errors, 8-16 GiB inputs; the sliced inputs-unchanged check)
# Needs KH_COMMIT and `carry: [".whl", ".kb"]`.
set -u
export PYTHONUNBUFFERED=1
W=/var/tmp/s29a; mkdir -p $W; START=$(date +%s); CALL_S=${CALL_S:-560}
left() { echo $(( START + CALL_S - $(date +%s) )); }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > $W/pip.log 2>&1 || echo "pip install failed" >> $W/pip.log
export PYTHONPATH=/tmp/site
{ date -u; nvidia-smi -L; echo "cores $(nproc)"; echo "KH_COMMIT=$KH_COMMIT"; nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1; } > $W/env.txt 2>&1
H=harness/bench/tools/gpu_held_suite.py
( export CUDA_VISIBLE_DEVICES=0
  BUDGET=420 timeout 440 python3 -m harness.bench run integrity --out $W/integ --limit-s 430 > $W/integ-run.log 2>&1
  echo "integrity exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt
  while [ "$(left)" -gt 40 ]; do
    timeout $(( $(left) - 10 )) python3 harness/bench/tools/gpu_cases.py gpu_cheat_34_hidden_tail >> $W/c34.jsonl 2>> $W/c34.err
  done
  echo "c34 loop done at $(( $(date +%s) - START )) s" >> $W/env.txt ) & A=$!
( export CUDA_VISIBLE_DEVICES=1
  mkdir -p $W/gt; OUT=$W/gt timeout 200 python3 harness/bench/tools/gpu_tests.py --nodes tests/evaluator/test_devarena.py \
    tests/evaluator/test_fused_compare.py --budget-s 190 --out $W/gt > $W/gt.log 2>&1
  echo "gpu tests exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt
  timeout $(( $(left) - 20 )) python3 $H --out $W/hk1 --jobs 6 --timing-s 1.0 --kernelbench .kb/KernelBench/level1 \
    --kernelbench-only --kb-from 37 --kb-limit 9 > $W/hk1.log 2>&1; echo "held-kb1 exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt
  python3 $H --out $W/hk1 --summary-only > /dev/null 2>&1 ) & B=$!
wait $A $B
for d in integ hk1; do cp $W/$d/summary.txt $OUT/$d-summary.txt 2>/dev/null; done
cp $W/env.txt $W/c34.jsonl $OUT/ 2>/dev/null
cp $W/gt/*.json $OUT/ 2>/dev/null
( cd $W && tar czf $OUT/s29-call1.tgz --exclude='*.so' --exclude='*.o' *.log c34.* gt integ/logs.tgz integ/output.log \
    hk1/batch/verdicts ) 2>/dev/null
cat $W/env.txt; tail -12 $W/gt.log
for d in integ hk1; do echo "=== $d"; tail -22 $OUT/$d-summary.txt 2>/dev/null; done
echo "=== c34"; cut -c1-600 $W/c34.jsonl
