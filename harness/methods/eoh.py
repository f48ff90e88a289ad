"""EoH, Evolution of Heuristics (Liu et al., ICML 2024), after FeiLiu36/EoH (eoh/src/eoh/eoh/eoh.py,
evolution.py, config.py; the operator loop of eoh/src/eoh/methods/eoh/eoh.py).

* Every solution is a one-sentence idea (in braces) plus code. Prompts show the parents' ideas
  and code, never a measurement (``prompts/eoh/user.j2``).
* **Init**: ``2 * pop_size`` i1 proposals; the population is then managed.
* **Generations**: each operator of ``operators`` (e1, e2, m1, m2, m3: the paper's five) in turn
  makes a batch of ``pop_size`` offspring from the population as it stood when the batch began;
  after each batch the population is managed.
* **Population management**: invalid individuals are discarded, individuals with an objective
  (runtime) already present are dropped, the ``pop_size`` best are kept.
* **Parents**: ``random.choices`` over the population sorted by runtime, weight
  ``1 / (i + 1 + len(pop))`` (with replacement); e1/e2 take ``n_parents`` (2), m1/m2/m3 one.
* **Retries**: a reply without an idea or code is asked again (up to ``extraction_attempts``
  LLM calls, 4); code equal to a population member's is generated again (up to
  ``duplicate_retries``, 2). Neither costs an evaluation; the last reply is evaluated either way.

An operator that needs parents while the population is empty falls back to i1 (EoH stops the
run there). The op's seed kernel is not used (EoH's ``use_seed`` is off by default).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

from harness.llm.base import ChatModel
from harness.methods import prompting
from harness.methods.base import Budget, EvaluateFn, Proposal, TaskContext
from harness.methods.common import Solution, ask, method_rng
from harness.methods.evoengineer import check_protocol
from harness.methods.population import rank_choices
from harness.methods.reply import ParsedReply, parse_reply

NAME = "eoh"
OPERATORS = ("e1", "e2", "m1", "m2", "m3")
PARENTS = {"i1": 0, "e1": 2, "e2": 2, "m1": 1, "m2": 1, "m3": 1}
_FENCE = re.compile(r"```")
_BRACED = re.compile(r"\{([^{}]{8,})\}")


def parse_idea_and_code(text: str) -> ParsedReply:
    """EoH's extraction: the code (a fenced block defining ModelNew) and the idea: the first
    ``{...}`` before the code, else the text before the code (FeiLiu36/EoH evolution._extract)."""
    parsed = parse_reply(text)
    if not parsed.ok:
        return parsed
    head = text[: text.find("```")] if "```" in text else text
    m = _BRACED.search(head)
    if m:
        idea = m.group(1).strip()
    else:
        lines = [ln for ln in head.splitlines()
                 if ln.strip() and not re.match(r"^\s*(#+|\*\*)?\s*(name|thought|idea|code)\b\W*$", ln, re.I)]
        idea = re.sub(r"\s+", " ", " ".join(lines)).strip()
        idea = re.sub(r"^(#+\s*)?(name|thought|idea)\s*:?\s*", "", idea, flags=re.I)
    if not idea:
        return ParsedReply(code=parsed.code, name=parsed.name,
                           error="no idea: describe the kernel in one sentence inside braces")
    return ParsedReply(name=parsed.name, thought=idea, code=parsed.code)


def schedule(evaluations: int, pop_size: int = 5, operators: tuple[str, ...] = OPERATORS
             ) -> list[tuple[str, int]]:
    """(operator, batch size) per batch: i1 x 2N, then each operator's batch of N in turn."""
    batches = [("i1", min(2 * pop_size, evaluations))]
    left, i = evaluations - batches[0][1], 0
    while left > 0:
        n = min(pop_size, left)
        batches.append((operators[i % len(operators)], n))
        left, i = left - n, i + 1
    return batches


