#!/usr/bin/env bash
# The ninth session's GPU checks (issue 16; one device call, under 10 minutes, fresh machine).
#   R  the honest CUDA relu in final mode with both baselines, RUNS times in one process on one
#      fresh cache root (scripts/gpu_held.py), then once with the baseline book off: the
#      reference's torch.compile caches kept across judgements of the op (sandbox/refcache.py),
#      torch.compile's imports before the device is held, booked baselines timed as sentinels
#      (sandbox/baselinebook.py); per run the GPU-held time and where it goes
#   B  the conformance set's CUDA rows through `harness eval-batch` (the pipeline executor, one
#      GPU, compile workers ahead of it), final mode, strict rules, --max-timing-s 2: judged per
#      minute, first verdict after submission, median GPU-held time, verdicts against the table
# Summary in $OUT/summary.txt; raw files beside it.
set -u
OUT=${OUT:-gpu-session9-out}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1; START=${START0:-$(date +%s)}
SUM="$OUT/summary.txt"; RUNS=${RUNS:-3}; PARTS=${PARTS:-R B}
export HARNESS_CACHE=${HARNESS_CACHE:-$(mktemp -d /var/tmp/kh-s9-XXXX)}
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import sys, torch, triton; print(sys.version.split()[0], torch.__version__, torch.version.cuda, 'triton', triton.__version__)"
  git log --oneline -1 2>/dev/null; } > "$SUM" 2>&1

relu_runs() {  # in one process: the book lives in the judging process (sandbox/baselinebook.py)
  timeout 300 python3 scripts/gpu_held.py --runs "$RUNS" ${HELD_ARGS---book --no-reuse-run} > "$OUT/held.jsonl" 2> "$OUT/held.err"
  echo "gpu_held exit $?" >> "$SUM"
  python3 - "$OUT/held.jsonl" >> "$SUM" 2>&1 <<'PY'
import json, sys
for x in open(sys.argv[1]):
    if x.startswith("{"):
        r = json.loads(x)
        print(f"relu run {r['run']} ({r['label']}): {r['status']} {r['rule']} order {r['order']} held {r['held_s']} s",
              r["phases"], r["requests"], "ref cache", r["reference_cache"], "book",
              {b: (e["reused"], e["book_n"], e["fresh_n"], e.get("drift")) for b, e in (r["baseline_book"] or {}).items()},
              "median", r["median_us"], "n", r["n"], "speedups", r["speedups"], r["message"])
        print("   requests", r["requests"])
PY
}

batch() {  # $1 = seconds
  python3 - "$OUT/manifest.jsonl" <<'PY'
import json, sys
sys.path.insert(0, ".")
from tests.conformance.manifest import ROWS
with open(sys.argv[1], "w") as f:
    for r in ROWS:
        if r.device == "cuda" and not r.needs:
            f.write(json.dumps({"id": r.kernel, "reference": str(r.task_path()), "candidate": str(r.path()),
                                "mode": "final", "device": "cuda"}) + "\n")
PY
  local t0; t0=$(date +%s.%N)
  timeout "$1" python3 -m harness eval-batch "$OUT/manifest.jsonl" --out "$OUT/batch" --mode final --device cuda \
    --max-timing-s 2 --jobs 15 > "$OUT/batch.log" 2>&1
  local rc=$?
  mkdir -p "$OUT/verdicts-flat"  # the device tool does not fetch deep trees
  find "$OUT/batch/verdicts" -name "*.json" -exec cp {} "$OUT/verdicts-flat/" \; 2>/dev/null
  tar czf "$OUT/verdicts.tgz" -C "$OUT/verdicts-flat" . 2>/dev/null  # one file: the device tool fetches a few
  echo "eval-batch exit $rc (judges per device: ${KH_JUDGES_PER_DEVICE:-default}) after $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s" >> "$SUM"
  python3 - "$OUT/batch" "$t0" >> "$SUM" 2>&1 <<'PY'
import glob, json, os, statistics, sys
sys.path.insert(0, ".")
from tests.conformance.manifest import ROWS
want = {r.kernel: r.expected("strict") for r in ROWS if r.device == "cuda"}
out, t0 = sys.argv[1], float(sys.argv[2])
rows = [json.loads(x) for x in open(os.path.join(out, "results.jsonl")) if x.strip()]
held, done_at, agree = [], [], 0
for row in rows:
    vf = row.get("verdict_file")
    v = json.load(open(os.path.join(out, vf))) if vf and os.path.exists(os.path.join(out, vf)) else {}
    d = v.get("durations_s", {})
    if d.get("exclusive") is not None:  # the judging worker's hold, plus the warm-apart worker's (Triton)
        held.append(d["exclusive"] + (v.get("evidence", {}).get("warm_apart_exclusive_s") or 0.0))
    ok = (row["status"], row.get("rule") or None) == want.get(row["id"])
    agree += ok
    done_at.append(os.path.getmtime(os.path.join(out, vf)) - t0 if vf else None)
    print(f"  {row['id']:38s} {row['status']:10s} {str(row.get('rule')):28s} want {want.get(row['id'])} {'ok' if ok else 'DIFF'}"
          f" held {d.get('exclusive')} warm-apart held {v.get('evidence', {}).get('warm_apart_exclusive_s')} total {d.get('total')} order {(v.get('evidence', {}).get('build_apart') or {}).get('order')}")
    print("     durations", {k: x for k, x in d.items() if k not in ("exclusive", "total")},
          "freeze", v.get("evidence", {}).get("freeze_s"), "n",
          {k: m.get("n") for k, m in (v.get("timings") or {}).items()})
times = sorted(t for t in done_at if t is not None)
if times:
    span = times[-1]
    print(f"batch: {len(rows)} judged, {agree} agree with the table; first verdict {times[0]:.1f} s after submission;"
          f" last {span:.1f} s; {60 * len(rows) / span:.2f} per minute overall;"
          f" after the first verdict {60 * (len(rows) - 1) / max(1e-9, span - times[0]):.2f} per minute")
if held:
    print(f"GPU held per judgement (judging + warm-apart workers): median {statistics.median(held):.2f} s, mean {statistics.mean(held):.2f} s,"
          f" max {max(held):.2f} s over {len(held)}")
PY
}

for p in $PARTS; do
  case "$p" in
    R) relu_runs ;;
    T) cp "$OUT/batch/results.jsonl" "$OUT/batch-results.jsonl" 2>/dev/null  # the device tool fetches 8 files
       rm -rf "$OUT/verdicts-flat" "$OUT/batch" "$OUT/manifest.jsonl" "$OUT/held.err" ;;
    B) left=$(( START + 575 - $(date +%s) )); [ "$left" -gt 120 ] && batch "$left" || echo "B: no time left" >> "$SUM" ;;
  esac
done
echo "done after $(( $(date +%s) - START )) s" >> "$SUM"
cat "$SUM"
