"""Conformance task: fp32 GEMM C = A @ B with non-negative inputs and a short K, so that a TF32
or bf16-internal kernel fails the fp32 tolerance (1e-4) and clearly passes KernelBench v0.1's
1e-2 (its error is a few 1e-3 relative to values of about K/4)."""

import torch
import torch.nn as nn

M = 1024
K = 64
N = 1024

META = {
    "category": "matmul",
    "dtype": "float32",
    "flops": "2*M*N*K",
    "bytes": "4*(M*K + K*N + M*N)",
    "description": "fp32 GEMM, K=64, inputs in [0, 1).",
}

SHAPES = {
    "small": {"M": 64, "K": 64, "N": 96},
    "small_extra": [{"M": 37, "K": 64, "N": 53}],
    "extra": [{"M": 1000, "K": 64, "N": 1203}],
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N)]


def get_init_inputs():
    return []
