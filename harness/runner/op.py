"""One op of a run: drive the method, judge and store every proposal, re-judge the best.

``OpRunner.run(task)``:
  1. skip the op when the run already finished it (resume);
  2. wrap the run's LLM with resume answers (``ResumedModel``) and the op's budget meter;
  3. give the method an ``evaluate(proposal)``, the one channel by which a candidate reaches
     the runner: it charges the evaluation budget (``llm/budget.guarded_evaluate``), stores
     the candidate, judges it in FEEDBACK mode (or reuses a stored verdict of the same task,
     source and config), stores the verdict, and returns it;
  4. iterate ``method.optimize`` until it ends or the budget is spent (``BudgetExhausted``);
     a yield is a step of the method, never a second submission (a yielded proposal that did
     not come through ``evaluate`` fails the op with ``MethodContractError``);
  5. re-judge the fastest valid kernel in FINAL mode in ``final_sessions`` independent judging
     sessions (fresh workers each, baselines interleaved in each), store every session's verdict
     (session i under ``session_key(key, i)``), and finish the op; a session that is not valid
     ends the op's final evaluation and becomes its final verdict.

A method that uses seed kernels (``uses_seed_kernel``) gets the op's seed (from the run's
``seed_kernels`` folder) judged first like any candidate (FEEDBACK mode, trial -1, operator
``seed``), not charged to the budget (the sources register their baseline without spending a
sample), and passed in ``TaskContext.extras["seed"]``; a valid seed can be the op's best. When
the op has a valid seed, the seed is judged in FINAL mode too and the op's usage records the
speedup of the best kernel over it (``usage["seed"]``). Spend per stage (trials, LLM calls)
goes to ``usage["stages"]`` (``harness/runner/stages.py``).

Every ``EvalConfig`` comes from the judging policy (``harness/policy.py``).
"""

from __future__ import annotations

import dataclasses
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.executors.base import JudgeFn
from harness.llm.base import BudgetExhausted, ChatModel, LLMError, TransientError
from harness.llm.budget import guarded_evaluate
from harness.methods.base import Budget, Method, Proposal
from harness.methods.common import candidate_runtime, speedup_vs_eager
from harness.policy import eval_config
from harness.runner import seedsteps
from harness.runner.metering import make_meter, metered
from harness.runner.resume import ResumedModel
from harness.runner.stages import StageCountingModel, StageTally, proposal_stage
from harness.runner.stop import (
    OUTAGE,
    SIGNAL,
    OutageWatch,
    RunStop,
    RunStopped,
    raise_latched_signal,
    signal_reason,
)
from harness.runner.tasks import task_context
from harness.store import OpMetadata, Results, config_key, session_key, sha256_text
from harness.tasksize import record_globals
from sandbox.contract import NATIVE_BUILD, CandidateError, EvalConfig, Mode, Status, Task, Verdict


@dataclass
class OpResult:
    op: str
    status: str  # finished | failed | interrupted (the run stopped during it) | pending (not begun)
    total: int = 0  # trials (proposals judged)
    valid: int = 0
    best_candidate_id: int | None = None
    best_feedback_us: float | None = None
    final: Verdict | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    skipped: bool = False  # finished in an earlier invocation of the same run id
    judged: int = 0  # evaluations actually run by the evaluator (not reused)
    reused: int = 0  # verdicts reused from the store
    final_sessions: list[Verdict] = field(default_factory=list)  # every final session's verdict


@dataclass
class OpSettings:
    run_id: str
    device: str
    budget: Budget
    seed: int
    sandbox: str = "process"
    eval_overrides: dict[str, Any] = field(default_factory=dict)
    environment: dict[str, Any] = field(default_factory=dict)
    prices: dict[str, Any] = field(default_factory=dict)  # LLM prices per model, for cost
    rules: str = "strict"  # the run's rule set: every candidate of the run is judged under it
    final_sessions: int = 1  # independent judging sessions of each op's final kernel
    seed_kernels: Any = None  # folder of seed kernels (harness/suite/seeds.py); None: no seeds

    def eval_config(self, mode: Mode, task: Task | None = None) -> EvalConfig:
        """The run's config in ``mode``: the judging policy (harness/policy.py) with the run's
        device, sandbox, seed, rule set and recorded ``--eval-option`` overrides."""
        return eval_config(mode, self.device, task=task, sandbox=self.sandbox, rules=self.rules,
                           seed=self.seed, overrides=self.eval_overrides)  # fmt: skip


