#!/usr/bin/env bash
# Session 29, call 2 (the one-H200 kind: nothing else on the host). Call 1 showed the tail on the GPU
# clock (an event recorded after the device sync) drifting 20-130 us within a judgement, so #34 (30 us
# hidden) escaped 1 of 5 alone on the host. Now the tail is on the host clock (the last look that saw
# the end event pending to the sync's return) and a control that cannot be set up rejects. Check:
#   integrity (red team, honest kernels, lane tests, relu repeats), every red-team verdict kept whole;
#   then #34 (30 us hidden: rejected) and #34b (8 us hidden: valid) judged alone, alternately, with
#   their tail evidence, for the time left.
# Needs KH_COMMIT and `carry: [".whl"]`.
set -u
export PYTHONUNBUFFERED=1
W=/var/tmp/s29b; mkdir -p $W; START=$(date +%s); CALL_S=${CALL_S:-560}
left() { echo $(( START + CALL_S - $(date +%s) )); }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > $W/pip.log 2>&1 || echo "pip install failed" >> $W/pip.log
export PYTHONPATH=/tmp/site
{ date -u; nvidia-smi -L; echo "cores $(nproc)"; echo "KH_COMMIT=$KH_COMMIT"; nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1; } > $W/env.txt 2>&1
BUDGET=400 timeout 420 python3 -m harness.bench run integrity --out $W/integ --limit-s 410 > $W/integ-run.log 2>&1
echo "integrity exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt
while [ "$(left)" -gt 35 ]; do
  for c in gpu_cheat_34_hidden_tail gpu_probe_34b_tail_below_floor; do
    [ "$(left)" -gt 35 ] && timeout $(( $(left) - 8 )) python3 harness/bench/tools/gpu_cases.py $c >> $W/c34.jsonl 2>> $W/c34.err
  done
done
echo "c34 loop done at $(( $(date +%s) - START )) s" >> $W/env.txt
cp $W/integ/summary.txt $OUT/integ-summary.txt 2>/dev/null
cp $W/env.txt $W/c34.jsonl $OUT/ 2>/dev/null
( cd $W && tar czf $OUT/s29-call2.tgz *.log c34.* integ/logs.tgz integ/output.log ) 2>/dev/null
cat $W/env.txt; echo "=== integ"; tail -40 $OUT/integ-summary.txt 2>/dev/null
echo "=== c34"; python3 - $W/c34.jsonl <<'PY'
import json, sys
import numpy as np
for line in open(sys.argv[1]):
    try:
        d = json.loads(line)
    except Exception:
        continue
    t = d.get("tail_us") or {}
    s = t.get("samples") or {}
    q = {n: np.percentile(v, [10, 50]).round(1).tolist() for n, v in s.items() if v}
    print(d["case"][:26], d["ok"], d["status"], d["rule"], "tail", {k: t.get(k) for k in ("candidate", "control", "excess", "confirmation_round")}, "q10/50", q)
PY
