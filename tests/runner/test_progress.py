"""The run's progress lines (issue 26, item 6), from a run with the offline model and a fake judge
that reports a build for each new source: a line when an op's first judgement starts (the long
silence of a CPU run: its extension builds first), one per build with the run's count and seconds,
no ETA until an op has finished, then one from the finished ops' wall time, never 0 with ops left;
each op's done line gives its final kernel's speedup with its interval."""

from __future__ import annotations

import io
import re
import time

from harness.methods.base import Budget
from harness.runner import RunConfig, run
from harness.runner.progress import Progress
from tests.runner.test_runner import Judge


class Building(Judge):
    """Each source is built once (a new one takes 0.05 s), as the evaluator's build cache does."""

    def __call__(self, task, source, config):
        built = source not in self.__dict__.setdefault("seen", set())
        self.seen.add(source)
        if built:
            time.sleep(0.05)
        v = super().__call__(task, source, config)
        v.evidence["build"] = {"builds": 1 if built else 0, "cache_hits": 0 if built else 1}
        v.durations_s["build"] = 0.05 if built else 0.0
        return v


def test_progress_shows_builds_and_an_eta_only_from_finished_ops(tmp_path):
    stream = io.StringIO()
    judge = Building()
    run(RunConfig(method="best-of-n", ops=["relu", "softmax", "sum_dim"], budget=Budget(evaluations=2),
                  results=tmp_path, run_id="p"), judge=judge, stream=stream)
    lines = stream.getvalue().splitlines()
    first_op = lines[: next(i for i, ln in enumerate(lines) if "relu: done" in ln)]
    done = [ln for ln in lines if ": done" in ln]  # each op's line says what its final judgement found
    assert len(done) == 3 and all(re.search(r"\] \w+: done: final \d+\.\d\dx \[\d+\.\d\d, \d+\.\d\d\] vs eager, "
                                            r"(faster|slower|no clear difference)", ln) for ln in done), done
    assert any(ln.startswith("[0/3 ops] relu: trial 1/2: judging; its C++/CUDA extension builds first") for ln in lines)
    assert all("ETA after the first op" in ln for ln in first_op if ": trial " in ln and "ETA" in ln)
    builds = [ln for ln in lines if "built its extension" in ln]
    assert len(builds) == len(judge.seen)  # one line per source built, numbered
    assert builds[-1].endswith(f"(builds so far: {len(judge.seen)}, {0.05 * len(judge.seen):.0f} s)")
    later = [ln for ln in lines[len(first_op):] if "ETA" in ln]
    assert later and all(re.search(r"ETA (<1 min|~\d+ min) \(\d+\.\d min/op so far\)", ln) for ln in later)
    assert any(re.search(r"relu: final judgement of the best kernel \(trial \d\): judging; hidden seeds", ln)
               for ln in lines)


def test_the_eta_counts_the_ops_left_at_the_mean_op_time_less_the_time_spent():
    p = Progress(["a", "b", "c"], 2, stream=io.StringIO())
    assert p._eta() == "after the first op"
    p.op_seconds = [600.0]  # a finished op took 10 min
    p.finished = {"a"}
    p.op_started = {"b": time.monotonic() - 240}  # b began 4 min ago; c has not begun
    assert p._eta() == "~16 min (10.0 min/op so far)"  # 6 min of b left, 10 of c
    p.op_started = {"b": time.monotonic() - 1200}  # b overran the mean: 0 left for it, not negative
    assert p._eta() == "~10 min (10.0 min/op so far)"
    p.jobs = 2
    assert p._eta() == "~5 min (10.0 min/op so far)"


def test_an_op_whose_verdicts_were_all_reused_stays_out_of_the_eta():
    """A methods slice on the H200 (2026-11-26) printed "0.0 min/op so far": an op of a run whose
    verdicts the store already held finished in no time, and its 0 s became the per-op mean."""
    p = Progress(["a", "b", "c"], 2, stream=io.StringIO())
    p.op_begin("a")
    p.op_done("a")  # judged nothing here
    assert p._eta() == "after the first op"
    p.op_begin("b")
    p.op_started["b"] -= 600  # began 10 min ago
    p.judging("b", "trial 1/2", native=True)
    p.op_done("b")
    assert p._eta() == "~10 min (10.0 min/op so far)"  # c alone is left, at b's time
