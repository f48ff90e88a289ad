"""The runner's rules, with the offline model and a fake judge (fast): the budget is enforced
outside the method, every proposal is stored with a verdict, failures become verdicts,
resume repeats nothing, the run record carries seed/budget/llm/environment, seeds reproduce."""

from __future__ import annotations

import hashlib
import json
import threading
import time

import pytest

from harness.methods import registry
from harness.methods.base import Budget, Proposal
from harness.runner import RunConfig, run
from harness.store import Results
from sandbox.evaluate import CandidateError
from sandbox.verdict import Measurement, Speedup, Status, Verdict
from tests.support.cli import invoke


class Judge:
    """Stands in for the sandboxed evaluator: valid unless the source says otherwise."""

    def __init__(self, crash_at: int | None = None):
        self.calls: list[tuple[str, str, str]] = []
        self.crash_at = crash_at
        self.lock = threading.Lock()

    def __call__(self, task, source, config):
        with self.lock:
            self.calls.append((task.name, hashlib.sha256(source.encode()).hexdigest()[:8], config.mode.value))
            if self.crash_at is not None and len(self.calls) == self.crash_at:
                raise KeyboardInterrupt("simulated kill")
        if "BADSIG" in source:
            raise CandidateError("candidate.py: ModelNew.forward takes 3 arguments, Model.forward 2")
        rt = 10.0 + int(hashlib.sha256(source.encode()).hexdigest(), 16) % 40
        eager = Measurement(50.0, 49.0, 51.0, 30, True)
        return Verdict(status=Status.VALID, mode=config.mode, task=task.name, device=config.device,
                       timings={"candidate": Measurement(rt, rt - 1, rt + 1, 30, True), "eager": eager},
                       speedups={"eager": Speedup("eager", 50 / rt, 50 / (rt + 1), 50 / (rt - 1), 0.001, True)})


class Endless:
    """A method that never stops proposing: the harness must stop it."""

    name, variant, paper, default_budget = "endless", "", "", 45

    def optimize(self, task, llm, evaluate, budget):
        i = 0
        while True:
            p = Proposal(source=f"import torch\nclass ModelNew(torch.nn.Module):\n    pass\n# {i}\n")
            evaluate(p)
            yield p
            i += 1


class Mixed:
    """Yields a valid kernel, an unparsable reply, a kernel the evaluator refuses as input."""

    name, variant, paper, default_budget = "mixed", "", "", 3

    def optimize(self, task, llm, evaluate, budget):
        for p in (Proposal(source="class ModelNew: pass\n", name="ok"),
                  Proposal(source="", parse_error="no fenced code block in the reply"),
                  Proposal(source="class ModelNew: pass  # BADSIG\n")):
            evaluate(p)
            yield p


@pytest.fixture(autouse=True)
def _test_methods(monkeypatch):
    monkeypatch.setitem(registry.BUILTINS, "endless", "tests.runner.test_runner:Endless")
    monkeypatch.setitem(registry.BUILTINS, "mixed", "tests.runner.test_runner:Mixed")


def counts(results_dir, run_id):
    r = Results.open(results_dir)
    q = r.store.query
    out = {
        "candidates": q("SELECT COUNT(*) FROM candidates WHERE run_id=?", (run_id,))[0][0],
        "feedback": q("SELECT COUNT(*) FROM verdicts WHERE run_id=? AND mode='feedback'", (run_id,))[0][0],
        "final": q("SELECT COUNT(*) FROM verdicts WHERE run_id=? AND mode='final'", (run_id,))[0][0],
        "llm_calls": q("SELECT COUNT(*) FROM llm_calls WHERE run_id=?", (run_id,))[0][0],
    }
    r.close()
    return out


def test_budget_is_enforced_outside_the_method(tmp_path):
    judge = Judge()
    rep = run(RunConfig(method="endless", ops=["relu"], budget=Budget(evaluations=3),
                        results=tmp_path, run_id="b", progress=False), judge=judge)
    assert rep.ops[0].status == "finished" and rep.ops[0].total == 3
    assert counts(tmp_path, "b")["candidates"] == 3
    assert [c[2] for c in judge.calls] == ["feedback"] * 3 + ["final"]
    op = Results.open(tmp_path).get_op("b", "relu")
    assert op.usage["evaluations"] == 3 and op.final_verdict_id is not None


