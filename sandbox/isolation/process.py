"""Process backend: one worker = one jail (sandbox/isolation/jail.py) of its own namespaces.

Every setup gets the same isolation, with no system packages: the worker runs unprivileged in
its own user, mount, PID, network, IPC and UTS namespaces, sees a fresh /proc of its PID
namespace, a read-only tree (system dirs, the Python installation, the evaluator package)
plus its scratch and its own build dir, private size-limited /tmp, /var/tmp and /dev/shm
(counted against its memory limit), with no_new_privs, no capabilities, a seccomp filter and
Landlock where the kernel has it. As root (the lent GPU machines) the worker's uid is an
outer uid that owns nothing on the host; as an ordinary user it is that user's uid, behind
the read-only mounts. Root without user namespaces gets the same tree and drops to that uid
with setresuid (``jail-setuid``).

When no jail can be made (an ordinary user where user namespaces are off), judging refuses to
start unless ``unsafe`` is asked for (``--unsafe-no-isolation``): then a plain subprocess, and
every verdict says so. ``probe()`` is what ``harness doctor`` shows.

Always: new session/process group, scrubbed env (done by the caller), rlimits (AS on CPU only,
FSIZE, CPU, CORE=0, NPROC), PR_SET_PDEATHSIG(SIGKILL), and a watchdog thread that counts the
worker's processes and their resident memory plus what they hold in the jail's tmpfs and
scratch dir, killing the whole tree above the limits (the handle: sandbox/isolation/prochandle.py).
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from sandbox.isolation.base import Limits, Mount, SandboxUnavailable, WorkerSpec
from sandbox.isolation.prochandle import ProcessHandle

PR_SET_PDEATHSIG = 1
JAIL = str(Path(__file__).resolve().parent / "jail.py")
REPO_ROOT = Path(__file__).resolve().parents[2]
OUTER_UID_BASE = 1 << 20  # root: workers run as outer uids from here, which own nothing on the host
MODES = ("jail", "jail-setuid", "none")


class IsolationUnavailable(SandboxUnavailable):
    """No file and process isolation can be had here (and unsafe was not asked for)."""


@dataclass(frozen=True)
class Probe:
    mode: str  # "jail" | "jail-setuid" | "none"
    layers: dict[str, object] = field(default_factory=dict)  # what the probe saw inside
    why_not: str = ""  # when mode is "none"

    def summary(self) -> str:
        if self.mode == "none":
            return f"none ({self.why_not})"
        on = [k for k, v in self.layers.items() if v not in (False, 0, None, "")]
        return f"{self.mode}: " + ", ".join(on)


_PROBE_CODE = r"""
import json, os, socket
st = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)
procs = [p for p in os.listdir("/proc") if p.isdigit()]
try:
    open("/usr/.kh-probe", "w")
    ro = False
except OSError:
    ro = True
