#!/usr/bin/env bash
# Session 23, call 5 (one GPU, the budget's last ~280 s): where the candidate's run-queue wait over the
# GPU hold comes from (four-GPU run of call 1: candidate runq 3.3 s median over a 3.5 s hold, up to 28 s:
# many threads waiting). (a) a GPU worker's threads after its warm-up (torch's intra-op pool size);
# (b) the conformance set's Triton rows (no nvcc), two copies, final mode, judged 6 at a time on the GPU,
# each verdict's hold_cpu with threads and runq_top (sandbox/lane/holdcpu.py). KH_COMMIT must be set.
set -u; export PYTHONUNBUFFERED=1; S=$(date +%s); W=/var/tmp/s23d; mkdir -p $W
{ nvidia-smi -L; echo "cores $(nproc)"; } > $OUT/diag.txt
python3 - >> $OUT/diag.txt 2>&1 <<'PY'
import os, tempfile, subprocess, sys
from sandbox.worker.session import scrubbed_env
d = tempfile.mkdtemp()
env = scrubbed_env(d, d, gpu=True)
code = ("import os, torch; from sandbox.worker import warmup; warmup.warm(torch, 'cuda', True); "
        "import collections; names = collections.Counter(open(f'/proc/self/task/{t}/comm').read().strip() for t in os.listdir('/proc/self/task')); "
        "print('worker threads after warm', sum(names.values()), dict(names), 'torch threads', torch.get_num_threads(), "
        "'OMP_NUM_THREADS', os.environ.get('OMP_NUM_THREADS'), 'compile threads env', os.environ.get('TORCHINDUCTOR_COMPILE_THREADS'))")
print(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120).stdout.strip()[-600:])
PY
echo "probe done at $(( $(date +%s) - S )) s" >> $OUT/diag.txt
python3 harness/bench/tools/gpu_two_summary.py manifest $W 2 2
grep '"triton_' $W/copies.jsonl > $W/triton.jsonl; echo "units $(wc -l < $W/triton.jsonl)" >> $OUT/diag.txt
HARNESS_CACHE=/var/tmp/kh-s23d KH_JUDGES_PER_DEVICE=6 timeout ${EVAL_S:-200} python3 -m harness eval-batch $W/triton.jsonl --out $W/run \
  --mode final --device cuda --max-timing-s 1 --jobs 8 > $W/eval.log 2>&1
echo "eval-batch exit $? at $(( $(date +%s) - S )) s" >> $OUT/diag.txt
tail -c 1500 $W/eval.log > $OUT/eval-tail.txt
python3 - $W/run >> $OUT/diag.txt 2>&1 <<'PY'
import glob, json, statistics, sys
rows = []
for f in sorted(glob.glob(sys.argv[1] + "/verdicts/*.json")):
    v = json.load(open(f)); h = v["evidence"].get("hold_cpu") or {}
    c, r = h.get("candidate") or {}, h.get("reference") or {}
    rows.append(h)
    print(f.split("/")[-1][:34], v["status"], "wall", h.get("wall_s"), "cand cpu/runq", c.get("cpu_s"), c.get("runq_s"),
          "threads", c.get("threads"), "runq_top", c.get("runq_top"), "| ref runq", r.get("runq_s"), "threads", r.get("threads"), r.get("runq_top"))
if rows:
    print("median cand threads", statistics.median([h["candidate"].get("threads", 0) for h in rows if h.get("candidate")]))
PY
cp $OUT/diag.txt /dev/stdout | tail -40
