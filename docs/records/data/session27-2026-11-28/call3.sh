#!/usr/bin/env bash
# Session 27, call 3 (the two-H200 kind), after the one-kernel compare (sandbox/check/fusedcompare.py:
# the tolerance rule's all-finite pass in one CUDA kernel, built by the parent with nvcc and loaded by
# the reference worker). Two parts at once, one per GPU:
#   GPU 0  the gpu tests no record covers (gpu_tests.py --missing: the fused pass bit for bit against
#          the torch pass, the presetup test), then integrity (red team, honest kernels, lane tests, relu repeats)
#   GPU 1  the compare scenario (1 and 4 GiB: fused, torch finite, masked), then held-suite on all 100
#          KernelBench level-2 tasks at their published sizes (goal 1), as calls 1 and 2
# Needs KH_COMMIT and `carry: [".whl", ".kb"]`. At most 8 files come back: one tgz, the gpu-runs record, summaries.
set -u
export PYTHONUNBUFFERED=1
W=/var/tmp/s27c; mkdir -p $W; START=$(date +%s); CALL_S=${CALL_S:-545}
left() { echo $(( START + CALL_S - $(date +%s) )); }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > $W/pip.log 2>&1 || echo "pip install failed" >> $W/pip.log
export PYTHONPATH=/tmp/site
{ date -u; nvidia-smi -L; echo "cores $(nproc)"; echo "KH_COMMIT=$KH_COMMIT"; nvcc --version | tail -1
  python3 -c "import sys, torch, triton; print(sys.version.split()[0], torch.__version__, torch.version.cuda, 'triton', triton.__version__, 'GPUs', torch.cuda.device_count())"; } > $W/env.txt 2>&1
H=harness/bench/tools/gpu_held_suite.py
( export CUDA_VISIBLE_DEVICES=0
  mkdir -p $W/gt; OUT=$W/gt timeout 120 python3 harness/bench/tools/gpu_tests.py --missing --budget-s 110 --out $W/gt > $W/gt.log 2>&1
  echo "gpu tests --missing exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt
  L=$(left); BUDGET=$(( L - 40 )) timeout $(( L - 10 )) python3 -m harness.bench run integrity \
    --out $W/integ --limit-s $(( L - 15 )) > $W/integ-run.log 2>&1; echo "integrity exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt ) & A=$!
( export CUDA_VISIBLE_DEVICES=1
  timeout 150 python3 harness/bench/tools/gpu_compare.py > $W/compare.txt 2>&1
  echo "compare bench exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt
  timeout $(( $(left) - 25 )) python3 $H --out $W/hkb --jobs 12 --timing-s 1.0 --kernelbench .kb/KernelBench/level2 \
    --kernelbench-only > $W/hkb.log 2>&1; echo "held-kb2 exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt
  python3 $H --out $W/hkb --summary-only > /dev/null 2>&1 ) & B=$!
wait $A $B
for d in integ hkb; do cp $W/$d/summary.txt $OUT/$d-summary.txt 2>/dev/null; done
cp $W/env.txt $W/compare.txt $OUT/ 2>/dev/null
cp $W/gt/*.json $OUT/ 2>/dev/null
( cd $W && tar czf $OUT/s27-call3.tgz --exclude='*.so' --exclude='*.o' *.log gt integ/logs.tgz integ/output.log \
    hkb/batch/verdicts ) 2>/dev/null
cat $W/env.txt; cat $W/compare.txt; tail -15 $W/gt.log
for d in integ hkb; do echo "=== $d"; tail -22 $OUT/$d-summary.txt 2>/dev/null; done
