"""Check a submission folder and report EVERY problem with its field and the fix.

``validate_submission(folder)`` returns ``(spec, problems)``; ``spec`` is None only when
``submission.toml`` is missing or does not parse. Static checks come first (fields, types,
links, files, that plugin/kernel files parse and define what they must); with
``import_plugin=True`` the method entry is also imported and instantiated, so a plugin that
crashes on import is reported here and not halfway through a run.
"""

from __future__ import annotations

import ast
import difflib
import tomllib
from pathlib import Path

from harness.submissions.spec import (
    ENTRY_RE,
    NAME_RE,
    SCHEMA,
    SPEC_FILE,
    Problem,
    SubmissionSpec,
    spec_from_dict,
)


def validate_submission(
    folder: str | Path, *, import_plugin: bool = True
) -> tuple[SubmissionSpec | None, list[Problem]]:
    folder = Path(folder)
    if not folder.is_dir():
        return None, [
            Problem(
                str(folder),
                "no such submission folder",
                f"create it with `harness submit new {folder.name}`",
            )
        ]
    path = folder / SPEC_FILE
    if not path.is_file():
        return None, [
            Problem(
                SPEC_FILE,
                f"{path} is missing",
                f"run `harness submit new {folder.name}` for a template, or write {SPEC_FILE}",
            )
        ]
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        return None, [
            Problem(
                SPEC_FILE,
                f"does not parse as TOML: {e}",
                "fix the syntax at that line (strings need quotes, lists use [...])",
            )
        ]
    problems: list[Problem] = []
    problems += _unknown_keys(data)
    spec = spec_from_dict(folder, data)
    problems += _check_submission(folder, data.get("submission"))
    problems += _check_method(folder, data.get("method"), spec, import_plugin)
    problems += _check_llm(data.get("llm"))
    problems += _check_budget(data.get("budget"))
    return spec, problems


# -- tables ---------------------------------------------------------------------------


def _unknown_keys(data: dict) -> list[Problem]:
    out = []
    for table, value in data.items():
        if table not in SCHEMA:
            out.append(Problem(table, "unknown table", _suggest(table, SCHEMA, "remove it")))
            continue
        if not isinstance(value, dict):
            out.append(
                Problem(table, "must be a table", f"write it as [{table}] with keys below it")
            )
            continue
        for key in value:
            if key not in SCHEMA[table]:
                out.append(
                    Problem(
                        f"{table}.{key}",
                        "unknown key",
                        _suggest(
                            key,
                            SCHEMA[table],
                            f"remove it (allowed: {', '.join(sorted(SCHEMA[table]))})",
                        ),
                    )
                )
    return out


def _check_submission(folder: Path, sub) -> list[Problem]:
    if not isinstance(sub, dict):
        return [
            Problem(
                "submission",
                "the [submission] table is missing",
                "add [submission] with name, authors and description",
            )
        ]
    out = []
    name = sub.get("name")
    if not isinstance(name, str) or not name:
        out.append(Problem("submission.name", "missing", f'add name = "{folder.name}"'))
    elif not NAME_RE.match(name):
        out.append(
            Problem(
                "submission.name",
                f"{name!r} is not a valid method name",
                "use lowercase letters, digits and single dashes, starting with a letter",
            )
        )
    else:
        if name != folder.name:
            out.append(
                Problem(
                    "submission.name",
                    f"{name!r} differs from the folder name {folder.name!r}",
                    f'rename the folder to submissions/{name}/ or set name = "{folder.name}"',
                )
            )
        if name in _builtin_names():
            out.append(
                Problem(
                    "submission.name",
                    f"{name!r} is a built-in method",
                    "pick another name (see `harness methods list`)",
                )
            )
    authors = sub.get("authors")
    if (
        not isinstance(authors, list)
        or not authors
        or not all(isinstance(a, str) and a.strip() for a in authors)
    ):
        out.append(
            Problem(
                "submission.authors",
                "must be a non-empty list of names",
                'write authors = ["Ada Lovelace <ada@example.org>"]',
            )
        )
    desc = sub.get("description")
    if not isinstance(desc, str) or not desc.strip():
        out.append(
            Problem(
                "submission.description",
                "missing or empty",
                'add description = "one or two sentences: what the method does differently"',
            )
        )
    elif len(desc) > 1000:
        out.append(
            Problem(
                "submission.description",
                f"{len(desc)} characters (max 1000)",
                "shorten it; link the paper for details",
            )
        )
    for key in ("paper", "code"):
        val = sub.get(key)
        if val is None or val == "":
            continue
        if not isinstance(val, str) or not val.startswith(("https://", "http://")):
            out.append(
                Problem(
                    f"submission.{key}",
                    f"{val!r} is not a link",
                    f'write {key} = "https://..." or leave it out',
                )
            )
    return out


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
    from harness.submissions.loader import SubmissionError, load_plugin_method

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


def _check_llm(llm) -> list[Problem]:
    fix = 'add [llm] with models = ["gpt-4.1"] (the model(s) the entry was built or run with)'
    if not isinstance(llm, dict):
        return [Problem("llm", "the [llm] table is missing", fix)]
    models = llm.get("models")
    if (
        not isinstance(models, list)
        or not models
        or not all(isinstance(m, str) and m for m in models)
    ):
        return [Problem("llm.models", "must be a non-empty list of model names", fix)]
    return []


def _check_budget(bud) -> list[Problem]:
    if not isinstance(bud, dict):
        return [
            Problem(
                "budget",
                "the [budget] table is missing",
                "add [budget] with evaluations = 45 (evaluated trials per op)",
            )
        ]
    out = []
    ev = bud.get("evaluations")
    if not isinstance(ev, int) or isinstance(ev, bool) or ev < 1:
        out.append(
            Problem(
                "budget.evaluations",
                f"{ev!r} is not a positive integer",
                "write evaluations = 45 (the paper setting) or the number your method needs",
            )
        )
    for key in ("llm_calls", "tokens", "wall_s"):
        v = bud.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0):
            out.append(
                Problem(
                    f"budget.{key}",
                    f"{v!r} is not a positive number",
                    f"write a positive {key} or leave it out",
                )
            )
    return out


# -- helpers ----------------------------------------------------------------------------


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


def _suggest(word: str, choices, fallback: str) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f"did you mean {close[0]!r}?" if close else fallback


def _builtin_names() -> set[str]:
    try:
        from harness.methods import registry
    except ImportError:
        return set()
    names: set[str] = set()
    for attr in ("BUILTINS", "ALIASES"):
        table = getattr(registry, attr, None)
        if isinstance(table, dict):
            names |= set(table)
    return names


def known_ops() -> set[str] | None:
    """Op names of the reference suite (file stems under reference_ops/), None if not found."""
    try:
        import reference_ops
    except ImportError:
        return None
    roots = [Path(p) for p in getattr(reference_ops, "__path__", [])]
    ops = {
        p.stem
        for r in roots
        for p in r.rglob("*.py")
        if p.name != "__init__.py" and not p.name.startswith("_")
    }
    return ops or None
