"""The worker's seccomp filter and Landlock confinement, checked with real system calls.

Every check runs in a forked child (the filter and the ruleset cannot be removed once set, so the
test process itself must never be confined); the child reports a JSON dict through a pipe.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest

from sandbox.isolation import landlock, seccomp

LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.syscall.restype = ctypes.c_long
CLONE_NEWUSER, CLONE_NEWNET = 0x10000000, 0x40000000
needs_seccomp = pytest.mark.skipif(
    not (seccomp.SUPPORTED and seccomp.available()), reason=seccomp.describe()
)


def in_child(fn, *args) -> tuple[int, dict]:
    """Run ``fn(*args)`` in a forked child; (wait status, the dict it returned)."""
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.close(rd)
            out = fn(*args)
        except BaseException as exc:  # report, never return into pytest
            out, code = {"exception": repr(exc)}, 1
        try:
            os.write(wr, json.dumps(out).encode())
        finally:
            os._exit(code)
    os.close(wr)
    with os.fdopen(rd, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    return status, (json.loads(data) if data else {})


def ok_child(fn, *args) -> dict:
    status, out = in_child(fn, *args)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, (status, out)
    return out


def errno_of(ret: int) -> int:
    return ctypes.get_errno() if ret == -1 else 0


def call(fn) -> str:
    """'ok' or the name of the errno ``fn()`` raised."""
    try:
        fn()
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc.errno))
    return "ok"


def traceme() -> int:
    """errno of ptrace(PTRACE_TRACEME), asked in a grandchild: a tracee that gets a signal stops
    until its tracer waits, so an unfiltered TRACEME must not stay in the reporting child."""
    try:
        pid = os.fork()
    except PermissionError:  # sealed (no new process): ask here; the first filter refuses ptrace
        return errno_of(LIBC.ptrace(0, 0, None, None))
    if pid == 0:
        os._exit(errno_of(LIBC.ptrace(0, 0, None, None)))
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def refused_calls() -> dict:
    nr = seccomp.SYSCALLS[seccomp.NATIVE_ARCH]
    shm = LIBC.shmget(0, 4096, 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0600
    if shm >= 0:  # not refused: do not leave the segment behind
        LIBC.shmctl(shm, 0, None)  # IPC_RMID
    out = {
        "ptrace": traceme(),
        "unshare": errno_of(LIBC.unshare(CLONE_NEWUSER)),
        "mount": errno_of(LIBC.mount(b"none", b"/no-such-dir", b"tmpfs", ctypes.c_ulong(0), None)),
        "memfd_create": call(lambda: os.memfd_create("x")),
        "shmget": errno_of(shm),
        "io_uring_setup": errno_of(LIBC.syscall(nr["io_uring_setup"], 1, None)),
        "clone3": errno_of(LIBC.syscall(nr["clone3"], None, 0)),
    }
    ret = LIBC.syscall(nr["clone"], ctypes.c_long(CLONE_NEWNET | signal.SIGCHLD), 0, 0, 0, 0)
    if ret == 0:  # the filter let it through: this is the new child
        os._exit(99)
    if ret > 0:
        os.waitpid(ret, 0)
    out["clone_newnet"] = errno_of(ret)
    return out


def ordinary_work(tmp: str) -> dict:
    out = {}
    path = os.path.join(tmp, "f.txt")
    with open(path, "w") as f:
        f.write("hello")
    with open(path) as f:
        out["file"] = f.read()
    try:
        pid = os.fork()
    except OSError as e:  # sealed: threads only
        out["fork"] = errno.errorcode[e.errno]
    else:
        if pid == 0:
            os._exit(7)
        out["fork"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    box = []
    t = threading.Thread(target=lambda: box.append(41 + 1))
    t.start()
    t.join()
    out["thread"] = box
    return out


def test_build_shape():
    x86 = seccomp.build(arch="x86_64")
    arm = seccomp.build(arch="aarch64")
    for prog in (x86, arm, seccomp.build(True, "x86_64"), seccomp.build(True, "aarch64")):
        assert len(prog) % 8 == 0 and 0 < len(prog) // 8 < 4096
    assert x86 != arm
    # execve + execveat + fork + vfork: 2 insns each; clone without CLONE_THREAD: 2
    assert len(seccomp.build(True, "x86_64")) == len(x86) + 8 * (2 * 4 + 2)
    with pytest.raises(ValueError):
        seccomp.build(arch="riscv64")
    assert "umount" not in seccomp.refused(arch="aarch64")  # neither 64-bit table has it
    assert "execve" in seccomp.refused(True, "aarch64") and "clone3" in seccomp.refused()


def _header_numbers(path: str) -> dict[str, int]:
    text = Path(path).read_text()
    return {m[1]: int(m[2]) for m in re.finditer(r"#define __NR(?:3264)?_(\w+)\s+(\d+)", text)}


@pytest.mark.parametrize(
    "arch,header",
    [
        ("x86_64", "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
        ("aarch64", "/usr/include/asm-generic/unistd.h"),
    ],
)
def test_syscall_numbers_match_kernel_headers(arch, header):
    if not os.path.exists(header):
        pytest.skip(f"{header} missing (install linux-libc-dev)")
    numbers = _header_numbers(header)
    table = seccomp.SYSCALLS[arch]
    for name, nr in table.items():
        assert numbers.get(name) == nr, (arch, name, nr, numbers.get(name))
    for name in seccomp.DENIED + seccomp.EXEC_CALLS:
        assert (name in table) == (name in numbers), (arch, name)


@needs_seccomp
def test_install_refuses_escapes_and_keeps_ordinary_work(tmp_path):
    def child():
        seccomp.install()
        out = {"refused": refused_calls(), "work": ordinary_work(str(tmp_path))}
        out["true"] = subprocess.run(["true"]).returncode
        seccomp.install(deny_exec=True)  # stacks: the judging phase
        out["run_after"] = call(lambda: subprocess.run(["true"]))
        out["execv_after"] = call(lambda: os.execv("/bin/true", ["true"]))
        out["work_after"] = ordinary_work(str(tmp_path))
        out["refused_after"] = refused_calls()
        return out

    out = ok_child(child)
    expected = {k: errno.EPERM for k in out["refused"]} | {"clone3": errno.ENOSYS}
    expected["memfd_create"] = "EPERM"
    assert out["refused"] == expected
    assert out["refused_after"] == expected
    assert out["work"] == {"file": "hello", "fork": 7, "thread": [42]}
    assert out["true"] == 0
    assert out["run_after"] == "EPERM" and out["execv_after"] == "EPERM"
    # sealed: files and threads as before; no new process (os.fork is clone without CLONE_THREAD)
    assert out["work_after"] == {**out["work"], "fork": "EPERM"}


@needs_seccomp
def test_install_covers_existing_threads():
    def child():
        go, done, box = threading.Event(), threading.Event(), []

        def other():
            go.wait()
            box.append(errno_of(LIBC.unshare(CLONE_NEWUSER)))
            done.set()

        t = threading.Thread(target=other)
        t.start()
        seccomp.install()  # TSYNC: the already running thread is filtered too
        go.set()
        done.wait(10)
        t.join()
        return {"thread": box}

    assert ok_child(child) == {"thread": [errno.EPERM]}


@needs_seccomp
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to drop to an ordinary user")
def test_install_as_ordinary_user():
    scratch = tempfile.TemporaryDirectory()  # tmp_path's parents are private to root
    os.chmod(scratch.name, 0o777)

    def child():
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)
        seccomp.install()
        return {"ptrace": traceme(),
                "true": subprocess.run(["true"]).returncode, "work": ordinary_work(scratch.name)}  # fmt: skip

    with scratch:
        out = ok_child(child)
    assert out["ptrace"] == errno.EPERM and out["true"] == 0 and out["work"]["fork"] == 7


@needs_seccomp
@pytest.mark.skipif(seccomp.NATIVE_ARCH != "x86_64", reason="x32 exists on x86_64 only")
def test_x32_syscall_kills_the_process():
    def child():
        seccomp.install()
        LIBC.syscall(ctypes.c_long(0x40000000 | 39))  # x32 getpid
        return {"survived": True}

    status, out = in_child(child)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGSYS, (status, out)


@needs_seccomp
def test_foreign_arch_is_killed():
    """The other arch's program passes the kernel's checks, then its arch test kills us."""
    foreign = "aarch64" if seccomp.NATIVE_ARCH == "x86_64" else "x86_64"

    def child():
        seccomp._load(seccomp.build(arch=foreign))
        os.getpid()
        return {"survived": True}

    status, out = in_child(child)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGSYS, (status, out)


def test_describe_lines():
    assert seccomp.describe().startswith("seccomp: ")
    assert landlock.describe().startswith("landlock: ")
    assert landlock.handled_rights(1) == (1 << 13) - 1
    assert bin(landlock.handled_rights(5)).count("1") == 16


@needs_seccomp
def test_describe_counts_the_refused_syscalls_where_seccomp_is_available():
    assert f"available, {len(seccomp.refused())} syscalls refused on {seccomp.NATIVE_ARCH}" in seccomp.describe()


@pytest.mark.skipif(
    landlock.abi_version() == 0, reason=f"the kernel has no Landlock: {landlock.describe()}"
)
def test_landlock_confines_writes(tmp_path):
    rw, other, ro = tmp_path / "rw", tmp_path / "other", tmp_path / "ro"
    for d in (rw, other, ro):
        d.mkdir()
    (ro / "allowed.txt").write_text("yes")
    (ro / "hidden.txt").write_text("no")
    true_bin = os.path.realpath(shutil.which("true") or "/usr/bin/true")
    read_only = ["/usr", "/bin", "/lib", "/lib64", str(ro / "allowed.txt"), "/no/such/path"]

    def child():
        out = {"abi": landlock.restrict(read_only, [str(rw), "/dev/null"])}
        out["write_rw"] = call(lambda: (rw / "x.txt").write_text("ok"))
        out["mkdir_rw"] = call(lambda: (rw / "sub").mkdir())
        out["write_other"] = call(lambda: (other / "x.txt").write_text("no"))
        out["read_usr"] = call(lambda: open(true_bin, "rb").close())
        out["list_usr"] = call(lambda: os.listdir("/usr"))
        out["read_file_rule"] = call(lambda: (ro / "allowed.txt").read_text())
        out["write_file_rule"] = call(lambda: (ro / "allowed.txt").write_text("x"))
        out["read_hidden"] = call(lambda: (ro / "hidden.txt").read_text())
        out["dev_null"] = call(lambda: open("/dev/null", "w").close())
        out["true"] = subprocess.run([true_bin]).returncode
        return out

    out = ok_child(child)
    assert out["abi"] == landlock.abi_version() > 0
    assert out["write_rw"] == out["mkdir_rw"] == "ok"
    assert out["write_other"] == "EACCES"  # PermissionError
    assert out["read_usr"] == out["list_usr"] == out["read_file_rule"] == "ok"
    assert out["write_file_rule"] == out["read_hidden"] == "EACCES"
    assert out["dev_null"] == "ok" and out["true"] == 0
    assert (rw / "x.txt").read_text() == "ok" and not (other / "x.txt").exists()
