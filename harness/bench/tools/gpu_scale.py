"""Issue 27, goal 6 (the user's scale): judgements per minute of real ``harness run`` processes whose LLM
is slow, on every GPU of the machine.

The LLM is the offline model behind the harness's own OpenAI-compatible gateway on loopback
(harness/llm/gateway.py), with a latency drawn uniformly from [LO, HI] seconds per call (5-30 s by
default, a hosted model's range). As a user runs a comparison on one node, every (method, seed) is
its own ``harness run --executor local --jobs N`` on one store, all at once (the GPUs' timing locks
hold across processes), and each hides the latency by working on N ops at once. The ops are the
suite's ops the offline model writes a kernel for (24 of 113 in CUDA; it answers the rest with no
code). By default each reply's CUDA source gets a ``// sample K`` line, so every kernel is a new
build and a new judgement as with a real model (the offline model alone repeats sources, which the
harness builds once and judges once): ``--distinct none`` turns it off.

    python3 harness/bench/tools/gpu_scale.py start --work W [options]   # detached (setsid); returns
    python3 harness/bench/tools/gpu_scale.py wait --work W --for-s 560 --out OUT   # progress a minute
    python3 harness/bench/tools/gpu_scale.py run --work W [options]     # the same, in the foreground
    python3 harness/bench/tools/gpu_scale.py summary --work W           # W/summary.{json,txt} again

``start`` then ``wait`` fits one device call; a longer window spans calls on a warm machine (a
process in its own session outlives its call): ``start`` + ``wait --for-s 570`` in the first call,
``wait --for-s 540`` in the next. The run stops at ``--duration-s`` (SIGINT: a clean stop, no final
judgement begins) and the summary counts the judgements the evaluator ran (a verdict reused from
the store, or a reply that did not parse, is not one): per minute, over the best ``--window-s``
stretch, GPU held share, CPU busy share, LLM calls and their latency, and the projection to an
8-GPU node (docs/performance.md says how it is made). The runs count their judgements in flight per
GPU across the machine (sandbox/lane/slots.py); ``KH_MACHINE_SLOTS=0`` in the tool's environment
runs them without that count, for a comparison on the same machine (the summary says which).
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import os
import random
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from gpu_two_summary import gpu_count  # noqa: E402  (this folder's tools)
from scale_summary import PAPER_SCALE, _rows, _run_ids, best_window, judged_times, project, summary  # noqa: E402,F401

MODEL = "offline-slow"
KEY_ENV = "KH_SCALE_KEY"


class SlowModel:
    """The offline model answering after a drawn latency; ``distinct="builds"`` marks each reply's
    CUDA/C++ source (a new build), ``"verdicts"`` its Python only (a build cache hit, a new verdict)."""

    def __init__(self, inner: Any, lo: float, hi: float, distinct: str = "builds", seed: int = 0):
        self.inner, self.lo, self.hi, self.distinct, self.seed = inner, lo, hi, distinct, seed
        self.name = self.model = MODEL
        self._n = itertools.count()
        self._lock = threading.Lock()

    def chat(self, messages: list[dict[str, str]], *, context: Any, temperature: float | None = None,
             max_tokens: int | None = None, model: str | None = None) -> Any:
        with self._lock:
            n = next(self._n)
        delay = random.Random(f"{self.seed}|{n}").uniform(self.lo, self.hi)
        time.sleep(delay)
        r = self.inner.chat(messages, context=context, temperature=temperature, max_tokens=max_tokens)
        return dataclasses.replace(r, text=mark(r.text, n, self.distinct), model=MODEL,
                                   latency_s=r.latency_s + delay, offline=False)


def mark(text: str, n: int, distinct: str) -> str:
    if distinct == "builds" and '_SRC = r"""\n' in text:
        return text.replace('_SRC = r"""\n', f'_SRC = r"""\n// sample {n}\n', 1)
    if distinct in ("builds", "verdicts") and "```python\n" in text:
        return text.replace("```python\n", f"```python\n# sample {n}\n", 1)
    return text


