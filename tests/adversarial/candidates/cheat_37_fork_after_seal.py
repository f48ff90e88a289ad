"""Cheat #37 (a process started after the seal). forward() forks a child on every call, the way
work can be moved into a process whose CPU no per-process count of the worker sees (a child
that shares the output's memory can finish it after the timed window). The child exits at once
here: the test is whether a process can be started at all once judging began.
Task: relu. Expected: the fork is refused (seccomp, the seal: threads only), the call raises:
runtime_error."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <cerrno>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

torch::Tensor relu_forked(torch::Tensor x) {
    pid_t pid = fork();
    TORCH_CHECK(pid >= 0, "fork refused: ", std::strerror(errno));
    if (pid == 0) _exit(0);
    int status = 0;
    waitpid(pid, &status, 0);
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const float* src = xc.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) dst[i] = src[i] < 0.f ? 0.f : src[i];
    return out;
}
"""

_lib = load_inline(name="redteam_fork_after_seal", cpp_sources=_CPP, functions=["relu_forked"],
                   extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _lib.relu_forked(x)
