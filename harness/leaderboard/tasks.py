"""Finding an op's task file in the reference suite (for op pages and ``verify``)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from harness.suite.suites import ops_root

SUITE_ROOT = ops_root()


@cache
def find_task_file(op: str, root: Path = SUITE_ROOT) -> Path | None:
    hits = sorted(p for p in root.glob(f"**/{op}.py") if not p.name.startswith("_"))
    return hits[0] if hits else None


def describe_op(op: str) -> dict[str, Any]:
    """category, description, dtype of an op from its task file; placeholders when absent."""
    out = {"category": "unknown", "description": "", "dtype": ""}
    path = find_task_file(op)
    if path is None:
        return out
    try:
        from sandbox.contract import load_task

        t = load_task(path)
    except Exception:  # noqa: BLE001 -- a broken task file must not stop the site build
        return out
    return {"category": t.meta.category, "description": t.meta.description, "dtype": t.meta.dtype}