class CpuSampler(threading.Thread):
    """The machine's CPU busy share over the run, from /proc/stat (Linux)."""

    def __init__(self, every_s: float = 10.0):
        super().__init__(daemon=True)
        self.every_s, self.samples, self._stop = every_s, [], threading.Event()

    @staticmethod
    def _read() -> tuple[float, float] | None:
        try:
            f = [float(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        except (OSError, ValueError):
            return None
        idle = f[3] + (f[4] if len(f) > 4 else 0.0)
        return sum(f), idle

    def run(self) -> None:
        last = self._read()
        while not self._stop.wait(self.every_s):
            now = self._read()
            if now and last and now[0] > last[0]:
                self.samples.append((time.time(), 1.0 - (now[1] - last[1]) / (now[0] - last[0])))
            last = now

    def stop(self) -> None:
        self._stop.set()


def writable_ops(device: str, suite: str = "full") -> list[str]:
    """The suite's ops the offline model writes a kernel for (it answers "unsupported_op" for the rest:
    no code, no judgement; a real model's replies would be judged), in suite order."""
    from harness.llm.base import CallContext
    from harness.llm.offline import OfflineModel
    from harness.runner.tasks import resolve_tasks

    m = OfflineModel(device=device, broken_rate=0.0)
    return [t.name for t in resolve_tasks(suite, None)
            if "## Code" in m.chat([{"role": "user", "content": f"```python\n{t.source}\n```"}],
                                   context=CallContext(op=t.name)).text]


def run(a: argparse.Namespace) -> None:
    """Every (method, seed) of ``--methods`` x ``--seeds`` is one ``harness run`` process, all at once on one
    store, as a user runs a comparison on one node (the device locks are across processes)."""
    from harness.llm.gateway import Gateway
    from harness.llm.offline import OfflineModel

    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    kind = a.device.split(":")[0]
    ops = a.ops or ",".join(writable_ops(kind))
    model = SlowModel(OfflineModel(seed=0, device=kind, broken_rate=a.broken_rate), a.latency[0], a.latency[1],
                      a.distinct)
    token = "hk-scale-" + secrets.token_urlsafe(16)
    cfg = work / "llm.toml"  # the client must allow as many calls in flight as ops (llm.concurrency, default 4)
    cfg.write_text(f"[llm]\ntimeout_s = {a.latency[1] + 90}\nmax_retries = 2\nconcurrency = {a.jobs}\n")
    runs = [(m, s) for m in a.methods.split(",") for s in range(a.seed, a.seed + a.seeds)]
    cw = max(1, (os.cpu_count() or 2) // len(runs))  # the machine's cores shared by the runs' compile pools
    cpu = CpuSampler()
    procs: list[subprocess.Popen] = []
    with Gateway(model, token=token) as gw:
        cmds = [[sys.executable, "-m", "harness", "run", "--method", m, "--llm", f"{MODEL}@{gw.http_url}",
                 "--llm-api-key-env", KEY_ENV, "--llm-config", str(cfg), "--device", a.device, "--executor", "local",
                 "--jobs", str(a.jobs), "--compile-workers", str(cw), "--results", str(work / "results"),
                 "--run-id", f"scale-{m}-s{s}", "--seed", str(s), "--quiet", "--ops", ops,
                 *(["--budget", str(a.budget)] if a.budget else []),
                 *sum((["--eval-option", o] for o in a.eval_option), [])] for m, s in runs]
        t0 = time.time()
        meta = {"t0": t0, "cmds": cmds, "run_ids": [f"scale-{m}-s{s}" for m, s in runs], "ops": ops.split(","), "args": {k: v for k, v in vars(a).items() if k != "func"},
                "gpus": gpu_count(), "cpus": os.cpu_count(), "commit": os.environ.get("KH_COMMIT", ""),
                "machine_slots": os.environ.get("KH_MACHINE_SLOTS", "1") != "0"}  # sandbox/lane/slots.py; A/B with =0
        (work / "started.json").write_text(json.dumps(meta, indent=1))
        cpu.start()
        env = {**os.environ, KEY_ENV: token, "PYTHONUNBUFFERED": "1"}
        for i, cmd in enumerate(cmds):
            with open(work / f"harness-run-{i}.log", "w") as log:
                procs.append(subprocess.Popen(cmd, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env=env))
        deadline = t0 + a.duration_s
        while time.time() < deadline and any(p.poll() is None for p in procs):
            time.sleep(1.0)
        if any(p.poll() is None for p in procs):
            meta["stopped_at"] = time.time()  # SIGINT: each run stops cleanly, no final judgement begins
            for p in procs:
                if p.poll() is None:
                    p.send_signal(signal.SIGINT)
        for p in procs:
            try:
                p.wait(timeout=max(1.0, meta.get("stopped_at", time.time()) + 90 - time.time()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        cpu.stop()
    meta.update(rc=[p.returncode for p in procs], ended=time.time(), llm_calls_served=next(model._n),
                cpu_busy=[(round(t - t0, 1), round(b, 3)) for t, b in cpu.samples])
    (work / "started.json").write_text(json.dumps(meta, indent=1))
    summary(work, a.window_s)


def start(a: argparse.Namespace) -> None:
    work = Path(a.work)
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    argv = [sys.executable, __file__, "run", *sys.argv[2:]]
    with open(work / "tool.log", "w") as log:
        p = subprocess.Popen(argv, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    (work / "tool.pid").write_text(str(p.pid))
    print(f"gpu_scale: started (pid {p.pid}) in {work}", flush=True)
    if a.wait_s > 0:
        wait(argparse.Namespace(work=a.work, for_s=a.wait_s, every_s=60, out=a.out))


def _progress(work: Path) -> str:
    meta = json.loads((work / "started.json").read_text())
    db = work / "results" / "harness.sqlite"
    if not db.exists():
        return f"{time.time() - meta['t0']:.0f} s: no store yet"
    try:
        verdicts, calls = _rows(db, _run_ids(meta))
    except Exception as e:  # noqa: BLE001  (a store being created: say so and look again)
        return f"{time.time() - meta['t0']:.0f} s: store not readable yet ({e})"
    times, _, kinds = judged_times(verdicts)
    recent = sum(1 for t in times if t > time.time() - 60)
    return (f"{time.time() - meta['t0']:.0f} s: {len(times)} judgements ({recent} in the last minute), "
            f"{len(calls)} LLM calls, load {os.getloadavg()[0]:.1f}, {dict(kinds)}")


def wait(a: argparse.Namespace) -> None:
    work, deadline = Path(a.work), time.time() + a.for_s
    while time.time() < deadline and not (work / "summary.txt").exists():
        time.sleep(min(a.every_s, max(0.0, deadline - time.time())))
        if (work / "started.json").exists() and not (work / "summary.txt").exists():
            print(_progress(work), flush=True)
    done = (work / "summary.txt").exists()
    print("gpu_scale: finished" if done else f"gpu_scale: still running after {a.for_s} s (wait again)", flush=True)
    if done:
        print((work / "summary.txt").read_text(), flush=True)
    if a.out:
        out = Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        for name in ("summary.txt", "summary.json", "started.json"):
            if (work / name).exists():
                shutil.copy(work / name, out / name)
        for f in [*sorted(work.glob("harness-run-*.log")), work / "tool.log"]:  # the tails
            if f.exists():
                (out / f.name).write_bytes(f.read_bytes()[-20000:])
        if done and (work / "results" / "harness.sqlite").exists():
            subprocess.run(["tar", "czf", str(out / "results.tgz"), "-C", str(work), "results/harness.sqlite"],
                           check=False)
    if not done and (work / "tool.log").exists() and not _alive(work):
        print("gpu_scale: the tool is not running and left no summary; tool.log:\n"
              + (work / "tool.log").read_text()[-3000:], flush=True)
        sys.exit(1)


def _alive(work: Path) -> bool:
    try:
        os.kill(int((work / "tool.pid").read_text()), 0)
        return True
    except (OSError, ValueError):
        return False


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("start", "run"):
        s = sub.add_parser(name)
        s.add_argument("--work", required=True, help="folder of the run (store, logs, summary); start empties it")
        s.add_argument("--methods", default="evoengineer-free,evoengineer-full,funsearch,eoh",
                       help="comma-separated; each with each seed is one harness run, all at once")
        s.add_argument("--seeds", type=int, default=1, help="seeds per method (--seed, --seed+1, ...)")
        s.add_argument("--ops", default="", help="comma-separated ops (default: every op the offline model writes)")
        s.add_argument("--jobs", type=int, default=32, help="ops in flight per run (harness run --jobs)")
        s.add_argument("--budget", type=int, default=0, help="trials per op (0: the method's, 45)")
        s.add_argument("--device", default="cuda")
        s.add_argument("--latency", type=float, nargs=2, default=(5.0, 30.0), metavar=("LO", "HI"))
        s.add_argument("--distinct", choices=("builds", "verdicts", "none"), default="builds")
        s.add_argument("--broken-rate", type=float, default=0.15, help="the offline model's share of broken replies")
        s.add_argument("--duration-s", type=float, default=960, help="stop the run after this long")
        s.add_argument("--window-s", type=float, default=600)
        s.add_argument("--seed", type=int, default=0)
        s.add_argument("--eval-option", action="append", default=[], metavar="KEY=VALUE")
        s.add_argument("--wait-s", type=float, default=0, help="start: then wait this long (the wait command)")
        s.add_argument("--out", default="", help="start --wait-s: where the wait copies the summary and logs")
        s.set_defaults(func=start if name == "start" else run)
    w = sub.add_parser("wait")
    w.add_argument("--work", required=True)
    w.add_argument("--for-s", type=float, default=560)
    w.add_argument("--every-s", type=float, default=60)
    w.add_argument("--out", default="")
    w.set_defaults(func=wait)
    m = sub.add_parser("summary")
    m.add_argument("--work", required=True)
    m.add_argument("--window-s", type=float, default=600)
    m.set_defaults(func=lambda a: summary(Path(a.work), a.window_s))
    a = p.parse_args()
    a.func(a)


if __name__ == "__main__":
    main()
