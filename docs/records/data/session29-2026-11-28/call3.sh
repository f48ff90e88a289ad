#!/usr/bin/env bash
# Session 29, call 3 (the one-H200 kind, the session's last device time). Call 2 measured the tail on
# the host clock and it hid half of #34's 30 us in the sync's own fixed cost; reverted. Now the tail is
# on the GPU clock again with its settled event made once before the windows (torch made a new CUDA
# event at each call's first record, after the sync, inside the tail). Check:
#   1 gpu_tailnoise.py: the tail of a call that leaves nothing running and of one that leaves 8 / 30 us,
#     with a settled event made per call (lazy, the old way) and made once
#   2 integrity (red team, honest kernels, lane tests), every red-team verdict kept whole
#   3 #34 (30 us hidden: rejected) and #34b (8 us: valid) judged alone, alternately, for the time left
# Needs KH_COMMIT and `carry: [".whl"]`.
set -u
export PYTHONUNBUFFERED=1
W=/var/tmp/s29c; mkdir -p $W; START=$(date +%s); CALL_S=${CALL_S:-515}
left() { echo $(( START + CALL_S - $(date +%s) )); }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > $W/pip.log 2>&1 || echo "pip install failed" >> $W/pip.log
export PYTHONPATH=/tmp/site
{ date -u; nvidia-smi -L; echo "cores $(nproc)"; echo "KH_COMMIT=$KH_COMMIT"; nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1; } > $W/env.txt 2>&1
timeout 60 python3 harness/bench/tools/gpu_tailnoise.py --n 200 --out $W/tn > $W/tn.log 2>&1
echo "tailnoise exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt
BUDGET=355 timeout 370 python3 -m harness.bench run integrity --out $W/integ --limit-s 360 > $W/integ-run.log 2>&1
echo "integrity exit $? at $(( $(date +%s) - START )) s" >> $W/env.txt
while [ "$(left)" -gt 30 ]; do
  for c in gpu_cheat_34_hidden_tail gpu_probe_34b_tail_below_floor; do
    [ "$(left)" -gt 30 ] && timeout $(( $(left) - 5 )) python3 harness/bench/tools/gpu_cases.py $c >> $W/c34.jsonl 2>> $W/c34.err
  done
done
echo "c34 loop done at $(( $(date +%s) - START )) s" >> $W/env.txt
cp $W/integ/summary.txt $OUT/integ-summary.txt 2>/dev/null
cp $W/env.txt $W/c34.jsonl $W/tn.log $OUT/ 2>/dev/null
( cd $W && tar czf $OUT/s29-call3.tgz *.log c34.* tn integ/logs.tgz integ/output.log ) 2>/dev/null
cat $W/env.txt $W/tn.log; echo "=== integ"; grep -E "^(FAILED|E  )|PYTEST_EXIT|^run |warmed|call done" $OUT/integ-summary.txt | cut -c1-300
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
