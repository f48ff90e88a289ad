"""The custom-code rule on CUDA, by whose kernel ran (issue 25, class 3): every kernel of the
profiled call is attributed by name (sandbox/rules/kernelnames.py) to the candidate (declared by its
source or built from it), to a library (torch's CUDA libraries, cuBLAS, cuDNN, ...), or to nobody
(generated at run time by a library: torch.compile's Inductor, cupy's ufuncs, ...).

What a launch outside every torch op may be (profsummary's ``by["custom"]``):

* the candidate's own kernel: what the rule asks for; at least one must run;
* a library's kernel: the candidate reached torch's or NVIDIA's compute below the dispatcher
  (``at::cuda::mm``, cuBLAS through torch's handle, a cuDNN call): ``custom_code.torch_compute``
  under both rule sets (no op count sees it, so partial's family counts cannot either);
* nobody's kernel: a library's generated code; ``custom_code.library_compute`` under strict, not
  the candidate's own under partial.

Launches under a torch op are torch's own and are judged by the op counts (copies and fills are
allowed under strict). Where the libraries cannot be listed (no ``cuobjdump``), a library's kernel
is not told from a generated one: both are nobody's, and the verdict says the list was missing.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Protocol

from sandbox import rules
from sandbox.build import buildcache
from sandbox.errors import Reject
from sandbox.rules import kernelnames
from sandbox.verdict import Status
from sandbox.worker.judgeenv import cache_root

if TYPE_CHECKING:
    from sandbox.config import EvalConfig
    from sandbox.verdict import Verdict


class Judging(Protocol):
    """What the kernel-owner check uses of the judgement in progress (sandbox/judge.py's ``Judge``
    has it): the source, its build tier, the config and the verdict."""

    v: Verdict
    source: str
    tier: Any
    cfg: EvalConfig


def prewarm(cfg: EvalConfig) -> None:
    """List the libraries' kernels in the background (seconds, once per process and machine)
    while the judgement builds and warms up."""
    if not cfg.device.startswith("cuda"):
        return
    trusted = buildcache.layout(cache_root(cfg), "")[2]
    threading.Thread(target=kernelnames.library_kernels, args=(trusted,), name="kh-library-kernels",
                     daemon=True).start()


def owners(j: Judging, kernels: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Kernel name -> candidate | library | foreign, for every kernel of the profiled call."""
    shared, _, trusted = buildcache.layout(cache_root(j.cfg), j.source)
    lib = kernelnames.library_kernels(trusted)
    dirs = [d for d in (getattr(j.tier, "path", None), shared) if d]
    cand = kernelnames.candidate_kernels(j.source, dirs)
    j.v.evidence["kernel_attribution"] = {"library_list": lib.available, "library_kernels": len(lib.names),
                                          **({"why": lib.why} if not lib.available else {}),
                                          "declared": sorted(cand.identifiers)[:40], "modules": len(cand.modules)}
    return kernelnames.attribute(kernels, cand, lib)


def check(j: Judging, kernels: dict[str, dict[str, Any]], strict: bool) -> None:
    """Raise the verdict the kernels' owners call for (module docstring); record them."""
    who = owners(j, kernels)
    outside = {k: who[k] for k, d in kernels.items() if (d.get("by") or {}).get("custom")}
    j.v.profile["kernel_owners"] = {k: who[k] for k in list(who)[:50]}
    library = sorted(k for k, o in outside.items() if o == kernelnames.LIBRARY)
    foreign = sorted(k for k, o in outside.items() if o == kernelnames.FOREIGN)
    own = sorted(k for k, o in outside.items() if o == kernelnames.CANDIDATE)
    if library:
        raise Reject(Status.REJECTED, rules.TORCH_FALLBACK,
                     f"forward launched kernels of torch's or NVIDIA's libraries outside every torch op "
                     f"({', '.join(k[:80] for k in library[:3])}): torch compute reached below the dispatcher "
                     "is not the candidate's own code and no op count sees it", kernels=library[:20])
    if foreign and strict:
        raise Reject(Status.REJECTED, rules.LIBRARY_COMPUTE,
                     f"forward launched kernels that no source of the candidate declares "
                     f"({', '.join(k[:80] for k in foreign[:3])}): code a library generated at run time "
                     "(torch.compile, cupy's ufuncs, ...) is not the candidate's own under --rules strict",
                     kernels=foreign[:20])
    if not own:
        raise Reject(Status.REJECTED, rules.NO_CUSTOM_KERNEL,
                     "no kernel of the candidate's own ran on the GPU (every kernel came from a torch op, "
                     "a library, or code generated at run time)", kernels=list(kernels)[:20])
