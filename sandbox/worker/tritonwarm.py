"""The harness's own Triton warm-up, run by the judging worker before it is sealed and before
the candidate is imported (sandbox/build/buildphase.py, the "warm-apart" order).

Triton probes its toolchain once per process and keeps the answers: the ``ptxas --version``
that enters every kernel's cache key, ``ldconfig -p`` to find libcuda, the driver helper module
it builds with the C compiler. Each starts a process, which a sealed worker may not do. One tiny
kernel compiled and launched here, with a private writable cache, makes all of them happen
now, while starting processes is still allowed and no candidate code exists. The candidate's
own kernels then come from the read-only cache the warm-apart worker filled.
"""

from __future__ import annotations

import os
import time
from typing import Any


def run(scratch: str) -> dict[str, Any]:
    """Compile and launch one 1-element kernel; {"ok", "s", "triton", "error"?}."""
    from sandbox.build.tritoncache import RO_ENV

    t0 = time.perf_counter()
    saved = os.environ.get("TRITON_CACHE_DIR")
    saved_ro = os.environ.pop(RO_ENV, None)  # never load what the candidate put in its cache
    os.environ["TRITON_CACHE_DIR"] = os.path.join(scratch, "triton-harness")
    try:
        import torch
        import triton

        from sandbox.worker import _tritonkernel

        x = torch.zeros(1, device="cuda")
        _tritonkernel.bump[(1,)](x)
        torch.cuda.synchronize()
        ok = float(x.item()) == 1.0
        return {"ok": ok, "s": round(time.perf_counter() - t0, 3), "triton": triton.__version__}
    except Exception as e:  # noqa: BLE001 - recorded; the sealed warm-up then shows what fails
        return {"ok": False, "s": round(time.perf_counter() - t0, 3), "error": f"{type(e).__name__}: {e}"[:300]}
    finally:
        if saved_ro is not None:
            os.environ[RO_ENV] = saved_ro
        if saved is None:
            os.environ.pop("TRITON_CACHE_DIR", None)
        else:
            os.environ["TRITON_CACHE_DIR"] = saved
