#!/usr/bin/env bash
# Session 21, call 1 (nvidia-h100-x2 or a one-GPU fallback with PART=a|b): at once
#  (a) GPU 0: the integrity scenario (red team, honest kernels, lane tests, relu repeats)
#  (b) GPU 1: b1 the precompiled headers (none, -O2, -O3) built into /var/tmp/kh-slim-cache/pch;
#      b2 two CUDA judgements in fresh build caches with KH_BUILD_PCH=1 (softmax_pybind with the slim
#      and lite cuts as `harness run` sets them; sum_noflags stock) -> evidence.build.pch;
#      b3 KH_BENCH=1 pytest tests/benchmarks/test_compile_steps.py -k precompiled (CPU, background);
#      b4 KH_BUILD_PCH=1 harness.bench run slim with the time left.
# Everything lands in /var/tmp/s21 and is packed into $OUT (<= 8 files). KH_COMMIT must be set.
set -u
export PYTHONUNBUFFERED=1
W=/var/tmp/s21; mkdir -p $W; START=$(date +%s); END=$((START + ${CALL_S:-560}))
el() { echo $(( $(date +%s) - START )); }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl > $W/pip.log 2>&1 || echo "pip install failed" >> $W/pip.log
export PYTHONPATH=/tmp/site
{ date -u; nvidia-smi -L; echo "cores $(nproc)"; echo "KH_COMMIT=$KH_COMMIT"; git log --oneline -1
  python3 -c "import sys, torch, triton; print(sys.version.split()[0], torch.__version__, torch.version.cuda, 'triton', triton.__version__, 'GPUs', torch.cuda.device_count())"
  python3 -c "import pytest_benchmark; print('pytest-benchmark', pytest_benchmark.__version__)"; } > $W/env.txt 2>&1
NG=$(nvidia-smi -L | wc -l); GA=0; GB=$(( NG > 1 ? 1 : 0 ))
PART=${PART:-ab}

if [[ $PART == *a* ]]; then
( export CUDA_VISIBLE_DEVICES=$GA
  BUDGET=$(( END - $(date +%s) - 60 )) timeout $(( END - $(date +%s) - 8 )) python3 -m harness.bench run integrity \
    --out $W/integrity --limit-s $(( END - $(date +%s) - 20 )) > $W/integrity-run.log 2>&1
  echo "integrity exit $? at $(el) s" >> $W/timeline.txt ) &
fi

if [[ $PART == *b* ]]; then
( export CUDA_VISIBLE_DEVICES=$GB
  P=/var/tmp/kh-slim-cache/pch
  echo "b1 headers start $(el) s" >> $W/timeline.txt
  HARNESS_CACHE=/var/tmp/kh-slim-cache KH_BUILD_PCH=1 timeout 240 python3 - > $W/pch-headers.txt 2>&1 <<'PY'
import json
from concurrent.futures import ThreadPoolExecutor
from sandbox.build import pch
with ThreadPoolExecutor(3) as ex:
    for f, (took, why) in zip(pch.VARIANTS, ex.map(pch.ensure, pch.VARIANTS)):
        print(json.dumps({"flags": f, "built_s": round(took, 1), "why": why, "folder": str(pch.folder(pch.home(), f))}))
PY
  echo "b1 headers exit $? at $(el) s" >> $W/timeline.txt; du -sh $P/*/ >> $W/pch-headers.txt 2>&1
  ( HARNESS_CACHE=/var/tmp/kh-slim-cache KH_BENCH=1 timeout 300 python3 -m pytest -q -p no:cacheprovider \
      tests/benchmarks/test_compile_steps.py -k precompiled --benchmark-json=$W/bench-pch.json > $W/bench-pch.log 2>&1
    echo "b3 pytest bench exit $? at $(el) s" >> $W/timeline.txt ) &
  E="KH_BUILD_PCH=1 KH_PCH_DIR=$P"
  env $E HARNESS_CACHE=/var/tmp/kh-pch-a KH_BUILD_SLIM=1 KH_BUILD_LITE=1 timeout 200 python3 -m harness eval \
    tests/adversarial/tasks/softmax.py tests/conformance/kernels/cuda_inline_softmax_pybind.py --device cuda \
    --mode final --max-timing-s 1 --json > $W/pch-softmax-slim-lite.json 2> $W/pch-softmax-slim-lite.err & E1=$!
  env $E HARNESS_CACHE=/var/tmp/kh-pch-b timeout 200 python3 -m harness eval \
    tests/adversarial/tasks/sum_dim.py tests/conformance/kernels/cuda_inline_sum_noflags.py --device cuda \
    --mode final --max-timing-s 1 --json > $W/pch-sum-stock.json 2> $W/pch-sum-stock.err & E2=$!
  wait $E1 $E2; echo "b2 evals done at $(el) s" >> $W/timeline.txt
  L=$(( END - $(date +%s) - 15 ))
  if [ $L -gt 90 ]; then
    KH_BUILD_PCH=1 timeout $((L + 5)) python3 -m harness.bench run slim --out $W/slim --limit-s $L > $W/slim-run.log 2>&1
    echo "b4 slim exit $? (limit $L s) at $(el) s" >> $W/timeline.txt
  else echo "b4 slim skipped: $L s left" >> $W/timeline.txt; fi
  wait ) &
fi
wait
echo "all done at $(el) s" >> $W/timeline.txt
python3 docs/records/data/session21-2026-11-27/extract.py $W > $W/summary.txt 2>&1
cp $W/summary.txt $OUT/summary.txt
tar czf $OUT/s21-call1.tgz --exclude='*.so' -C /var/tmp s21 2>/dev/null
ls -la $OUT
cat $W/summary.txt