def test_unparsable_replies_and_unusable_sources_become_compile_error_verdicts(tmp_path):
    rep = run(RunConfig(method="mixed", ops=["relu"], results=tmp_path, run_id="m", progress=False),
              judge=Judge())
    res = Results.open(tmp_path)
    vs = res.list_verdicts("m", "relu", "feedback")
    assert [v.status for v in vs] == ["valid", "compile_error", "compile_error"]
    assert "reply could not be parsed" in vs[1].verdict.message
    assert "takes 3 arguments" in vs[2].verdict.message
    cands = res.list_candidates("m", "relu")
    assert cands[1].parse_error == "no fenced code block in the reply"
    assert rep.ops[0].valid == 1 and rep.ops[0].best_candidate_id == cands[0].candidate_id


def test_run_records_seed_budget_llm_and_environment(tmp_path):
    run(RunConfig(method="evoengineer-free", ops=["relu"], budget=Budget(evaluations=2), seed=7,
                  results=tmp_path, run_id="rec", progress=False), judge=Judge())
    info = Results.open(tmp_path).get_run("rec")
    assert (info.method, info.seed, info.llm, info.llm_offline) == ("evoengineer-free", 7, "offline", True)
    assert info.budget["evaluations"] == 2 and info.status == "finished"
    assert info.environment.get("python") and info.config["llm_effective"] == "offline:7"
    assert info.variant == "free"


def test_killed_run_resumes_without_repeating_anything(tmp_path):
    cfg = RunConfig(method="evoengineer-full", ops=["relu", "softmax"], budget=Budget(evaluations=3),
                    results=tmp_path, run_id="k", progress=False)
    # relu: 3 feedback + 1 final judgements; the 6th call (softmax's 2nd) is "killed"
    first = Judge(crash_at=6)
    with pytest.raises(KeyboardInterrupt):
        run(cfg, judge=first)
    res = Results.open(tmp_path)
    assert res.get_op("k", "relu").status == "finished"
    before = counts(tmp_path, "k")
    assert before == {"candidates": 5, "feedback": 4, "final": 1, "llm_calls": 5}
    second = Judge()
    rep = run(cfg, judge=second)
    by_op = {r.op: r for r in rep.ops}
    assert by_op["relu"].skipped
    after = counts(tmp_path, "k")
    assert after == {"candidates": 6, "feedback": 6, "final": 2, "llm_calls": 6}
    # softmax: the recorded calls answered again from the store, judged verdicts reused
    usage = Results.open(tmp_path).get_op("k", "softmax").usage
    assert usage["llm_calls_resumed"] == 2 and usage["evaluations"] == 3
    assert [c[0] for c in second.calls] == ["softmax"] * len(second.calls)
    judged_before = {c[1] for c in first.calls[:5] if c[0] == "softmax"}
    assert not judged_before & {c[1] for c in second.calls if c[2] == "feedback"}
    # the rerun of a finished run does nothing at all
    third = Judge()
    run(cfg, judge=third)
    assert third.calls == [] and counts(tmp_path, "k") == after


def test_offline_runs_are_reproducible_from_the_seed(tmp_path):
    def sources(d, seed):
        run(RunConfig(method="evoengineer-full", ops=["relu"], budget=Budget(evaluations=4), seed=seed,
                      results=d, run_id="s", progress=False), judge=Judge())
        return [c.source for c in Results.open(d).list_candidates("s", "relu")]

    a, b = sources(tmp_path / "a", 3), sources(tmp_path / "b", 3)
    assert a == b and len(a) == 4


def test_ops_run_in_parallel_with_jobs(tmp_path):
    rep = run(RunConfig(method="best-of-n", ops=["relu", "softmax", "sum_dim"], budget=Budget(evaluations=2),
                        results=tmp_path, run_id="j", jobs=2, progress=False), judge=Judge())
    assert sorted(r.op for r in rep.ops) == ["relu", "softmax", "sum_dim"]
    assert all(r.total == 2 and r.status == "finished" for r in rep.ops)
    assert counts(tmp_path, "j")["candidates"] == 6
    assert "valid/total" in rep.table() and "2/2" in rep.table()


def test_cli_unknown_method_says_did_you_mean(tmp_path):
    out = invoke("run", "--method", "evoenginer", "--ops", "relu", "--device", "cpu",
                 "--results", str(tmp_path))
    assert out.exit_code == 2 and "Did you mean 'evoengineer'" in out.output


