"""A hand-assembled classic-BPF seccomp filter for the judging worker (x86_64 and aarch64 Linux).

The launcher calls :func:`install` in the forked child just before it ``execve``s the worker;
the worker calls ``install(deny_exec=True)`` again when its judging phase starts (filters stack,
the most restrictive answer wins).  Namespaces and mounts must be set up before: they are refused
after.  A GPU/CPU kernel never needs any of the refused system calls; they are how a candidate
escapes the measurement:

* tracing or reading the reference process: ``ptrace``, ``process_vm_readv/writev``,
  ``pidfd_getfd``, ``kcmp``, ``process_madvise``, ``perf_event_open``;
* re-mounting ``/proc`` or the tree, or joining/creating namespaces: ``mount`` and the new mount
  API (``fsopen`` ... ``mount_setattr``), ``umount2``, ``pivot_root``, ``chroot``, ``setns``,
  ``unshare``, ``clone`` with any ``CLONE_NEW*`` flag (``clone3`` answers ENOSYS so that glibc falls
  back to ``clone``, whose flags the filter can read), ``open_by_handle_at``;
* the kernel itself: ``bpf``, modules, ``kexec``, keyrings, ``userfaultfd``, ``io_uring`` (it
  runs system calls the filter never sees), swap, ``reboot``, ``syslog``, ``acct``, ``quotactl``;
* memory that is not mapped and so escapes the resident-memory watchdog: ``memfd_create``,
  ``memfd_secret``, ``shmget``, ``msgget``.

Refused calls fail with EPERM; a foreign audit arch (e.g. i386 ``int 0x80``) or an x32 system
call number on x86_64 kills the whole process.  With ``deny_exec`` (the worker's seal)
``execve``/``execveat`` fail too, and so does starting a process (``fork``, ``vfork``, ``clone``
without ``CLONE_THREAD``): threads only.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct
import sys

# seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6] (little endian).
_OFF_NR, _OFF_ARCH, _OFF_ARG0_LO = 0, 4, 16
_LD_ABS_W = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ, _JGE, _JSET = 0x15, 0x35, 0x45  # BPF_JMP | BPF_J* | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
RET_KILL_PROCESS, RET_ERRNO, RET_ALLOW = 0x80000000, 0x00050000, 0x7FFF0000
X32_SYSCALL_BIT = 0x40000000
CLONE_NS_FLAGS = (
    0x00020000  # CLONE_NEWNS
    | 0x02000000  # CLONE_NEWCGROUP
    | 0x04000000  # CLONE_NEWUTS
    | 0x08000000  # CLONE_NEWIPC
    | 0x10000000  # CLONE_NEWUSER
    | 0x20000000  # CLONE_NEWPID
    | 0x40000000  # CLONE_NEWNET
    | 0x00000080  # CLONE_NEWTIME
)
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}

# Numbers from the kernel's tables: arch/x86/entry/syscalls/syscall_64.tbl (= asm/unistd_64.h)
# and include/uapi/asm-generic/unistd.h (aarch64).  Neither 64-bit table has plain ``umount``.
# fmt: off
SYSCALLS: dict[str, dict[str, int]] = {
    "x86_64": {
        "shmget": 29, "connect": 42, "clone": 56, "fork": 57, "vfork": 58, "execve": 59, "msgget": 68, "ptrace": 101, "syslog": 103,
        "pivot_root": 155, "chroot": 161, "acct": 163, "mount": 165, "umount2": 166,
        "swapon": 167, "swapoff": 168, "reboot": 169, "init_module": 175, "delete_module": 176,
        "quotactl": 179, "kexec_load": 246, "add_key": 248, "request_key": 249, "keyctl": 250,
        "unshare": 272, "perf_event_open": 298, "name_to_handle_at": 303,
        "open_by_handle_at": 304, "setns": 308, "process_vm_readv": 310,
        "process_vm_writev": 311, "kcmp": 312, "finit_module": 313, "seccomp": 317,
        "memfd_create": 319, "kexec_file_load": 320, "bpf": 321, "execveat": 322,
        "userfaultfd": 323,
    },
    "aarch64": {
        "umount2": 39, "mount": 40, "pivot_root": 41, "chroot": 51, "quotactl": 60, "acct": 89,
        "unshare": 97, "kexec_load": 104, "init_module": 105, "delete_module": 106,
        "syslog": 116, "ptrace": 117, "reboot": 142, "msgget": 186, "shmget": 194,
        "connect": 203, "add_key": 217, "request_key": 218, "keyctl": 219, "clone": 220, "execve": 221,
        "swapon": 224, "swapoff": 225, "perf_event_open": 241, "name_to_handle_at": 264,
        "open_by_handle_at": 265, "setns": 268, "process_vm_readv": 270,
        "process_vm_writev": 271, "kcmp": 272, "finit_module": 273, "seccomp": 277,
        "memfd_create": 279, "bpf": 280, "execveat": 281, "userfaultfd": 282,
        "kexec_file_load": 294,
    },
}
# Numbers from 424 on are shared by every architecture.
_COMMON = {
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428,
    "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "clone3": 435, "pidfd_getfd": 438, "process_madvise": 440, "mount_setattr": 442,
    "memfd_secret": 447,
}
for _table in SYSCALLS.values():
    _table.update(_COMMON)

DENIED = (
    "ptrace", "process_vm_readv", "process_vm_writev", "mount", "umount", "umount2",
    "pivot_root", "chroot", "setns", "unshare", "bpf", "keyctl", "add_key", "request_key",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "userfaultfd", "open_by_handle_at", "name_to_handle_at", "perf_event_open",
    "io_uring_setup", "io_uring_enter", "io_uring_register", "fsopen", "fsconfig", "fsmount",
    "fspick", "move_mount", "open_tree", "mount_setattr", "pidfd_getfd", "kcmp",
    "process_madvise", "swapon", "swapoff", "reboot", "syslog", "acct", "quotactl",
    "memfd_create", "memfd_secret", "shmget", "msgget",
    # the worker's channel is inherited: it never connects; a host socket it can see (a
    # read-only mount does not stop connect(2), nor does Landlock) stays out of reach
    "connect",
)
# fmt: on
EXEC_CALLS = ("execve", "execveat", "fork", "vfork")  # refused once sealed (x86_64 has fork/vfork)
CLONE_THREAD = 0x00010000


def _native_arch() -> str | None:
    machine = platform.machine().lower()
    machine = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    # A 32-bit (or x32) Python on a 64-bit kernel uses another audit arch: not supported.
    if (
        sys.platform.startswith("linux")
        and machine in AUDIT_ARCH
        and struct.calcsize("P") == 8
        and sys.byteorder == "little"  # _OFF_ARG0_LO; AUDIT_ARCH holds the little-endian values
    ):
        return machine
    return None


NATIVE_ARCH = _native_arch()
SUPPORTED: bool = NATIVE_ARCH is not None


def _insn(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)  # struct sock_filter


def build(deny_exec: bool = False, arch: str | None = None, allow: tuple[str, ...] = ()) -> bytes:
    """The packed ``struct sock_filter`` program (8 bytes per instruction) for ``arch``;
    ``allow``: names of DENIED left out (a method program connects to its endpoints' sockets)."""
    arch = arch or NATIVE_ARCH
    if arch not in SYSCALLS:
        raise ValueError(f"seccomp filter: unsupported architecture {arch!r}")
    table = SYSCALLS[arch]
    eperm = RET_ERRNO | errno.EPERM
    prog = [
        _insn(_LD_ABS_W, _OFF_ARCH),
        _insn(_JEQ, AUDIT_ARCH[arch], jt=1),
        _insn(_RET, RET_KILL_PROCESS),
        _insn(_LD_ABS_W, _OFF_NR),
    ]
    if arch == "x86_64":
        # x32 numbers (bit 30 set) reach the same kernel functions under numbers this table does
        # not list; nr == -1 (a tracer's "skip") is let through to ENOSYS, as libseccomp does.
        prog += [
            _insn(_JGE, X32_SYSCALL_BIT, jf=2),
            _insn(_JEQ, 0xFFFFFFFF, jt=1),
            _insn(_RET, RET_KILL_PROCESS),
        ]
    names = tuple(n for n in DENIED if n not in allow) + (EXEC_CALLS if deny_exec else ())
    for name in names:
        if name in table:
            prog += [_insn(_JEQ, table[name], jf=1), _insn(_RET, eperm)]
    # sealed (deny_exec): no new process either, only threads (clone with CLONE_THREAD): a
    # process started after the seal would run outside every per-process CPU count
    no_fork = [_insn(_JSET, CLONE_THREAD, jt=1), _insn(_RET, eperm)] if deny_exec else []
    prog += [
        _insn(_JEQ, table["clone3"], jf=1),
        _insn(_RET, RET_ERRNO | errno.ENOSYS),
        _insn(_JEQ, table["clone"], jf=3 + len(no_fork)),  # clone(flags, ...): flags is args[0] on both arches
        _insn(_LD_ABS_W, _OFF_ARG0_LO),
        _insn(_JSET, CLONE_NS_FLAGS, jf=1),
        _insn(_RET, eperm),
        *no_fork,
        _insn(_RET, RET_ALLOW),
    ]
    return b"".join(prog)


def refused(deny_exec: bool = False, arch: str | None = None) -> list[str]:
    """Names of the system calls the filter refuses outright on ``arch``."""
    table = SYSCALLS[arch or NATIVE_ARCH or "x86_64"]
    names = DENIED + (EXEC_CALLS if deny_exec else ())
    return [n for n in names if n in table] + ["clone3"]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP = 38, 22
SECCOMP_MODE_FILTER, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC = 2, 1, 1


def _libc() -> ctypes.CDLL:
    lib = ctypes.CDLL(None, use_errno=True)
    if not hasattr(lib, "syscall"):
        lib = ctypes.CDLL("libc.so.6", use_errno=True)
    lib.syscall.restype = ctypes.c_long
    lib.prctl.restype = ctypes.c_int
    return lib


def _no_new_privs(libc: ctypes.CDLL) -> None:
    if libc.prctl(PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), ctypes.c_ulong(0),
                  ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:  # fmt: skip
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_NO_NEW_PRIVS) failed: {os.strerror(err)}")


