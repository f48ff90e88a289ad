"""Landlock filesystem confinement through raw system calls (no libraries; Linux >= 5.13).

The launcher calls :func:`restrict` in the forked child just before it ``execve``s the judging
worker: the worker and everything it starts may then read and execute beneath the read-only
paths (interpreter, libraries, the task's files) and write only beneath the read-write ones
(its scratch directory, the GPU device nodes).  Every other path is refused by the kernel, so a
candidate cannot overwrite the reference implementation or the harness, plant files for a later
run, or read another submission's outputs.  Landlock stacks with the seccomp filter and needs
no privilege; a kernel without it (or with it disabled at boot) is reported, never an error.
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import struct
import sys

from sandbox.isolation.seccomp import _libc  # the one libc loader of the jail

# Same numbers on every architecture (the unified table from 424 on).
SYS_LANDLOCK_CREATE_RULESET, SYS_LANDLOCK_ADD_RULE, SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
LANDLOCK_CREATE_RULESET_VERSION = 1 << 0
LANDLOCK_RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

# include/uapi/linux/landlock.h: LANDLOCK_ACCESS_FS_*
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5
ABI_V1_RIGHTS = (1 << 13) - 1  # EXECUTE .. MAKE_SYM
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # those a file can carry
READ_ONLY_RIGHTS = EXECUTE | READ_FILE | READ_DIR


def handled_rights(abi: int) -> int:
    """The filesystem access rights that Landlock ABI ``abi`` knows (0 for none)."""
    if abi < 1:
        return 0
    rights = ABI_V1_RIGHTS
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:  # ABI 4 added network rules, 6 IPC scoping, 7 logging: no new fs rights
        rights |= IOCTL_DEV
    return rights


def _syscall(libc: ctypes.CDLL, nr: int, *args: int) -> tuple[int, int]:
    ret = libc.syscall(ctypes.c_long(nr), *(ctypes.c_long(a) for a in args))
    return ret, (ctypes.get_errno() if ret < 0 else 0)


def _query() -> tuple[int, str]:
    """(ABI version, reason when 0)."""
    if not sys.platform.startswith("linux"):
        return 0, f"not Linux ({sys.platform})"
    ret, err = _syscall(_libc(), SYS_LANDLOCK_CREATE_RULESET, 0, 0, LANDLOCK_CREATE_RULESET_VERSION)
    if ret > 0:
        return int(ret), ""
    if err == errno.ENOSYS:
        return 0, "the kernel has no Landlock (ENOSYS)"
    if err == errno.EOPNOTSUPP:
        return 0, "Landlock is built in but disabled at boot (add it to lsm=)"
    return 0, f"landlock_create_ruleset: {os.strerror(err) if err else 'returned 0'}"


def abi_version() -> int:
    """The running kernel's Landlock ABI version, 0 when unsupported or disabled."""
    return _query()[0]


def restrict(read_only: list[str], read_write: list[str]) -> int:
    """Confine this process (and its future children) to the given paths; returns the ABI used.

    Read and execute are allowed beneath each ``read_only`` path, every right beneath each
    ``read_write`` path; paths that do not exist are skipped, and a path that is not a
    directory gets only the rights a file can carry.  Returns 0 without doing anything when the
    kernel has no Landlock; raises OSError when the kernel refuses a step.
    """
    abi = abi_version()
    if abi < 1:
        return 0
    libc = _libc()
    handled = handled_rights(abi)
    attr = ctypes.create_string_buffer(struct.pack("=Q", handled), 8)  # handled_access_fs only
    ruleset, err = _syscall(libc, SYS_LANDLOCK_CREATE_RULESET, ctypes.addressof(attr), 8, 0)
    if ruleset < 0:
        raise OSError(err, f"landlock_create_ruleset failed: {os.strerror(err)}")
    try:
        rules = [(p, READ_ONLY_RIGHTS) for p in read_only] + [(p, handled) for p in read_write]
        for path, wanted in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except FileNotFoundError:
                continue
            try:
                is_dir = stat.S_ISDIR(os.fstat(fd).st_mode)
                allowed = wanted & handled & (handled if is_dir else FILE_RIGHTS)
                if not allowed:
                    continue
                # struct landlock_path_beneath_attr { __u64 allowed_access; __s32 parent_fd; }
                # __attribute__((packed)): 12 bytes.
                rule = ctypes.create_string_buffer(struct.pack("=Qi", allowed, fd), 12)
                ret, err = _syscall(
                    libc, SYS_LANDLOCK_ADD_RULE, ruleset, LANDLOCK_RULE_PATH_BENEATH,
                    ctypes.addressof(rule), 0,
                )  # fmt: skip
                if ret < 0:
                    raise OSError(err, f"landlock_add_rule({path!r}) failed: {os.strerror(err)}")
            finally:
                os.close(fd)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), ctypes.c_ulong(0),
                      ctypes.c_ulong(0), ctypes.c_ulong(0)) != 0:  # fmt: skip
            err = ctypes.get_errno()
            raise OSError(err, f"prctl(PR_SET_NO_NEW_PRIVS) failed: {os.strerror(err)}")
        ret, err = _syscall(libc, SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0)
        if ret < 0:
            raise OSError(err, f"landlock_restrict_self failed: {os.strerror(err)}")
    finally:
        os.close(ruleset)
    return abi


def describe() -> str:
    """One line for ``harness doctor``."""
    abi, why = _query()
    if abi < 1:
        return f"landlock: unavailable ({why})"
    n = bin(handled_rights(abi)).count("1")
    return f"landlock: available, ABI {abi} ({n} filesystem access rights handled)"


__all__ = ["abi_version", "describe", "handled_rights", "restrict"]
