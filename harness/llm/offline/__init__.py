"""The offline model: a deterministic, keyless code model for dry runs, the demo and tests.

It reads the reference op out of the prompt (or the bundled suite, by ``CallContext.op``),
picks a kernel template of its family, varies the tunables deterministically by (seed, op,
request, trial, repeat count), and answers in the reply format of
``harness.methods.reply`` (Name / Thought / Code). At ``broken_rate`` it answers with a
compile error, a wrong result or an unparsable reply, so every failure path gets exercised.
Everything it returns is labelled ``offline``; token counts are estimates (len / 4).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
import time
from collections import Counter

from harness.llm.base import CallContext, ChatResult
from harness.llm.offline.analyze import OpSpec, UnknownOp, analyze, find_reference
from harness.llm.offline.render import FAULTS, GRIDS, Variant, describe, render
from harness.methods.reply import format_reply

MODEL_NAME = "offline"


class OfflineModel:
    offline = True

    def __init__(self, seed: int = 0, device: str | None = None, broken_rate: float = 0.15):
        self.seed = seed
        self.device = device
        self.broken_rate = broken_rate
        self.name = MODEL_NAME if seed == 0 else f"{MODEL_NAME}:{seed}"
        self.model = self.name
        self._seen: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._specs: dict[str, OpSpec] = {}

    # the ChatModel.chat signature (harness/llm/base.py), repeated on purpose: a backend
    # implements the protocol; wrappers write it once (ModelWrapper)
    def chat(
        self,
        messages: list[dict[str, str]],
        *,
        context: CallContext,
        temperature: float | None = None,
        max_tokens: int | None = None,
        model: str | None = None,
    ) -> ChatResult:
        t0 = time.perf_counter()
        prompt = "\n".join(str(m.get("content", "")) for m in messages)
        key = hashlib.sha256(
            json.dumps([messages, context.op, context.trial], sort_keys=True).encode()
        ).hexdigest()
        with self._lock:
            repeat = self._seen[key]
            self._seen[key] += 1
        rng = random.Random(f"{self.seed}|{context.op}|{key}|{repeat}")
        info: dict[str, object] = {"seed": self.seed, "repeat": repeat}
        purpose = (context.purpose or "").lower()
        if "summar" in purpose or _asks_summary(messages):
            text = _summary(prompt)
            info["kind"] = "summary"
        else:
            text = self._kernel_reply(prompt, context, purpose, rng, info)
        return ChatResult(
            text=text,
            model=MODEL_NAME,
            prompt_tokens=estimate_tokens(prompt),
            completion_tokens=estimate_tokens(text),
            latency_s=time.perf_counter() - t0,
            offline=True,
            raw={"offline": info, "token_estimate": True},
        )

    # -- replies -------------------------------------------------------------------------
    def _kernel_reply(
        self,
        prompt: str,
        context: CallContext,
        purpose: str,
        rng: random.Random,
        info: dict[str, object],
    ) -> str:
        reference = find_reference(prompt, context.op)
        if reference is None:
            info["kind"] = "no_reference"
            return (
                "## Name\nno_reference\n## Thought\nThe offline model found no reference op "
                "(a fenced block defining class Model) in the prompt, and no op name to look up.\n"
            )
        if "convert" in purpose or "functional" in purpose:
            info["kind"] = "convert"
            code = re.sub(r"^class\s+Model\s*\(", "class ModelNew(", reference, flags=re.M)
            code = re.sub(r"super\s*\(\s*Model\s*,", "super(ModelNew,", code)
            return format_reply(
                "functional_reference", "The reference rewritten unchanged as ModelNew.", code
            )
        try:
            spec = self._spec(reference)
        except UnknownOp as e:
            info["kind"] = "unknown_op"
            return f"## Name\nunsupported_op\n## Thought\nThe offline model cannot write this op: {e}\n"
        language = "cuda" if (self.device or _guess_device(prompt)).startswith("cuda") else "cpp"
        blocks, unrolls = GRIDS[(spec.family, language)]
        fault = rng.choice(FAULTS) if rng.random() < self.broken_rate else None
        block, unroll = _from_parent(prompt, spec.family, language, blocks, unrolls, rng)
        v = Variant(language=language, block=block, unroll=unroll, fault=fault)
        info.update(
            kind="kernel",
            family=spec.family,
            op_kind=spec.kind,
            language=language,
            block=v.block,
            unroll=v.unroll,
            fault=fault,
        )
        name, thought = describe(spec, v)
        if fault == "unparsable":
            return f"## Name\n{name}\n## Thought\n{thought}\n## Code\n(the kernel is described above)\n"
        return format_reply(name, thought, render(spec, v))

    def _spec(self, reference: str) -> OpSpec:
        with self._lock:
            spec = self._specs.get(reference)
        if spec is None:
            spec = analyze(reference)
            with self._lock:
                self._specs[reference] = spec
        return spec


def _from_parent(prompt: str, family: str, language: str, blocks: list[int], unrolls: list[int],
                 rng: random.Random) -> tuple[int, int]:
    """Tunables for the next kernel: usually one grid step away from the last kernel of the
    same family shown in the prompt (the parent, so search walks the grid), else random."""
    marker = f"offline_{family}_{language}_v1"
    parent = None
    for m in re.finditer(r"```[^\n]*\n(.*?)```", prompt, re.S):
        if marker in m.group(1):
            parent = m.group(1)
    if parent is None or rng.random() < 0.25:
        return rng.choice(blocks), rng.choice(unrolls)
    b = re.search(r"^BLOCK = (\d+)", parent, re.M)
    u = re.search(r"^UNROLL = (\d+)", parent, re.M)
    block = int(b.group(1)) if b and int(b.group(1)) in blocks else rng.choice(blocks)
    unroll = int(u.group(1)) if u and int(u.group(1)) in unrolls else rng.choice(unrolls)
    axes = [a for a, grid in (("block", blocks), ("unroll", unrolls)) if len(grid) > 1]
    axis = rng.choice(axes)
    grid, cur = (blocks, block) if axis == "block" else (unrolls, unroll)
    i = grid.index(cur) + rng.choice((-1, 1))
    if not 0 <= i < len(grid):
        i = 1 if i < 0 else len(grid) - 2
    return (grid[i], unroll) if axis == "block" else (block, grid[i])


def estimate_tokens(text: str) -> int:
    """An estimate (about 4 characters per token); results carry ``token_estimate: True``."""
    return max(1, len(text) // 4) if text else 0


def _guess_device(prompt: str) -> str:
    """ "cuda" or "cpu" from the prompt: CUDA code shown, or what the opening asks for."""
    if "cuda_sources" in prompt:
        return "cuda"
    head = prompt[:600].lower()
    cuda, cpp = head.find("cuda"), head.find("c++")
    if cuda >= 0 and (cpp < 0 or cuda < cpp):
        return "cuda"
    if cpp >= 0 or re.search(r"\bcpu\b", prompt, re.I):
        return "cpu"
    return "cuda" if re.search(r"\bcuda\b|\bgpu\b", prompt, re.I) else "cpu"


def _asks_summary(messages: list[dict[str, str]]) -> bool:
    last = str(messages[-1].get("content", "")) if messages else ""
    return (
        bool(re.search(r"\bsummari[sz]e\b", last[:400], re.I))
        and "class ModelNew" not in last[-2000:]
    )


def _summary(prompt: str) -> str:
    lines = [
        ln.strip()
        for ln in prompt.splitlines()
        if re.search(r"error|fail|mismatch|exceed", ln, re.I)
    ]
    first = lines[-1][:300] if lines else "no error message was given"
    return f"The previous attempt failed: {first}. Fix that first; keep the interface unchanged."
