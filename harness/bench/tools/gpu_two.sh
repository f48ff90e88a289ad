#!/usr/bin/env bash
# Issue 16 on two GPUs (nvidia-h200-x2), or issue 27 goal 3 on four (the "gpu2" runs use every GPU shown): one device call, under 10 minutes.
#   E  the machine: GPUs, cores, versions
#   W  warm pass: the conformance set's CUDA rows and probe #38 on both GPUs (fills the build,
#      Triton and inductor caches, so the runs below compare lanes, not compilers)
#   1  the set COPIES1 times (default COPIES), GPU 0 only (CUDA_VISIBLE_DEVICES=0): one lane group
#   2  the same units on both GPUs: one lane group and one device lock per GPU
#   1:N, 2:N  the same with N judging threads per GPU (KH_JUDGES_PER_DEVICE; default: harness/executors/local.py)
#   Y  the base set (RAY_SET=mixed: 7 of its rows) through --executor ray (GPUs as Ray resources,
#      one judgement per GPU at a time; Ray carried as wheels in .whl/, scripts/ray_wheel.py)
#   C  the runs' verdicts compared (every kernel one verdict in every run and copy) and 2 / 1
# PARTS picks them (default "E W 1 2 C"); HARNESS_CACHE and the runs (runs.jsonl) live under
# /var/tmp, so a second call on the same warm machine reuses the caches and C compares the runs of
# both calls. Summary in $OUT/summary.txt, every run so far in $OUT/runs.jsonl.
set -u; START=$(date +%s)
OUT=${OUT:-gpu-two-out}; mkdir -p "$OUT"; export PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # KINDS.md: keep set
export HARNESS_CACHE=${HARNESS_CACHE:-/var/tmp/kh-two-cache}
WORK=/var/tmp/kh-two-work; mkdir -p "$WORK"
SUM="$OUT/summary.txt"; RUNS="$WORK/runs.jsonl"; COPIES=${COPIES:-2}; COPIES1=${COPIES1:-$COPIES}
BUDGET=${BUDGET:-570}
JOBS=${JOBS:-$(( $(nproc) - 1 ))}
python3 harness/bench/tools/gpu_two_summary.py manifest "$WORK" "$COPIES" "$COPIES1"

batch() {  # name manifest [env ...] -- [eval-batch options ...]
  local name=$1 manifest=$2; shift 2
  local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  local left=$(( START + BUDGET - $(date +%s) ))
  if [ "$left" -lt 60 ]; then echo "$name: skipped, $left s left" >> "$SUM"; return; fi
  rm -rf "$WORK/$name"; local t0; t0=$(date +%s.%N)
  env "${envs[@]}" timeout "$left" python3 -m harness eval-batch "$manifest" --out "$WORK/$name" --mode final \
    --device cuda --max-timing-s 2 --jobs "$JOBS" "$@" > "$OUT/$name.log" 2>&1
  echo "$name: eval-batch exit $? after $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s (${envs[*]} $*)" >> "$SUM"
  python3 harness/bench/tools/gpu_two_summary.py run "$name" "$WORK/$name" "$t0" "$RUNS" >> "$SUM" 2>&1
  tail -c 4000 "$OUT/$name.log" > "$WORK/$name/eval-batch.tail"; rm -f "$OUT/$name.log"
  tar czf "$OUT/$name.tgz" -C "$WORK/$name" . 2>/dev/null  # one file a run: the device tool fetches 8
}

for p in ${PARTS:-E W 1 2 C}; do
  case "$p" in
    E) { date -u; nvidia-smi -L; echo "cores $(nproc)"; git log --oneline -1 2>/dev/null
         python3 -c "import sys, torch, triton; print(sys.version.split()[0], torch.__version__, 'GPUs', torch.cuda.device_count(), 'triton', triton.__version__)"
       } >> "$SUM" 2>&1 ;;
    W) batch warm "$WORK/base.jsonl" KH_TWO=1 -- ;;
    1|1:*) lanes=$([[ $p == *:* ]] && echo "${p#*:}")
           batch "gpu1-l${lanes:-d}-$(date +%s)" "$WORK/copies1.jsonl" CUDA_VISIBLE_DEVICES=0 KH_JUDGES_PER_DEVICE="$lanes" -- ;;
    2|2:*) lanes=$([[ $p == *:* ]] && echo "${p#*:}")
           batch "gpu2-l${lanes:-d}-$(date +%s)" "$WORK/copies.jsonl" KH_JUDGES_PER_DEVICE="$lanes" -- ;;
    Y) if [ ! -d /tmp/site/ray ]; then
         python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
           >> "$SUM" 2>&1 || echo "ray wheels: install failed" >> "$SUM"
       fi
       batch ray "$WORK/${RAY_SET:-base}.jsonl" PYTHONPATH=/tmp/site RAY_AUTH_MODE=disabled -- --executor ray ;;
    C) python3 harness/bench/tools/gpu_two_summary.py compare "$RUNS" >> "$SUM" 2>&1 ;;
  esac
done
[ -f "$RUNS" ] && cp "$RUNS" "$OUT/runs.jsonl"
echo "done after $(( $(date +%s) - START )) s" >> "$SUM"
cat "$SUM"
