"""A worker's environment and GPU view, as its session starts it (sandbox/worker/session.py):
what of the parent's environment it inherits, the settings every worker gets, and which GPU it sees."""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

ENV_ALLOW = ("PATH", "LANG", "LC_ALL", "CUDA_VISIBLE_DEVICES", "CUDA_HOME", "CUDA_PATH",
             "TORCH_CUDA_ARCH_LIST", "LD_LIBRARY_PATH", "MAX_JOBS", "CC", "CXX", "NVCC_CCBIN",
             "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NVIDIA_VISIBLE_DEVICES", "TRITON_PTXAS_PATH",
             "CPATH", "LIBRARY_PATH", "VIRTUAL_ENV", "TZ",
             "KH_BUILD_PCH", "KH_BUILD_LITE", "KH_BUILD_SLIM")  # compile cuts: additive, see docs/performance.md
ENV_DENY = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL", "AUTH")
REPO_ROOT = str(Path(__file__).resolve().parents[2])


def scrubbed_env(scratch: str, cache_root: str, gpu: bool = False, cuda_build: bool = False) -> dict[str, str]:
    """The worker's environment. ``cuda_build``: a build worker (no GPU) that compiles CUDA
    sources for the GPU of this machine (its arch list, as a GPU worker would get)."""
    env = {k: v for k, v in os.environ.items()
           if k in ENV_ALLOW and not any(d in k.upper() for d in ENV_DENY)}
    env.update({
        "HOME": scratch,
        "TMPDIR": os.path.join(scratch, "tmp"),
        "PYTHONPATH": REPO_ROOT,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        "TORCH_EXTENSIONS_DIR": os.path.join(cache_root, "torch_extensions"),
        "TRITON_CACHE_DIR": os.path.join(cache_root, "triton"),
        "CUPY_CACHE_DIR": os.path.join(cache_root, "cupy"),
        "XDG_CACHE_HOME": os.path.join(scratch, ".cache"),
        # the jail's uid has no passwd entry: getpass.getuser() (torch inductor's cache dir) reads these
        "USER": "kh-worker", "LOGNAME": "kh-worker",
        # idle OpenMP threads sleep instead of spinning: spinning pools of two workers on a
        # small box steal the CPU from each other and from the parent's clock
        "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE"),
        # torch.compile in a worker (the reference's compile baseline, a candidate's own) compiles
        # in that worker's process. Inductor's default, where Triton is importable, is a pool of
        # min(32, CPUs) compile processes started by the first Triton kernel it loads, cache hit
        # or not: in every final-mode reference worker, while the GPU is held. The four-H200 host
        # (session 21) showed that as 8-10 CPU seconds of the reference's process tree per 2 s
        # hold, and run-queue waits for every judgement beside it (docs/performance.md, session 23)
        "TORCHINDUCTOR_COMPILE_THREADS": "1",
    })
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    # one intra-op thread per worker. On CPU: spinning OpenMP pools on an oversubscribed box made
    # eager baselines swing 1000x (lead's L2); CPU numbers are test-only anyway. On a GPU: inputs
    # are made and outputs compared on the device, and a pool of one thread per core (34 threads
    # in a worker on a 16-core H200 host after its warm-up) woke for each CPU op over the hold,
    # waiting for CPUs the next judgements' start-ups were using (session 23: a candidate's
    # threads waited up to 28 s over a 2 s hold on the four-H200 host)
    env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = "1"
    if (gpu or cuda_build) and "TORCH_CUDA_ARCH_LIST" not in env:
        arch = _gpu_arch()
        if arch:
            env["TORCH_CUDA_ARCH_LIST"] = arch  # build for the present GPU only (faster compiles)
    return env


def one_gpu_view(device: str, env: dict[str, str]) -> tuple[str, str | None]:
    """(the device as the worker names it, its CUDA_VISIBLE_DEVICES) for a judgement on ``device``.

    A worker for 'cuda:N' sees that one GPU only, as its 'cuda:0': a candidate judged on one
    GPU can neither launch work on nor read the memory of the GPU where another judgement is
    being timed, and kernels written for 'cuda' (the field's habit) run on the GPU they were
    given. N counts the GPUs this process sees, so it maps through our own CUDA_VISIBLE_DEVICES.
    'cuda' (no index) and CPU devices are left as they are."""
    from sandbox.lane.devicelock import visible_entry

    if not device.startswith("cuda:"):
        return device, None
    index = int(device.split(":", 1)[1])
    entry = visible_entry(index, env)
    if entry is None and "CUDA_VISIBLE_DEVICES" in env:
        seen = [x.strip() for x in env["CUDA_VISIBLE_DEVICES"].split(",") if x.strip()]
        raise ValueError(f"device {device!r}: this process sees GPUs {seen} (CUDA_VISIBLE_DEVICES); "
                         f"name one of cuda:0..cuda:{max(0, len(seen) - 1)}")
    return "cuda:0", entry if entry is not None else str(index)


@functools.lru_cache(maxsize=1)
def _gpu_arch() -> str | None:
    """Compute capability of the first visible GPU, e.g. "9.0" (nvidia-smi; no CUDA context here)."""
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=20)
        caps = [c.strip() for c in r.stdout.splitlines() if c.strip()]
        return caps[0] if r.returncode == 0 and caps else None
    except (OSError, subprocess.TimeoutExpired):
        return None
