#!/usr/bin/env bash
# Session 26, call 5 (the two-GPU kind: the four-GPU one was not lent then), after this session's two changes to the judge: the candidate's
# model reused for the judged setup (as the reference's is) and the all-finite compare pass. Two parts
# at once, one per GPU:
#   GPU 0  integrity (the red team, honest kernels, lane tests, relu repeats) with the reuse
#   GPU 1  held-suite on 30 KernelBench level-2 tasks (as call 4); the gpu tests of compare and the
#          compare scenario (1 and 4 GiB); held-suite on 30 KernelBench level-1 tasks at their
#          published sizes (goal 1 names them) in the time left
# Needs KH_COMMIT and `carry: [".whl", ".kb"]`. At most 8 files come back: one tgz and summaries.
set -u
export PYTHONUNBUFFERED=1
W=/var/tmp/s26e; mkdir -p $W; START=$(date +%s); CALL_S=${CALL_S:-560}
left() { echo $(( START + CALL_S - $(date +%s) )); }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > $W/pip.log 2>&1 || echo "pip install failed" >> $W/pip.log
export PYTHONPATH=/tmp/site
{ date -u; nvidia-smi -L; echo "cores $(nproc)"; echo "KH_COMMIT=$KH_COMMIT"
  python3 -c "import sys, torch, triton; print(sys.version.split()[0], torch.__version__, torch.version.cuda, 'triton', triton.__version__, 'GPUs', torch.cuda.device_count())"; } > $W/env.txt 2>&1
H=harness/bench/tools/gpu_held_suite.py
( L=$(left); CUDA_VISIBLE_DEVICES=0 BUDGET=$(( L - 40 )) timeout $(( L - 10 )) python3 -m harness.bench run integrity \
    --out $W/integ --limit-s $(( L - 15 )) > $W/integ-run.log 2>&1; echo "integrity exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt ) & A=$!
( export CUDA_VISIBLE_DEVICES=1
  timeout 160 python3 $H --out $W/hkb --jobs 12 --timing-s 1.0 --kernelbench .kb/KernelBench/level2 --kb-limit 30 \
    --kernelbench-only > $W/hkb.log 2>&1; echo "held-kb2 exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt
  python3 $H --out $W/hkb --summary-only > /dev/null 2>&1
  timeout 200 python3 -m pytest -q -rA -p no:cacheprovider -m gpu tests/evaluator/test_compare.py > $W/compare.txt 2>&1
  echo "compare tests exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt
  timeout 200 python3 harness/bench/tools/gpu_compare.py >> $W/compare.txt 2>&1
  echo "compare bench exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt
  timeout $(( $(left) - 25 )) python3 $H --out $W/hk1 --jobs 4 --timing-s 1.0 --kernelbench .kb/KernelBench/level1 \
    --kb-limit 30 --kernelbench-only > $W/hk1.log 2>&1; echo "held-kb1 exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt
  python3 $H --out $W/hk1 --summary-only > /dev/null 2>&1 ) & B=$!
wait $A $B
for d in integ hkb hk1; do cp $W/$d/summary.txt $OUT/$d-summary.txt 2>/dev/null; done
cp $W/env.txt $W/compare.txt $OUT/ 2>/dev/null
( cd $W && tar czf $OUT/s26-call5.tgz --exclude='*.so' --exclude='*.o' *.log integ/logs.tgz integ/output.log \
    hkb/batch/verdicts hk1/batch/verdicts ) 2>/dev/null
cat $W/env.txt; tail -25 $W/compare.txt
for d in integ hkb hk1; do echo "=== $d"; tail -22 $OUT/$d-summary.txt 2>/dev/null; done
