#!/usr/bin/env bash
# The arena in device memory (issue 27, goal 1; sandbox/worker/devarena.py): one device call.
#   1  its gpu tests (gpu_tests.py --missing: the gpu tests no record covers, these; a record in $OUT) (device arena on and off give the same verdict; cand_in read-only; a write to it not valid)
#   2  gpu_datapath.py: a 2.5 GiB output's fetch + compare, host arena (KH_DEVICE_ARENA=0) then device arena
#   3  gpu_held.py on KernelBench 19_ReLU at its published size (6 GiB input) with the honest CUDA relu,
#      final mode: device arena twice (the first builds and compiles), then the host arena once, warm
# Summary in $OUT/summary.txt.
set -u
OUT=${OUT:-gpu-devarena-out}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
SUM="$OUT/summary.txt"
{ date -u; nvidia-smi -L; echo "cores $(nproc)"; echo "commit ${KH_COMMIT:-$(git log --format=%h -1 2>/dev/null)}"
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
  nvidia-smi --query-gpu=driver_version,memory.total --format=csv,noheader; } > "$SUM" 2>&1
t0=$(date +%s)
timeout 200 python3 harness/bench/tools/gpu_tests.py --missing --budget-s 190 --out "$OUT" > "$OUT/tests.txt" 2>&1
echo "1 gpu tests: exit $? after $(( $(date +%s) - t0 )) s" >> "$SUM"; tail -5 "$OUT/tests.txt" >> "$SUM"
for m in 0 1; do
  t0=$(date +%s)
  KH_DEVICE_ARENA=$m timeout 150 python3 harness/bench/tools/gpu_datapath.py --profile p2g5 > "$OUT/datapath-$m.txt" 2>&1
  echo "2 datapath KH_DEVICE_ARENA=$m: exit $? after $(( $(date +%s) - t0 )) s" >> "$SUM"; grep -v "^{" "$OUT/datapath-$m.txt" | tail -6 >> "$SUM"
done
TASK=tests/fixtures/kernelbench-fullsize/19_ReLU.py
for spec in "1 2" "0 1"; do
  set -- $spec
  t0=$(date +%s)
  KH_DEVICE_ARENA=$1 timeout 260 python3 harness/bench/tools/gpu_held.py --task $TASK --runs $2 \
    --build-dir /var/tmp/kh-held-relu > "$OUT/held-$1.jsonl" 2>&1
  echo "3 held 19_ReLU full size KH_DEVICE_ARENA=$1: exit $? after $(( $(date +%s) - t0 )) s" >> "$SUM"
  python3 - "$OUT/held-$1.jsonl" >> "$SUM" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except ValueError:
        print("   ", line.rstrip()[:300]); continue
    req = {k: v for k, v in r["requests"].items() if v[1] > 0.2}
    print(f"  run {r['run']}: {r['status']} {r['rule'] or ''} held {r['held_s']} s wall {r['wall_s']} s phases {r['phases']}")
    print(f"    requests over 0.2 s: {req}")
    print(f"    median_us {r['median_us']} n {r['n']} {r['message']}")
PY
done
cat "$SUM"
