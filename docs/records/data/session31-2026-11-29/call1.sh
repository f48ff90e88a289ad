#!/usr/bin/env bash
# Session 31 (2026-11-29) had no device time left (97 s of the session's budget): this call is written for the
# next session to run first, on the two-H200 kind (carry: [".whl", ".kb", ".pub"], KH_COMMIT set literally).
# It checks session 31's changes, none of which has run on a GPU:
#   - eval-batch's task check beside the judging, opening each task as it passes (harness/batch/checkgate.py):
#     session 30's cold first verdict (203 s on one H200, 227 s on two) waited for all 63 tasks' checks;
#   - each task's check reserves its share of the GPU's memory and its reference worker gives it back (trim):
#     no judgement beside the check may be `rejected sandbox.resources` or fail to allocate;
#   - a unit whose source an earlier run built goes straight to a judging lane (evidence prebuild "built before"):
#     the warm first verdict waited 13 s for a compile worker's cache-hit build worker (session 30);
#   - the task check on the device (own_call, keep_own, check_own: no arena, no copy to the host and back) and
#     its timing line (where its time goes: memory_wait, start, warm, setup, own_call, keep_own, check_own).
# Predictions (written before the run): cold first verdict 35-60 s (the first builds' 20-25 s compile, then a
# 20 s judgement); 18-25 judged a minute after the first on two GPUs; warm first verdict 18-25 s and every warm
# native unit "built before"; no harness false verdict (37_FrobeniusNorm and the read-only cache valid or the
# candidate's own error); the check under 1 s a task on average (2.4 s in session 30).
set -u
export OUT=${OUT:-$PWD/out} N=${N:-80} JOBS=${JOBS:-16}; mkdir -p "$OUT"
# first, the check's own GPU test: the degenerate task and the controls through own_call/keep_own/check_own/trim
timeout 90 python3 -m pytest -q -p no:cacheprovider tests/suite/test_degenerate_tasks.py -k cuda > "$OUT/check-gpu-test.txt" 2>&1
echo "check's GPU test: exit $?" >> "$OUT/check-gpu-test.txt"; tail -3 "$OUT/check-gpu-test.txt"
export BUDGET=${BUDGET:-460}
bash harness/bench/tools/gpu_published.sh
