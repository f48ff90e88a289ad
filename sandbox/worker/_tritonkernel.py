"""The one Triton kernel of sandbox/worker/tritonwarm.py (a module of its own: Triton reads a kernel's
source from its file, and importing it needs triton, which only GPU workers have)."""

import triton
import triton.language as tl


@triton.jit
def bump(x_ptr):
    tl.store(x_ptr, tl.load(x_ptr) + 1.0)
