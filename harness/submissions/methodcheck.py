"""The [method] table of a submission (harness/submissions/validate.py): an ``entry`` (a
plugin file that must parse, define the named attribute and, when asked, import) or a
``kernels`` folder of ``<op>.py`` files named after ops of the reference suite."""

from __future__ import annotations

import ast
import difflib
from pathlib import Path

from harness.submissions.spec import ENTRY_RE, Problem, SubmissionSpec


def _check_method(folder: Path, meth, spec: SubmissionSpec, import_plugin: bool) -> list[Problem]:
    if not isinstance(meth, dict):
        return [
            Problem(
                "method",
                "the [method] table is missing",
                'add [method] with entry = "plugin:MyMethod" or kernels = "kernels"',
            )
        ]
    entry, kernels = meth.get("entry"), meth.get("kernels")
    if entry and kernels:
        return [
            Problem(
                "method",
                "has both entry and kernels",
                "keep entry (a method that searches) or kernels (precomputed kernels), not both",
            )
        ]
    if not entry and not kernels:
        return [
            Problem(
                "method",
                "has neither entry nor kernels",
                'add entry = "plugin:MyMethod" (a plugin file) or kernels = "kernels" (a folder of <op>.py)',
            )
        ]
    if "options" in meth and not isinstance(meth["options"], dict):
        return [
            Problem(
                "method.options",
                "must be a table",
                "write [method.options] with keyword arguments for your method's factory",
            )
        ]
    if entry:
        return _check_entry(folder, entry, spec, import_plugin)
    return _check_kernels(folder, kernels)


def _check_entry(folder: Path, entry, spec: SubmissionSpec, import_plugin: bool) -> list[Problem]:
    if not isinstance(entry, str) or not ENTRY_RE.match(entry):
        return [
            Problem(
                "method.entry",
                f"{entry!r} is not of the form module:attr",
                'write entry = "plugin:MyMethod" for class MyMethod in plugin.py next to submission.toml',
            )
        ]
    module, attr = entry.split(":")
    rel = Path(*module.split("."))
    file = folder / rel.with_suffix(".py")
    if not file.is_file():
        file = folder / rel / "__init__.py"
    if not file.is_file():
        return [
            Problem(
                "method.entry",
                f"module {module!r} not found: no {rel.with_suffix('.py')} in {folder}",
                f"put the plugin file at {folder / rel.with_suffix('.py')} or fix the module name",
            )
        ]
    try:
        tree = ast.parse(file.read_text(), filename=str(file))
    except SyntaxError as e:
        return [
            Problem(
                str(file.relative_to(folder)),
                f"line {e.lineno}: does not parse: {e.msg}",
                "fix the syntax error",
            )
        ]
    top = _top_level_names(tree)
    if attr not in top:
        return [
            Problem(
                "method.entry",
                f"{file.name} defines no top-level {attr!r}",
                _suggest(attr, top, f"define {attr} at the top level of {file.name}"),
            )
        ]
    if not import_plugin:
        return []
    from harness.submissions.plugin import SubmissionError, load_plugin_method

    try:
        load_plugin_method(spec)
    except SubmissionError as e:
        return [Problem("method.entry", str(e), e.fix)]
    return []


def _check_kernels(folder: Path, kernels) -> list[Problem]:
    if not isinstance(kernels, str) or not kernels:
        return [Problem("method.kernels", "must be a folder name", 'write kernels = "kernels"')]
    kdir = folder / kernels
    if not kdir.is_dir():
        return [
            Problem(
                "method.kernels",
                f"no folder {kdir}",
                f"create {kdir}/ with one <op>.py (a ModelNew source) per op",
            )
        ]
    files = sorted(p for p in kdir.rglob("*.py") if p.name != "__init__.py")
    if not files:
        return [
            Problem(
                "method.kernels",
                f"{kdir} holds no .py files",
                "add <op>.py files, each defining class ModelNew (e.g. relu.py)",
            )
        ]
    ops = known_ops()
    out = []
    for f in files:
        where = str(f.relative_to(folder))
        op = (
            f.stem if f.parent == kdir else f.parent.name
        )  # kernels/<op>.py or kernels/<op>/<variant>.py
        if ops is not None and op not in ops:
            out.append(
                Problem(
                    where,
                    f"{op!r} is not an op of the suite",
                    _suggest(op, ops, "name the file after an op (`harness suite list`)"),
                )
            )
        try:
            tree = ast.parse(f.read_text(), filename=str(f))
        except SyntaxError as e:
            out.append(
                Problem(where, f"line {e.lineno}: does not parse: {e.msg}", "fix the syntax error")
            )
            continue
        if "ModelNew" not in {n.name for n in tree.body if isinstance(n, ast.ClassDef)}:
            out.append(
                Problem(
                    where,
                    "defines no class ModelNew",
                    "each kernel file defines class ModelNew(nn.Module) with Model's signature",
                )
            )
    return out


def _top_level_names(tree: ast.Module) -> list[str]:
    names = []
    for n in tree.body:
        if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.append(n.name)
        elif isinstance(n, ast.Assign):
            names += [t.id for t in n.targets if isinstance(t, ast.Name)]
        elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
            names.append(n.target.id)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            names += [(a.asname or a.name).split(".")[0] for a in n.names]
    return names


def known_ops() -> set[str] | None:
    """Op names of the reference suite (file stems under reference_ops/), None if not found."""
    from harness.suite.suites import ops_root

    try:
        root = ops_root()
    except ImportError:
        return None
    ops = {p.stem for p in root.rglob("*.py") if p.name != "__init__.py" and not p.name.startswith("_")}
    return ops or None


def _suggest(word: str, choices, fallback: str) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f"did you mean {close[0]!r}?" if close else fallback
