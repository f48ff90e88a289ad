#!/usr/bin/env bash
# The slim compile cut on the GPU machine (issue 27, goal 2; sandbox/build/slim.py): one device call.
#   1  the conformance set's CUDA rows built and judged with KH_BUILD_SLIM=1 KH_BUILD_LITE=1 in a
#      fresh build cache: every row must still get its expected verdict (gpu_conformance.py), and
#      each verdict's evidence.build says whether the slim build was used (slim / slim_fallbacks)
#   2  slim_check.py: main.cpp and cuda.cu of every CUDA kernel compiled slim and as before, CPU
#      seconds each, with this machine's CUDA torch and compilers
# Summary in $OUT/summary.txt.
set -u
OUT=${OUT:-gpu-slim-out}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
SUM="$OUT/summary.txt"
{ date -u; nvidia-smi -L; echo "cores $(nproc)"; echo "commit ${KH_COMMIT:-$(git log --format=%h -1 2>/dev/null)}"
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"; } > "$SUM" 2>&1
t0=$(date +%s)
HARNESS_CACHE=/var/tmp/kh-slim-cache KH_BUILD_SLIM=1 KH_BUILD_LITE=1 timeout 330 \
  python3 harness/bench/tools/gpu_conformance.py --jobs 8 > "$OUT/conformance-slim.jsonl" 2>&1
echo "1 conformance with the slim cut: exit $? after $(( $(date +%s) - t0 )) s" >> "$SUM"
python3 - "$OUT/conformance-slim.jsonl" >> "$SUM" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if "kernel" in r:
        b = r.get("build") or {}
        print(f"  {r['kernel']:42} {r['rules']:8} {r['status']:10} agree={r['agree']} slim={b.get('slim')} "
              f"slim_fallbacks={b.get('slim_fallbacks')} lite={b.get('lite')}")
PY
t0=$(date +%s)
timeout 240 python3 harness/bench/tools/slim_check.py --out /var/tmp/kh-slim-check --jobs 8 > "$OUT/slim-check.txt" 2>&1
echo "2 slim_check: exit $? after $(( $(date +%s) - t0 )) s" >> "$SUM"
cat "$OUT/slim-check.txt" >> "$SUM"
cp /var/tmp/kh-slim-check/slim-check.json "$OUT/" 2>/dev/null
cat "$SUM"
