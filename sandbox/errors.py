"""The evaluator's exceptions, in a leaf module so every part of the judging path can raise
them without importing the entry point (``sandbox/evaluate.py``) or the judge.

* ``CandidateError`` (public, re-exported by ``sandbox.evaluate``): the candidate file itself
  is unusable input; never recorded as a kernel verdict.
* ``Reject`` and ``ReferenceFailed`` (internal to a judgement): stop the check cascade with a
  verdict, or hand the decision about a failed reference worker back to the judge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sandbox.verdict import Status


class CandidateError(ValueError):
    """The candidate file itself is unusable; the message names the file, problem and fix."""


class ReferenceFailed(Exception):
    """The reference worker failed or died during a judgement. Whether the task is broken or the
    candidate interfered is decided by running the reference alone (sandbox/judge.py)."""


class Reject(Exception):
    """Stops the cascade with a verdict."""

    def __init__(self, status: Status, rule: str | None, message: str, **evidence: Any) -> None:
        super().__init__(message)
        self.status, self.rule, self.message, self.evidence = status, rule, message, evidence
