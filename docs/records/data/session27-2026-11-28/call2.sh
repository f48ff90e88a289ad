#!/usr/bin/env bash
# Session 27, call 2 (the two-H200 kind),
# after call 1 (26c8448): on a GPU the warm-up's first models are built before the device is held
# (judge.presetup: level-2 GEMM constructors were 0.45-9.5 s of the hold in call 1). Two parts at
# once, one per GPU:
#   GPU 0  integrity (the red team, honest kernels, lane tests with the new presetup GPU test, relu repeats)
#   GPU 1  held-suite on all 100 KernelBench level-2 tasks at their published sizes (goal 1), as call 1
# Needs KH_COMMIT and `carry: [".whl", ".kb"]`. At most 8 files come back: one tgz and summaries.
set -u
export PYTHONUNBUFFERED=1
W=/var/tmp/s27b; mkdir -p $W; START=$(date +%s); CALL_S=${CALL_S:-565}
left() { echo $(( START + CALL_S - $(date +%s) )); }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > $W/pip.log 2>&1 || echo "pip install failed" >> $W/pip.log
export PYTHONPATH=/tmp/site
{ date -u; nvidia-smi -L; echo "cores $(nproc)"; echo "KH_COMMIT=$KH_COMMIT"
  python3 -c "import sys, torch, triton; print(sys.version.split()[0], torch.__version__, torch.version.cuda, 'triton', triton.__version__, 'GPUs', torch.cuda.device_count())"; } > $W/env.txt 2>&1
H=harness/bench/tools/gpu_held_suite.py
( L=$(left); CUDA_VISIBLE_DEVICES=0 BUDGET=$(( L - 40 )) timeout $(( L - 10 )) python3 -m harness.bench run integrity \
    --out $W/integ --limit-s $(( L - 15 )) > $W/integ-run.log 2>&1; echo "integrity exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt ) & A=$!
( export CUDA_VISIBLE_DEVICES=1
  timeout $(( $(left) - 30 )) python3 $H --out $W/hkb --jobs 12 --timing-s 1.0 --kernelbench .kb/KernelBench/level2 \
    --kernelbench-only > $W/hkb.log 2>&1; echo "held-kb2 exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt
  python3 $H --out $W/hkb --summary-only > /dev/null 2>&1 ) & B=$!
wait $A $B
for d in integ hkb; do cp $W/$d/summary.txt $OUT/$d-summary.txt 2>/dev/null; done
cp $W/env.txt $OUT/ 2>/dev/null
( cd $W && tar czf $OUT/s27-call2.tgz --exclude='*.so' --exclude='*.o' *.log integ/logs.tgz integ/output.log \
    integ/*.json hkb/batch/verdicts ) 2>/dev/null
cat $W/env.txt
for d in integ hkb; do echo "=== $d"; tail -30 $OUT/$d-summary.txt 2>/dev/null; done
