#!/usr/bin/env bash
# Session 30, call 1 (the two-H200 kind): session 29's two decision changes, live for the first time.
#   GPU 0  integrity (red team, honest kernels, lane tests, relu repeats), every red-team verdict kept whole:
#          the tails' paired median (wallclock.check) must catch #34 and pass the honest kernels; then #34
#          (30 us hidden: rejected) and #34b (8 us: valid) judged alone, alternately, for the time left
#   GPU 1  held-suite on KernelBench level-1 tasks 36-40 (38 L1Norm and 39 L2Norm, about 89 GiB a judgement,
#          were `rejected sandbox.resources` beside one another): the GPU-memory slot weights must make
#          them valid, and their queue waits show what the weights cost
# Needs KH_COMMIT and `carry: [".whl", ".kb"]`.
set -u
export PYTHONUNBUFFERED=1
W=/var/tmp/s30a; mkdir -p $W; START=$(date +%s); CALL_S=${CALL_S:-540}
left() { echo $(( START + CALL_S - $(date +%s) )); }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > $W/pip.log 2>&1 || echo "pip install failed" >> $W/pip.log
export PYTHONPATH=/tmp/site
{ date -u; nvidia-smi -L; echo "cores $(nproc)"; echo "KH_COMMIT=$KH_COMMIT"; nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1; } > $W/env.txt 2>&1
H=harness/bench/tools/gpu_held_suite.py
( export CUDA_VISIBLE_DEVICES=0
  BUDGET=400 timeout 420 python3 -m harness.bench run integrity --out $W/integ --limit-s 410 > $W/integ-run.log 2>&1
  echo "integrity exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt
  while [ "$(left)" -gt 35 ]; do
    for c in gpu_cheat_34_hidden_tail gpu_probe_34b_tail_below_floor; do
      [ "$(left)" -gt 35 ] && timeout $(( $(left) - 8 )) python3 harness/bench/tools/gpu_cases.py $c >> $W/c34.jsonl 2>> $W/c34.err
    done
  done
  echo "c34 loop done at $(( $(date +%s) - START )) s" >> $W/env.txt ) & A=$!
( export CUDA_VISIBLE_DEVICES=1
  timeout $(( $(left) - 20 )) python3 $H --out $W/hk1 --jobs 6 --timing-s 1.0 --kernelbench .kb/KernelBench/level1 \
    --kernelbench-only --kb-from 35 --kb-limit 5 > $W/hk1.log 2>&1; echo "held-kb1 exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt
  python3 $H --out $W/hk1 --summary-only > /dev/null 2>&1 ) & B=$!
wait $A $B
for d in integ hk1; do cp $W/$d/summary.txt $OUT/$d-summary.txt 2>/dev/null; done
cp $W/env.txt $W/c34.jsonl $OUT/ 2>/dev/null
( cd $W && tar czf $OUT/s30-call1.tgz --exclude='*.so' --exclude='*.o' *.log c34.* integ/logs.tgz integ/output.log \
    hk1/batch/verdicts hk1/batch/results.jsonl ) 2>/dev/null
cat $W/env.txt
for d in integ hk1; do echo "=== $d"; tail -22 $OUT/$d-summary.txt 2>/dev/null; done
echo "=== c34"; python3 - $W/c34.jsonl <<'PY'
import json, sys
for line in open(sys.argv[1]):
    try:
        d = json.loads(line)
    except Exception:
        continue
    t = d.get("tail_us") or {}
    print(d["case"][:26], d["ok"], d["status"], d["rule"], "tail", {k: t.get(k) for k in ("candidate", "control", "excess", "paired_median", "confirmation_round")})
PY
