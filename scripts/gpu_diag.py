"""Where does one GPU judgement spend its time? Judges one kernel with a watchdog that dumps
every thread's stack if it takes too long. Usage: python3 scripts/gpu_diag.py TASK CAND MODE SECONDS"""
import faulthandler
import sys
import time

from sandbox.evaluate import EvalConfig, evaluate
from sandbox.task import load_task
from sandbox.verdict import Mode

task, cand, mode, limit = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
faulthandler.dump_traceback_later(limit, exit=True)
t0 = time.monotonic()
v = evaluate(load_task(task), open(cand).read(),
             EvalConfig(device="cuda", mode=Mode(mode), max_timing_s=3.0, feedback_timing_s=1.0, timeout_s=limit))
m = v.timings.get("candidate")
print(f"{mode}: {v.status.value} {v.rule} {time.monotonic() - t0:.1f}s durations={v.durations_s}",
      f"median={m.median_us:.1f}us CI=[{m.ci_low_us:.1f},{m.ci_high_us:.1f}] n={m.n}" if m else "", v.message[:200])
