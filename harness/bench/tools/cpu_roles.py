"""Where a machine's CPU time goes, by the harness role of each process, for a GPU scenario.

``python cpu_roles.py --out F --every 1`` samples /proc every ``--every`` seconds until it gets
SIGTERM, then writes one JSON line to F: the CPU seconds (user + system) of the processes seen,
summed by role, and the machine's own CPU seconds over the same span (/proc/stat), so the share
not seen (processes that lived less than a sample's interval) shows as ``unseen``. A process's
time is its last sample's; its children's are counted where they are seen themselves.

Roles, from the command line: the judging workers (``sandbox.worker --role reference`` or
``candidate`` on a GPU; a reference worker without ``--preload-compile`` apart: the task check's,
or a judgement's with no compile baseline), build workers (the candidate role on the CPU), compilers (nvcc and its
steps, the host compiler, the linker, ninja), the harness parent (``harness``), other.
Linux only; run beside a scenario (harness/bench/tools/gpu_published.sh)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import time

COMPILERS = ("nvcc", "cicc", "ptxas", "cudafe++", "fatbinary", "nvlink", "cc1plus", "cc1", "g++", "gcc",
             "c++", "ld", "collect2", "ninja", "as")
TICK = os.sysconf("SC_CLK_TCK")


def role(argv: list[str]) -> str:
    """The harness role of a process, from its command line."""
    if not argv:
        return "other"
    name = os.path.basename(argv[0])
    if name in COMPILERS or any(os.path.basename(a) in ("cicc", "ptxas", "cc1plus") for a in argv[:1]):
        return "compilers"
    if "sandbox.worker" in argv:
        r = argv[argv.index("--role") + 1] if "--role" in argv[:-1] else "?"
        dev = argv[argv.index("--device") + 1] if "--device" in argv[:-1] else "cpu"
        if r == "candidate" and dev == "cpu":
            return "build worker"
        if r == "reference" and "--preload-compile" not in argv:  # the task check's, or a judgement's without torch.compile
            return "reference worker, no preload"
        return f"{r} worker"
    if "harness" in argv or any(a.endswith("harness/__main__.py") for a in argv):
        return "harness parent"
    return "other"


def sample(seen: dict[int, tuple[str, float]]) -> None:
    """Each live process's CPU seconds so far, with its role (the role kept from its first sight)."""
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{d}/cmdline", "rb") as f:
                argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
        except OSError:
            continue
        cpu = (int(fields[11]) + int(fields[12])) / TICK  # utime, stime (fields 14 and 15 of stat)
        pid = int(d)
        r = seen[pid][0] if pid in seen and seen[pid][0] != "other" else role(argv)
        seen[pid] = (r, cpu)


def machine_cpu_s() -> float:
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / TICK  # all but idle and iowait


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--every", type=float, default=1.0)
    a = ap.parse_args()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    seen: dict[int, tuple[str, float]] = {}
    sample(seen)
    base = dict(seen)  # what the processes alive at the start had spent before it
    m0, t0 = machine_cpu_s(), time.monotonic()
    while not stop:
        time.sleep(a.every)
        sample(seen)
    by: dict[str, float] = {}
    for pid, (r, cpu) in seen.items():
        by[r] = by.get(r, 0.0) + cpu - (base[pid][1] if pid in base else 0.0)
    total = machine_cpu_s() - m0
    by["unseen"] = total - sum(by.values())
    out = {"span_s": round(time.monotonic() - t0, 1), "machine_cpu_s": round(total, 1),
           "cpu_s_by_role": {k: round(v, 1) for k, v in sorted(by.items(), key=lambda kv: -kv[1])}}
    with open(a.out, "w") as f:
        f.write(json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
