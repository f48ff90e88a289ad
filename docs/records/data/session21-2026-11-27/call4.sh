#!/usr/bin/env bash
# Session 21, call 4 (one GPU): cheat #34 (hidden tail) judged 3 times while the host builds every red-team
# CUDA candidate at once (gpu_warm.py --all-cuda --jobs 14 into another cache): the load under which
# call 1's integrity shard 3 judged it valid. Outputs in $OUT.
set -u; export PYTHONUNBUFFERED=1; S=$(date +%s); el() { echo $(( $(date +%s) - S )); }
{ nvidia-smi -L; echo "cores $(nproc)"; } > $OUT/load34.txt
timeout 100 python3 harness/bench/tools/gpu_warm.py --jobs 4 gpu_cheat_34_hidden_tail >> $OUT/load34.txt 2>&1
echo "warm #34 exit $? at $(el) s" >> $OUT/load34.txt
( HARNESS_CACHE=/var/tmp/kh-load timeout 200 python3 harness/bench/tools/gpu_warm.py --all-cuda --jobs 14 > $OUT/load-builds.txt 2>&1
  echo "load builds exit $? at $(el) s" >> $OUT/load34.txt ) &
sleep 10; echo "load started; loadavg $(cut -d' ' -f1-3 /proc/loadavg) at $(el) s" >> $OUT/load34.txt
( while sleep 10; do echo "loadavg $(cut -d' ' -f1-3 /proc/loadavg) at $(el) s"; done ) >> $OUT/load34.txt & M=$!
timeout 200 python3 harness/bench/tools/gpu_cases.py gpu_cheat_34_hidden_tail gpu_cheat_34_hidden_tail gpu_cheat_34_hidden_tail > $OUT/load-cases34.jsonl 2> $OUT/load-cases34.err
echo "cases exit $? at $(el) s" >> $OUT/load34.txt
kill $M; wait
python3 - $OUT/load-cases34.jsonl <<'PY' >> $OUT/load34.txt
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line); t = r.get("tail_us") or {}
    print(r["case"], r["ok"], r["status"], r["rule"], "tail excess", t.get("excess"), "threshold", t.get("threshold"),
          "cand", t.get("candidate"), "control", t.get("control"), "confirm", t.get("confirmation_round"), "wall_s", r.get("wall_s"))
PY
cat $OUT/load34.txt
