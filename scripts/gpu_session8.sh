#!/usr/bin/env bash
# The eighth session's GPU checks (one device call each, under 10 minutes, fresh machine).
#   PART=T  the conformance set's Triton rows (scripts/gpu_conformance.py --only triton): the
#           warm-apart build order for sources that compile at their first call
#           (sandbox/buildphase.py), with each judgement's order, durations and check_bg_us;
#           then the honest CUDA relu once (the sealed order) if time is left
#   PART=G  NODES (pytest node ids), then the Triton rows again if time is left
# One summary file per part under $OUT ($OUT/<part>-summary.txt); full logs beside it.
set -u
OUT=${OUT:-gpu-session8-out}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1; START=$(date +%s)
PART=${PART:-T}; SUM="$OUT/$PART-summary.txt"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import sys, torch, triton; print(sys.version.split()[0], torch.__version__, torch.version.cuda, 'triton', triton.__version__)"
  git log --oneline -1 2>/dev/null; } > "$SUM" 2>&1

triton_rows() {  # $1 = seconds
  timeout "$1" python3 scripts/gpu_conformance.py --only triton --timing-s 1 > "$OUT/$PART-triton.jsonl" 2> "$OUT/$PART-triton.err"
  echo "EXIT $?" >> "$SUM"
  python3 - "$OUT/$PART-triton.jsonl" >> "$SUM" 2>&1 <<'PY'
import json, sys
for line in open(sys.argv[1]):
    line = line.strip()
    if not line.startswith("{"):
        if line:
            print(line)
        continue
    r = json.loads(line)
    if "kernel" not in r:
        print(r); continue
    ba = r.get("build_apart") or {}; d = r.get("durations_s") or {}; bg = r.get("check_bg_us") or {}
    print(r["kernel"], r["rules"], r["status"], r.get("rule"), "agree", r.get("agree"), "order", ba.get("order"),
          "prewarm", ba.get("prewarm"), "sealed_failures", [f[:160] for f in ba.get("sealed_failures", [])],
          "warm_apart_s", d.get("warm_apart"), "warm_s", d.get("warm"), "exclusive_s", d.get("exclusive"),
          "total_s", d.get("total"), "wall_s", r.get("wall_s"),
          "bg", {k: bg.get(k) for k in ("us", "windows", "over")}, (r.get("message") or "")[:150] if not r.get("agree") else "")
    if not r.get("agree"):
        print("   logs:", (r.get("logs") or "")[-700:].replace("\n", " | "))
PY
}
relu() {
  timeout "${1:-150}" python3 -m harness eval tests/adversarial/tasks/relu.py tests/adversarial/candidates/honest_cuda_relu.py \
    --device cuda --mode final --max-timing-s 2 --json > "$OUT/relu.json" 2> "$OUT/relu.err"
  python3 -c "
import json; v = json.load(open('$OUT/relu.json')); e = v['evidence']
print('relu', v['status'], v.get('rule'), e.get('build_apart'), v['durations_s'], e.get('check_bg_us'))" >> "$SUM" 2>&1 || echo "relu: no verdict" >> "$SUM"
}

case "$PART" in
T)
  triton_rows 430
  left=$(( START + 580 - $(date +%s) )); [ "$left" -gt 100 ] && relu $(( left - 5 ))
  ;;
G)
  timeout ${G_S:-300} python3 -m pytest -v -rA -p no:cacheprovider --durations=20 $NODES > "$OUT/G-pytest.log" 2>&1
  echo "PYTEST_EXIT $?" >> "$OUT/G-pytest.log"
  grep -E "PASSED|FAILED|ERROR|passed|failed|PYTEST_EXIT|^E " "$OUT/G-pytest.log" | tail -40 >> "$SUM"
  left=$(( START + 580 - $(date +%s) )); [ "$left" -gt 200 ] && triton_rows $(( left - 10 ))
  ;;
esac
echo "done after $(( $(date +%s) - START )) s" >> "$SUM"
