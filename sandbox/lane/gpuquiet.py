"""Is the GPU quiet? Asked of a judgement's reference worker (trusted, idle) after the parent
stopped the candidate's processes to give the device to another judgement (sandbox/lane/firstcall.py).

A stopped process cannot launch anything more, but a kernel it launched before goes on running:
only ending its CUDA context ends it. Contexts of different processes share the GPU by time
slices of a millisecond or more. A single short kernel of ours fits inside one of our slices, so
its event-timed length says nothing (measured on an H200, 2026-11-26: a 100 us probe read quiet
while another context's kernel spun; docs/records/data/session12-2026-11-26/call4-lane_gpu.log). ``probe``
therefore times a CHAIN of spins, ``CHAIN_US`` long in all, between two events on our stream:
the chain spans several slices, and while another context runs, the other context's slices
fall inside it and stretch it (about 2x with one other busy context). Quiet once a chain takes
at most ``QUIET_FACTOR`` x its length (+ ``SLACK_US``), tried for up to ``wait_s``: what is left
of a stopped candidate's last call drains within that.
"""

from __future__ import annotations

import time
from typing import Any

SPIN_US, CHAIN = 250.0, 40  # a 10 ms chain: several time slices
CHAIN_US = SPIN_US * CHAIN
QUIET_FACTOR, SLACK_US = 1.35, 500.0


def probe(torch: Any, spin_cycles_per_us: float, wait_s: float = 2.0) -> dict[str, Any]:
    """{"quiet": bool, "chain_us": the last chain's length, "expected_us", "rounds"}."""
    if spin_cycles_per_us <= 0 or not torch.cuda.is_available():
        return {"quiet": False, "why": "no spin rate (the GPU warm-up did not run)"}
    cycles = int(SPIN_US * spin_cycles_per_us)
    limit = QUIET_FACTOR * CHAIN_US + SLACK_US
    end = time.monotonic() + wait_s
    rounds = 0
    took = float("inf")
    while True:
        rounds += 1
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(CHAIN):
            torch.cuda._sleep(cycles)
        e.record()
        e.synchronize()
        took = s.elapsed_time(e) * 1e3
        if took <= limit or time.monotonic() >= end:
            break
        time.sleep(0.05)
    return {"quiet": took <= limit, "chain_us": round(took, 1), "expected_us": CHAIN_US, "rounds": rounds}
