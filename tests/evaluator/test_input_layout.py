"""Each call's inputs are written into tensors the worker allocates ahead (sandbox/worker/main.py:
prepare/go, the timing lead of sandbox/timing/measure.py). The candidate must still see exactly the
sizes and strides ``get_inputs`` made (a transposed view stays transposed, an expanded view
stays expanded), the values must be this call's, and modifying them must still be caught."""

from __future__ import annotations

from pathlib import Path

from sandbox import rules
from sandbox.verdict import Status
from tests.evaluator.conftest import python_candidate, run

VIEWS = Path(__file__).resolve().parent / "tasks" / "add_views.py"

LAYOUT_CHECK = """\
        n = a.shape[0]
        if a.stride() != (1, n) or b.stride() != (0, 1):
            raise RuntimeError(f"layout changed: a {a.stride()}, b {b.stride()}")
        return a + b"""


def test_candidate_sees_the_layouts_get_inputs_made():
    v = run(python_candidate(LAYOUT_CHECK), task=VIEWS, allow_torch_ops=True)
    assert v.status is Status.VALID, (v.status, v.message, v.logs[-2000:] if v.logs else "")


def test_a_layout_the_reference_does_not_see_would_fail():
    """The check above can fail: the same candidate on the plain add task (contiguous inputs)."""
    v = run(python_candidate(LAYOUT_CHECK), allow_torch_ops=True)
    assert v.status is Status.RUNTIME_ERROR and "layout changed" in (v.logs or ""), (v.status, v.message)


def test_writing_into_a_filled_input_is_caught():
    v = run(python_candidate("        out = a + b\n        a.zero_()\n        return out"),
            task=VIEWS, allow_torch_ops=True)
    assert v.status is Status.INCORRECT and v.rule == rules.INPUTS_MODIFIED, (v.status, v.rule, v.message)


def test_writing_into_an_expanded_input_is_caught():
    """``b`` is an expanded view (overlapping elements): it is passed as is, with a copy kept."""
    v = run(python_candidate("        out = a + b\n        b.as_strided((b.shape[1],), (1,)).mul_(2)\n"
                             "        return out"), task=VIEWS, allow_torch_ops=True)
    assert v.status is Status.INCORRECT and v.rule == rules.INPUTS_MODIFIED, (v.status, v.rule, v.message)
