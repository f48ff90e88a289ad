"""A C++ relu that probes, at import, what its judging worker may do: write into its own build
directory (where its compiled module lives) and start a process (fork + exec /bin/true).
forward is right only if both failed: with builds apart from judging (sandbox/build/buildphase.py),
the judging worker mounts the build directory read-only and is sealed before the import.
(The build worker imports it too, with both allowed; nothing of that call is judged.)"""

import os

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

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

_ext = load_inline(name="kh_build_apart_probe", cpp_sources=_SRC, functions=["relu_cpu", "probe_write", "probe_exec"],
                   extra_cflags=["-O2"], verbose=False)
WROTE = _ext.probe_write(os.path.join(os.path.dirname(_ext.__file__), "probe.txt"))
EXECUTED = _ext.probe_exec()


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if WROTE == 0 or EXECUTED == 0:
            return torch.zeros_like(x)  # the judging worker could write its build dir or exec
        return _ext.relu_cpu(x)
