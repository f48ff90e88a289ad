"""Issue 25 class 3a/3c (a library's compute passed off as the candidate's own): the BLAS GEMM
torch carries (MKL's Fortran ``sgemm_`` in libtorch_cpu) called through ctypes on the tensors'
data pointers: no extension, no torch op, no numpy.
Task: matmul. Expected: rejected custom_code.library_compute (the ctypes look-up of a compute
library's entry point is recorded)."""

import ctypes
import os

import torch
import torch.nn as nn

_lib = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch" + "_cpu.so"))
_gemm = getattr(_lib, "sge" + "mm_")
_i, _f = ctypes.c_int, ctypes.c_float
_N = ctypes.c_char_p(b"N")


class ModelNew(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a, b = a.contiguous(), b.contiguous()
        m, k, n = a.shape[0], a.shape[1], b.shape[1]
        c = torch.empty((m, n), dtype=a.dtype)
        one, zero = _f(1.0), _f(0.0)
        nn_, mm_, kk = _i(n), _i(m), _i(k)
        _gemm(_N, _N, ctypes.byref(nn_), ctypes.byref(mm_), ctypes.byref(kk), ctypes.byref(one),
              ctypes.c_void_p(b.data_ptr()), ctypes.byref(nn_), ctypes.c_void_p(a.data_ptr()), ctypes.byref(kk),
              ctypes.byref(zero), ctypes.c_void_p(c.data_ptr()), ctypes.byref(nn_))
        return c
