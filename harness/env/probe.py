"""Probe the machine: Python, torch/CUDA, GPUs, nvcc, Triton, container engines, sandboxes
(the process sandbox's jail, actually started), free disk; derive what that means for judging
kernels. ``fingerprint()`` is the short, stable subset recorded with every measurement (a view
of the one environment fingerprint, ``sandbox/machine.py``).

Every probe is best-effort and never raises: a missing tool is a finding, not an error.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.store.fingerprint import git_commit
from sandbox.contract import Gpu, Machine, nvidia_smi, package_version
from sandbox.contract import fingerprint as machine_fingerprint


@dataclass(frozen=True)
class Tool:
    """One external tool or facility: found/working or not, its version, and why not."""

    name: str
    ok: bool
    version: str = ""
    detail: str = ""


@dataclass(frozen=True)
class EnvReport:
    python: str
    platform: str
    torch: str
    torch_cuda: str | None
    cuda_available: bool
    gpus: list[Gpu]
    driver: str | None
    tools: list[Tool]
    disk_free_gib: dict[str, float]
    conclusions: list[tuple[str, str]] = field(default_factory=list)  # (question, answer)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["conclusions"] = {q: a for q, a in self.conclusions}
        return d


def _run(cmd: list[str], timeout: float = 20.0) -> tuple[int, str]:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return r.returncode, (r.stdout + r.stderr).strip()
    except FileNotFoundError:
        return 127, f"{cmd[0]}: not found"
    except subprocess.TimeoutExpired:
        return 124, f"{cmd[0]}: timed out after {timeout:.0f}s"
    except OSError as e:
        return 126, f"{cmd[0]}: {e}"


def _machine() -> Machine:
    """The one environment fingerprint (``sandbox/machine.py``); the driver only with a GPU."""
    return machine_fingerprint(smi=False)


def _driver(m: Machine) -> str | None:
    return nvidia_smi("driver_version") if m.cuda_available else None


def _nvcc_path() -> str | None:
    found = shutil.which("nvcc")
    if found:
        return found
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home and Path(home, "bin", "nvcc").is_file():
            return str(Path(home, "bin", "nvcc"))
    return None


def probe_nvcc() -> Tool:
    path = _nvcc_path()
    if not path:
        return Tool("nvcc", False, detail="not on PATH, CUDA_HOME or /usr/local/cuda")
    rc, out = _run([path, "--version"])
    m = re.search(r"release ([\d.]+)", out)
    return Tool("nvcc", rc == 0, m.group(1) if m else "", path if rc == 0 else out[-200:])


def probe_cxx() -> Tool:
    for cc in ("c++", "g++", "clang++"):
        path = shutil.which(cc)
        if path:
            rc, out = _run([path, "--version"])
            return Tool("c++", rc == 0, out.splitlines()[0] if out else "", path)
    return Tool("c++", False, detail="no C++ compiler (c++/g++/clang++) on PATH")


def probe_triton() -> Tool:
    v = package_version("triton") or package_version("pytorch-triton")
    return Tool("triton", v is not None, v or "", "" if v else "not installed")


ISOLATION_LAYERS = (  # (probe key, doctor row, what it stops)
    ("user_namespace", "isolation: user namespace", "unprivileged inside, no capabilities on the host"),
    ("mount_namespace", "isolation: mount namespace", "a minimal read-only tree; the host's is detached"),
    ("pid_namespace", "isolation: PID namespace", "a fresh /proc: no host processes, no parent's environ"),
    ("network_namespace", "isolation: network namespace", "no network, no abstract sockets of the host"),
    ("capabilities_dropped", "isolation: capabilities", "none left (bounding set empty)"),
    ("no_new_privs", "isolation: no_new_privs", "no setuid escalation"),
    ("seccomp", "isolation: seccomp", "no ptrace/mount/setns/unshare/bpf; no exec once judging starts"),
    ("landlock_abi", "isolation: landlock", "writes only to scratch, own build dir, private tmpfs"),
    ("read_only_tree", "isolation: read-only tree", "the harness, the cache's shared tier and results unwritable"),
)


def probe_isolation() -> list[Tool]:
    """The process sandbox's layers, as a jail actually started here saw them (``harness
    doctor``). Judging refuses to start without them unless --unsafe-no-isolation."""
    try:
        from sandbox.contract import isolation_probe as probe
    except Exception as e:  # noqa: BLE001
        return [Tool("isolation", False, detail=f"sandbox package: {e}")]
    p = probe()
    if p.mode == "none":
        return [Tool("isolation", False, "none", p.why_not)]
    rows = [Tool("isolation", True, p.mode, "process sandbox (sandbox/isolation/jail.py)")]
    for key, name, stops in ISOLATION_LAYERS:
        val = p.layers.get(key)
        ok = bool(val) and val != 0
        if key == "user_namespace" and not ok and p.mode == "jail-setuid":
            detail = "off here (root drops to an unprivileged uid with setresuid instead)"
        else:
            detail = stops if ok else "not active on this kernel"
        rows.append(Tool(name, ok, f"ABI {val}" if key == "landlock_abi" and ok else "", detail))
    return rows


def probe_engines() -> list[Tool]:
    """Docker-API engines (docker, or podman's service socket) that answer a ping."""
    tools = []
    try:
        from sandbox.contract import engine_probe

        info = engine_probe()
        tools.append(
            Tool(
                "container engine",
                info.available,
                f"{info.name} {info.version}".strip() if info.available else "",
                info.base_url if info.available else info.error[-400:],
            )
        )
    except Exception as e:  # noqa: BLE001 - fall back to the SDK's own lookup
        try:
            import docker

            client = docker.from_env(timeout=5)
            client.ping()
            v = client.version()
            tools.append(
                Tool("container engine", True, str(v.get("Version", "")), client.api.base_url)
            )
        except Exception as e2:  # noqa: BLE001
            tools.append(Tool("container engine", False, detail=f"{e2} ({e})"[-400:]))
    for cli in ("docker", "podman"):
        path = shutil.which(cli)
        if path:
            rc, out = _run([path, "--version"], timeout=10)
            tools.append(Tool(f"{cli} CLI", rc == 0, out.splitlines()[0] if out else "", path))
        else:
            tools.append(Tool(f"{cli} CLI", False, detail="not on PATH"))
    return tools


def probe_disk(paths: list[Path] | None = None) -> dict[str, float]:
    """Free GiB per path (the working directory and the temp dir; one entry per filesystem)."""
    out, devs = {}, set()
    for p in paths or [Path.cwd(), Path(os.environ.get("TMPDIR", "/tmp"))]:
        try:
            dev = p.stat().st_dev
            if dev in devs:
                continue
            devs.add(dev)
            out[str(p)] = round(shutil.disk_usage(p).free / 2**30, 1)
        except OSError:
            continue
    return out


def conclude(r: EnvReport) -> list[tuple[str, str]]:
    """Plain-language answers to what a user wants to know before running anything."""
    t = {x.name: x for x in r.tools}
    gpu = bool(r.gpus)
    nvcc, cxx, triton = t["nvcc"].ok, t["c++"].ok, t["triton"].ok
    out = []
    if not gpu:
        why = "no GPU" if r.torch_cuda else "no GPU; torch is a CPU build"
        out.append(("can judge CUDA candidates", f"no ({why})"))
    elif not nvcc:
        out.append(("can judge CUDA candidates", "no (GPU present but no nvcc for load_inline)"))
    elif not cxx:
        out.append(("can judge CUDA candidates", "no (no C++ host compiler)"))
    else:
        out.append(
            ("can judge CUDA candidates", f"yes ({r.gpus[0].name}, nvcc {t['nvcc'].version})")
        )
    out.append(
        (
            "can judge Triton candidates",
            "yes"
            if gpu and triton
            else f"no ({'no GPU' if not gpu else 'triton not installed'})"
            + ("; CPU interpreter only (TRITON_INTERPRET=1)" if triton and not gpu else ""),
        )
    )
    out.append(("can judge C++ (CPU) candidates", "yes" if cxx else "no (no C++ compiler)"))
    out.append(
        (
            "can time against baselines",
            "yes (CUDA events)" if gpu else "CPU timing only (not comparable to GPU results)",
        )
    )
    iso_tool = t.get("isolation")
    if iso_tool is not None and iso_tool.ok:
        iso = f"{iso_tool.version} (user/mount/PID/network/IPC namespaces, seccomp, read-only tree)"
    else:
        why = iso_tool.detail if iso_tool is not None else "not probed"
        iso = (f"none: judging refuses to start without --unsafe-no-isolation ({why})")
    out.append(("process isolation", iso))
    eng = t["container engine"]
    out.append(
        (
            "docker sandbox",
            f"yes ({eng.version} at {eng.detail})"
            if eng.ok
            else "no (no Docker-API engine answered)",
        )
    )
    free = min(r.disk_free_gib.values(), default=0.0)
    out.append(
        ("disk", "ok" if free >= 5 else f"low ({free} GiB free; builds and results need a few GiB)")
    )
    return out


def probe_all() -> EnvReport:
    m = _machine()
    tools = [
        probe_nvcc(),
        probe_cxx(),
        probe_triton(),
        *probe_isolation(),
        *probe_engines(),
    ]
    r = EnvReport(
        python=m.python,
        platform=m.platform,
        torch=m.torch or "missing",
        torch_cuda=m.cuda,
        cuda_available=m.cuda_available,
        gpus=list(m.gpus),
        driver=_driver(m),
        tools=tools,
        disk_free_gib=probe_disk(),
    )
    return EnvReport(**{**r.__dict__, "conclusions": conclude(r)})


def fingerprint() -> dict[str, Any]:
    """Short, stable description of where a measurement was taken (recorded with results).

    Cheap after the first call (the slow parts are cached); returns a fresh dict each time."""
    return dict(_fingerprint())


@functools.lru_cache(maxsize=1)
def _fingerprint() -> dict[str, Any]:
    """The doctor's and the GPU baselines' view of the one fingerprint: fixed keys."""
    m = _machine()
    gpu = m.gpus[0] if m.gpus else None
    from harness import __version__

    return {
        "gpu": gpu.name if gpu else None,
        "gpu_count": len(m.gpus),
        "gpu_memory_gib": gpu.memory_gib if gpu else None,
        "sm_count": gpu.sm_count if gpu else None,
        "driver": _driver(m),
        "cuda": m.cuda,
        "torch": m.torch or "missing",
        "triton": probe_triton().version or None,
        "python": m.python,
        "platform": m.platform,
        "cpu": m.cpu,
        "cpu_count": m.cpu_count,
        "harness": __version__,
        "harness_commit": git_commit(),
        "executable": m.executable,
    }
