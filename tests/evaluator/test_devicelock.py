"""Two judgements in one process never hold a device at the same time (sandbox/devicelock.py):
the second waits after starting its workers, and that wait is recorded, not charged."""

from __future__ import annotations

import threading

from sandbox.verdict import Status
from tests.evaluator.conftest import python_candidate, run


def test_concurrent_judgements_take_the_device_one_at_a_time():
    src = python_candidate("        return a + b")
    out: list = []

    def one():
        out.append(run(src, allow_torch_ops=True, max_timing_s=1.0, feedback_timing_s=1.0))

    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [v.status for v in out] == [Status.VALID, Status.VALID], [(v.status, v.message) for v in out]
    held = sorted(v.durations_s["exclusive"] for v in out)
    waits = sorted(v.durations_s["queue"] for v in out)
    # both workers pairs start together; one judgement then waits about as long as the other holds
    assert waits[0] < 0.5 <= waits[1], (waits, held)
    assert waits[1] >= 0.5 * held[0], (waits, held)
