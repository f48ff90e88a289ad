"""Outside method entries: ``submissions/NAME/submission.toml`` (spec, validation, loading, scaffold)."""

from harness.submissions.loader import KernelsMethod, SubmissionError, load_submission_method
from harness.submissions.spec import Problem, SubmissionSpec
from harness.submissions.validate import validate_submission

__all__ = [
    "KernelsMethod",
    "Problem",
    "SubmissionError",
    "SubmissionSpec",
    "load_submission_method",
    "validate_submission",
]