def manage(population: list[Solution], size: int) -> list[Solution]:
    """Valid only, one individual per objective, the ``size`` fastest (EoH population_management)."""
    seen: set[float] = set()
    unique = []
    for s in population:
        if not s.valid or s.runtime_us is None:
            continue
        key = round(s.runtime_us, 5)
        if key not in seen:
            seen.add(key)
            unique.append(s)
    return sorted(unique, key=lambda s: (s.runtime_us, s.trial))[:size]


class EoH:
    name = NAME
    variant = "i1+e1,e2,m1,m2,m3"
    paper = "Liu et al. 2024, Evolution of Heuristics (EoH), ICML"
    # FeiLiu36/EoH config defaults: pop_size 5, 2N init + 20 generations of N = 110 samples
    default_budget = 110
    templates = ("eoh/user.j2",)

    def __init__(
        self,
        pop_size: int = 5,
        operators: str | list[str] | tuple[str, ...] = OPERATORS,
        n_parents: int = 2,
        extraction_attempts: int = 4,
        duplicate_retries: int = 2,
        temperature: float | None = None,
        protocol: str = "paper",
    ):
        if pop_size < 1:
            raise ValueError("pop_size must be >= 1")
        ops = tuple(o.strip() for o in operators.split(",")) if isinstance(operators, str) else tuple(operators)
        bad = [o for o in ops if o not in PARENTS or o == "i1"]
        if not ops or bad:
            raise ValueError(f"eoh operators {bad or ops}: choose from {list(OPERATORS)}")
        self.protocol = check_protocol(protocol, NAME)
        self.pop_size = pop_size
        self.operators = ops
        self.n_parents = max(2, n_parents)
        self.extraction_attempts = max(1, extraction_attempts)
        self.duplicate_retries = max(0, duplicate_retries)
        self.temperature = temperature

    def settings(self, budget: Budget | None = None) -> dict[str, Any]:
        return {
            "protocol": self.protocol, "population": self.pop_size,
            "init": 2 * self.pop_size, "operators": ",".join(self.operators),
            "n_parents": self.n_parents, "extraction_attempts": self.extraction_attempts,
            "duplicate_retries": self.duplicate_retries, "temperature": self.temperature,
            "measurements_in_prompts": False, "seed_kernel": "not used",
        }

    def optimize(
        self, task: TaskContext, llm: ChatModel, evaluate: EvaluateFn, budget: Budget
    ) -> Iterator[Proposal]:
        rng = method_rng(task, NAME)
        pop: list[Solution] = []
        self.population = pop  # the last op's population, for inspection
        trial = 0
        for batch_op, size in schedule(budget.evaluations, self.pop_size, self.operators):
            members = list(pop)  # parents come from the population at the batch's start
            offspring: list[Solution] = []
            for _ in range(size):
                operator = batch_op if (PARENTS[batch_op] == 0 or members) else "i1"
                p = self._offspring(task, llm, operator, members, rng, trial)
                evaluate(p)
                offspring.append(Solution.from_proposal(p, trial=trial))
                trial += 1
                yield p
            pop = manage(pop + offspring, self.pop_size)
            self.population = pop

    def _offspring(self, task: TaskContext, llm: ChatModel, operator: str,
                   members: list[Solution], rng: random.Random, trial: int) -> Proposal:
        """One offspring: parents, prompt, extraction retries, duplicate-code retries."""
        calls: list[int] = []
        p = Proposal(source="")
        for _round in range(1 + self.duplicate_retries):
            k = self.n_parents if operator in ("e1", "e2") else PARENTS[operator]
            parents = rank_choices(members, k, rng, offset=len(members) + 1) if k else []
            msgs = prompting.messages(task, "eoh/user.j2", operator=operator, parents=parents)
            for _attempt in range(self.extraction_attempts):
                p = ask(llm, msgs, task=task, method=NAME, trial=trial, operator=operator,
                        parents=parents, temperature=self.temperature, stage=operator,
                        parse=parse_idea_and_code)
                calls += p.llm_call_ids
                if not p.parse_error:
                    break
            if p.parse_error or not any(p.source.strip() == m.code.strip() for m in members):
                break
        p.llm_call_ids = calls
        return p
