"""The tolerance check's own cost (sandbox/check/compare.py: _float_stats) on a big output that is
not bit-equal to the reference, for its passes over the same data: the one-kernel all-finite pass
(sandbox/check/fusedcompare.py, a GPU's default since session 27, built here with nvcc), the torch
all-finite pass (the GPU default of session 26) and the masked pass (what every output took before).

    python3 harness/bench/tools/gpu_compare.py                       # CUDA: 1 and 4 GiB float32 outputs
    python3 harness/bench/tools/gpu_compare.py --device cpu --gib 0.125   # CPU smoke run

Prints, per size and pass, the median of --reps runs in ms and ms per GiB of output, and whether
every pass gave the same statistics. (Session 26's run forced the masked pass with one matched NaN
in both tensors instead of ``finite_pass=False``: the same kernels.)"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
if str(REPO) not in sys.path:
    sys.path.append(str(REPO))


def timed(stats, o, r, chunk, sync, finite_pass: bool, fused=None):
    """(seconds, statistics) of one _float_stats call, the device synced on both sides."""
    sync()
    t = time.perf_counter()
    st = stats(o, r, 1e-4, 1e-4, chunk, finite_pass=finite_pass, fused=fused)
    sync()
    return time.perf_counter() - t, st


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--gib", type=float, nargs="+", default=[1.0, 4.0])
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    import torch

    from sandbox.check import compare, fusedcompare

    sync = torch.cuda.synchronize if a.device.startswith("cuda") else (lambda: None)
    chunk = compare.CHUNK_CUDA if a.device.startswith("cuda") else compare.CHUNK
    print(f"device {a.device} ({torch.cuda.get_device_name() if a.device.startswith('cuda') else 'cpu'}), "
          f"torch {torch.__version__}, chunk {chunk}")
    ok = True
    lib = None
    if a.device.startswith("cuda"):
        import tempfile

        path, why = fusedcompare.ensure(tempfile.mkdtemp(prefix="kh-fused-"))
        print(f"fused compare library: {path or why}")
        lib = fusedcompare.Lib(path) if path else None
    for gib in a.gib:
        n = int(gib * (1 << 30)) // 4
        r = torch.randn(n, device=a.device)
        o = r + torch.randn(n, device=a.device) * 1e-6  # within tolerance, not bit-equal: the float64 pass runs
        seen = []
        passes = [("fused", True, lib)] if lib is not None else []
        for name, finite_pass, fused in (*passes, ("finite", True, None), ("masked", False, None)):
            got = [timed(compare._float_stats, o, r, chunk, sync, finite_pass, fused) for _ in range(a.reps)]
            runs, st = [x[0] for x in got], got[-1][1]
            seen.append((st.abs_err, st.tightest, st.rel_err, st.n_bad, st.first_bad))
            ms = statistics.median(runs) * 1e3
            print(f"{gib:g} GiB {name:7} masked={st.masked!s:5} fused={st.fused!s:5} median {ms:8.1f} ms  {ms / gib:7.1f} ms/GiB  "
                  f"(runs {', '.join(f'{x * 1e3:.1f}' for x in runs)}) n_bad {st.n_bad} max_abs {st.abs_err:.3e}")
        same = all(x == seen[0] for x in seen)
        ok &= same
        print(f"{gib:g} GiB every pass gave the same statistics on the same data: {same}")
        del r, o
        if a.device.startswith("cuda"):
            torch.cuda.empty_cache()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