def default_judge(task: Task, source: str, config: EvalConfig) -> Verdict:
    from sandbox.contract import evaluate

    return evaluate(task, source, config)


class OpRunner:
    def __init__(
        self,
        results: Results,
        method: Method,
        llm: ChatModel,
        settings: OpSettings,
        judge: JudgeFn | None = None,
        progress: Any = None,
        stop: RunStop | None = None,
    ):
        self.results = results
        self.method = method
        self.llm = llm
        self.s = settings
        self.judge = judge or default_judge
        self.progress = progress
        self.stop = stop or RunStop()  # shared by the run's ops (harness/runner/stop.py)

    def run(self, task: Task) -> OpResult:
        try:
            return self._run(task)
        except KeyboardInterrupt as e:  # SIGINT / SIGTERM (stop.py): the op in flight is resumable
            self.stop.halt(signal_reason(e)[0], SIGNAL)
            row = self.results.get_op(self.s.run_id, task.name)
            if row is not None and row.status == "searching":
                self.results.set_op_status(self.s.run_id, task.name, "interrupted", error=self.stop.reason)
            raise

    def _run(self, task: Task) -> OpResult:
        rid = self.s.run_id
        row = self.results.ensure_op(rid, task.name, task.sha256, OpMetadata.from_task(task))
        if row.status == "finished":
            return self._finished_result(task, row)
        raise_latched_signal()  # a Ctrl-C whose first raise was dropped (stop.py) stops the run here
        if self.stop.stopped:  # the run stopped before this op began: it stays pending
            return OpResult(op=task.name, status="pending", error=self.stop.reason)
        self.results.start_op(rid, task.name)
        if self.progress is not None:  # the op's wall time (the ETA) counts from here, reused verdicts or not
            self.progress.op_begin(task.name)
        state = _OpState(task=task)
        meter = make_meter(self.s.budget, self.s.prices)
        resumed = ResumedModel(OutageWatch(self.llm, self.stop), self.results.store, rid)
        llm = StageCountingModel(metered(resumed, meter), state.stages)
        ctx = task_context(task, device=self.s.device, env=self.s.environment, seed=self.s.seed)
        ctx = dataclasses.replace(ctx, extras={**ctx.extras, **seedsteps.op_extras(self, task, ctx.language, state)})
        evaluate = self._evaluate_fn(task, meter, state)
        error = None
        stopped_here = False  # the method ended because the run stopped (stop.py), not on its budget
        gen = self.method.optimize(ctx, llm, evaluate, self.s.budget)
        try:
            for proposal in gen:  # a step of the method; the proposal came in through evaluate
                _check_submitted(self.method, proposal)
        except (BudgetExhausted, TransientError) as e:  # TransientError: an outage, the run stops
            stopped_here = isinstance(e, (RunStopped, TransientError))
        except LLMError as e:
            error = f"LLM error: {e}"
        except Exception as e:  # noqa: BLE001 - one op's failure must not end the run
            error = f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=6)}"
        finally:
            gen.close()
        if error is not None:  # failed once a stop signal came (its judgement's workers stopped under it, or the
            raise_latched_signal()  # signal's raise turned into an error): the stop's doing, stored interrupted
        usage = {
            **_snapshot(meter),
            "llm_calls_resumed": resumed.replayed,
            "judged": state.judged,
            "reused": state.reused,
            "stages": state.stages.as_dict(),
        }
        final = final_id = None
        sessions: list[Verdict] = []
        # ended by the run's stop (or failed while it stopped: a method program cut off from the LLM)
        halted = self.stop.kind if self.stop.stopped and (stopped_here or error is not None) else None
        if halted:  # an outage final-judges what was found; a signal judges nothing more
            error = f"{self.stop.reason}" + (f"\n(the method then: {error})" if error else "")
        if (error is None or halted == OUTAGE) and state.best_id is not None:
            try:
                final, final_id, sessions = self._final(task, state)
            except Exception as e:  # noqa: BLE001
                error = f"final evaluation failed: {type(e).__name__}: {e}"
            if final is not None and state.seed is not None:
                try:
                    usage["seed"] = seedsteps.seed_final(self, task, state, final)
                except Exception as e:  # noqa: BLE001 - the seed's own final judgement is a side record
                    usage["seed"] = {**state.seed, "final_error": f"{type(e).__name__}: {e}"[:500]}
        if state.seed is not None and "seed" not in usage:
            usage["seed"] = dict(state.seed)
        self.results.finish_op(
            rid,
            task.name,
            best_candidate_id=state.best_id,
            final_verdict_id=final_id,
            usage=usage,
            error=error,
            status="interrupted" if halted else None,
        )
        if self.progress is not None:
            self.progress.op_done(task.name, what="interrupted" if halted else "failed" if error else "done",
                                  final=final, sessions=sessions)
        return OpResult(
            op=task.name,
            status="interrupted" if halted else "failed" if error else "finished",
            total=state.total,
            valid=state.valid,
            best_candidate_id=state.best_id,
            best_feedback_us=state.best_us,
            final=final,
            usage=usage,
            error=error,
            judged=state.judged,
            reused=state.reused,
            final_sessions=sessions,
        )

    # -- the evaluate callable the method gets ---------------------------------------------
    def _evaluate_fn(
        self, task: Task, meter: Any, state: _OpState
    ) -> Callable[[Proposal], Verdict]:
        config = self.s.eval_config(Mode.FEEDBACK, task)
        key = config_key(config)
        lock = threading.Lock()
        budget_total = self.s.budget.evaluations

        def judge_and_store(proposal: Proposal) -> Verdict:
            self.stop.check()  # a stopped run judges nothing more (RunStopped ends the method)
            with lock:
                trial = state.total
                state.total += 1
            cid = self.results.add_candidate(
                self.s.run_id,
                task.name,
                trial=trial,
                source=proposal.source,
                name=proposal.name or None,
                thought=proposal.thought or None,
                operator=proposal.operator or None,
                parent_ids=proposal.parent_ids,
                llm_call_ids=proposal.llm_call_ids,
                parse_error=proposal.parse_error,
            )
            proposal.candidate_id = cid
            state.stages.trial(proposal_stage(proposal))
            cfg, k = config, key
            if getattr(proposal, "allow_torch_ops", False):  # e.g. AI CUDA Engineer's convert stage
                cfg = dataclasses.replace(config, allow_torch_ops=True)
                k = config_key(cfg)
            verdict, stored_id = self._judge_or_reuse(task, proposal, cfg, k, cid, state,
                                                      label=f"trial {trial + 1}/{budget_total}")
            if stored_id is None:
                self.results.add_verdict(
                    verdict,
                    candidate_id=cid,
                    task_sha256=task.sha256,
                    config_key=None if proposal.parse_error else k,
                )
            proposal.verdict = verdict
            with lock:
                if verdict.valid and not cfg.allow_torch_ops:  # a torch rewrite is never the best
                    state.valid += 1
                    rt = candidate_runtime(verdict)
                    if rt is not None and (state.best_us is None or rt < state.best_us):
                        state.best_us, state.best_id = rt, cid
                        state.best_speedup = speedup_vs_eager(verdict)
            if self.progress is not None:
                self.progress.trial(task.name, trial + 1, budget_total, state.best_speedup)
            return verdict

        return guarded_evaluate(judge_and_store, meter)  # raises BudgetExhausted once spent

    def _judge_or_reuse(
        self, task: Task, p: Proposal, config: EvalConfig, key: str, cid: int, state: _OpState,
        own_key: bool = False, label: str = "",
    ) -> tuple[Verdict, int | None]:
        """(verdict, its verdict id when already stored for this candidate, else None).
        ``own_key``: only a verdict of this candidate stored under ``key`` is its own (a final
        session after the first)."""
        mode = config.mode.value
        mine = self.results.candidate_verdict(cid, mode, config_key=key if own_key else None)
        if mine is not None:
            state.reused += 1
            return mine.verdict, mine.verdict_id
        if p.parse_error:
            return _failed(
                task, p.source, config, f"reply could not be parsed: {p.parse_error}", rule=None
            ), None
        hit = self.results.find_verdict(task.sha256, sha256_text(p.source), mode, key)
        if hit is not None:
            state.reused += 1
            return hit.verdict, None
        state.judged += 1
        t0 = time.monotonic()
        if self.progress is not None:
            self.progress.judging(task.name, label, bool(NATIVE_BUILD.search(p.source)))
        try:
            v = self.judge(task, p.source, config)
        except CandidateError as e:
            v = _failed(task, p.source, config, str(e), rule=None)
        v.durations_s.setdefault("harness_total", round(time.monotonic() - t0, 3))
        if self.progress is not None:
            self.progress.judged(task.name, label, v)
        return record_globals(v, task), None

    def _final(self, task: Task, state: _OpState) -> tuple[Verdict, int, list[Verdict]]:
        """(the op's final verdict, its id, every session's verdict): the best kernel judged in
        FINAL mode in ``final_sessions`` independent sessions, each stored under its own
        ``session_key``; the first session that is not valid ends it and is the op's verdict."""
        config = self.s.eval_config(Mode.FINAL, task)
        key = config_key(config)
        cand = self.results.get_candidate(state.best_id)  # type: ignore[arg-type]
        assert cand is not None
        p = Proposal(source=cand.source)
        sessions: list[tuple[Verdict, int]] = []
        for i in range(max(1, self.s.final_sessions)):
            raise_latched_signal()  # a dropped Ctrl-C (stop.py): no final judgement begins after it
            k = session_key(key, i)
            verdict, vid = self._judge_or_reuse(
                task, p, config, k, cand.candidate_id, state, own_key=i > 0,
                label="final judgement of the best kernel "
                + (f"(trial {cand.trial + 1})" if cand.trial >= 0 else "(the seed kernel)")
                + (f", session {i + 1}/{self.s.final_sessions}" if self.s.final_sessions > 1 else ""))
            if vid is None:
                vid = self.results.add_verdict(
                    verdict, candidate_id=cand.candidate_id, task_sha256=task.sha256, config_key=k
                )
            sessions.append((verdict, vid))
            if not verdict.valid:
                return verdict, vid, [v for v, _ in sessions]
        return sessions[0][0], sessions[0][1], [v for v, _ in sessions]

    def _finished_result(self, task: Task, row: Any) -> OpResult:
        cands = [c for c in self.results.list_candidates(self.s.run_id, task.name) if c.trial >= 0]
        ids = {c.candidate_id for c in cands}  # trial -1 is the seed kernel, not a trial
        fb = self.results.list_verdicts(self.s.run_id, task.name, "feedback")
        final = self.results.get_verdict(row.final_verdict_id) if row.final_verdict_id else None
        sessions = (self.results.final_sessions(self.s.run_id, row.best_candidate_id)
                    if row.best_candidate_id is not None else [])  # fmt: skip
        if self.progress is not None:
            self.progress.op_done(task.name, skipped=True)
        return OpResult(
            op=task.name,
            status="finished",
            total=len(cands),
            valid=sum(1 for v in fb if v.status == "valid" and v.candidate_id in ids),
            best_candidate_id=row.best_candidate_id,
            final=final.verdict if final else None,
            usage=row.usage,
            skipped=True,
            final_sessions=[sv.verdict for sv in sessions],
        )


