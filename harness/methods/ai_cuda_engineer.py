"""AI CUDA Engineer (Sakana AI, 2025: "Agentic CUDA Kernel Discovery, Optimization and
Composition"), after evotoolkit's re-implementation (task/cuda_engineering/ai_cuda_engineer/:
ai_cuda_engineer.py, prompt_maker.py, evo_prompts, rag_prompts, translation_prompts).

Stages of one op, each with its own budget (``aice_plan.plan_budget``), all judged through the
harness's ``evaluate``:

1. **convert**: ``Model`` -> functional PyTorch (judged with torch ops allowed, never an op's
   best); a failure is answered in the same chat with the error, every third starts afresh.
   If no attempt passes, later stages work from the reference.
2. **translate**: functional code -> a first working kernel. A failure is summarised by the LLM
   (the failed code as the assistant turn, then "summarise this error"); the next attempt sees
   the failed code and the summary; every third failure starts afresh. Skipped when the op has
   a seed kernel (evotoolkit skips translation when the task brings its CUDA code).
3. **evolve**: generations of ``per_generation`` proposals, one per ensemble model; every prompt
   shows the top-5 valid kernels slowest first with name, thought, runtime and speedup, and the
   kernel to optimise (the best) with its profile; every second proposal of a generation crosses
   two of the top-5 over (Sakana's crossover prompt).
4. **rag**: proposals with the most similar solved *other* ops from the innovation archive
   (TF-IDF cosine over functional code; ``archive.py``) as stepping stones. The archive grows
   across the ops of a run, can be seeded from stores (``archive_from``) and persists across
   runs in a file (``archive_path``; ``harness run --archive PATH``). It runs with an empty
   archive too (no examples), as evotoolkit's does.
5. **compose** (fused ops with parts, ``reference_ops/parts.toml``): the best kernels of the op's
   parts, from the archive (the run puts parts before the fused ops that use them:
   ``op_waves``), fused into one kernel.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from harness.llm.base import CallContext, ChatModel
from harness.methods import prompting
from harness.methods.aice_plan import StagePlan, full_budget, plan_budget

__all__ = ["NAME", "STAGES", "AICudaEngineer", "plan_budget"]
from harness.methods.archive import (
    ArchiveEntry,
    InnovationArchive,
    load_file,
    load_from_store,
    save_file,
)
from harness.methods.base import Budget, EvaluateFn, Proposal, TaskContext
from harness.methods.common import Solution, ask, method_rng, seed_solution
from harness.methods.evoengineer import check_protocol
from harness.methods.population import rank_select

NAME = "ai-cuda-engineer"
STAGES = ("convert", "translate", "evolve", "rag", "compose")


@dataclass
class _OpState:
    task: TaskContext
    plan: StagePlan
    used: int = 0
    functional: str = ""
    converted: bool = False
    solutions: list[Solution] = field(default_factory=list)  # kernels only (seed, translate, ...)
    spent: dict[str, int] = field(default_factory=dict)  # evaluations per stage

    @property
    def left(self) -> int:
        return self.plan.total - self.used

    def top(self, k: int) -> list[Solution]:
        valid = [s for s in self.solutions if s.valid and s.runtime_us is not None]
        return sorted(valid, key=lambda s: (s.fitness, s.trial))[:k]


class AICudaEngineer:
    name = NAME
    variant = "convert+translate+evolve+rag+compose"
    paper = "Lange et al. 2025, The AI CUDA Engineer (Sakana AI)"
    default_budget = full_budget()  # 10 + 10 + 10 x 4 + 5 + 3 = 68: every stage's own budget
    uses_seed_kernel = True
    templates = tuple(f"ai_cuda_engineer/{t}.j2" for t in (
        "convert", "convert_error", "translate", "translate_summary", "translate_retry",
        "evolve", "rag", "compose"))

    def __init__(
        self,
        models: list[str] | str | None = None,
        per_generation: int = 4,
        generations: int = 10,
        translate_attempts: int = 10,
        convert_attempts: int = 10,
        rag_proposals: int = 5,
        compose_attempts: int = 3,
        top_k: int = 5,
        archive_k: int = 5,
        archive_from: str | list[str] | None = None,
        archive: InnovationArchive | None = None,
        archive_path: str | None = None,
        summary_chars: int = 600,
        example_chars: int = 8000,
        temperature: float | None = None,
        protocol: str = "paper",
    ):
        self.protocol = check_protocol(protocol, NAME)
        self.models = [m for m in models.split(",")] if isinstance(models, str) else models
        self.per_generation = per_generation
        self.generations = generations
        self.translate_attempts = translate_attempts
        self.convert_attempts = convert_attempts
        self.rag_proposals = rag_proposals
        self.compose_attempts = compose_attempts
        self.top_k = top_k
        self.archive_k = archive_k
        self.summary_chars = summary_chars
        self.example_chars = example_chars  # a retrieved kernel longer than this is cut
        self.temperature = temperature
        self.archive = archive if archive is not None else InnovationArchive()
        self.archive_from = [archive_from] if isinstance(archive_from, str) else list(archive_from or [])
        for src in self.archive_from:
            for entry in load_from_store(src):
                self.archive.add(entry)
        self.archive_path = archive_path
        if archive_path:
            for entry in load_file(archive_path):
                self.archive.add(entry)
        self.archive_entries_at_start = len(self.archive)

    # -- what the run records -----------------------------------------------------------
    def plan(self, evaluations: int, has_parts: bool) -> StagePlan:
        return plan_budget(evaluations, has_parts=has_parts, convert=self.convert_attempts,
                           translate=self.translate_attempts, generations=self.generations,
                           per_generation=self.per_generation, rag=self.rag_proposals,
                           compose=self.compose_attempts)

    def settings(self, budget: Budget | None = None) -> dict[str, Any]:
        n = budget.evaluations if budget is not None else self.default_budget
        return {
            "protocol": self.protocol, "models": ",".join(self.models or []) or None,
            "per_generation": self.per_generation, "generations": self.generations,
            "convert_attempts": self.convert_attempts, "translate_attempts": self.translate_attempts,
            "rag_proposals": self.rag_proposals, "compose_attempts": self.compose_attempts,
            "top_k": self.top_k, "archive_k": self.archive_k, "temperature": self.temperature,
            "archive_path": self.archive_path, "archive_from": ",".join(self.archive_from) or None,
            "archive_entries_at_start": self.archive_entries_at_start,
            "stage_plan": self.plan(n, has_parts=False).to_dict(),
            "stage_plan_fused": self.plan(n, has_parts=True).to_dict(),
            "seed_kernel": "skips translation when the op has one",
        }

    def op_waves(self, ops: list[str], parts: dict[str, list[str]]) -> list[list[str]]:
        """Run the parts of fused ops before the fused ops (their kernels feed composition);
        ``parts``: op -> the ops it is made of (the runner reads reference_ops/parts.toml)."""
        names = set(ops)
        later = [o for o in ops if any(p in names for p in parts.get(o, ()))]
        first = [o for o in ops if o not in later]
        return [w for w in (first, later) if w]

    # -- the search ------------------------------------------------------------------------
    def optimize(
        self, task: TaskContext, llm: ChatModel, evaluate: EvaluateFn, budget: Budget
    ) -> Iterator[Proposal]:
        models = self._models(llm)
        parts = list(task.extras.get("parts") or [])
        st = _OpState(task, self.plan(budget.evaluations, has_parts=bool(parts)))
        st.functional = task.reference_source
        seed = seed_solution(task)
        seeded = seed is not None and seed.valid
        if seed is not None and seeded:
            st.solutions.append(seed)
        try:
            yield from self._convert(st, llm, evaluate, models[0])
            if not seeded:  # a seed kernel is the translated kernel (evotoolkit skips the stage)
                yield from self._translate(st, llm, evaluate, models[0])
            yield from self._evolve(st, llm, evaluate, models)
            yield from self._rag(st, llm, evaluate, models)
            yield from self._compose(st, llm, evaluate, models, parts)
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
        st.spent[p.stage] = st.spent.get(p.stage, 0) + 1
        if not p.allow_torch_ops:
            st.solutions.append(sol)
        return sol

    def _ask(self, st: _OpState, llm, msgs, operator: str, stage: str, model,
             parents: list[Solution] | None = None) -> Proposal:
        return ask(llm, msgs, task=st.task, method=NAME, trial=st.used, operator=operator,
                   model=model, parents=parents, temperature=self.temperature, stage=stage)

    def _base(self, st: _OpState, template: str, **variables: Any) -> list[dict[str, str]]:
        return prompting.messages(st.task, f"ai_cuda_engineer/{template}", functional=st.functional,
                                  converted=st.converted, **variables)

    def _convert(self, st: _OpState, llm, evaluate, model) -> Iterator[Proposal]:
        history: list[dict[str, str]] = []
        failures = 0
        for _ in range(min(st.plan.convert, st.left)):
            p = self._ask(st, llm, self._base(st, "convert.j2") + history, "convert", "convert", model)
            p.allow_torch_ops = True
            sol = self._judge(st, p, evaluate)
            yield p
            if sol.valid:
                st.functional, st.converted = p.source, True
                return
            failures += 1
            history = [] if failures % 3 == 0 else [
                _assistant(p), self._user(st, "convert_error.j2", status=sol.status or "failed",
                                          message=_message(p))]

    def _translate(self, st: _OpState, llm, evaluate, model) -> Iterator[Proposal]:
        history: list[dict[str, str]] = []
        failures = 0
        attempts = min(st.plan.translate, max(0, st.left - st.plan.reserved))
        for attempt in range(1, attempts + 1):
            p = self._ask(st, llm, self._base(st, "translate.j2") + history, "translate",
                          "translate", model)
            sol = self._judge(st, p, evaluate)
            yield p
            if sol.valid:
                return
            failures += 1
            if attempt == attempts or failures % 3 == 0:
                history = []  # the last failure's summary would feed nothing; every third: afresh
                continue
            summary = self._summarize(st, llm, p, sol, model)
            history = [_assistant(p), self._user(st, "translate_retry.j2", summary=summary)]

    def _evolve(self, st: _OpState, llm, evaluate, models) -> Iterator[Proposal]:
        rng = method_rng(st.task, NAME, "evolve")
        per_gen = st.plan.per_generation
        budget = min(st.plan.evolve, max(0, st.left - st.plan.reserved))
        generations = math.ceil(budget / per_gen) if budget > 0 else 0
        for gen in range(1, generations + 1):
            top = st.top(self.top_k)  # a generation's proposals all see the same top-k
            shown = list(reversed(top))  # slowest first, as evotoolkit's prompt lists them
            for j in range(min(per_gen, budget)):
                if len(top) >= 2 and j % 2 == 1:
                    operator, parents = "crossover", rank_select(top, 2, rng, population_size=self.top_k)
                elif top:
                    operator, parents = "mutation", [top[0]]
                else:
                    operator, parents = "init", []
                picks = [shown.index(p) + 1 for p in parents]
                msgs = self._base(st, "evolve.j2", top=shown, target=top[0] if top else None,
                                  operator=operator, picks=picks, generation=gen,
                                  generations=generations)
                p = self._ask(st, llm, msgs, operator, "evolve", models[j % len(models)], parents)
                self._judge(st, p, evaluate)
                budget -= 1
                yield p

    def _rag(self, st: _OpState, llm, evaluate, models) -> Iterator[Proposal]:
        hits = self.archive.similar(st.functional, k=self.archive_k, exclude_op=st.task.op)
        examples = [{"op": e.op, "similarity": s, "speedup": e.speedup, "name": e.name,
                     "thought": e.thought, "functional": _cut(e.functional_code, self.example_chars),
                     "kernel": _cut(e.kernel, self.example_chars)} for e, s in hits]
        target = (st.top(1) or [None])[0]
        for i in range(min(st.plan.rag, st.left)):
            msgs = self._base(st, "rag.j2", examples=examples, target=target)
            p = self._ask(st, llm, msgs, "rag", "rag", models[i % len(models)],
                          [target] if target else None)
            self._judge(st, p, evaluate)
            yield p

    def _compose(self, st: _OpState, llm, evaluate, models, parts: list[str]) -> Iterator[Proposal]:
        found = [(op, self.archive.get(op)) for op in parts]
        if not parts or not any(e is not None for _, e in found):
            return  # nothing to compose: the stage's budget is not spent
        shown = [{"op": op, "kernel": _cut(e.kernel, self.example_chars) if e else None,
                  "speedup": e.speedup if e else None, "name": e.name if e else "",
                  "thought": e.thought if e else ""} for op, e in found]
        target = (st.top(1) or [None])[0]
        for i in range(min(st.plan.compose, st.left)):
            msgs = self._base(st, "compose.j2", parts=shown, target=target)
            p = self._ask(st, llm, msgs, "compose", "compose", models[i % len(models)],
                          [target] if target else None)
            self._judge(st, p, evaluate)
            yield p

    # -- helpers ----------------------------------------------------------------------------
    def _user(self, st: _OpState, template: str, **variables: Any) -> dict[str, str]:
        text = prompting.render(f"ai_cuda_engineer/{template}", st.task, **variables)
        return {"role": "user", "content": text}

    def _summarize(self, st: _OpState, llm, p: Proposal, sol: Solution, model) -> str:
        """Ask the LLM why a translation failed, in the same chat (one LLM call, no evaluation)."""
        v = p.verdict
        if p.parse_error or not p.source:
            return f"the reply could not be used: {p.parse_error or 'no code'}; follow the reply format exactly"
        msgs = self._base(st, "translate.j2") + [
            _assistant(p),
            self._user(st, "translate_summary.j2", status=sol.status or "failed",
                       message=_message(p), logs=(v.logs if v else "")[-1500:].strip()),
        ]
        kw: dict[str, Any] = {"context": CallContext(method=NAME, op=st.task.op, trial=st.used - 1,
                                                     purpose="summarize-error", stage="translate")}
        if model is not None:
            kw["model"] = model
        res = llm.chat(msgs, **kw)
        return _plain(res.text, self.summary_chars) or sol.summary or sol.status

    def _archive_best(self, st: _OpState) -> None:
        found = [s for s in st.top(len(st.solutions)) if s.operator != "seed"]
        if not found:
            return
        best = found[0]
        self.archive.add(ArchiveEntry(
            op=st.task.op, functional_code=st.functional, kernel=best.code,
            speedup=best.eager_us / best.runtime_us if best.eager_us and best.runtime_us else None,
            runtime_us=best.runtime_us, name=best.name, thought=best.thought,
        ))
        if self.archive_path:
            save_file(self.archive_path, self.archive)


def _assistant(p: Proposal) -> dict[str, str]:
    body = f"```python\n{p.source.rstrip()}\n```" if p.source else f"(no usable code: {p.parse_error})"
    return {"role": "assistant", "content": body}


def _message(p: Proposal) -> str:
    v = p.verdict
    if p.parse_error:
        return f"reply could not be parsed: {p.parse_error}"
    text = ((v.message or "") if v else "").strip()
    return text[:500] or (v.status.value if v else "failed")


def _cut(code: str, limit: int) -> str:
    return code if len(code) <= limit else code[:limit].rstrip() + "\n# ... (cut: too long for the prompt)\n"


def _plain(text: str, limit: int) -> str:
    """A summary as one paragraph: code blocks and headings dropped, whitespace squeezed."""
    import re

    text = re.sub(r"```.*?(```|$)", " ", text or "", flags=re.S)
    text = re.sub(r"^\s*#+.*$", " ", text, flags=re.M)
    text = re.sub(r"\s+", " ", text).strip()
    return text[:limit].rstrip()

