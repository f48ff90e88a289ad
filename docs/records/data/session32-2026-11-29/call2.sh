#!/usr/bin/env bash
# Session 32 (2026-11-29), call 2, one H200 (16 cores): call 1's batch again (N=80, 8 compile workers, cold 280 s
# then warm) after 387129a and the worker start-up evidence:
#   - the task check holds the device's lock around each draw's call and comparison, not its setups (call 1: the
#     check took 208.5 s for 63 tasks, setup 91.0 s of it inside the lock, memory_wait 61.1 s);
#   - its GPU memory share is one worker's draw (check_gpu_bytes), not a judgement's two workers and arena;
#   - each verdict records its workers' own start-up (evidence.worker_start_s);
#   - each batch's CPU seconds by process role (harness/bench/tools/cpu_roles.py, in the summary).
# Predictions (written before the run): the check 90-130 s wall, its lock_wait summed under 30 s and memory_wait
# under 30 s; cold rate after the first verdict 10-12 a minute (9.1 in call 1); cold first verdict 70-90 s (the
# first build, then a ~35 s judgement: unchanged); warm as in call 1 (about 14 a minute, first verdict about 34 s);
# the CPU: judging workers the largest share of the warm batch, compilers the largest of the cold one.
set -u
export OUT=${OUT:-$PWD/out} N=${N:-80} JOBS=${JOBS:-8} BUDGET=${BUDGET:-440} P1_S=${P1_S:-280}; mkdir -p "$OUT"
echo "commit ${KH_COMMIT:-?}" > "$OUT/commit.txt"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > "$OUT/pip.txt" 2>&1
PYTHONPATH=/tmp/site timeout 70 python3 -m pytest -q -p no:cacheprovider tests/suite/test_degenerate_tasks.py -k cuda > "$OUT/check-gpu-test.txt" 2>&1
echo "check's GPU test: exit $?" >> "$OUT/check-gpu-test.txt"; tail -3 "$OUT/check-gpu-test.txt"
bash harness/bench/tools/gpu_published.sh
