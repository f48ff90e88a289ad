"""Check a submission folder and report EVERY problem with its field and the fix.

``validate_submission(folder)`` returns ``(spec, problems)``; ``spec`` is None only when
``submission.toml`` is missing or does not parse. Static checks come first (fields, types,
links, files, that plugin/kernel files parse and define what they must); with
``import_plugin=True`` the method entry is also imported and instantiated, so a plugin that
crashes on import is reported here and not halfway through a run.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from harness.submissions.methodcheck import _check_method, _suggest, known_ops  # noqa: F401 - known_ops is public here
from harness.submissions.scaffold import PLACEHOLDER_AUTHOR, PLACEHOLDER_DESCRIPTIONS
from harness.submissions.spec import (
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
    if isinstance(authors, list) and PLACEHOLDER_AUTHOR in authors:
        out.append(
            Problem(
                "submission.authors",
                f"still the template's placeholder {PLACEHOLDER_AUTHOR!r}",
                'write the real names: authors = ["Ada Lovelace <ada@example.org>"]',
            )
        )
    desc = sub.get("description")
    if isinstance(desc, str) and desc.strip() in PLACEHOLDER_DESCRIPTIONS:
        out.append(
            Problem(
                "submission.description",
                "still the template's placeholder text",
                "say in one or two sentences what your method does differently",
            )
        )
    elif not isinstance(desc, str) or not desc.strip():
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


def _builtin_names() -> set[str]:
    try:
        from harness.methods import registry
    except ImportError:
        return set()
    return set(registry.BUILTINS.names(aliases=True))
