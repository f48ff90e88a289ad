"""Where a judgement's device hold goes on the CPU side: for the judging thread (the parent's,
which relays every request) and each worker's process tree, the CPU time it ran and the time it
was runnable but waited for a CPU (the kernel's ``/proc/<pid>/task/<tid>/schedstat``: ns on a
CPU, ns waiting on a run queue, timeslices), between taking the device and giving it up.

The GPU hold grows with the machine's load (four H200s, session 18: 3.7 s on one GPU, 12.8 s on
four; a relu 1.2 s alone, 3.4 s in the scale run). Whether what is left after the freeze fix is
CPU contention (run-queue wait of the workers or the judging thread) or the judging process's
GIL (the judging thread neither running nor runnable while its worker has answered) is read off
``evidence.hold_cpu`` of the next measurement, not guessed. Costs a few /proc reads at each end.
"""

from __future__ import annotations

import os
import threading
import time

from sandbox.isolation.proctree import tree


def _schedstat(path: str) -> tuple[int, int]:
    try:
        with open(path) as f:
            run, wait, _ = f.read().split()
        return int(run), int(wait)
    except (OSError, ValueError):
        return 0, 0


def _threads(pid: int) -> dict[int, tuple[int, int]]:
    """tid -> (CPU ns, run-queue wait ns) for the threads of ``pid``."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return {}
    return {int(t): _schedstat(f"/proc/{pid}/task/{t}/schedstat") for t in tids}


def _comm(path: str) -> str:
    try:
        with open(path) as f:
            return f.read().strip() or "?"
    except OSError:
        return "?"


def _tree(pid: int) -> dict[int, dict[int, tuple[int, int]]]:
    try:
        pids = tree(pid)
    except OSError:
        return {}
    return {p: _threads(p) for p in pids}


def available() -> bool:
    return os.path.exists(f"/proc/self/task/{threading.get_native_id()}/schedstat")


class HoldCpu:
    """Started when the device is taken, in the judging thread; ``finish()`` before the workers
    stop: {"wall_s", "judging_thread": {"cpu_s", "runq_s"}, role: {"cpu_s", "runq_s", "procs",
    "threads", "top", "runq_top"}} over the hold. A thread or process that ended meanwhile is not
    counted; one that started counts whole. ``procs``, ``threads``: the role's tree at the end;
    ``top``: the CPU seconds of its busiest names (a thread of the root process by its thread
    name, a process under it as "child <name>", a thread of that process "child <name>/<thread>");
    ``runq_top``: [run-queue seconds, threads] of the names that waited longest for a CPU. Many
    threads of one name waiting is a thread pool woken on a loaded host."""

    TOP = 3

    def __init__(self, workers: dict[str, int]) -> None:
        self.workers = dict(workers)
        self.tid = threading.get_native_id()
        self.t0 = time.monotonic()
        self.thread0 = _schedstat(f"/proc/self/task/{self.tid}/schedstat")
        self.trees0 = {role: _tree(pid) for role, pid in self.workers.items()}

    def finish(self) -> dict[str, object]:
        out: dict[str, object] = {"wall_s": round(time.monotonic() - self.t0, 3)}
        r, w = _schedstat(f"/proc/self/task/{self.tid}/schedstat")
        out["judging_thread"] = _secs(r - self.thread0[0], w - self.thread0[1])
        for role, pid in self.workers.items():
            before, now = self.trees0[role], _tree(pid)
            run = wait = 0
            names: dict[str, list[int]] = {}  # name -> [CPU ns, run-queue ns, threads]
            for p, threads in now.items():
                was = before.get(p, {})
                for t, (tr, tw) in threads.items():
                    dr = max(0, tr - was.get(t, (0, 0))[0])
                    dw = max(0, tw - was.get(t, (0, 0))[1])
                    run, wait = run + dr, wait + dw
                    if dr or dw:
                        name = _comm(f"/proc/{p}/task/{t}/comm")
                        if p != pid:
                            name = f"child {_comm(f'/proc/{p}/comm')}" + (f"/{name}" if t != p else "")
                        n = names.setdefault(name, [0, 0, 0])
                        n[0], n[1], n[2] = n[0] + dr, n[1] + dw, n[2] + 1
            top = sorted(names.items(), key=lambda kv: -kv[1][0])[:self.TOP]
            waits = sorted(names.items(), key=lambda kv: -kv[1][1])[:self.TOP]
            out[role] = {**_secs(run, wait), "procs": sum(1 for threads in now.values() if threads),
                         "threads": sum(len(threads) for threads in now.values()),
                         "top": {k: round(v[0] / 1e9, 3) for k, v in top},
                         "runq_top": {k: [round(v[1] / 1e9, 3), v[2]] for k, v in waits if v[1]}}
        return out


def _secs(run_ns: int, wait_ns: int) -> dict[str, float]:
    return {"cpu_s": round(max(0, run_ns) / 1e9, 3), "runq_s": round(max(0, wait_ns) / 1e9, 3)}


def start(workers: dict[str, int]) -> HoldCpu | None:
    """A HoldCpu for the workers' pids (role -> pid), or None where schedstat cannot be read."""
    try:
        return HoldCpu(workers) if available() else None
    except Exception:  # noqa: BLE001 - a measurement, never a reason for a judgement to fail
        return None


def finish(h: HoldCpu) -> dict[str, object] | None:
    try:
        return h.finish()
    except Exception:  # noqa: BLE001 - as in start
        return None
