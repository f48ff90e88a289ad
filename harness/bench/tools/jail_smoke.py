#!/usr/bin/env python3
"""Start one jail (the process sandbox) and run a CUDA matmul, a Triton kernel (JIT: its
compiler runs inside the jail) and the isolation checks inside it; print what it saw.

    python3 harness/bench/tools/jail_smoke.py            # on the GPU machine (or CPU: CUDA parts skipped)
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from sandbox.isolation.base import Limits, WorkerSpec  # noqa: E402
from sandbox.isolation.process import ProcessLauncher, probe  # noqa: E402

INNER = r'''
import json, os, socket, time
r = {"uid": os.getuid(), "pid": os.getpid(), "procs": sorted(p for p in os.listdir("/proc") if p.isdigit()),
     "net": [n for _, n in socket.if_nameindex()], "root": sorted(os.listdir("/"))}
st = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)
r.update(caps=st["CapEff"].strip(), nnp=st["NoNewPrivs"].strip(), seccomp=st["Seccomp"].strip())
for p in ("/usr/kh-x", "/tmp/kh-x", "/dev/shm/kh-x"):
    try:
        open(p, "w").write("x"); r[p] = "written"
    except OSError as e:
        r[p] = str(e)
try:
    import torch
    r["torch"] = torch.__version__
    if torch.cuda.is_available():
        t = time.time(); a = torch.randn(2048, 2048, device="cuda"); b = (a @ a).sum().item()
        r["cuda"] = f"{torch.cuda.get_device_name(0)} matmul ok {time.time() - t:.2f}s"
        try:
            import triton, triton.language as tl
            @triton.jit
            def k(x, y, n, B: tl.constexpr):
                i = tl.program_id(0) * B + tl.arange(0, B); m = i < n
                tl.store(y + i, tl.maximum(tl.load(x + i, mask=m), 0.0), mask=m)
            x = torch.randn(1 << 20, device="cuda"); y = torch.empty_like(x)
            t = time.time(); k[(1 << 10,)](x, y, x.numel(), B=1024); torch.cuda.synchronize()
            r["triton"] = f"ok, max err {float((y - x.relu()).abs().max())}, JIT {time.time() - t:.1f}s"
        except Exception as e:
            r["triton"] = f"{type(e).__name__}: {e}"[:400]
    else:
        r["cuda"] = "not available"
except Exception as e:
    r["torch"] = f"{type(e).__name__}: {e}"[:400]
print("RESULT " + json.dumps(r))
'''


def main() -> int:
    p = probe()
    print("probe:", p.mode, json.dumps(p.layers), p.why_not)
    if p.mode == "none":
        return 1
    scratch = tempfile.mkdtemp(prefix="kh-smoke-")
    os.chmod(scratch, 0o777)
    log = os.path.join(scratch, "log")
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp/home", "TMPDIR": "/tmp", "USER": "kh",
           "TRITON_CACHE_DIR": "/tmp/triton", **{k: v for k, v in os.environ.items() if k.startswith(("CUDA", "LD_LIB"))}}
    spec = WorkerSpec(argv=[sys.executable, "-c", INNER], env=env, cwd="/tmp", scratch=scratch, gpu=True,
                      limits=Limits(rss_bytes=32 << 30, tmp_bytes=4 << 30), log_path=log)
    t = time.time()
    h = ProcessLauncher().start(spec)
    rc = h.wait(100)
    h.kill()
    out = Path(log).read_text(errors="replace")
    print(f"exit {rc} in {time.time() - t:.1f}s")
    print(out[-4000:])
    return 0 if rc == 0 and "RESULT" in out else 1


if __name__ == "__main__":
    sys.exit(main())