def test_cli_refuses_suite_and_ops_together(tmp_path):
    out = invoke("run", "--method", "one-shot", "--suite", "smoke", "--ops", "relu",
                 "--device", "cpu", "--results", str(tmp_path))
    assert out.exit_code == 2 and "either --suite or --ops" in out.output


def test_cli_rejects_unknown_eval_option(tmp_path):
    out = invoke("run", "--method", "one-shot", "--ops", "relu", "--device", "cpu",
                 "--eval-option", "speed=fast", "--results", str(tmp_path))
    assert out.exit_code == 2 and "unknown evaluator setting" in out.output
    assert json.dumps  # keep the import used


def test_llm_call_budget_stops_the_method_before_the_evaluation_budget(tmp_path):
    rep = run(RunConfig(method="evoengineer-insight", ops=["relu"], budget=Budget(evaluations=5),
                        budget_limits={"llm_calls": 2}, results=tmp_path, run_id="c", progress=False),
              judge=Judge())
    assert rep.ops[0].status == "finished" and rep.ops[0].total == 2
    assert counts(tmp_path, "c")["llm_calls"] == 2
    assert Results.open(tmp_path).get_run("c").budget["llm_calls"] == 2


def test_resume_answers_identical_requests_in_recorded_order(tmp_path):
    from harness.llm.base import CallContext, ChatResult
    from harness.llm.recording import RecordingModel
    from harness.runner.resume import ResumedModel

    class Counter:
        name, offline = "counter", True

        def __init__(self):
            self.n = 0

        def chat(self, messages, *, context, **kw):
            self.n += 1
            return ChatResult(text=f"answer {self.n}", model="counter", offline=True)

    res = Results.open(tmp_path)
    inner = Counter()
    rec = RecordingModel(inner, res.store, run_id="r")
    ctx = CallContext(run_id="r", op="relu", trial=0)
    msgs = [{"role": "user", "content": "same"}]
    first = [rec.chat(msgs, context=ctx).text for _ in range(2)]
    resumed = ResumedModel(rec, res.store, "r")
    again = [resumed.chat(msgs, context=ctx).text for _ in range(3)]
    assert first == ["answer 1", "answer 2"]
    assert again == ["answer 1", "answer 2", "answer 3"]  # the third is a new call
    assert resumed.replayed == 2 and inner.n == 3
    other_trial = resumed.chat(msgs, context=CallContext(run_id="r", op="relu", trial=1)).text
    assert other_trial == "answer 4"


