#!/usr/bin/env bash
# The GPU red team and the honest GPU kernels on the current evaluator, in one device call (< 10 min):
# every CUDA candidate's extension built first (harness/bench/tools/gpu_warm.py), then the red-team GPU tests in
# SHARDS parallel pytest processes (judgements still take the GPU one at a time: the device lock is
# machine-wide), the lane tests of issue 25 class 6 beside them, and honest relu repeats in the time
# left. One summary (OUT/summary.txt, printed last) and the logs in OUT/logs.tgz.
#   bash harness/bench/tools/gpu_integrity.sh                 BUDGET=560 (seconds for the whole call)
set -u
OUT=${OUT:-gpu-integrity-out}; mkdir -p "$OUT"; L=$(mktemp -d); export PYTHONUNBUFFERED=1
START=$(date +%s); BUDGET=${BUDGET:-560}; SUM="$OUT/summary.txt"
export KH_REDTEAM_VERDICTS="$L/verdicts"  # every red-team verdict in full (tests/adversarial/redteam.py keep_verdict)
left() { echo $(( START + BUDGET - $(date +%s) )); }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import sys, torch; print(sys.version.split()[0], torch.__version__, torch.version.cuda)"; } > "$SUM" 2>&1

timeout 200 python3 harness/bench/tools/gpu_warm.py --all-cuda --jobs 14 > "$L/warm.txt" 2>&1
tail -1 "$L/warm.txt" >> "$SUM"; grep -v " built " "$L/warm.txt" | grep -v "^warmed" >> "$SUM"

T=tests/adversarial/test_redteam_gpu.py
cheat() { for n in "$@"; do echo "$T::test_gpu_cheat_is_caught_with_its_rule[$n]"; done; }
honest() { for n in "$@"; do echo "$T::test_honest_gpu_candidate_is_valid_with_speedup_cis[$n]"; done; }
SHARD1=$(cheat gpu_cheat_01_stale_memory gpu_cheat_02_torch_matmul gpu_cheat_04_side_stream gpu_cheat_42a_cublas_dlsym gpu_cheat_35_autotune_every_call)
SHARD2=$(cheat gpu_cheat_04b_side_stream_lead gpu_cheat_05_thread_launch gpu_cheat_07_event_patch gpu_cheat_42b_inductor_relu gpu_cheat_33_gpu_hang)
SHARD3="$(cheat gpu_cheat_34_hidden_tail gpu_cheat_36_out_rewrite) $(honest honest_cuda_relu honest_cuda_sum gpu_probe_34b_tail_below_floor)"
SHARD4=$(honest honest_cuda_matmul honest_cuda_conv2d honest_cuda_gemm_bias_relu honest_triton_relu honest_triton_softmax gpu_probe_38_one_gpu)
SHARD5="tests/executors/test_slow_first_call_gpu.py tests/evaluator/test_setup_beside.py"
cap=$(( $(left) - 60 ))
i=0
for s in "$SHARD1" "$SHARD2" "$SHARD3" "$SHARD4" "$SHARD5"; do
  i=$((i + 1))
  # shellcheck disable=SC2086
  ( timeout "$cap" python3 -m pytest -q -rA -p no:cacheprovider -m gpu --durations=0 $s > "$L/shard$i.log" 2>&1
    echo "PYTEST_EXIT $?" >> "$L/shard$i.log" ) &
done
wait
for i in 1 2 3 4 5; do
  echo "--- shard $i" >> "$SUM"
  grep -E "^(PASSED|FAILED|ERROR|SKIPPED)|PYTEST_EXIT|^E  .*(status|rule|assert)" "$L/shard$i.log" | cut -c1-260 | head -30 >> "$SUM"
done

echo "--- honest relu repeats (final mode, --max-timing-s 2)" >> "$SUM"
n=0
while [ "$(left)" -gt 45 ]; do
  n=$((n + 1))
  timeout 60 python3 -m harness eval tests/adversarial/tasks/relu.py tests/adversarial/candidates/honest_cuda_relu.py \
    --device cuda --mode final --max-timing-s 2 --json > "$L/relu$n.json" 2> "$L/relu$n.err"
  python3 - "$L/relu$n.json" "$n" >> "$SUM" <<'PY'
import json, sys
try:
    v = json.load(open(sys.argv[1]))
except Exception as e:  # noqa: BLE001
    print("run", sys.argv[2], "no verdict", e); sys.exit()
m, e = (v.get("timings") or {}).get("candidate") or {}, (v.get("timings") or {}).get("eager") or {}
print("run", sys.argv[2], v["status"], v.get("rule"), "cand_us", m.get("median_us"), "eager_us", e.get("median_us"),
      "owners", sorted(set(((v.get("profile") or {}).get("kernel_owners") or {}).values())),
      "total_s", (v.get("durations_s") or {}).get("total"))
PY
done
echo "call done in $(( $(date +%s) - START )) s" >> "$SUM"
tar czf "$OUT/logs.tgz" -C "$L" . 2>/dev/null
cat "$SUM"
