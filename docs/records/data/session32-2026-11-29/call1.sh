#!/usr/bin/env bash
# Session 32 (2026-11-29), call 1: session 31's call (../session31-2026-11-29/call1.sh) on the kind lent now,
# one H200 (16 cores): the two-H200 kind was not lent. 8 compile workers, as in session 30's one-H200 run
# (12.46 judged a minute after the first verdict, first verdict 203 s cold, 33 s warm), so the two compare.
# Predictions for one H200 (written before the run): cold first verdict 35-60 s; 11-14 judged a minute after
# it (the GPU, not the check, bounds it now); warm first verdict 18-25 s with the warm native units "built
# before"; no harness false verdict; the task check under 1 s a task on average (2.4 s in session 30).
set -u
export OUT=${OUT:-$PWD/out} N=${N:-80} JOBS=${JOBS:-8} BUDGET=${BUDGET:-440} P1_S=${P1_S:-280}; mkdir -p "$OUT"
echo "commit ${KH_COMMIT:-?}" > "$OUT/commit.txt"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > "$OUT/pip.txt" 2>&1
PYTHONPATH=/tmp/site timeout 90 python3 -m pytest -q -p no:cacheprovider tests/suite/test_degenerate_tasks.py -k cuda > "$OUT/check-gpu-test.txt" 2>&1
echo "check's GPU test: exit $?" >> "$OUT/check-gpu-test.txt"; tail -3 "$OUT/check-gpu-test.txt"
bash harness/bench/tools/gpu_published.sh
