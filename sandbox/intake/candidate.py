"""Which class of a candidate file is judged, as the field writes candidates (EVAL_RULES,
"Candidates as the field writes them").

The judged name is the module attribute the worker instantiates; what a name means is its last
module-level binding (a ``class`` statement, or an assignment ``Name = Other``), as when the
file runs. In this order of precedence, each accommodation noted in the verdict
(``evidence.accommodations``; ``evidence.entry`` names the attribute and the class it binds):

1. ``ModelNew`` (KernelBench's convention: its loader reads exactly this name): a class, or an
   alias ``ModelNew = SomeClass`` (a class defined in the file, or any name the module binds: the
   worker checks at run time that it is an ``nn.Module`` subclass). It wins over anything the
   file binds to ``Model``: published candidates often keep the reference's ``Model`` beside
   their ``ModelNew``, and a different ``Model`` there is noted as ignored;
2. ``Model`` when it is not the reference's own ``Model`` copied unchanged: a class of that name
   (some published solution sets name their kernel class ``Model``), or an alias
   ``Model = OptimizedModel`` (others define their own class and rebind the name).

Anything else (no binding of either name, or only the reference's ``Model`` unchanged) is a
``CandidateError`` naming the accepted forms.

Signatures are call-compatible when the class accepts the reference's calls: ``forward`` (and
``__init__``) may have extra parameters with defaults or ``*args``; fewer parameters than the
reference passes, or more required ones, is a real mismatch (``CandidateError``, exit 2).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from sandbox.errors import CandidateError

NAMES = ("ModelNew", "Model")  # the judged names, in order of precedence
_ALIAS_HOPS = 4  # A = B; ModelNew = A: followed this far to find the class whose signature is checked


@dataclass(frozen=True)
class Entry:
    name: str  # the module attribute the worker instantiates
    notes: list[str] = field(default_factory=list)
    cls: str | None = None  # the class it binds, as far as the source says (None: not a name in the file)
    binding: str = "class"  # "class" (a class statement of that name) | "alias" (an assignment)

    def evidence(self) -> dict[str, Any]:
        """What the verdict records of the choice (``evidence.entry``)."""
        return {"name": self.name, "class": self.cls, "binding": self.binding}


def _bindings(tree: ast.Module) -> dict[str, tuple[str, ast.AST]]:
    """The last module-level binding of each name: ("class", ClassDef), ("alias", value) or
    ("other", node) for a function, an import or an unpacking."""
    out: dict[str, tuple[str, ast.AST]] = {}
    for n in tree.body:
        if isinstance(n, ast.ClassDef):
            out[n.name] = ("class", n)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[n.name] = ("other", n)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                out[a.asname or a.name.split(".")[0]] = ("other", n)
        elif isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = ("alias", n.value)
                else:
                    for x in ast.walk(t):
                        if isinstance(x, ast.Name):
                            out[x.id] = ("other", n)
        elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and n.value is not None:
            out[n.target.id] = ("alias", n.value)
    return out


def _target(binds: dict[str, tuple[str, ast.AST]], value: ast.AST) -> tuple[str, ast.ClassDef | None]:
    """(the alias's right-hand side as written, the class it names in this file, if any)."""
    text = value.id if isinstance(value, ast.Name) else ast.unparse(value)
    for _ in range(_ALIAS_HOPS):
        if not isinstance(value, ast.Name) or value.id not in binds:
            return text, None
        kind, node = binds[value.id]
        if kind == "class":
            return text, node  # type: ignore[return-value]
        if kind != "alias":
            return text, None
        value = node
    return text, None


def _method(cls: ast.ClassDef | None, name: str) -> ast.FunctionDef | None:
    if cls is None:
        return None
    for n in cls.body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name:
            return n
    return None


def _accepts(fn: ast.FunctionDef) -> tuple[int, int | None]:
    """(required positional args, most positional args or None for *args), without self."""
    a = fn.args
    pos = len(a.posonlyargs) + len(a.args) - 1
    required = pos - len(a.defaults)
    return max(required, 0), (None if a.vararg is not None else pos)


def _passed(fn: ast.FunctionDef | None) -> int | None:
    """How many positional args the reference's method is called with (its own positional count)."""
    if fn is None or fn.args.vararg is not None:
        return None
    return len(fn.args.posonlyargs) + len(fn.args.args) - 1


def _check(cand: ast.ClassDef | None, ref: ast.ClassDef | None, method: str, label: str,
           filename: str, notes: list[str]) -> None:
    fn, n = _method(cand, method), _passed(_method(ref, method))
    if fn is None or n is None:
        return
    lo, hi = _accepts(fn)
    if n < lo or (hi is not None and n > hi):
        want = f"{lo}" if hi == lo else f"{lo} to {'any number' if hi is None else hi}"
        raise CandidateError(f"{filename}: {label}.{method} takes {want} positional argument(s); the "
                             f"reference's Model.{method} takes {n} (it is called with that many): match its signature")
    if hi is None or hi > n:
        extra = [x.arg for x in (fn.args.posonlyargs + fn.args.args)[1 + n:]]
        notes.append(f"{label}.{method} has parameters the reference does not pass"
                     + (f" ({', '.join(extra)}, with defaults)" if extra else " (*args)"))


def _is_reference(node: ast.AST, ref: ast.ClassDef | None) -> bool:
    return ref is not None and isinstance(node, ast.ClassDef) and ast.dump(node) == ast.dump(ref)


def entry_point(tree: ast.Module, filename: str, reference_source: str | None) -> Entry:
    """The candidate class to judge, with the accommodations made; CandidateError if none."""
    binds = _bindings(tree)
    ref_tree = ast.parse(reference_source) if reference_source else None
    ref = next((n for n in ref_tree.body if isinstance(n, ast.ClassDef) and n.name == "Model"), None) \
        if ref_tree is not None else None
    notes: list[str] = []
    chosen: tuple[str, str, ast.AST] | None = None  # (name, kind, node)
    for name in NAMES:
        kind, node = binds.get(name, ("", None))
        if kind == "class" and not (name == "Model" and _is_reference(node, ref)):
            chosen = (name, kind, node)
            break
        if kind == "alias":
            chosen = (name, kind, node)
            break
    if chosen is None:
        kind = binds.get("Model", ("", None))[0]
        why = " (its class Model is the reference's own, unchanged)" if kind == "class" else ""
        raise CandidateError(f"{filename}: no class ModelNew{why} (a candidate defines class ModelNew(nn.Module), "
                             "or binds ModelNew = YourClass (or Model = YourClass), with constructor and forward "
                             "accepting the reference's Model calls)")
    name, kind, node = chosen
    if kind == "class":
        cls: ast.ClassDef | None = node  # type: ignore[assignment]
        entry_cls: str | None = name
        if name == "Model":
            notes.append("the candidate's class is named Model (no ModelNew)")
    else:
        entry_cls, cls = _target(binds, node)
        notes.append(f"{name} is an alias of {entry_cls}" + (" (no ModelNew)" if name == "Model" else ""))
        if cls is not None:
            entry_cls = cls.name
    if name == "ModelNew":
        mkind, mnode = binds.get("Model", ("", None))
        if mkind == "alias" or (mkind == "class" and not _is_reference(mnode, ref)):
            notes.append("the file also binds its own Model; ModelNew is judged (it takes precedence)")
    if ref is not None:
        for method in ("forward", "__init__"):
            _check(cls, ref, method, name, filename, notes)
    return Entry(name, notes, entry_cls, kind)