class DyingModel:
    """The offline model for ``alive`` calls, then an endpoint the client gave up on. With
    ``judged_first`` (a judge), a dead call waits until that judge has judged something: an op whose
    call was answered judges its kernel before the other op's failure stops the run (a stopped run
    judges nothing more, so without the wait the threads decide whether that kernel is judged)."""

    name, offline = "fake-model@http://127.0.0.1:9/v1", False

    def __init__(self, alive: int, judged_first: Judge | None = None):
        from harness.llm.offline import OfflineModel

        self.inner, self.alive, self.calls, self.lock = OfflineModel(seed=0, device="cpu", broken_rate=0.0), alive, 0, \
            threading.Lock()
        self.judged_first = judged_first

    def chat(self, messages, *, context, **kw):
        from harness.llm.base import TransientError

        with self.lock:
            self.calls += 1
            dead = self.calls > self.alive
        if dead:
            deadline = time.monotonic() + 30
            while self.judged_first is not None and not self.judged_first.calls and time.monotonic() < deadline:
                time.sleep(0.01)
            raise TransientError("http://127.0.0.1:9/v1 (model 'fake-model') still failing after 3 attempts (0.1 s "
                                 "of backoff between them): APIConnectionError: Connection error.")
        return self.inner.chat(messages, context=context, **kw)


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_llm_outage_stops_the_run_and_final_judges_each_op_in_flight(tmp_path, jobs):
    """Serial: relu finishes (3 calls), softmax's 2nd call finds the endpoint gone: softmax stops,
    its valid kernel is final-judged, it is interrupted; sum_dim never begins. With --jobs 2 only the
    first call is answered, and its kernel is judged before the other op's call fails (the dead call
    waits for it): the op beside the one that met the outage stops at its next call and
    final-judges what it found too (or, begun after the stop, stays pending)."""
    judge = Judge()
    rep = run(RunConfig(method="best-of-n", ops=["relu", "softmax", "sum_dim"], budget=Budget(evaluations=3),
                        results=tmp_path, run_id="o", jobs=jobs, progress=False), judge=judge,
              model=DyingModel(alive=4 if jobs == 1 else 1, judged_first=judge if jobs == 2 else None))
    assert rep.stopped and rep.stopped.startswith("the LLM endpoint stopped answering: http://127.0.0.1:9/v1")
    res = Results.open(tmp_path)
    run_row = res.get_run("o")
    assert (run_row.status, run_row.error) == ("interrupted", rep.stopped)
    ops = {r.op: r for r in rep.ops}
    if jobs == 1:
        assert [ops[o].status for o in ("relu", "softmax", "sum_dim")] == ["finished", "interrupted", "pending"]
        assert res.get_op("o", "sum_dim").status == "pending"
    else:  # relu and softmax in flight together (which one begins first is the threads'); sum_dim never begins
        assert {ops["relu"].status, ops["softmax"].status} <= {"interrupted", "pending"}
        assert "interrupted" in (ops["relu"].status, ops["softmax"].status) and ops["sum_dim"].status == "pending"
    for name, r in ops.items():
        stored = res.get_op("o", name)
        assert stored.status == r.status
        if r.status == "interrupted":  # each valid kernel found before the outage got its final judgement
            assert (r.final is not None and r.final.valid) == (r.valid >= 1)
            assert (stored.final_verdict_id is not None) == (r.valid >= 1)
            assert stored.error.startswith("the LLM endpoint stopped answering") and "Connection error." in stored.error
            assert f"{name} (interrupted): the LLM endpoint stopped answering" in rep.errors()
    assert sum(1 for c in judge.calls if c[2] == "final") == sum(r.valid >= 1 for r in rep.ops)
    assert sum(r.valid for r in rep.ops) == (4 if jobs == 1 else 1)  # one valid kernel per answered call


def test_ctrl_c_with_jobs_stops_the_ops_in_flight_without_final_judgements(tmp_path):
    """SIGINT reaches the main thread while two ops judge in worker threads: the run is stored
    interrupted at once, each op in flight stops at its next evaluation (no final judgement) and is
    interrupted, the op not begun never begins."""
    import signal
    import time

    from harness.runner.stop import RunInterrupted

    class CtrlC(Judge):
        def __call__(self, task, source, config):
            time.sleep(0.2)  # a judgement takes a while: both ops are under way when the signal comes
            v = super().__call__(task, source, config)
            if len(self.calls) == 2:  # what Ctrl-C does: SIGINT to the main thread (KeyboardInterrupt)
                signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
                time.sleep(0.5)
            return v

    judge = CtrlC()
    with pytest.raises(RunInterrupted) as e:
        run(RunConfig(method="endless", ops=["relu", "softmax", "sum_dim"], budget=Budget(evaluations=3),
                      results=tmp_path, run_id="c", jobs=2, progress=False), judge=judge)  # no source twice
    assert (e.value.run_id, e.value.exit_code) == ("c", 130)
    deadline = time.time() + 30
    while time.time() < deadline and any(t.name.startswith("op") for t in threading.enumerate()):
        time.sleep(0.1)
    res = Results.open(tmp_path)
    assert res.get_run("c").status == "interrupted"
    ops = {o.op: o.status for o in res.list_ops("c")}
    assert (ops["relu"], ops["softmax"], ops.get("sum_dim", "pending")) == ("interrupted", "interrupted", "pending")
    assert all(c[2] == "feedback" for c in judge.calls) and len(judge.calls) <= 3  # the 2 + one under way


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
def test_a_stop_signal_whose_raise_python_dropped_still_stops_the_run_and_prints_no_traceback(
        tmp_path, monkeypatch, signame):
    """CI, 2026-11-26: Ctrl-C landed in logging's at-fork hook, where Python prints "Exception
    ignored in ..." and drops the KeyboardInterrupt; the run went on to the end. Under
    ``stop_signals()`` (what ``harness run`` uses) the signal is latched: here the handler runs
    inside a ``__del__``, where Python drops its raise as it does in an at-fork hook, and the run
    stops at its next step, stored interrupted with the signal's exit status, the op not begun left
    pending. CI, 2026-11-27: the dropped raise printed "Exception ignored ... Traceback" to stderr;
    it must print nothing, while any other dropped exception is still reported."""
    import gc
    import signal
    import sys

    reported = []  # what reaches the hook that prints "Exception ignored in ..."
    monkeypatch.setattr(sys, "unraisablehook", lambda u: reported.append(type(u.exc_value).__name__))

    from harness.runner.stop import RunInterrupted, stop_signals

    class Drops:
        def __init__(self, handler):
            self.handler = handler

        def __del__(self):  # Python reports and drops what this raises
            self.handler(getattr(signal, signame), None)

    class Dropped(Judge):
        def __call__(self, task, source, config):
            v = super().__call__(task, source, config)
            if len(self.calls) == 2:
                Drops(signal.getsignal(getattr(signal, signame)))
                gc.collect()
            return v

    class Other:
        def __del__(self):
            raise ValueError("an unrelated dropped error")

    judge = Dropped()
    with stop_signals(), pytest.raises(RunInterrupted) as e:
        run(RunConfig(method="endless", ops=["relu", "softmax"], budget=Budget(evaluations=4),
                      results=tmp_path, run_id="d", progress=False), judge=judge)
    assert reported == []  # the dropped signal printed nothing
    assert (e.value.run_id, e.value.exit_code) == ("d", 130 if signame == "SIGINT" else 143)
    assert len(judge.calls) == 2  # nothing judged after the dropped signal: no trial 3, no final
    res = Results.open(tmp_path)
    assert res.get_run("d").status == "interrupted"
    assert {o.op: o.status for o in res.list_ops("d")} in ({"relu": "interrupted"},
                                                          {"relu": "interrupted", "softmax": "pending"})
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handlers are put back
    with stop_signals():
        Other()
        gc.collect()
    assert reported == ["ValueError"] and sys.unraisablehook is not None  # others are still reported


