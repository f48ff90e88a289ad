"""Which candidate the local pipeline builds first (issue "Throughput", item 2).

A build slot spent on a 60-90 s nvcc compile while a candidate that needs no compiler waits
behind it delays the first verdict by that much. Builds are taken cheapest class first, then in
submission order within a class:

* ``NO_BUILD`` (0): no native extension in the source (pure PyTorch, or Triton: Triton compiles
  at the first call, in the judge's warm-up, not in the prebuild);
* ``SEEN`` (1): a native build whose source text this executor has already built once (its
  extension is almost surely a build-cache hit);
* ``NATIVE`` (2): everything else that calls a C++/CUDA compiler (``load_inline``,
  ``cpp_extension.load``, cupy/NVRTC sources).

Static, by reading the source: a candidate that hides its build from these markers is only
built later than it could have been; no verdict depends on the order.
"""

from __future__ import annotations

import hashlib

# the evaluator's own test for "this source runs a compiler"
from sandbox.contract import NATIVE_BUILD

NO_BUILD, SEEN, NATIVE = 0, 1, 2


def source_key(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()


def build_class(source: str, built: set[str]) -> int:
    if not NATIVE_BUILD.search(source):
        return NO_BUILD
    return SEEN if source_key(source) in built else NATIVE
