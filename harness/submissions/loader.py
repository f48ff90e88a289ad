"""Turn a submission folder into a runnable method (the hook the method registry calls).

``load_submission_method(path)`` validates the folder, then returns either the plugin's
method object (``[method] entry = "module:attr"``) or a ``KernelsMethod`` that proposes the
precomputed kernels of an evaluation-only entry, one proposal per file, through the same
``evaluate`` the runner gives every method (so the same budget and rules apply).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

from harness.llm.base import ChatModel
from harness.methods.base import Budget, EvaluateFn, Proposal, TaskContext
from harness.submissions.plugin import SubmissionError, default_evaluations, load_plugin_method
from harness.submissions.spec import SubmissionSpec
from harness.submissions.validate import validate_submission

__all__ = ["KernelsMethod", "SubmissionError", "load_plugin_method", "load_submission_method"]


def load_submission_method(path: str | Path, **options):
    """Return the method object a ``submissions/NAME/`` folder describes. ``options`` (from
    ``harness run -o KEY=VALUE``) override the folder's ``[method.options]``."""
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


class KernelsMethod:
    """An evaluation-only entry: each precomputed kernel of an op is one proposal."""

    def __init__(self, spec: SubmissionSpec):
        self.spec = spec
        self.name = spec.name
        self.paper = spec.paper or "submission"
        self.variant = spec.variant or "evaluation-only"
        self.default_budget = default_evaluations(spec)

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
