"""Import a submission's plugin method (``[method] entry = "module:attr"``) from its folder
and build the method object; ``SubmissionError`` is how a submission that cannot be loaded is
reported. Used by the loader (``harness run``) and by validation (``import_plugin=True``).
"""

from __future__ import annotations

import importlib.util
import inspect
import re
import sys
from pathlib import Path

from harness.submissions.spec import SubmissionSpec


class SubmissionError(ValueError):
    """A submission cannot be loaded; ``fix`` says what to do."""

    def __init__(
        self, message: str, fix: str = "run `harness submit validate <folder>` for every problem"
    ):
        super().__init__(message)
        self.fix = fix


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
    _set_default(obj, "default_budget", default_evaluations(spec))
    if getattr(obj, "name", None) != spec.name:
        raise SubmissionError(
            f"{spec.entry}.name is {obj.name!r} but the submission is named {spec.name!r}",
            f'set name = "{spec.name}" on the method (results are stored under it)',
        )
    return obj


def default_evaluations(spec: SubmissionSpec) -> int:
    """The entry's default evaluations per op (the registry's ``default_budget`` is an int)."""
    return int(spec.budget_evaluations or 45)


def _set_default(obj, attr: str, value) -> None:
    if getattr(obj, attr, None) in (None, ""):
        try:
            setattr(obj, attr, value)
        except AttributeError:
            pass
