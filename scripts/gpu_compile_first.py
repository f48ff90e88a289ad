#!/usr/bin/env python3
"""Where the compile baseline's first call goes (issue 16): one fresh process, like the
reference worker: sandbox/refcache.preload (before the device is held), then the task's Model
on the device, torch.compile, and its first call under cProfile.

    TORCHINDUCTOR_CACHE_DIR=/some/dir python3 scripts/gpu_compile_first.py [--task T] [--device cuda]

Run it twice on one cache dir: the first run compiles, the second finds the caches (what a
judgement after the first of its op sees). Prints the preload's steps, the first and second
call's seconds, and the 20 functions with the most own time in the first call.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", default=str(REPO / "tests/adversarial/tasks/relu.py"))
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--no-preload", action="store_true")
    a = ap.parse_args()
    t0 = time.monotonic()
    import torch

    from sandbox.refcache import preload
    from sandbox.task import exec_source

    pre = {} if a.no_preload else preload(a.device)
    t1 = time.monotonic()
    mod = exec_source(Path(a.task).read_text(), a.task, "_kh_task")
    model = mod.Model(*mod.get_init_inputs()).to(a.device).eval()
    inputs = [x.to(a.device) if isinstance(x, torch.Tensor) else x for x in mod.get_inputs()]
    model(*inputs)
    torch.cuda.synchronize() if a.device.startswith("cuda") else None
    compiled = torch.compile(model)
    prof = cProfile.Profile()
    t2 = time.monotonic()
    prof.enable()
    with torch.no_grad():
        compiled(*inputs)
    if a.device.startswith("cuda"):
        torch.cuda.synchronize()
    prof.disable()
    t3 = time.monotonic()
    with torch.no_grad():
        compiled(*inputs)
    if a.device.startswith("cuda"):
        torch.cuda.synchronize()
    t4 = time.monotonic()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(20)
    print(json.dumps({"import_s": round(t1 - t0, 3), "preload_s": pre, "first_call_s": round(t3 - t2, 3),
                      "second_call_s": round(t4 - t3, 4)}))
    print(out.getvalue())
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(30)
    print(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
