#!/usr/bin/env bash
# Session 26, call 1 (the four-GPU kind), three parts at once on separate GPUs, each under the call's bound:
#   GPU 0     integrity (the red team, honest kernels, lane tests) at this commit: the first GPU run
#             since one intra-op thread per worker, compile-threads=1, setups side by side (session 24)
#             and the stop of a thread's workers (session 25)
#   GPU 1     held-suite on 30 KernelBench level-2 tasks at their published sizes, then the suite's ops
#             (issue 27 goal 1; session 24 predicted the fused GEMMs at 1.2-1.45 s)
#   GPUs 2,3  ray-cluster: a raylet per GPU, the build cache shared; one node against two (goal 4)
# Needs KH_COMMIT, `carry: [".whl", ".kb"]` (.whl from harness/bench/tools/device_wheels.sh --ray;
# .kb from `git -C <KernelBench mirror> archive HEAD KernelBench/level2 | tar x -C .kb`).
set -u
export PYTHONUNBUFFERED=1
W=/var/tmp/s26; mkdir -p $W; START=$(date +%s); CALL_S=${CALL_S:-575}
left() { echo $(( START + CALL_S - $(date +%s) )); }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > $W/pip.log 2>&1 || echo "pip install failed" >> $W/pip.log
export PYTHONPATH=/tmp/site
{ date -u; nvidia-smi -L; echo "cores $(nproc)"; echo "KH_COMMIT=$KH_COMMIT"
  python3 -c "import sys, torch, triton; print(sys.version.split()[0], torch.__version__, torch.version.cuda, 'triton', triton.__version__, 'GPUs', torch.cuda.device_count())"; } > $W/env.txt 2>&1
( while sleep 15; do echo "$(( $(date +%s) - START )) s loadavg $(cut -d' ' -f1-3 /proc/loadavg) procs $(ls /proc | grep -c '^[0-9]')"; done ) > $W/load.txt 2>&1 & M=$!

( L=$(left); CUDA_VISIBLE_DEVICES=0 BUDGET=$(( L - 40 )) timeout $(( L - 10 )) python3 -m harness.bench run integrity \
    --out $W/integ --limit-s $(( L - 15 )) > $W/integ-run.log 2>&1; echo "integrity exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt ) & A=$!
( export CUDA_VISIBLE_DEVICES=1; H=harness/bench/tools/gpu_held_suite.py
  timeout 230 python3 $H --out $W/hkb --jobs 12 --timing-s 1.0 --kernelbench .kb/KernelBench/level2 --kb-limit 30 \
    --kernelbench-only > $W/hkb.log 2>&1; echo "held-kb exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt
  python3 $H --out $W/hkb --summary-only > /dev/null 2>&1
  timeout $(( $(left) - 25 )) python3 $H --out $W/hs --jobs 12 --timing-s 1.0 > $W/hs.log 2>&1
  echo "held-suite exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt
  python3 $H --out $W/hs --summary-only > /dev/null 2>&1 ) & B=$!
( L=$(left); CUDA_VISIBLE_DEVICES=2,3 timeout $(( L - 10 )) python3 harness/bench/tools/gpu_ray.py --out $W/ray \
    --gpus-per-node 1 --cpus-per-node 16 --jobs 15 --copies 2 --warm --budget-s $(( L - 30 )) > $W/ray-run.log 2>&1
  echo "ray exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt ) & C=$!
wait $A $B $C
kill $M 2>/dev/null
for d in integ hkb hs ray; do cp $W/$d/summary.txt $OUT/$d-summary.txt 2>/dev/null; done
cp $W/env.txt $W/load.txt $W/*.log $OUT/ 2>/dev/null
( cd $W && tar czf $OUT/s26-call1.tgz --exclude='*.so' --exclude='*.o' integ hkb/batch/verdicts hs/batch/verdicts ray /var/tmp/kh-ray-work/*.log /var/tmp/kh-ray-work/runs.jsonl ) 2>/dev/null
cat $W/env.txt; for d in integ hkb hs ray; do echo "=== $d"; tail -25 $OUT/$d-summary.txt 2>/dev/null; done