jail = json.loads(os.environ.get("KH_JAIL", "{}"))
print(json.dumps({
    "user_namespace_uid": os.getuid(), "pid_namespace": os.getpid() <= 2 and len(procs) <= 3,
    "network_namespace": [n for _, n in socket.if_nameindex()] == ["lo"],
    "capabilities_dropped": int(st["CapEff"].strip(), 16) == 0 and int(st["CapBnd"].strip(), 16) == 0,
    "no_new_privs": st.get("NoNewPrivs", "0").strip() == "1",
    "seccomp": st.get("Seccomp", "0").strip() == "2",
    "landlock_abi": jail.get("landlock") if isinstance(jail.get("landlock"), int) else 0,
    "read_only_tree": ro, "private_tmp": os.statvfs("/tmp").f_blocks > 0,
}))
"""


def _try(mode: str) -> tuple[dict[str, object] | None, str]:
    scratch = tempfile.mkdtemp(prefix="kh-probe-")
    try:
        spec = WorkerSpec(argv=[sys.executable, "-S", "-c", _PROBE_CODE], env={"PATH": "/usr/bin:/bin"},
                          cwd="/", scratch=scratch)
        cfg = _jail_config(spec, mode, os.geteuid())
        r = subprocess.run([sys.executable, "-S", "-E", "-s", JAIL], input=json.dumps(cfg), text=True,
                           capture_output=True, timeout=60, preexec_fn=_pdeathsig)
        shutil.rmtree(cfg["root"], ignore_errors=True)
        if r.returncode != 0:
            return None, (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1][:300]
        return json.loads(r.stdout.strip().splitlines()[-1]), ""
    except (OSError, subprocess.SubprocessError, ValueError, IndexError) as e:
        return None, f"{type(e).__name__}: {e}"[:300]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


@functools.lru_cache(maxsize=1)
def probe() -> Probe:
    """Which isolation works here (cached). ``HARNESS_ISOLATION`` forces a mode."""
    forced = os.environ.get("HARNESS_ISOLATION")
    if forced == "none":
        return Probe("none", why_not="forced by HARNESS_ISOLATION=none")
    tried = [forced] if forced in MODES else ["jail"] + (["jail-setuid"] if os.geteuid() == 0 else [])
    errors = []
    for mode in tried:
        layers, err = _try(mode)
        if layers is not None:
            layers = {"user_namespace": mode == "jail", "mount_namespace": True, **layers}
            return Probe(mode, layers)
        errors.append(f"{mode}: {err}")
    why = "; ".join(errors)
    if "errno 28" in why:  # ENOSPC from unshare: the user-namespace count limit is 0 (or spent)
        why += (" -- user namespaces are disabled here (sysctl user.max_user_namespaces is 0 or used up): "
                "raise it (sysctl -w user.max_user_namespaces=15000), or use --sandbox docker")
    elif os.geteuid() != 0:
        why += (" -- unprivileged user namespaces seem off: enable them (sysctl "
                "kernel.unprivileged_userns_clone=1, or on Ubuntu 24.04+ "
                "kernel.apparmor_restrict_unprivileged_userns=0), run as root, or use --sandbox docker")
    return Probe("none", why_not=why)


def _pdeathsig() -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except OSError:
        pass


def outer_uid(key: str) -> int:
    """A stable unprivileged outer uid per key (a candidate's hash): its files in its own build
    dir stay its own across workers, and RLIMIT_NPROC counts one candidate at a time."""
    return OUTER_UID_BASE + int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % (1 << 16)


_PRIVATE_DIRS = ("/", "/tmp", "/var/tmp", "/dev/shm", "/dev", "/proc")  # the jail's own, never the host's


def code_paths() -> list[str]:
    """What the worker must read: the Python installation, every dir on sys.path (site-packages,
    carried wheels) and the evaluator package; not the rest of the repository."""
    paths = [sys.prefix, os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix),
             str(REPO_ROOT / "sandbox")]
    for p in sys.path:
        if not p or not os.path.isdir(p):
            continue
        rp = os.path.realpath(p)
        if rp in (str(REPO_ROOT), os.getcwd()) or str(REPO_ROOT).startswith(rp + "/"):
            continue  # the checkout itself (harness/, results) stays outside
        if rp in _PRIVATE_DIRS or rp == os.path.realpath(tempfile.gettempdir()):
            # the jail's own private dirs: a script run from /tmp has it on sys.path, and binding
            # the host's /tmp read-only over the jail's /tmp stopped every worker from starting
            continue
        paths.append(rp)
    cuda = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if cuda and os.path.isdir(cuda):
        paths.append(os.path.realpath(cuda))
    out: list[str] = []
    for p in paths:
        if p not in out:
            out.append(p)
    return out


def _jail_config(spec: WorkerSpec, mode: str, euid: int) -> dict[str, object]:
    uid = (spec.uid if spec.uid is not None else outer_uid(spec.scratch)) if euid == 0 else euid
    gid = uid if euid == 0 else os.getegid()
    root = tempfile.mkdtemp(prefix="kh-root-")
    rw = [spec.scratch] + [_bind_entry(m) for m in spec.mounts if m.writable]
    if euid == 0:  # the jail's uid must own what it may write: its scratch, and its own build dir,
        # which another backend (a container runs as its own user) may have written before
        for d in [root, *(m.source for m in spec.mounts if m.writable), spec.scratch]:
            _chown(d, uid, gid, deep=d != root)
    ro = code_paths() + [_bind_entry(m) for m in spec.mounts if not m.writable]
    inside_rw = [spec.scratch] + [m.target for m in spec.mounts if m.writable]
    return {
        "argv": spec.argv, "env": spec.env, "cwd": spec.cwd, "root": root, "ro": ro, "rw": rw,
        "hide": list(spec.hide), "gpu": spec.gpu, "tmp_bytes": spec.limits.tmp_bytes,
        "outer_uid": uid, "outer_gid": gid, "setuid": mode == "jail-setuid",
        "keep_fds": list(spec.pass_fds), "parent_pid": os.getpid(), "seccomp": True,
        "seccomp_allow": ["connect"] if spec.connects else [],
        "landlock": True, "landlock_ro": ["/"], "landlock_rw": ["/tmp", "/var/tmp", "/dev", "/proc", *inside_rw],
    }


def _bind_entry(m: Mount) -> str | list[str]:
    """A mount as the jail's config names it: a path bound at itself, or [host path, path inside]
    (a candidate's working copy of its build tier, bound at the tier's own path: sandbox/build/tiers.py)."""
    return m.source if m.source == m.target else [m.source, m.target]


def _chown(path: str, uid: int, gid: int, deep: bool) -> None:
    try:
        os.chown(path, uid, gid, follow_symlinks=False)
        if deep:
            for top, dirs, files in os.walk(path):
                for n in dirs + files:
                    os.chown(os.path.join(top, n), uid, gid, follow_symlinks=False)
    except OSError:
        pass


def _preexec(limits: Limits, unsafe: bool) -> None:
    _pdeathsig()
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if limits.niceness > 0:  # a background worker; both are inherited by the compilers it starts
        os.nice(limits.niceness)
        try:  # SCHED_IDLE: runs only on CPU time no normal task wants, preempted at once
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        except (AttributeError, OSError):
            pass
    if limits.address_space_bytes:
        resource.setrlimit(resource.RLIMIT_AS, (limits.address_space_bytes,) * 2)
    if limits.file_size_bytes:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_size_bytes,) * 2)
    if limits.cpu_seconds:
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds,) * 2)
    if os.geteuid() != 0 or not unsafe:  # the jail's outer uid is not root: the limit holds there
        soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
        n = limits.max_processes * 4 if os.geteuid() == 0 else max(limits.max_processes * 4, _nproc_in_use() + 512)
        if hard != resource.RLIM_INFINITY:
            n = min(n, hard)
        resource.setrlimit(resource.RLIMIT_NPROC, (n, n))


def _nproc_in_use() -> int:
    try:
        return len(os.listdir(f"/proc/{os.getpid()}/task")) + sum(1 for d in os.listdir("/proc") if d.isdigit())
    except OSError:
        return 0


class ProcessLauncher:
    name = "process"
    inherits_fds = True  # channels are inherited socketpairs (sandbox/worker/session.py)

    def __init__(self, unsafe: bool = False) -> None:
        # --unsafe-no-isolation (or HARNESS_UNSAFE_NO_ISOLATION=1): a plain subprocess when no jail works
        self.unsafe = unsafe or os.environ.get("HARNESS_UNSAFE_NO_ISOLATION") == "1"

    def describe(self) -> str:
        p = probe()
        if p.mode == "none":
            return f"process: NO ISOLATION ({p.why_not})"
        return f"process: {p.summary()}"

    def environment(self) -> dict[str, object]:
        p = probe()
        mode = p.mode if p.mode != "none" else "none (--unsafe-no-isolation)"
        return {"isolation": mode, "isolation_layers": dict(p.layers)}

    def check(self) -> None:
        """Raise IsolationUnavailable when judging must not start here."""
        p = probe()
        if p.mode == "none" and not self.unsafe:
            raise IsolationUnavailable(
                f"no file and process isolation can be had on this machine: {p.why_not}. "
                "Candidates bring native code, so judging refuses to run them unconfined; "
                "pass --unsafe-no-isolation to judge anyway (every verdict then records "
                "isolation 'none'), or use --sandbox docker.")

    def start(self, spec: WorkerSpec) -> ProcessHandle:
        self.check()
        mode = probe().mode
        log = open(spec.log_path or os.devnull, "ab")  # noqa: SIM115
        try:
            if mode == "none":
                warnings.warn("kernel-harness: no isolation (--unsafe-no-isolation): the candidate runs "
                              "as a plain subprocess", RuntimeWarning, stacklevel=2)
                proc = subprocess.Popen(spec.argv, env=spec.env, cwd=spec.cwd, stdin=subprocess.DEVNULL,
                                        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                        pass_fds=spec.pass_fds,
                                        preexec_fn=functools.partial(_preexec, spec.limits, True))  # noqa: PLW1509
                return ProcessHandle(proc, "none", spec.limits, spec.scratch, quotas=spec.quotas)
            cfg = _jail_config(spec, mode, os.geteuid())
            proc = subprocess.Popen([sys.executable, "-S", "-E", "-s", JAIL], env={"PATH": "/usr/bin:/bin"},
                                    cwd="/", stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True, pass_fds=spec.pass_fds,
                                    preexec_fn=functools.partial(_preexec, spec.limits, False))  # noqa: PLW1509
        finally:
            log.close()
        try:
            proc.stdin.write(json.dumps(cfg).encode())
            proc.stdin.close()
        except OSError:
            pass
        return ProcessHandle(proc, mode, spec.limits, spec.scratch, root=str(cfg["root"]), quotas=spec.quotas)
