"""Which ops a run covers, and what a method sees of each (``TaskContext``).

Suite resolution is the suite package's job (``harness.suite.suites.resolve``); this module
turns its errors into ``TaskSelectionError`` and builds the method's view of each op.
"""

from __future__ import annotations

import ast
from typing import Any

from harness.methods.base import TaskContext
from harness.methods.prompting import default_rules
from harness.suite.suites import resolve
from sandbox.contract import Task, TaskError


class TaskSelectionError(ValueError):
    """--suite / --ops named something that does not exist; the message says what does."""


def resolve_tasks(suite: str | None = None, ops: list[str] | None = None) -> list[Task]:
    if not suite and not ops:
        raise TaskSelectionError("choose the ops: --suite NAME (e.g. smoke) or --ops relu,softmax")
    try:
        return resolve(list(ops) if ops else suite)
    except TaskError as e:
        raise TaskSelectionError(str(e)) from e


def hardware_text(device: str, env: dict[str, Any]) -> str:
    if device.startswith("cuda"):
        gpu = env.get("gpu") or "an NVIDIA GPU"
        cc = env.get("compute_capability")
        cuda = env.get("cuda")
        parts = [f"GPU: {gpu}"]
        if cc:
            parts.append(f"compute capability {cc} (compile for sm_{cc.replace('.', '')})")
        if cuda:
            parts.append(f"CUDA {cuda}")
        parts.append(f"PyTorch {env.get('torch', '?')}")
        return ", ".join(parts) + "."
    return (
        f"CPU only ({env.get('machine', 'x86_64')}, {env.get('cpu_count', '?')} cores), "
        f"PyTorch {env.get('torch', '?')}; there is no GPU: write C++ for the CPU."
    )


def forward_signature(source: str) -> str:
    """``forward(self, A: torch.Tensor, ...) -> ...`` of the task's ``Model``, as written."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return "forward(self, *inputs)"
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Model":
            for fn in node.body:
                if isinstance(fn, ast.FunctionDef) and fn.name == "forward":
                    ret = f" -> {ast.unparse(fn.returns)}" if fn.returns else ""
                    return f"forward({ast.unparse(fn.args)}){ret}"
    return "forward(self, *inputs)"


def task_context(task: Task, *, device: str, env: dict[str, Any], seed: int) -> TaskContext:
    language = "cuda" if device.startswith("cuda") else "cpp"
    return TaskContext(
        op=task.name,
        reference_source=task.source,
        signature=forward_signature(task.source),
        device="cuda" if device.startswith("cuda") else "cpu",
        hardware=hardware_text(device, env),
        language=language,
        rules=default_rules(device),
        seed=seed,
        extras={
            "category": task.meta.category,
            "dtype": task.meta.dtype,
            "atol": task.meta.atol,
            "rtol": task.meta.rtol,
            "task_sha256": task.sha256,
        },
    )
