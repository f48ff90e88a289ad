"""The module-level import graph of the project's packages, read from source with ``ast``.

Nothing is imported: each ``.py`` file under the scanned top folders is parsed, and every
``import``/``from ... import`` in it (at module level or inside a function or class) is an
arrow from that module to the project module it names. Imports inside an
``if TYPE_CHECKING:`` block count too: a module that names another only for its types still
depends on it (a circle hidden under TYPE_CHECKING is still a circle for the reader).
``from pkg import name`` points at
``pkg.name`` when that is a module, else at ``pkg`` itself; parents of an imported module are
not counted (``import a.b.c`` is one arrow, to ``a.b.c``).
"""

from __future__ import annotations

import ast
from pathlib import Path

TOPS = ("harness", "sandbox", "submissions", "reference_ops")


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(tree: ast.AST):
    """Yield every Import/ImportFrom node: module level, in functions, under ``TYPE_CHECKING``."""
    return (node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom)))


def _absolute(mod: str, is_pkg: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def build_graph(root: Path, tops=TOPS) -> dict[str, set[str]]:
    """Map each project module to the set of project modules it imports."""
    files = {}
    for top in tops:
        d = root / top
        if d.is_dir():
            for p in sorted(d.rglob("*.py")):
                files[module_name(root, p)] = p
    known = set(files)

    def resolve(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in files}
    for mod, path in files.items():
        is_pkg = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in _imports(tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = _absolute(mod, is_pkg, node)
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                    for a in node.names
                ]
            for t in targets:
                r = resolve(t)
                if r and r != mod:
                    graph[mod].add(r)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)
