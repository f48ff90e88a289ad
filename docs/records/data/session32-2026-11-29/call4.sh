#!/usr/bin/env bash
# Session 32 (2026-11-29), call 4, one H200 (16 cores), the session's last 349 s of device time: the first 24 of
# calls 1-3's published set, cold only (200 s), after 1600a3b:
#   - the task check's workers take the next task as each becomes free (call 3: three workers with parts dealt
#     ahead, 134 s for 63 tasks); its GPU test, whose assertion was written for one worker (call 3: failed);
#   - GPU memory units over 0.9 of the GPU, and a verdict rejected for CUDA running out of memory beside other
#     judgements judged again alone (l1_39, an honest L2Norm kernel, was rejected so in 3 of 6 batches of calls 1-3).
# Predictions (written before the run): the check's GPU test passes; the check of the set's tasks in 20-40 s; first
# verdict 40-55 s; 12-15 judged a minute after it; l1_39 valid (judged again alone if it ran the GPU out of memory);
# l1_37 runtime_error as in every cold batch of calls 1-3 (its build in a read-only cache: not this session's).
set -u
export OUT=${OUT:-$PWD/out} N=${N:-24} JOBS=${JOBS:-8} BUDGET=${BUDGET:-215} P1_S=${P1_S:-200}; mkdir -p "$OUT"
echo "commit ${KH_COMMIT:-?}" > "$OUT/commit.txt"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site ${WHL:-.whl}/*.whl > "$OUT/pip.txt" 2>&1
PYTHONPATH=/tmp/site timeout 45 python3 -m pytest -q -p no:cacheprovider tests/suite/test_degenerate_tasks.py -k cuda > "$OUT/check-gpu-test.txt" 2>&1
echo "check's GPU test: exit $?" >> "$OUT/check-gpu-test.txt"; tail -3 "$OUT/check-gpu-test.txt"
bash harness/bench/tools/gpu_published.sh
