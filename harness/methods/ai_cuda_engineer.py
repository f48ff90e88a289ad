"""AI CUDA Engineer (Sakana AI, 2025): convert, translate, evolve, innovation archive.

Stages per op, all judged through the harness's ``evaluate`` (every evaluation counts against
the op's budget, convert included: see ``plan_budget`` and docs/methods.md):

1. convert: the LLM rewrites ``Model`` as functional PyTorch (``module_fn`` + a ``ModelNew``
   calling it); judged with torch ops allowed (``Proposal.allow_torch_ops``); failures are
   summarised and retried. If it never passes, later stages work from the reference itself.
2. translate: functional PyTorch -> a first working kernel; up to 10 attempts, each failure
   summarised by the LLM (an extra LLM call, no evaluation) and fed into the next attempt.
3. evolve: generations of proposals from an ensemble of LLMs (round-robin over the models);
   every prompt shows the top-5 fastest valid kernels with speedups and profile summaries;
   half the proposals of a generation mutate one of them, half cross two over (rank-based
   choice of parents).
4. innovation archive: the most similar solved ops (TF-IDF cosine over functional code,
   ``harness.methods.archive``) and their best kernels are shown as stepping stones (RAG).
   The archive lives on the method object, so it grows across the ops of one run, and can be
   seeded from earlier runs' stores (``archive_from=``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from harness.llm.base import CallContext, ChatModel
from harness.methods import prompting
from harness.methods.archive import ArchiveEntry, InnovationArchive, load_from_store
from harness.methods.base import Budget, EvaluateFn, Proposal, TaskContext
from harness.methods.common import Solution, ask, method_rng, speedup_vs_eager
from harness.methods.population import rank_select

NAME = "ai-cuda-engineer"


@dataclass(frozen=True)
class StagePlan:
    """How an op's evaluation budget is spent (translate stops early at its first success;
    what it leaves goes to evolution)."""

    convert: int  # max convert attempts
    translate: int  # max translate attempts
    rag: int  # archive-guided proposals (only when the archive has entries)
    per_generation: int  # proposals per generation (one per ensemble slot)
    total: int


def plan_budget(
    evaluations: int,
    *,
    per_generation: int = 4,
    translate_attempts: int = 10,
    convert_attempts: int = 2,
) -> StagePlan:
    """Scale the authors' split (10 generations x 4 LLMs + 5 RAG = 45) to ``evaluations``.

    convert gets up to ``convert_attempts`` at >= 20 evaluations, 1 at >= 4, none below
    (then the reference is the functional code); RAG gets 5/45 of the budget (rounded); the
    rest is translate (until the first valid kernel, <= ``translate_attempts``) then
    generations of ``per_generation`` proposals.
    """
    convert = convert_attempts if evaluations >= 20 else (1 if evaluations >= 4 else 0)
    convert = min(convert, convert_attempts)
    rag = round(evaluations * 5 / 45)
    rest = max(0, evaluations - convert - rag)
    translate = min(translate_attempts, max(1, rest)) if evaluations - convert > 0 else 0
    return StagePlan(
        convert=convert,
        translate=translate,
        rag=rag,
        per_generation=max(1, per_generation),
        total=evaluations,
    )


@dataclass
class _OpState:
    task: TaskContext
    plan: StagePlan
    used: int = 0
    functional: str = ""
    converted: bool = False
    solutions: list[Solution] = field(default_factory=list)  # kernels only (no convert stage)
    speedups: dict[int, float | None] = field(default_factory=dict)  # id(Solution) -> speedup

    @property
    def left(self) -> int:
        return self.plan.total - self.used

    def top(self, k: int) -> list[Solution]:
        valid = [s for s in self.solutions if s.valid and s.runtime_us is not None]
        return sorted(valid, key=lambda s: (s.fitness, s.trial))[:k]


class AICudaEngineer:
    name = NAME
    variant = "convert+translate+evolve+archive"
    paper = "Lange et al. 2025, The AI CUDA Engineer (Sakana AI)"
    default_budget = 45

    def __init__(
        self,
        models: list[str] | str | None = None,
        per_generation: int = 4,
        translate_attempts: int = 10,
        convert_attempts: int = 2,
        top_k: int = 5,
        archive_k: int = 5,
        archive_from: str | list[str] | None = None,
        archive: InnovationArchive | None = None,
        summary_chars: int = 600,
        example_chars: int = 8000,
    ):
        self.models = [m for m in models.split(",")] if isinstance(models, str) else models
        self.per_generation = per_generation
        self.translate_attempts = translate_attempts
        self.convert_attempts = convert_attempts
        self.top_k = top_k
        self.archive_k = archive_k
        self.summary_chars = summary_chars
        self.example_chars = (
            example_chars  # a retrieved kernel longer than this is cut (prompt size)
        )
        self.archive = archive if archive is not None else InnovationArchive()
        for src in [archive_from] if isinstance(archive_from, str) else (archive_from or []):
            for entry in load_from_store(src):
                self.archive.add(entry)

    # -- the search ------------------------------------------------------------------
    def optimize(
        self, task: TaskContext, llm: ChatModel, evaluate: EvaluateFn, budget: Budget
    ) -> Iterator[Proposal]:
        models = self._models(llm)
        st = _OpState(
            task,
            plan_budget(
                budget.evaluations,
                per_generation=self.per_generation or len(models),
                translate_attempts=self.translate_attempts,
                convert_attempts=self.convert_attempts,
            ),
        )
        st.functional = task.reference_source
        try:
            yield from self._convert(st, llm, evaluate, models[0])
            yield from self._translate(st, llm, evaluate, models[0])
            yield from self._rag(st, llm, evaluate, models)
            yield from self._evolve(st, llm, evaluate, models)
        finally:
            self._archive_best(st)

    def _models(self, llm: ChatModel) -> list[str | None]:
        if self.models:
            return list(self.models)
        members = getattr(llm, "members", None)
        return list(members) if members else [None]

    def _judge(self, st: _OpState, p: Proposal, evaluate: EvaluateFn) -> Solution:
        evaluate(p)
        sol = Solution.from_proposal(p, trial=st.used)
        st.used += 1
        if not p.allow_torch_ops:
            st.solutions.append(sol)
            st.speedups[id(sol)] = speedup_vs_eager(p.verdict)
        return sol

    def _convert(self, st: _OpState, llm, evaluate, model) -> Iterator[Proposal]:
        errors: list[str] = []
        for attempt in range(1, st.plan.convert + 1):
            p = self._ask(st, llm, "convert.j2", "convert", model, attempt=attempt, errors=errors)
            p.allow_torch_ops = True
            sol = self._judge(st, p, evaluate)
            yield p
            if sol.valid:
                st.functional, st.converted = p.source, True
                return
            errors.append(self._summarize(st, llm, p, sol, model))

    def _translate(self, st: _OpState, llm, evaluate, model) -> Iterator[Proposal]:
        failures: list[dict[str, str]] = []
        attempts = min(st.plan.translate, st.left)
        for attempt in range(1, attempts + 1):
            p = self._ask(st, llm, "translate.j2", "translate", model, attempt=attempt,
                          max_attempts=attempts, failures=failures)
            sol = self._judge(st, p, evaluate)
            yield p
            if sol.valid:
                return
            if attempt < attempts:  # the last failure's summary would feed nothing
                failures.append(
                    {
                        "name": sol.name,
                        "status": sol.status or "failed",
                        "summary": self._summarize(st, llm, p, sol, model),
                    }
                )

    def _rag(self, st: _OpState, llm, evaluate, models) -> Iterator[Proposal]:
        hits = [(e, sim) for e, sim in self.archive.similar(st.functional, k=self.archive_k, exclude_op=st.task.op)
                if sim > 0.0]  # an op sharing no token with this one is no stepping stone
        if not hits:
            return
        examples = [
            {
                "op": e.op,
                "similarity": s,
                "speedup": e.speedup,
                "kernel": _cut(e.kernel, self.example_chars),
            }
            for e, s in hits
        ]
        for i in range(min(st.plan.rag, st.left)):
            top = st.top(1)
            p = self._ask(st, llm, "rag.j2", "rag", models[i % len(models)], parents=top,
                          examples=examples, best=top[0] if top else None)
            self._judge(st, p, evaluate)
            yield p

    def _evolve(self, st: _OpState, llm, evaluate, models) -> Iterator[Proposal]:
        rng = method_rng(st.task, NAME, "evolve")
        per_gen = st.plan.per_generation
        generations = max(1, math.ceil(st.left / per_gen)) if st.left > 0 else 0
        for gen in range(1, generations + 1):
            top = st.top(self.top_k)  # a generation's proposals all see the same top-k
            for j in range(min(per_gen, st.left)):
                if len(top) >= 2 and j % 2 == 1:
                    operator, parents = (
                        "crossover",
                        rank_select(top, 2, rng, population_size=self.top_k),
                    )
                elif top:
                    operator, parents = (
                        "mutation",
                        rank_select(top, 1, rng, population_size=self.top_k),
                    )
                else:
                    operator, parents = "init", []
                picks = [top.index(p) + 1 for p in parents]
                p = self._ask(st, llm, "evolve.j2", operator, models[j % len(models)],
                              parents=parents, top=top, picks=picks,
                              generation=gen, generations=generations)
                self._judge(st, p, evaluate)
                yield p

    # -- helpers ----------------------------------------------------------------------
    def _ask(self, st: _OpState, llm, template: str, operator: str, model,
             parents: list[Solution] | None = None, **variables: Any) -> Proposal:
        """One stage's prompt (``ai_cuda_engineer/<template>``, with the functional code and the
        operator) and one LLM call for it."""
        msgs = prompting.messages(st.task, f"ai_cuda_engineer/{template}", functional=st.functional,
                                  converted=st.converted, operator=operator, **variables)
        return ask(llm, msgs, task=st.task, method=NAME, trial=st.used, operator=operator,
                   model=model, parents=parents)

    def _summarize(self, st: _OpState, llm, p: Proposal, sol: Solution, model) -> str:
        """Ask the LLM why an attempt failed (one LLM call, no evaluation)."""
        v = p.verdict
        if p.parse_error or not p.source:
            return f"the reply could not be used: {p.parse_error or 'no code'}; follow the reply format exactly"
        msgs = prompting.messages(
            st.task,
            "ai_cuda_engineer/summarize.j2",
            code=p.source,
            status=sol.status or "failed",
            message=(v.message if v else "")[:500],
            logs=(v.logs if v else "")[-1500:].strip(),
        )
        kw: dict[str, Any] = {
            "context": CallContext(
                method=NAME, op=st.task.op, trial=st.used - 1, purpose="summarize-error"
            )
        }
        if model is not None:
            kw["model"] = model
        res = llm.chat(msgs, **kw)
        return _plain(res.text, self.summary_chars) or sol.summary or sol.status

    def _archive_best(self, st: _OpState) -> None:
        top = st.top(1)
        if not top:
            return
        best = top[0]
        self.archive.add(
            ArchiveEntry(
                op=st.task.op,
                functional_code=st.functional,
                kernel=best.code,
                speedup=st.speedups.get(id(best)),
                runtime_us=best.runtime_us,
            )
        )


def _cut(code: str, limit: int) -> str:
    return (
        code
        if len(code) <= limit
        else code[:limit].rstrip() + "\n# ... (cut: kernel too long for the prompt)\n"
    )


def _plain(text: str, limit: int) -> str:
    """A summary as one paragraph: code blocks and headings dropped, whitespace squeezed."""
    text = re.sub(r"```.*?(```|$)", " ", text or "", flags=re.S)
    text = re.sub(r"^\s*#+.*$", " ", text, flags=re.M)
    text = re.sub(r"\s+", " ", text).strip()
    return text[:limit].rstrip()
