"""``python -m harness.bench list | run SCENARIO [--out DIR] [-- EXTRA ARGS]``: the GPU benchmark tool.

    python -m harness.bench list                    # the scenarios, what each measures, its limit
    python -m harness.bench run integrity           # on the GPU machine, from the repository root
    python -m harness.bench run tests -- --shards 2 # extra arguments go to the scenario's program

Each run prints the scenario's output as it goes, then writes one JSON record (machine, commit,
command, exit, seconds, summary) to docs/records/bench/ and to $OUT when set.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from harness.bench import record
from harness.bench.scenarios import SCENARIOS


def _list() -> int:
    width = max(len(n) for n in SCENARIOS)
    for s in SCENARIOS.values():
        gpus = f", {s.gpus} GPUs" if s.gpus > 1 else ""
        print(f"{s.name:{width}}  ({s.limit_s} s{gpus})  {s.measures}")
    return 0


def run(name: str, out: Path, extra: tuple[str, ...] = (), limit_s: int | None = None) -> tuple[int, list[Path]]:
    """Run scenario ``name`` (its output teed to ``out``/output.log), then write its record."""
    s = SCENARIOS[name]
    out.mkdir(parents=True, exist_ok=True)
    cmd = s.command(str(out), extra)
    limit = limit_s or s.limit_s
    print(f"== {name}: {' '.join(cmd)} (killed at {limit} s)", flush=True)
    t0 = time.monotonic()
    lines: list[str] = []
    with open(out / "output.log", "w") as log:
        p = subprocess.Popen(cmd, cwd=record.ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             start_new_session=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        killer = _Killer(p, limit)
        assert p.stdout is not None
        for line in p.stdout:
            sys.stdout.write(line)
            log.write(line)
            lines.append(line)
            del lines[:-400]
        rc = p.wait()
        rc = 124 if killer.fired else rc
        killer.cancel()
    summary_file = out / s.summary if s.summary else None
    summary = summary_file.read_text(errors="replace") if summary_file and summary_file.exists() else "".join(lines)
    paths = record.write(name, cmd, rc, time.monotonic() - t0, summary, out)
    print(f"== {name}: exit {rc} in {time.monotonic() - t0:.0f} s; record {paths[0]}", flush=True)
    return rc, paths


class _Killer:
    """Kills the scenario's whole process group at its limit."""

    def __init__(self, p: subprocess.Popen, limit_s: float) -> None:
        import threading

        self.fired = False
        self._p = p
        self._t = threading.Timer(limit_s, self._fire)
        self._t.daemon = True
        self._t.start()

    def _fire(self) -> None:
        self.fired = True
        try:
            os.killpg(self._p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def cancel(self) -> None:
        self._t.cancel()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m harness.bench", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="the scenarios")
    r = sub.add_parser("run", help="run one scenario and record it")
    r.add_argument("scenario", choices=sorted(SCENARIOS))
    r.add_argument("--out", type=Path, default=None, help="output folder (default: $OUT/<scenario> or bench-out/<scenario>)")
    r.add_argument("--limit-s", type=int, default=None, help="kill it after this many seconds (default: the scenario's)")
    r.epilog = "Arguments after -- go to the scenario's program, after the run's own options."
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:  # split here, not by argparse: a positional list cannot follow --limit-s
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    a = ap.parse_args(argv)
    if a.cmd == "list":
        return _list()
    out = a.out or Path(os.environ.get("OUT") or "bench-out") / a.scenario
    rc, _ = run(a.scenario, out.resolve(), tuple(extra), a.limit_s)
    return rc


if __name__ == "__main__":
    sys.exit(main())