@dataclass
class _OpState:
    task: Task
    total: int = 0
    valid: int = 0
    best_id: int | None = None
    best_us: float | None = None
    best_speedup: float | None = None
    judged: int = 0
    reused: int = 0
    stages: StageTally = field(default_factory=StageTally)
    seed: dict[str, Any] | None = None  # the op's seed kernel, when the method uses one


class MethodContractError(RuntimeError):
    """A method broke the contract of harness/methods/base.py (the op fails with this message)."""


def _check_submitted(method: Method, proposal: Any) -> None:
    """A yielded proposal must have come in through ``evaluate``: that call is the one channel
    by which a candidate reaches the runner (judged, stored, charged); a yield is only a step."""
    if isinstance(proposal, Proposal) and proposal.candidate_id is None:
        name = getattr(method, "name", type(method).__name__)
        raise MethodContractError(
            f"method {name!r} yielded a proposal it never passed to evaluate(proposal); call "
            "evaluate(proposal) for every candidate (it judges, stores and charges it), then yield "
            "it (docs/method-protocol.md)"
        )


def _failed(task: Task, source: str, config: EvalConfig, message: str, rule: str | None) -> Verdict:
    return Verdict(
        status=Status.COMPILE_ERROR,
        message=message,
        rule=rule,
        mode=config.mode,
        device=config.device,
        task=task.name,
        candidate_sha256=sha256_text(source),
    )


def _snapshot(meter: Any) -> dict[str, Any]:
    snap = meter.snapshot()
    return dataclasses.asdict(snap) if dataclasses.is_dataclass(snap) else dict(snap)
