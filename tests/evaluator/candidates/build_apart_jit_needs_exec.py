"""A C++ relu built at its first call (as Triton kernels are) whose first call also runs a tool
(fork + exec /bin/true) and fails without it, as some JIT stacks do even when every kernel is
cached. Honest. The sealed judging worker of the warm-apart order refuses the exec, so the
judgement is redone in the late order (sandbox/build/buildphase.py): valid, and the evidence says why."""

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


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        global _ext
        if _ext is None:
            ext = load_inline(name="kh_build_apart_jit_needs_exec", cpp_sources=_SRC,
                              functions=["relu_cpu", "probe_write", "probe_exec"], extra_cflags=["-O2"], verbose=False)
            if ext.probe_exec() != 0:
                raise RuntimeError("the toolchain probe could not run")
            _ext = ext
        return _ext.relu_cpu(x)
