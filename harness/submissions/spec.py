"""What a submission is: the typed contents of ``submissions/NAME/submission.toml``.

A submission is either a *method entry* (``[method] entry = "module:attr"``: a plugin file
inside the folder that defines an optimizer object) or an *evaluation-only entry*
(``[method] kernels = "kernels"``: a folder of precomputed ``ModelNew`` files, one
``<op>.py`` per op). Reading never runs plugin code; validation (``validate.py``) does the
checks and reports every problem with its field and the fix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

SPEC_FILE = "submission.toml"
NAME_RE = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
ENTRY_RE = re.compile(
    r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$"
)

# table -> allowed keys (anything else is reported with a "did you mean")
SCHEMA: dict[str, set[str]] = {
    "submission": {"name", "authors", "description", "paper", "code", "license", "contact"},
    "method": {"entry", "kernels", "variant", "options"},
    "llm": {"models", "notes"},
    "budget": {"evaluations", "llm_calls", "tokens", "wall_s"},
}


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a submission: where it is, what is wrong, how to fix it."""

    field: str  # e.g. "submission.name", "method.entry", "kernels/relu.py"
    message: str
    fix: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}\n    fix: {self.fix}"


@dataclass(frozen=True)
class SubmissionSpec:
    folder: Path
    name: str
    authors: tuple[str, ...]
    description: str
    paper: str = ""
    code: str = ""
    license: str = ""
    entry: str = ""  # "module:attr" (method entries)
    kernels: str = ""  # folder name relative to the submission (evaluation-only entries)
    variant: str = ""
    options: dict = field(default_factory=dict)  # passed to the plugin factory as keywords
    models: tuple[str, ...] = ()
    budget_evaluations: int | None = None
    budget_llm_calls: int | None = None
    budget_tokens: int | None = None
    budget_wall_s: float | None = None

    @property
    def kind(self) -> str:
        return "kernels" if self.kernels else "method"

    @property
    def kernels_dir(self) -> Path:
        return self.folder / self.kernels


def spec_from_dict(folder: Path, data: dict) -> SubmissionSpec:
    """Build a spec from parsed TOML, tolerating wrong types (validation reports those)."""
    sub = _table(data, "submission")
    meth = _table(data, "method")
    llm = _table(data, "llm")
    bud = _table(data, "budget")

    def s(d: dict, k: str) -> str:
        v = d.get(k, "")
        return v if isinstance(v, str) else ""

    def num(d: dict, k: str):
        v = d.get(k)
        return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    authors = sub.get("authors", ())
    models = llm.get("models", ())
    return SubmissionSpec(
        folder=folder,
        name=s(sub, "name"),
        authors=tuple(a for a in authors if isinstance(a, str))
        if isinstance(authors, list)
        else (),
        description=s(sub, "description"),
        paper=s(sub, "paper"),
        code=s(sub, "code"),
        license=s(sub, "license"),
        entry=s(meth, "entry"),
        kernels=s(meth, "kernels"),
        variant=s(meth, "variant"),
        options=meth.get("options", {}) if isinstance(meth.get("options", {}), dict) else {},
        models=tuple(m for m in models if isinstance(m, str)) if isinstance(models, list) else (),
        budget_evaluations=num(bud, "evaluations"),
        budget_llm_calls=num(bud, "llm_calls"),
        budget_tokens=num(bud, "tokens"),
        budget_wall_s=num(bud, "wall_s"),
    )


def _table(data: dict, key: str) -> dict:
    v = data.get(key, {})
    return v if isinstance(v, dict) else {}
