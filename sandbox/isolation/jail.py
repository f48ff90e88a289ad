"""The jail: start one worker unprivileged in its own user, mount, PID, network, IPC and UTS
namespaces, seeing a minimal read-only tree. Standard library only, no system packages.

Run as a program by the parent (``sandbox/isolation/process.py``) with a JSON config on stdin:

    python -S -E -s jail.py  < {"argv": [...], "env": {...}, "binds": [...], ...}

Three processes (the first two only wait):

* L0, the launcher, in the host's namespaces: forks C1 and, once C1 has made its user
  namespace, writes C1's uid/gid maps (as root: an unprivileged outer uid that owns nothing on
  the host; as an ordinary user: that user's own uid, the only mapping the kernel allows).
* C1, in the new user namespace with its capabilities there: unshares mount, PID, network, IPC
  and UTS namespaces, builds the new root on a tmpfs (read-only binds of the system, the Python
  installation and the paths it is told; the worker's writable dirs; a minimal /dev with the
  GPU's nodes; one size-limited tmpfs for /tmp, /var/tmp and /dev/shm), then forks C2.
* C2, PID 1 of the new PID namespace: mounts a fresh /proc for that namespace, pivots into
  the new root and detaches the old one (no host procfs or host tree is left beneath), makes
  the root read-only, drops the capability bounding set, sets no_new_privs, applies Landlock
  where the kernel has it and the seccomp filter, closes every fd but the kept ones and execs
  the worker as uid 1000 (not root: its capabilities are gone at exec) in a child: PID 1 only
  reaps and, when the worker exits, exits with its status, which kills everything left in the
  namespace. (A worker that were PID 1 would ignore its own unhandled signals.)

Setup errors are printed to stderr (the worker's log) with exit status 121.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import stat
import sys

EXIT_SETUP = 121
INNER_UID = INNER_GID = 1000
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x20000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC = 32, 1024, 2048, 4096, 16384
MS_PRIVATE, MS_RELATIME, MS_STRICTATIME = 1 << 18, 1 << 21, 1 << 24
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_SET_DUMPABLE = 1, 24, 38, 4
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
# statvfs flags -> mount flags that are locked on a bind made inside a user namespace
_LOCKED = ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
           (os.ST_NOATIME, MS_NOATIME), (os.ST_NODIRATIME, MS_NODIRATIME), (os.ST_RELATIME, MS_RELATIME))
SYSTEM_DIRS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt")
DEV_NODES = ("null", "zero", "full", "random", "urandom")

_libc = ctypes.CDLL(None, use_errno=True)


class SetupError(RuntimeError):
    pass


def _check(rc: int, what: str) -> int:
    if rc < 0:
        e = ctypes.get_errno()
        raise SetupError(f"{what}: {os.strerror(e)} (errno {e})")
    return rc


def _mount(src: str | None, dst: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def enc(s: str | None) -> bytes | None:
        return s.encode() if s is not None else None

    _check(_libc.mount(enc(src), enc(dst), enc(fstype), ctypes.c_ulong(flags), enc(data)),
           f"mount {src or fstype} on {dst}")


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _locked_flags(path: str) -> int:
    f = os.statvfs(path).f_flag
    return sum(m for st, m in _LOCKED if f & st)


def _bind(src: str, root: str, dst: str, writable: bool, dev: bool = False) -> bool:
    try:
        is_dir = stat.S_ISDIR(os.stat(src).st_mode)
    except OSError:
        return False
    target = root + dst
    if is_dir:
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.exists(target):
            os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
    _mount(src, target, None, MS_BIND | (MS_REC if is_dir else 0))
    _readonly(target, writable, dev)
    if not writable and is_dir:  # sub-mounts (a runtime's per-file driver mounts) too
        for sub in _submounts(target):
            _readonly(sub, False, dev)
    return True


def _readonly(target: str, writable: bool, dev: bool) -> None:
    flags = MS_REMOUNT | MS_BIND | _locked_flags(target) | MS_NOSUID
    if not dev:
        flags |= MS_NODEV
    if not writable:
        flags |= MS_RDONLY
    _mount(None, target, None, flags)


def _submounts(target: str) -> list[str]:
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            mp = line.split()[4].encode().decode("unicode_escape")
            if mp.startswith(target + "/"):
                out.append(mp)
    return out


def _system_tree(root: str, cfg: dict) -> None:
    """Read-only system dirs, symlinks as they are on the host (/bin -> usr/bin)."""
    bound: list[str] = []
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            os.symlink(os.readlink(d), root + d)
        elif _bind(d, root, d, False):
            bound.append(d)
    # an entry is a path bound at itself, or [host path, path inside] (a candidate's working copy of
    # its build tier, bound at the tier's own path): always bound, even beneath an earlier bind
    for p in sorted(cfg.get("ro", []), key=lambda e: len(_inside(e))):  # parents first: a later bind would hide a child's
        if isinstance(p, list):
            _bind(p[0], root, p[1], False)
        elif not _covered(p, bound) and _bind(p, root, p, False):
            bound.append(p)
    for p in sorted(cfg.get("rw", []), key=lambda e: len(_inside(e))):
        _bind(p[0], root, p[1], True) if isinstance(p, list) else _bind(p, root, p, True)
    if cfg.get("sys", True):
        _bind("/sys", root, "/sys", False)


def _inside(entry: str | list[str]) -> str:
    return entry[1] if isinstance(entry, list) else entry


def _covered(path: str, bound: list[str]) -> bool:
    """True when ``path`` is already visible in the new root through an earlier bind."""
    return any(path == b or path.startswith(b.rstrip("/") + "/") for b in bound)


def _dev_tree(root: str, gpu: bool) -> None:
    dev = root + "/dev"
    os.makedirs(dev, exist_ok=True)
    _mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=1m")
    names = list(DEV_NODES)
    if gpu:
        names += sorted(n for n in os.listdir("/dev") if n.startswith("nvidia"))
    for n in names:
        _bind(f"/dev/{n}", root, f"/dev/{n}", True, dev=True)
    for name, tgt in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                      ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(tgt, f"{dev}/{name}")
    os.makedirs(f"{dev}/shm")


def _tmp_tree(root: str, tmp_bytes: int, uid: int) -> None:
    """One size-limited tmpfs for /tmp, /var/tmp and /dev/shm: their sum is bounded."""
    tmp = root + "/tmp"
    os.makedirs(tmp, exist_ok=True)
    _mount("tmpfs", tmp, "tmpfs", MS_NOSUID | MS_NODEV,
           f"mode=1777,size={max(tmp_bytes, 1 << 20)},uid={uid},gid={uid}")
    for sub, mode in ((".shm", 0o1777), (".vartmp", 0o1777), ("home", 0o700)):
        os.makedirs(f"{tmp}/{sub}", exist_ok=True)
        os.chmod(f"{tmp}/{sub}", mode)  # makedirs' mode is masked by the umask
        os.chown(f"{tmp}/{sub}", uid, uid)
    os.makedirs(root + "/var/tmp", exist_ok=True)
    _mount(f"{tmp}/.vartmp", root + "/var/tmp", None, MS_BIND)
    _mount(f"{tmp}/.shm", root + "/dev/shm", None, MS_BIND)


def _hide(root: str, paths: list[str]) -> None:
    for p in paths:
        if os.path.isdir(root + p):
            _mount("tmpfs", root + p, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "size=4k,mode=0555")


def build_root(cfg: dict) -> str:
    root = cfg["root"]  # an empty host dir made by the parent; our tmpfs goes over it
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=4m")
    _dev_tree(root, bool(cfg.get("gpu")))
    _tmp_tree(root, int(cfg.get("tmp_bytes", 1 << 30)), cfg["outer_uid"] if cfg.get("setuid") else INNER_UID)
    _system_tree(root, cfg)
    _hide(root, cfg.get("hide", []))
    for d in ("proc", ".old"):
        os.makedirs(f"{root}/{d}", exist_ok=True)
    return root


def _pivot(root: str) -> None:
    nr = SYS_PIVOT_ROOT.get(os.uname().machine)
    if nr is None:
        raise SetupError(f"pivot_root: unknown architecture {os.uname().machine}")
    os.chdir(root)
    _check(_libc.syscall(nr, b".", b".old"), "pivot_root")
    os.chdir("/")
    _check(_libc.umount2(b"/.old", MNT_DETACH), "detach the old root")
    os.rmdir("/.old")


def _drop_privileges(cfg: dict) -> None:
    try:
        last = int(open("/proc/sys/kernel/cap_last_cap").read())
    except (OSError, ValueError):
        last = 40
    for cap in range(last + 1):
        _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    if os.getuid() == 0:  # root inside (mapped root, or real root without user namespaces)
        uid, gid = (cfg["outer_uid"], cfg["outer_gid"]) if cfg.get("setuid") else (INNER_UID, INNER_GID)
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)  # from 0 to non-0: every capability is gone
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # a uid change clears it


def _confine(cfg: dict, report: dict) -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    if cfg.get("landlock", True):
        try:
            import landlock  # type: ignore[import-not-found]

            report["landlock"] = landlock.restrict(cfg.get("landlock_ro", ["/"]), cfg.get("landlock_rw", []))
        except (ImportError, AttributeError) as e:
            report["landlock"] = f"unavailable: {e}"
    if cfg.get("seccomp", True):
        import seccomp  # type: ignore[import-not-found]

        seccomp.install(deny_exec=bool(cfg.get("deny_exec")), allow=tuple(cfg.get("seccomp_allow", ())))
        report["seccomp"] = True


def _child2(cfg: dict) -> None:
    """PID 1 of the new namespace: proc, pivot, confine, exec."""
    libc_prctl = _libc.prctl
    libc_prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    root = cfg["root"]
    _mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    _pivot(root)
    _mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    try:
        _libc.sethostname(b"kh-sandbox", 10)
    except AttributeError:
        pass
    report: dict = {}
    _drop_privileges(cfg)
    _confine(cfg, report)
    keep = {int(x) for x in cfg.get("keep_fds", [])}
    pid = os.fork()
    if pid == 0:  # the worker: not PID 1, so signals and faults act on it as on any process
        _close_except(keep | {0, 1, 2})
        devnull = os.open("/dev/null", os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        os.chdir(cfg.get("cwd", "/tmp"))
        env = dict(cfg["env"])
        env["KH_JAIL"] = json.dumps(report, separators=(",", ":"))
        os.execve(cfg["argv"][0], cfg["argv"], env)
    # PID 1: holds nothing the worker has (the channel's fds are closed), reaps orphans, and
    # exits with the worker's status, which ends everything left in the namespace
    _close_except({0, 1, 2})
    while True:
        try:
            got, st = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(0)
        except InterruptedError:
            continue
        if got == pid:
            os._exit(os.WEXITSTATUS(st) if os.WIFEXITED(st) else 128 + os.WTERMSIG(st))


def _close_except(keep: set[int]) -> None:
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _wait_status(pid: int) -> int:
    while True:
        try:
            _, st = os.waitpid(pid, 0)
        except ChildProcessError:
            return 0
        except InterruptedError:
            continue
        if os.WIFEXITED(st):
            return os.WEXITSTATUS(st)
        if os.WIFSIGNALED(st):
            return 128 + os.WTERMSIG(st)


def _child1(cfg: dict, ready_w: int, mapped_r: int) -> None:
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    if not cfg.get("setuid"):
        flags |= CLONE_NEWUSER
    _check(_libc.unshare(flags), "unshare (user, mount, pid, net, ipc, uts namespaces)")
    os.write(ready_w, b"u")
    if os.read(mapped_r, 1) != b"m":
        raise SetupError("the launcher could not write the uid/gid maps")
    build_root(cfg)
    pid = os.fork()
    if pid == 0:
        try:
            _child2(cfg)
        except BaseException as e:  # noqa: BLE001
            print(f"kh-jail: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        os._exit(EXIT_SETUP)
    os._exit(_wait_status(pid))


def _write_maps(pid: int, cfg: dict) -> None:
    if cfg.get("setuid"):
        return
    if os.geteuid() == 0:
        # root: inner 0 is root for the setup (it must read what only root reads, such as a
        # Python under /root); the worker runs as INNER_UID, an outer uid that owns nothing
        _write(f"/proc/{pid}/uid_map", f"0 0 1\n{INNER_UID} {cfg['outer_uid']} 1\n")
        _write(f"/proc/{pid}/gid_map", f"0 0 1\n{INNER_GID} {cfg['outer_gid']} 1\n")
    else:  # an ordinary user may map only its own uid
        _write(f"/proc/{pid}/setgroups", "deny")
        _write(f"/proc/{pid}/uid_map", f"{INNER_UID} {cfg['outer_uid']} 1\n")
        _write(f"/proc/{pid}/gid_map", f"{INNER_GID} {cfg['outer_gid']} 1\n")


def main() -> int:
    cfg = json.loads(sys.stdin.read())
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != int(cfg.get("parent_pid", os.getppid())):
        return EXIT_SETUP  # the parent is already gone
    ready_r, ready_w = os.pipe()
    mapped_r, mapped_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        os.close(mapped_w)
        try:
            _child1(cfg, ready_w, mapped_r)
        except BaseException as e:  # noqa: BLE001
            print(f"kh-jail: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        os._exit(EXIT_SETUP)
    os.close(ready_w)
    os.close(mapped_r)
    try:
        if os.read(ready_r, 1) == b"u":
            _write_maps(pid, cfg)
            os.write(mapped_w, b"m")
    except OSError as e:
        print(f"kh-jail: writing the uid/gid maps: {e}", file=sys.stderr, flush=True)
    os.close(mapped_w)
    return _wait_status(pid)


if __name__ == "__main__":
    sys.exit(main())