def install(deny_exec: bool = False, allow: tuple[str, ...] = ()) -> None:
    """Set no_new_privs and install the filter on every thread of this process (stacks)."""
    if not SUPPORTED:
        raise OSError(errno.ENOSYS, "seccomp filter: only x86_64 and aarch64 Linux are supported")
    _load(build(deny_exec, allow=allow))


def _load(code: bytes) -> None:
    libc = _libc()
    _no_new_privs(libc)
    buf = ctypes.create_string_buffer(code, len(code))
    prog = _SockFprog(len(code) // 8, ctypes.addressof(buf))
    nr = SYSCALLS[NATIVE_ARCH]["seccomp"]
    ret = libc.syscall(ctypes.c_long(nr), ctypes.c_long(SECCOMP_SET_MODE_FILTER),
                       ctypes.c_long(SECCOMP_FILTER_FLAG_TSYNC), ctypes.byref(prog))  # fmt: skip
    err = ctypes.get_errno() if ret < 0 else 0
    if ret < 0 and err == errno.ENOSYS:  # kernel < 3.17: this thread only
        ret = libc.prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(prog),
                         ctypes.c_ulong(0), ctypes.c_ulong(0))  # fmt: skip
        err = ctypes.get_errno() if ret < 0 else 0
    if ret > 0:  # TSYNC: the id of a thread whose filters diverge
        raise OSError(errno.EBUSY, f"seccomp filter: thread {ret} cannot be synchronised")
    if ret < 0:
        raise OSError(err, f"seccomp filter refused by the kernel: {os.strerror(err)}")


