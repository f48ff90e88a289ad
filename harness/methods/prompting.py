"""Prompt rendering: jinja2 templates shipped in ``harness/methods/prompts/<method>/*.j2``.

Shared partials live in ``prompts/_common/``: ``system.j2`` (role), ``task.j2`` (I1 task
context: target hardware, toolchain, rules, reference source), ``reply_format.j2`` (the
Name/Thought/Code format of ``harness.methods.reply``) and ``kernel.j2`` (one kernel with its
measurement). A method template includes them; every render gets ``task`` (TaskContext),
``toolchain`` and ``rules`` in scope. Undefined variables are errors (StrictUndefined).
"""

from __future__ import annotations

import functools
from typing import Any

import jinja2

from harness.methods.base import TaskContext

TOOLCHAINS = {
    "cuda": (
        "Python with CUDA C++ compiled through torch.utils.cpp_extension.load_inline "
        "(nvcc; pass cuda_sources and cpp_sources, functions=[...] to bind). Launch kernels "
        "on the current CUDA stream."
    ),
    "cpp": (
        "Python with C++ compiled for the CPU through torch.utils.cpp_extension.load_inline "
        "(cpp_sources only, functions=[...] to bind; no CUDA is available). Plain loops, "
        "OpenMP pragmas (extra_cflags=['-O3', '-fopenmp'], extra_ldflags=['-fopenmp']) and "
        "compiler vectorisation are allowed."
    ),
}

RULES = """\
- Define `class ModelNew(nn.Module)` with the same constructor arguments and the same
  `forward` signature as `Model`; it must return the same outputs (shape, dtype, device)
  within the op's tolerance, for any input shape, not only the default one.
- Keep the precision: compute in the reference's dtype (no lowering to fp16/bf16/TF32
  unless the reference does).
- Do the computation in your own kernel: no PyTorch compute fallback (torch ops, torch.nn
  functional calls, cuBLAS/cuDNN through torch) for the operator itself. Allocating the
  output tensor (torch.empty) and reading shapes is fine.
- No tricks: do not cache results across calls, read the caller's frames or memory, start
  threads or processes, touch files or the network, or work on side streams.
- Candidates that break a rule are rejected; the fastest valid kernel wins."""


def default_rules(device: str = "cuda") -> str:
    return RULES


def toolchain(language: str) -> str:
    return TOOLCHAINS.get(language, TOOLCHAINS["cuda"])


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("harness.methods", "prompts"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # noqa: S701 - prompts are plain text, not HTML
    )


def render(template: str, task: TaskContext, **variables: Any) -> str:
    """Render ``prompts/<template>`` (e.g. ``"evoengineer/init.j2"``) for ``task``."""
    tpl = environment().get_template(template)
    text = tpl.render(task=task, toolchain=toolchain(task.language), **variables)
    return _squeeze_blank_lines(text).strip() + "\n"


def messages(
    task: TaskContext,
    user_template: str,
    system_template: str = "_common/system.j2",
    **variables: Any,
) -> list[dict[str, str]]:
    """A two-message chat: the system role and the rendered user prompt."""
    return [
        {"role": "system", "content": render(system_template, task, **variables)},
        {"role": "user", "content": render(user_template, task, **variables)},
    ]


def _squeeze_blank_lines(text: str) -> str:
    out: list[str] = []
    blank = 0
    for line in text.splitlines():
        blank = blank + 1 if not line.strip() else 0
        if blank <= 1:
            out.append(line.rstrip())
    return "\n".join(out)
