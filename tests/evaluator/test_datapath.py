"""Issue 14 item 1: inputs and outputs move between trusted processes through shared memory the
parent makes (sandbox/worker/arena.py). No output travels in a file, no input is made in the
candidate's process, and a candidate touching the arena outside its call still gets the right
verdict."""

from __future__ import annotations

from pathlib import Path

from sandbox import rules
from sandbox.verdict import Status
from tests.evaluator.conftest import python_candidate, run

BIG = Path(__file__).resolve().parent / "tasks" / "big_out.py"

BIG_CANDIDATE = '''
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * 2.0 + 1.0
'''


def _why(v) -> tuple:
    return v.status, v.rule, v.message, (v.logs or "")[-1500:]


def test_a_large_output_is_judged_with_a_file_size_limit_far_below_it():
    """64 MiB out, 1 MiB RLIMIT_FSIZE in both workers: a file could not carry it (before the
    arena this was ``rejected correctness.output_type: File too large``)."""
    v = run(BIG_CANDIDATE, task=BIG, allow_torch_ops=True, file_size_limit_bytes=2**20)
    assert v.status is Status.VALID, _why(v)
    assert v.evidence["arena"]["sizes"]["out"] >= 2 * 64 * 2**20


# The CPU generator's state when ModelNew was built (setup: right after the init seed) is the
# state at every later forward only if nothing drew random numbers in this process in between:
# before the arena, the worker ran get_inputs() (torch.randn) under manual_seed here before each
# call, and this candidate answered wrongly (checked against main's code: incorrect).
# (Wrapping torch.randn with a counter, as one would first try, trips the monitors' identity
# check of torch.randn: rejected timing.timer_patched either way, so it proves nothing.)
RNG_WITNESS = python_candidate(
    "        if not torch.equal(torch.default_generator.get_state(), self._kh_state):\n"
    "            return a - b  # someone made random inputs in this process\n"
    "        return a + b",
).replace("        super().__init__()\n",
          "        super().__init__()\n        self._kh_state = torch.default_generator.get_state()\n")


def test_no_input_generation_runs_in_the_candidates_process():
    v = run(RNG_WITNESS, allow_torch_ops=True)
    assert v.status is Status.VALID, _why(v)


_FIND_REGION = '''
_D = "/".join(["", "proc", "self", "f" + "d"])


def _region(name):
    """The arena region's fd the worker holds, found as a candidate would (its fd table)."""
    for fd in os.listdir(_D):
        try:
            if os.readlink(_D + "/" + fd).startswith(f"/memfd:kh-arena-{name}"):
                return int(fd)
        except OSError:
            pass
    raise RuntimeError(f"no {name} region")
'''


def test_zeroing_the_inputs_and_their_arena_copy_alike_is_caught():
    """The worker compares the call's tensors with the arena, so a candidate that zeroes both
    would pass that; the reference worker compares the arena with its own copy."""
    body = ("        out = a + b\n"
            "        import mmap\n"
            "        fd = _region('cand_in')\n"
            "        m = mmap.mmap(fd, os.fstat(fd).st_size)\n"
            "        n = a.numel() * a.element_size()\n"
            "        m[:n] = bytes(n)\n"
            "        m.close()\n"
            "        a.zero_()\n"
            "        return out")
    v = run(python_candidate(body, prelude=_FIND_REGION), allow_torch_ops=True)
    assert v.status is Status.INCORRECT and v.rule == rules.INPUTS_MODIFIED, _why(v)
    assert "input region" in v.message, _why(v)


def test_the_candidate_never_gets_the_references_input_region():
    body = "        _region('ref_in')\n        return a + b"
    v = run(python_candidate(body, prelude=_FIND_REGION), allow_torch_ops=True)
    assert v.status is Status.RUNTIME_ERROR and "no ref_in region" in (v.logs or ""), _why(v)


def test_a_thread_scribbling_on_the_output_region_is_not_valid():
    prelude = _FIND_REGION + '''
import threading, mmap
def _scribble():
    m = mmap.mmap(_region("out"), 0)
    while True:
        m[:4096] = b"\\xff" * 4096
        time.sleep(0.0005)
'''
    body = ("        if not getattr(ModelNew, '_started', False):\n"
            "            ModelNew._started = True\n"
            "            threading.Thread(target=_scribble, daemon=True).start()\n"
            "        return a + b")
    v = run(python_candidate(body, prelude=prelude), allow_torch_ops=True)
    # the scribbled output fails its comparison, or the thread is seen: never valid
    assert v.status is not Status.VALID, _why(v)
    assert v.rule in (rules.THREADS, rules.TOLERANCE, rules.NONFINITE), _why(v)
