#!/usr/bin/env bash
# One device call (< 10 min): an offline EvoEngineer run with CUDA candidates on 3 ops (in the
# background, through the local executor: compiles run ahead of the one timing worker), and in
# the foreground the red-team cases a first call did not finish or report (verdict JSON kept).
set -u
OUT=${OUT:-gpu-final-out}; mkdir -p "$OUT"
RES=${RES:-/tmp/gpu-final-results}  # kept out of $OUT (many files); the database is copied back
export PYTHONUNBUFFERED=1
( timeout ${RUN_S:-480} python3 -m harness run --method evoengineer --llm offline --ops relu,softmax,matmul_square \
    --device cuda --budget 3 --seed 0 --executor local --jobs 3 --results "$RES" --run-id gpu-evoengineer \
    > "$OUT/run.log" 2>&1
  echo "RUN_EXIT $?" >> "$OUT/run.log" ) &
for c in ${EVAL_CASES-sum_dim:honest_cuda_sum conv2d:honest_cuda_conv2d softmax:honest_triton_softmax}; do
  t=${c%%:*}; k=${c##*:}
  timeout 120 python3 -m harness eval tests/adversarial/tasks/$t.py tests/adversarial/candidates/$k.py \
    --device cuda --mode final --max-timing-s 3 --json > "$OUT/$k.json" 2> "$OUT/$k.err"
  echo "$k exit $?"
  python3 -c "import json,sys; v=json.load(open(sys.argv[1])); print(v['status'], v.get('rule'), v.get('message'), {k: round(s['value'],2) for k, s in (v.get('speedups') or {}).items()})" "$OUT/$k.json" 2>&1 | tail -1
done
[ "${PYTEST_S:-150}" = 0 ] || timeout ${PYTEST_S:-150} python3 -m pytest -v -rA -p no:cacheprovider tests/adversarial/test_redteam_gpu.py \
  -k "device_independent or triton_softmax" > "$OUT/redteam.log" 2>&1
[ "${PYTEST_S:-150}" = 0 ] || { echo "PYTEST_EXIT $?" >> "$OUT/redteam.log"
grep -E "PASSED|FAILED|ERROR|passed|failed|PYTEST_EXIT" "$OUT/redteam.log" | tail -8; }
wait
tail -30 "$OUT/run.log"
python3 -m harness runs show gpu-evoengineer --results "$RES" 2>&1 | tail -40
