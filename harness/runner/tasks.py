"""Which ops a run covers, and what a method sees of each (``TaskContext``).

Suite resolution is the suite package's job (``harness.suite.suites``); ``resolve_tasks``
calls it when present and otherwise falls back to a small local reader of
``reference_ops/suites.toml`` and ``reference_ops/<category>/<op>.py`` files.
"""

from __future__ import annotations

import ast
import difflib
import tomllib
from pathlib import Path
from typing import Any

from harness.methods.base import TaskContext
from harness.methods.prompting import default_rules
from harness.suite.task import Task, load_task

REPO_OPS = Path(__file__).resolve().parents[2] / "reference_ops"


class TaskSelectionError(ValueError):
    """--suite / --ops named something that does not exist; the message says what does."""


def resolve_tasks(
    suite: str | None = None, ops: list[str] | None = None, root: Path | None = None
) -> list[Task]:
    if not suite and not ops:
        raise TaskSelectionError("choose the ops: --suite NAME (e.g. smoke) or --ops relu,softmax")
    try:
        from harness.suite import suites as suite_mod  # the suite package's resolver
    except ImportError:
        suite_mod = None
    if suite_mod is not None and root is None:
        fn = getattr(suite_mod, "resolve", None) or getattr(suite_mod, "resolve_tasks", None)
        if fn is not None:
            if ops:
                return [t for name in ops for t in fn(name)]
            return list(fn(suite))
    return _local_resolve(suite, ops, root or REPO_OPS)


def _local_resolve(suite: str | None, ops: list[str] | None, root: Path) -> list[Task]:
    files = {p.stem: p for p in sorted(root.glob("*/*.py")) if not p.name.startswith("_")}
    if ops:
        names = ops
    else:
        p = Path(suite)  # a KernelBench file or folder given as the suite
        if p.is_file():
            return [load_task(p)]
        if p.is_dir():
            return [load_task(f) for f in sorted(p.rglob("*.py")) if not f.name.startswith("_")]
        manifest = root / "suites.toml"
        suites: dict[str, Any] = tomllib.loads(manifest.read_text()) if manifest.is_file() else {}
        suites = suites.get("suites", suites)
        if suite in ("full", "all") and suite not in suites:
            return [load_task(f) for f in files.values()]
        if suite not in suites:
            close = difflib.get_close_matches(suite, list(suites), n=3)
            hint = f" Did you mean {', '.join(close)}?" if close else ""
            raise TaskSelectionError(
                f"unknown suite {suite!r} in {manifest}.{hint} Known: {sorted(suites)}"
            )
        names = _expand(suite, suites, files, root)
    out = []
    for name in names:
        if Path(name).is_file():
            out.append(load_task(Path(name)))
            continue
        if name not in files:
            close = difflib.get_close_matches(name, list(files), n=3)
            hint = f" Did you mean {', '.join(close)}?" if close else ""
            raise TaskSelectionError(f"unknown op {name!r} (no {root}/*/{name}.py).{hint}")
        out.append(load_task(files[name]))
    return out


def _expand(
    suite: str,
    suites: dict[str, Any],
    files: dict[str, Path],
    root: Path,
    seen: frozenset[str] = frozenset(),
) -> list[str]:
    entry = suites[suite]
    items = entry.get("ops", []) if isinstance(entry, dict) else list(entry)
    out: list[str] = []
    for item in items:
        if item.startswith("category:"):
            cat = item.split(":", 1)[1]
            out += [n for n, p in files.items() if p.parent.name == cat]
        elif item.startswith("suite:") and item.split(":", 1)[1] not in seen:
            out += _expand(item.split(":", 1)[1], suites, files, root, seen | {suite})
        else:
            out.append(item)
    return list(dict.fromkeys(out))


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
