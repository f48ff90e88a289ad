"""Turn a submission folder into a runnable method (the hook the method registry calls).

``load_submission_method(path)`` validates the folder, then returns either the plugin's
method object (``[method] entry = "module:attr"``) or a ``KernelsMethod`` that proposes the
precomputed kernels of an evaluation-only entry, one proposal per file, through the same
``evaluate`` the runner gives every method (so the same budget and rules apply).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import re
import sys
from collections.abc import Iterator
from pathlib import Path

from harness.llm.base import ChatModel
from harness.methods.base import Budget, EvaluateFn, Proposal, TaskContext
from harness.submissions.spec import SubmissionSpec


class SubmissionError(ValueError):
    """A submission cannot be loaded; ``fix`` says what to do."""

    def __init__(
        self, message: str, fix: str = "run `harness submit validate <folder>` for every problem"
    ):
        super().__init__(message)
        self.fix = fix


def load_submission_method(path: str | Path, **options):
    """Return the method object a ``submissions/NAME/`` folder describes. ``options`` (from
    ``harness run -o KEY=VALUE``) override the folder's ``[method.options]``."""
    from harness.submissions.validate import validate_submission

    spec, problems = validate_submission(Path(path), import_plugin=False)
    if spec is None or problems:
        listing = "\n".join(f"  {p}" for p in problems)
        raise SubmissionError(
            f"submission {path} is not valid:\n{listing}",
            f"fix the fields above, then check with `harness submit validate {path}`",
        )
    if spec.kind == "kernels":
        if options:
            raise SubmissionError(
                f"{path} is an evaluation-only entry: it takes no method options "
                f"(got {sorted(options)})",
                "drop the -o/--option flags",
            )
        return KernelsMethod(spec)
    if options:
        spec = dataclasses.replace(spec, options={**spec.options, **options})
    return load_plugin_method(spec)


def load_plugin_method(spec: SubmissionSpec):
    """Import ``entry`` from the submission folder and build the method object."""
    module_name, attr = spec.entry.split(":")
    rel = Path(*module_name.split("."))
    file = spec.folder / rel.with_suffix(".py")
    if not file.is_file():
        file = spec.folder / rel / "__init__.py"
    unique = "_harness_submission_" + re.sub(r"\W", "_", f"{spec.folder.resolve()}_{module_name}")
    mod_spec = importlib.util.spec_from_file_location(unique, file)
    if mod_spec is None or mod_spec.loader is None:
        raise SubmissionError(f"cannot import {file}", "make it a plain Python file")
    module = importlib.util.module_from_spec(mod_spec)
    sys.modules[unique] = module
    folder = str(spec.folder.resolve())
    sys.path.insert(0, folder)  # sibling imports inside the plugin folder
    try:
        mod_spec.loader.exec_module(module)
    except Exception as e:  # the plugin's own code failed: report it, do not crash the CLI
        sys.modules.pop(unique, None)
        raise SubmissionError(
            f"importing {file.name} failed: {type(e).__name__}: {e}",
            f"run `python {file}` to see the full traceback and fix it",
        ) from e
    finally:
        if sys.path and sys.path[0] == folder:
            sys.path.pop(0)
    obj = getattr(module, attr, None)
    if obj is None:
        raise SubmissionError(
            f"{file.name} has no attribute {attr!r}", f"define {attr} in {file.name}"
        )
    try:
        if inspect.isclass(obj) or (callable(obj) and not hasattr(obj, "optimize")):
            obj = obj(**spec.options)
    except TypeError as e:
        raise SubmissionError(
            f"{attr}(**[method.options]) failed: {e}",
            "make the options in [method.options] match the constructor's keywords",
        ) from e
    if not callable(getattr(obj, "optimize", None)):
        raise SubmissionError(
            f"{spec.entry} gives {type(obj).__name__}, which has no optimize() method",
            "the entry must be a method class/object with optimize(task, llm, evaluate, budget)",
        )
    _set_default(obj, "name", spec.name)
    _set_default(obj, "paper", spec.paper or "submission")
    _set_default(obj, "variant", spec.variant or "submission")
    _set_default(obj, "default_budget", _budget(spec))
    if getattr(obj, "name", None) != spec.name:
        raise SubmissionError(
            f"{spec.entry}.name is {obj.name!r} but the submission is named {spec.name!r}",
            f'set name = "{spec.name}" on the method (results are stored under it)',
        )
    return obj


class KernelsMethod:
    """An evaluation-only entry: each precomputed kernel of an op is one proposal."""

    def __init__(self, spec: SubmissionSpec):
        self.spec = spec
        self.name = spec.name
        self.paper = spec.paper or "submission"
        self.variant = spec.variant or "evaluation-only"
        self.default_budget = _budget(spec)

    def kernel_files(self, op: str) -> list[Path]:
        kdir = self.spec.kernels_dir
        files = [kdir / f"{op}.py"] if (kdir / f"{op}.py").is_file() else []
        if (kdir / op).is_dir():
            files += sorted(p for p in (kdir / op).glob("*.py") if p.name != "__init__.py")
        return files

    def optimize(
        self, task: TaskContext, llm: ChatModel, evaluate: EvaluateFn, budget: Budget
    ) -> Iterator[Proposal]:
        for f in self.kernel_files(task.op)[: budget.evaluations]:
            p = Proposal(
                source=f.read_text(),
                name=f.stem,
                operator="precomputed",
                thought=f"precomputed kernel {f.relative_to(self.spec.folder)}",
            )
            evaluate(p)
            yield p


def _budget(spec: SubmissionSpec) -> int:
    """The entry's default evaluations per op (the registry's ``default_budget`` is an int)."""
    return int(spec.budget_evaluations or 45)


def _set_default(obj, attr: str, value) -> None:
    if getattr(obj, attr, None) in (None, ""):
        try:
            setattr(obj, attr, value)
        except AttributeError:
            pass
