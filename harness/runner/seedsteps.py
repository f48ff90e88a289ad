"""An op's seed kernel (harness/runner/op.py's steps, apart): what the op adds to the method's
TaskContext (its parts and its judged seed kernel), and the seed judged in FINAL mode beside the
op's best kernel. The functions take the op's runner (``self``) and state as its methods did."""

from __future__ import annotations

from typing import Any, Protocol

from harness.methods.base import Method, Proposal
from harness.methods.common import candidate_runtime, speedup_vs_eager
from harness.store import Results, config_key
from harness.suite.seeds import load_seed, parts_of
from sandbox.contract import EvalConfig, Mode, Task, Verdict


class OpRunner(Protocol):
    """What these steps use of the op's runner (harness/runner/op.py's ``OpRunner``), which
    imports this module: its store, its method, its settings and its judge-or-reuse step."""

    results: Results
    method: Method
    s: Any  # harness/runner/op.py's OpSettings

    def _judge_or_reuse(self, task: Task, p: Proposal, config: EvalConfig, key: str, cid: int, state: Any,
                        own_key: bool = False, label: str = "") -> tuple[Verdict, int | None]: ...


def op_extras(self: OpRunner, task: Task, language: str, state: Any) -> dict[str, Any]:
    """What the op adds to the method's TaskContext: its parts and its judged seed kernel."""
    extras: dict[str, Any] = {}
    parts = parts_of(task.name)
    if parts:
        extras["parts"] = parts
    if not getattr(self.method, "uses_seed_kernel", False) or self.s.seed_kernels is None:
        return extras
    seed = load_seed(task.name, language, self.s.seed_kernels)
    if seed is None:
        return extras
    config = self.s.eval_config(Mode.FEEDBACK, task)
    cid = self.results.add_candidate(self.s.run_id, task.name, trial=-1, source=seed.source,
                                     name=seed.name, thought=seed.thought, operator="seed")
    p = Proposal(source=seed.source, name=seed.name, thought=seed.thought, operator="seed",
                 stage="seed")
    verdict, stored_id = self._judge_or_reuse(task, p, config, config_key(config), cid, state,
                                              label="seed kernel")
    if stored_id is None:
        self.results.add_verdict(verdict, candidate_id=cid, task_sha256=task.sha256,
                                 config_key=config_key(config))
    rt = candidate_runtime(verdict) if verdict.valid else None
    state.seed = {"candidate_id": cid, "path": str(seed.path), "sha256": seed.sha256,
                  "status": verdict.status.value, "feedback_us": rt}
    if not verdict.valid or rt is None:
        return extras  # a seed that fails its own judgement is no seed (recorded as such)
    state.best_us, state.best_id = rt, cid
    state.best_speedup = speedup_vs_eager(verdict)
    extras["seed"] = {"source": seed.source, "name": seed.name, "thought": seed.thought,
                      "candidate_id": cid, "verdict": verdict.to_dict()}
    return extras

def seed_final(self: OpRunner, task: Task, state: Any, best_final: Verdict) -> dict[str, Any]:
    """The seed judged in FINAL mode beside the best kernel, and the best's speedup over it
    (ratio of final medians; 1.0 when the seed itself is the best)."""
    info = dict(state.seed or {})
    if info.get("feedback_us") is None:
        return info
    if state.best_id == info["candidate_id"]:
        v, vid = best_final, None
    else:
        config = self.s.eval_config(Mode.FINAL, task)
        key = config_key(config)
        p = Proposal(source=self.results.get_candidate(info["candidate_id"]).source)  # type: ignore[union-attr]
        v, vid = self._judge_or_reuse(task, p, config, key, info["candidate_id"], state,
                                      label="final judgement of the seed kernel")
        if vid is None:
            vid = self.results.add_verdict(v, candidate_id=info["candidate_id"],
                                           task_sha256=task.sha256, config_key=key)
    seed_us, best_us = candidate_runtime(v), candidate_runtime(best_final)
    info.update(final_status=v.status.value, final_us=seed_us, final_verdict_id=vid,
                is_best=state.best_id == info["candidate_id"])
    if v.valid and best_final.valid and seed_us and best_us:
        info["speedup_vs_seed"] = seed_us / best_us
    return info
