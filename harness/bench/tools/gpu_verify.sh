#!/usr/bin/env bash
# Issue 29 item 4 on the lent GPU, one device call (< 8 min): do published numbers reproduce?
#   1. an offline best-of-n run on cuda over 10 ops (budget 1, offline model never broken), each
#      op's final kernel judged in 3 independent sessions (--final-sessions 3), ~5 min;
#   2. the leaderboard built from it (its intervals are over the 3 sessions);
#   3. `harness leaderboard verify` re-judges the 10 published rows in a new process, 3 sessions
#      each, from the site's leaderboard.json (the command each row shows), ~3 min (181 s on an H200);
#   4. a short table last: per row the published number and interval, the new number, holds.
# Target (issue 29): at least 9 of 10 hold. verify's own rule (exit 1 below it) needs 8 of 10.
# Usage on the device:  bash harness/bench/tools/gpu_verify.sh      (writes $OUT, default gpu-verify-out)
set -u
OUT=${OUT:-gpu-verify-out}; mkdir -p "$OUT"
RES=${RES:-/tmp/gpu-verify-results}; rm -rf "$RES"
OPS=${OPS:-relu,leaky_relu,sigmoid,tanh,gelu,silu,elu,softmax,layer_norm,sum_dim}
export PYTHONUNBUFFERED=1
cat > "$OUT/llm.toml" <<'TOML'
[llm]
model = "offline"
offline_broken_rate = 0.0
TOML
t0=$(date +%s)
timeout "${RUN_S:-300}" python3 -m harness run --method best-of-n --llm-config "$OUT/llm.toml" --ops "$OPS" \
  --device cuda --budget 1 --final-sessions 3 --executor local --jobs 10 --eval-option max_timing_s=1 \
  --results "$RES" --run-id gpu-verify --quiet > "$OUT/run.log" 2>&1
echo "RUN_EXIT $? after $(( $(date +%s) - t0 )) s" | tee -a "$OUT/run.log"
python3 -m harness leaderboard build --results "$RES" --out "$OUT/site" > "$OUT/build.log" 2>&1
echo "BUILD_EXIT $?"; tail -4 "$OUT/build.log"
cp "$RES/harness.sqlite" "$OUT/harness.sqlite" 2>/dev/null
t1=$(date +%s)
timeout "${VERIFY_S:-300}" python3 -m harness leaderboard verify --leaderboard "$OUT/site/leaderboard.json" \
  --limit 10 --jobs "${VJOBS:-5}" --json > "$OUT/verify.json" 2> "$OUT/verify.err"
echo "VERIFY_EXIT $? after $(( $(date +%s) - t1 )) s (total $(( $(date +%s) - t0 )) s)"
tail -20 "$OUT/run.log"
python3 - "$OUT/verify.json" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:  # noqa: BLE001
    sys.exit(f"no verify report: {e}")
print(f"this machine: {r['hardware_here']}; recorded on {', '.join(r['recorded_hardware'])}")
print(f"{'op':12} {'sessions':>8} {'published [95% interval]':>30} {'now':>9}  holds")
for row in r["rows"]:
    lo, hi = row["recorded_ci"] or (float("nan"), float("nan"))
    now = f"{row['new']:.4f}" if row["new"] is not None else row["new_status"]
    print(f"{row['op']:12} {row['sessions']:>8} {row['recorded']:>10.4f} [{lo:.4f}, {hi:.4f}] {now:>9}  {row['holds']}")
print(r["rule"])
PY