_probe: tuple[bool, str] | None = None


def _probe_kernel() -> tuple[bool, str]:
    global _probe
    if _probe is not None:
        return _probe
    if not SUPPORTED:
        _probe = (False, f"unsupported platform ({sys.platform} {platform.machine()})")
        return _probe
    pid = os.fork()
    if pid == 0:  # child: never returns into the caller
        code = 255
        try:
            install()
            code = 0
        except OSError as exc:
            code = exc.errno if exc.errno and 0 < exc.errno < 255 else 255
        finally:
            os._exit(code)
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    if code == 0:
        _probe = (True, "")
    elif code < 0:
        _probe = (False, f"probe child killed by signal {-code}")
    else:
        _probe = (False, f"kernel refused the filter: {os.strerror(code)}")
    return _probe


def available() -> bool:
    """Whether the kernel accepts the filter (probed once, in a forked child)."""
    return _probe_kernel()[0]


def describe() -> str:
    """One line for ``harness doctor``."""
    ok, why = _probe_kernel()
    if not ok:
        return f"seccomp: unavailable ({why})"
    n = len(refused())
    return (
        f"seccomp: available, {n} syscalls refused on {NATIVE_ARCH} "
        "(+ clone with namespace flags; exec refused in the judging phase)"
    )


__all__ = ["SUPPORTED", "available", "build", "describe", "install", "refused"]
