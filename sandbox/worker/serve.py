"""The judging worker's start and request loop (``python -m sandbox.worker``, sandbox/worker/__main__.py).

Order matters, and is the security of the channel: the socket and the secret are taken before any
candidate code exists (the secret read once from its fd, which is then closed), the channel's
functions are captured before the ``Worker`` (sandbox/worker/main.py) is built, so code the
candidate imports later cannot reroute replies; then one request at a time, each answered with
its id, until ``exit``.
"""

from __future__ import annotations

import argparse
import os
import sys

from sandbox.worker.callpath import _format_exc, _trunc
from sandbox.worker.main import Worker
from sandbox.worker.workerchannel import private_channel


def _age_s() -> float | None:
    """Seconds since this process started (its start-up: Python, torch, the preload), from /proc;
    None where there is none."""
    try:
        with open("/proc/self/stat") as f:
            start = int(f.read().rsplit(")", 1)[1].split()[19])  # starttime, field 22, in clock ticks
        with open("/proc/uptime") as f:
            up = float(f.read().split()[0])
        return round(up - start / os.sysconf("SC_CLK_TCK"), 3)
    except (OSError, ValueError, IndexError):
        return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="sandbox.worker")
    ap.add_argument("--role", choices=["reference", "candidate"], required=True)
    ap.add_argument("--socket")  # a container's channel: a path only it mounts
    ap.add_argument("--secret", default="")
    ap.add_argument("--fd", type=int)  # the process backend's channel: an inherited socketpair
    ap.add_argument("--secret-fd", type=int)
    ap.add_argument("--shared", action="append", default=[])
    ap.add_argument("--scratch", required=True)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--cache-root", required=True)
    ap.add_argument("--preload-compile", action="store_true")  # the reference, when a compile baseline is timed
    a = ap.parse_args(argv)
    from sandbox.worker import channel

    secret = a.secret
    if a.fd is not None:  # first thing: before any candidate code exists
        import socket

        sock = socket.socket(fileno=a.fd)
        os.set_inheritable(a.fd, False)  # compilers and other children do not get the channel
        with os.fdopen(a.secret_fd, "rb") as f:  # read once, closed: nothing later can find it
            secret = f.read().decode()
    else:
        sock = channel.connect(a.socket)
    send, recv, take_fds, give_fds = private_channel(sock)  # captured now: candidate code cannot reroute replies
    try:
        w = Worker(a.role, a.scratch, a.device, a.cache_root, a.shared)
    except BaseException as e:  # noqa: BLE001
        send({"op": "hello", "ok": False, "error": _trunc(_format_exc(e)), "secret": secret})
        return 3
    w._take_fds = take_fds
    if a.preload_compile:  # torch.compile's GPU-free work (imports 2-3 s, source hash) before the device is held
        from sandbox.check.refcache import preload

        preloaded = preload(a.device)
    else:
        preloaded = None
    send({"op": "hello", "ok": True, "pid": os.getpid(), "role": a.role, "secret": secret, "age_s": _age_s(),
          **({"preload_s": preloaded} if a.preload_compile else {})})
    del secret
    handlers = {"setup": w.setup, "call": w.call, "fetch": w.fetch, "profile": w.profile,
                "monitor": w.monitor_report, "poison": w.set_poison, "prepare": w.prepare, "go": w.go,
                "warm_device": w.warm_device, "arena": w.arena_map, "bg": w.bg_report}
    if a.role == "candidate":
        handlers["import"], handlers["seal"], handlers["control"] = w.import_candidate, w.seal, w.control
    else:
        from sandbox.check import refcheck
        from sandbox.lane.gpuquiet import probe as gpu_quiet

        handlers["peaks"], handlers["device_name"], handlers["trim"] = w.peaks, w.device_name, w.trim
        handlers["check"] = lambda req: refcheck.check(w, req)
        handlers["own_call"] = w.own_call  # the task check's draws, on the device, without the arena
        handlers["keep_own"] = lambda req: refcheck.keep_own(w, req)
        handlers["check_own"] = lambda req: refcheck.check_own(w, req)
        handlers["stage"] = w.stage
        handlers["gpu_quiet"] = lambda req: {"ok": True, **gpu_quiet(w.torch, w._spin_rate)}  # sandbox/lane/firstcall.py
    exit_now = os._exit
    while True:
        req = recv()
        op = req.get("op")
        if op == "exit":
            exit_now(0)
        if op != "go" and w._pending is not None and w.last_out is not None and w.last_unchanged is None:
            w.finish()
        h = handlers.get(op)
        if h is None:
            rep = {"ok": False, "kind": "protocol", "error": f"unknown op {op!r}"}
        else:
            try:
                rep = h(req)
            except BaseException as e:  # noqa: BLE001
                rep = {"ok": False, "kind": "runtime_error", "error": _trunc(_format_exc(e))}
        rep["id"] = req.get("id")
        fds = rep.pop("_fds", None) if a.role == "reference" else None
        send(rep)
        if fds:  # the device arena's exported regions (sandbox/worker/devarena.py), after the reply
            give_fds(fds)
            for fd in fds:
                os.close(fd)


if __name__ == "__main__":
    sys.exit(main())
