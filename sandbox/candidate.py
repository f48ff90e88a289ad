"""Which class of a candidate file is judged, as the field writes candidates (EVAL_RULES,
"Candidates as the field writes them").

Accepted, in this order, each accommodation noted in the verdict (``evidence.accommodations``):

1. a class ``ModelNew`` (KernelBench's convention);
2. a module-level alias ``ModelNew = SomeClass`` (a class defined in the file, or any name the
   module binds: the worker checks at run time that it is an ``nn.Module`` subclass);
3. a class ``Model`` when it is not the reference's own ``Model`` copied unchanged (some published
   solution sets name their kernel class ``Model``).

Signatures are call-compatible when the class accepts the reference's calls: ``forward`` (and
``__init__``) may have extra parameters with defaults or ``*args``; fewer parameters than the
reference passes, or more required ones, is a real mismatch (``CandidateError``, exit 2).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from sandbox.errors import CandidateError


@dataclass(frozen=True)
class Entry:
    name: str  # the module attribute the worker instantiates
    notes: list[str] = field(default_factory=list)


def _classes(tree: ast.Module) -> dict[str, ast.ClassDef]:
    return {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}


def _alias(tree: ast.Module, name: str) -> str | None:
    """The right-hand name of a module-level ``name = Other`` (last binding wins)."""
    found = None
    for n in tree.body:
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets):
            found = n.value.id if isinstance(n.value, ast.Name) else ast.unparse(n.value)
        elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and n.target.id == name and n.value:
            found = ast.unparse(n.value)
    return found


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


def entry_point(tree: ast.Module, filename: str, reference_source: str | None) -> Entry:
    """The candidate class to judge, with the accommodations made; CandidateError if none."""
    classes = _classes(tree)
    ref_tree = ast.parse(reference_source) if reference_source else None
    ref = _classes(ref_tree).get("Model") if ref_tree is not None else None
    notes: list[str] = []
    if "ModelNew" in classes:
        name, cls = "ModelNew", classes["ModelNew"]
    elif _alias(tree, "ModelNew") is not None:
        target = _alias(tree, "ModelNew")
        name, cls = "ModelNew", classes.get(target or "")
        notes.append(f"ModelNew is an alias of {target}")
    elif "Model" in classes and not (ref is not None and ast.dump(classes["Model"]) == ast.dump(ref)):
        name, cls = "Model", classes["Model"]
        notes.append("the candidate's class is named Model (no ModelNew)")
    else:
        why = (" (its class Model is the reference's own, unchanged)" if "Model" in classes else "")
        raise CandidateError(f"{filename}: no class ModelNew{why} (a candidate defines class ModelNew(nn.Module), "
                             "or binds ModelNew = YourClass, with constructor and forward accepting the "
                             "reference's Model calls)")
    if ref is not None:
        for method in ("forward", "__init__"):
            _check(cls, ref, method, name, filename, notes)
    return Entry(name, notes)
