"""FunSearch's code-only prompt and the reading of its completions, for kernels.

google-deepmind/funsearch (implementation/programs_database.py ``Island._generate_prompt``)
builds the prompt as a program: the specification, then the sampled implementations renamed
``f_v0`` .. ``f_v{k-1}`` in increasing order of score (each after the first with the docstring
"Improved version of `f_v{i-1}`."), then the header of ``f_v{k}`` for the LLM to complete. No
scores, no runtimes, no instructions beyond the code. Here the evolved "function" is the class
``ModelNew``: each version is a candidate source with ``ModelNew`` renamed ``ModelNew_v{i}``;
the specification is the task (target and rules as a module docstring) and the reference op.

A completion is read like DeepMind's sampler reads one: the code of ``ModelNew_v{k}`` (or a
plain ``ModelNew``), renamed back to ``ModelNew``; classes of earlier versions and the
reference's ``Model``/``get_inputs`` that a chat model may repeat are dropped; a bare class body
is put under the header.
"""

from __future__ import annotations

import ast
import re

from harness.methods.base import TaskContext
from harness.methods.common import Solution
from harness.methods.reply import ParsedReply

_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)


def versioned(code: str, i: int) -> str:
    """A candidate source as version ``i``: ``ModelNew`` -> ``ModelNew_v{i}``, and for i >= 1
    the docstring DeepMind gives every later version."""
    out = re.sub(r"\bModelNew\b", f"ModelNew_v{i}", code.rstrip())
    if i >= 1:
        out = re.sub(
            rf"^(class\s+ModelNew_v{i}\b[^\n]*:\n)",
            lambda m: m.group(1) + f'    """Improved version of `ModelNew_v{i - 1}`."""\n',
            out, count=1, flags=re.M,
        )
    return out


def program_messages(task: TaskContext, versions: list[Solution]) -> list[dict[str, str]]:
    """The code-only prompt (``funsearch/program.j2``) under a one-line system message."""
    from harness.methods.prompting import render

    rendered = [versioned(v.code, i) for i, v in enumerate(versions)]
    return [
        {"role": "system", "content": render("funsearch/system.j2", task)},
        {"role": "user", "content": render("funsearch/program.j2", task, versions=rendered,
                                           k=len(versions))},
    ]


def parse_completion(text: str, version: int) -> ParsedReply:
    """The candidate source in a completion of ``ModelNew_v{version}`` (see the module doc)."""
    if not text or not text.strip():
        return ParsedReply(error="empty reply")
    blocks = _FENCE.findall(text)
    target = f"ModelNew_v{version}"
    code = next((b for b in blocks if re.search(rf"^\s*class\s+({target}|ModelNew)\b", b, re.M)), "")
    if not code:
        bare = text if "```" not in text else (blocks[0] if blocks else "")
        if re.search(rf"^\s*class\s+({target}|ModelNew)\b", bare, re.M):
            code = bare
        elif bare.strip() and bare.lstrip("\n").startswith((" ", "\t")):  # only the class body
            code = f"class {target}(nn.Module):\n{bare.strip(chr(10))}\n"
        else:
            return ParsedReply(error=f"no class {target} (or ModelNew) in the completion")
    code = _drop_repeats(code, version)
    code = re.sub(rf"\b{target}\b", "ModelNew", code)
    if not re.search(r"^import torch|^from torch|^import torch\.nn", code, re.M):
        code = "import torch\nimport torch.nn as nn\n\n" + code
    return ParsedReply(code=code.strip() + "\n")


def _drop_repeats(code: str, version: int) -> str:
    """Remove the top-level ``Model``, ``get_inputs``, ``get_init_inputs`` and earlier versions
    ``ModelNew_v{i<version}`` a completion repeats from the prompt (line ranges, so the rest of
    the source keeps its formatting)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    drop = {"Model", "get_inputs", "get_init_inputs"} | {f"ModelNew_v{i}" for i in range(version)}
    lines = code.splitlines()
    cut: set[int] = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name in drop:
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            cut.update(range(start - 1, (node.end_lineno or node.lineno)))
    return "\n".join(line for i, line in enumerate(lines) if i not in cut)
