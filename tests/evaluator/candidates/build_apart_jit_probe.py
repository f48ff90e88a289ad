"""A C++ relu built at its first call (the way Triton, numba or cupy kernels compile), which then
probes what its worker may do: write into its own build directory and start a process. forward
is right only if both failed. In the warm-apart order (sandbox/build/buildphase.py) a throwaway worker
makes the first calls (both probes succeed there; nothing of it is judged) and the judging
worker, sealed before the import with the build dir read-only, only loads the cached build."""

import os

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# the C++ source repeats build_apart_probe.py's on purpose: a candidate is one self-contained source
_SRC = r"""
#include <torch/extension.h>
#include <cerrno>
#include <cstdio>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

torch::Tensor relu_cpu(torch::Tensor x) {
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const float* p = xc.data_ptr<float>();
    float* q = out.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) q[i] = p[i] > 0.f ? p[i] : 0.f;
    return out;
}

int64_t probe_write(std::string path) {
    FILE* f = fopen(path.c_str(), "w");
    if (!f) return errno;
    fputs("written by the candidate\n", f);
    fclose(f);
    return 0;
}

int64_t probe_exec() {
    pid_t pid = fork();
    if (pid < 0) return -errno;
    if (pid == 0) {
        execl("/bin/true", "true", (char*)nullptr);
        _exit(111);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1000;
}
"""

_ext = None
PROBES = None


def _first_call():
    global _ext, PROBES
    _ext = load_inline(name="kh_build_apart_jit_probe", cpp_sources=_SRC,
                       functions=["relu_cpu", "probe_write", "probe_exec"], extra_cflags=["-O2"], verbose=False)
    PROBES = (_ext.probe_write(os.path.join(os.path.dirname(_ext.__file__), "probe.txt")), _ext.probe_exec())


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if _ext is None:
            _first_call()
        if 0 in PROBES:
            return torch.zeros_like(x)  # the judging worker could write its build dir or exec
        return _ext.relu_cpu(x)