def test_an_op_that_fails_once_a_stop_signal_came_is_stored_interrupted(tmp_path):
    """CI emulation, session 26: a Ctrl-C stored the run interrupted but its op ``failed``. A signal
    whose raise became an ordinary error (a judgement's workers stopped under it, a handler that
    converts what it catches) ended the method with that error before the run knew it was stopping.
    The op failed because of the stop: it is stored interrupted (resumable), and the run stops."""
    import signal

    from harness.runner.stop import RunInterrupted, stop_signals

    class Converted(Judge):
        def __call__(self, task, source, config):
            v = super().__call__(task, source, config)
            if len(self.calls) == 2:
                try:
                    signal.getsignal(signal.SIGINT)(signal.SIGINT, None)
                except KeyboardInterrupt:
                    raise RuntimeError("the judgement's workers were stopped") from None
            return v

    judge = Converted()
    with stop_signals(), pytest.raises(RunInterrupted) as e:
        run(RunConfig(method="endless", ops=["relu", "softmax"], budget=Budget(evaluations=4),
                      results=tmp_path, run_id="f", progress=False), judge=judge)
    assert (e.value.run_id, e.value.exit_code) == ("f", 130)
    res = Results.open(tmp_path)
    assert res.get_run("f").status == "interrupted"
    assert {o.op: o.status for o in res.list_ops("f")} in ({"relu": "interrupted"},
                                                          {"relu": "interrupted", "softmax": "pending"})


def test_set_globals_reach_the_judged_task_the_run_config_and_every_verdict(tmp_path):
    """``harness run --set DIM=64``: the judge gets relu with DIM=64 (every profile), the run records
    the values, each stored verdict carries them (``evidence["task_globals"]``)."""
    seen = []

    class Sizes(Judge):
        def __call__(self, task, source, config):
            seen.append((task.module_globals()["DIM"], task.shapes.get(config.profile, {}).get("DIM")))
            return super().__call__(task, source, config)

    run(RunConfig(method="best-of-n", ops=["relu"], budget=Budget(evaluations=2), results=tmp_path, run_id="g",
                  progress=False, task_globals={"DIM": 64}), judge=Sizes())
    assert seen and all(s == (64, None) for s in seen)  # the file's DIM set, no profile's own DIM left
    res = Results.open(tmp_path)
    assert res.get_run("g").config["task_globals"] == {"DIM": 64}
    verdicts = res.list_verdicts("g", "relu")
    assert verdicts and all(v.verdict.evidence["task_globals"] == {"DIM": 64} for v in verdicts)
