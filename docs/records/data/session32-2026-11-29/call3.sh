#!/usr/bin/env bash
# Session 32 (2026-11-29), call 3, one H200 (16 cores): calls 1 and 2's batch again (N=80, 8 compile workers, cold
# 280 s then warm for the time left) after this session's changes (376158e and before):
#   - spare reference workers: the local executor starts judgements' reference workers ahead (sandbox/lane/spares.py;
#     call 2: the reference's start-up, 10-17 s with torch.compile's preload, was the longest step before every
#     judgement's import; the candidate's worker took 3-5 s, a build worker's cache hit 5-7 s);
#   - the task check: three reference workers per GPU, every draw's model built before one short hold of the lock,
#     the check first in line for it, answers kept as each is known (call 1: 208 s for 63 tasks; call 2: not done
#     in 280 s, and nothing kept).
# Predictions (written before the run): the check 50-90 s for 63 tasks; cold first verdict 30-45 s, then 11-14 a
# minute (8 builders); warm first verdict 15-22 s, 18-24 a minute, judgement total median 10-14 s with most
# reference workers "spare"; no status differs from calls 1-2 for the same candidate except known flaky ones.
set -u
export OUT=${OUT:-$PWD/out} N=${N:-80} JOBS=${JOBS:-8} BUDGET=${BUDGET:-430} P1_S=${P1_S:-270}; mkdir -p "$OUT"
echo "commit ${KH_COMMIT:-?}" > "$OUT/commit.txt"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site ${WHL:-.whl}/*.whl > "$OUT/pip.txt" 2>&1
PYTHONPATH=/tmp/site timeout 60 python3 -m pytest -q -p no:cacheprovider tests/suite/test_degenerate_tasks.py -k cuda > "$OUT/check-gpu-test.txt" 2>&1
echo "check's GPU test: exit $?" >> "$OUT/check-gpu-test.txt"; tail -3 "$OUT/check-gpu-test.txt"
bash harness/bench/tools/gpu_published.sh
