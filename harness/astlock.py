"""One lock around ``ast.parse`` for code that parses sources from several threads.

CPython 3.11 (seen on 3.11.7) can fail ``ast.parse`` run from several threads at once
("AST constructor recursion depth mismatch"): its AST-to-Python conversion keeps a shared
depth counter. The runner (ops in parallel) and the local executor (candidates scanned in
build threads) both call ``serialise_ast_parse()`` before they start threads.
"""

from __future__ import annotations

import ast
import threading
from typing import Any

_AST_LOCK = threading.Lock()


def serialise_ast_parse() -> None:
    """Make ``ast.parse`` take one process-wide lock (idempotent)."""
    if getattr(ast.parse, "_harness_locked", False):
        return
    original = ast.parse

    def parse(*args: Any, **kwargs: Any) -> Any:
        with _AST_LOCK:
            return original(*args, **kwargs)

    parse._harness_locked = True  # type: ignore[attr-defined]
    ast.parse = parse  # type: ignore[assignment]
