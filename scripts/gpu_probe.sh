#!/usr/bin/env bash
# A quick look at the lent GPU machine: what the evaluator relies on. Output is dated in docs/records/gpu-probe-*.md.
set -u
date -u; uname -r; whoami; nproc; free -g | head -2
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
which python3 nvcc bwrap unshare ninja c++; python3 --version; nvcc --version | tail -1
python3 -c "import click, jinja2, scipy, numpy, pygments; print('click', click.__version__, 'jinja2', jinja2.__version__, 'scipy', scipy.__version__, 'numpy', numpy.__version__)"
python3 -c "import openai" 2>&1 | tail -1; python3 -c "import docker" 2>&1 | tail -1
unshare --net --pid --fork --kill-child --mount-proc sh -c 'echo unshare-ok; cat /proc/self/status | grep NSpid; python3 -c "import socket; s=socket.socket(); s.settimeout(1); print(s.connect_ex((\"1.1.1.1\",80)))"'
python3 - <<'PY'
import time, torch
p = torch.cuda.get_device_properties(0)
print("torch", torch.__version__, "cuda", torch.version.cuda, p.name, "SMs", p.multi_processor_count, "L2", getattr(p, "L2_cache_size", None))
x = torch.randn(1 << 20, device="cuda")
from torch.profiler import profile, ProfilerActivity
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    y = torch.relu(x); torch.cuda.synchronize()
evs = [(e.name, str(e.device_type)) for e in prof.events()]
print("profiler events:", evs[:8])
import triton; print("triton", triton.__version__)
import os
os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0"
from torch.utils.cpp_extension import load_inline
src = r'''
__global__ void k(const float* x, float* y, int n){int i=blockIdx.x*blockDim.x+threadIdx.x; if(i<n) y[i]=x[i]>0?x[i]:0;}
torch::Tensor relu(torch::Tensor x){auto y=torch::empty_like(x); int n=x.numel(); k<<<(n+255)/256,256>>>(x.data_ptr<float>(),y.data_ptr<float>(),n); return y;}
'''
t=time.time()
m = load_inline("probe_relu", cpp_sources="torch::Tensor relu(torch::Tensor x);", cuda_sources=src, functions=["relu"], verbose=False, extra_cuda_cflags=["-O3"])
print("load_inline cuda s", round(time.time()-t,1))
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    y = m.relu(x); torch.cuda.synchronize()
print("custom kernel events:", [(e.name, str(e.device_type), e.cpu_parent.name if getattr(e,'cpu_parent',None) else None) for e in prof.events()][:10])
PY
