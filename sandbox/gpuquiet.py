"""Is the GPU quiet? Asked of a judgement's reference worker (trusted, idle) after the parent
stopped the candidate's processes to give the device to another judgement (sandbox/firstcall.py).

A stopped process cannot launch anything more, but a kernel it launched before goes on running:
only ending its CUDA context ends it. Contexts of different processes share the GPU by time
slices, so a short kernel of ours, timed by events on our own stream, takes far longer than it
should while another context's kernel runs. ``probe`` times a spin of ``PROBE_US`` several times
for up to ``wait_s`` and answers quiet once the median is within ``QUIET_FACTOR`` x its expected
length (+ ``SLACK_US``): what is left of a stopped candidate's last call drains within that.
"""

from __future__ import annotations

import time
from typing import Any

PROBE_US = 100.0
QUIET_FACTOR, SLACK_US = 3.0, 300.0
ROUNDS = 5


def probe(torch: Any, spin_cycles_per_us: float, wait_s: float = 2.0) -> dict[str, Any]:
    """{"quiet": bool, "median_us": the last round's median, "expected_us", "rounds"}."""
    if spin_cycles_per_us <= 0 or not torch.cuda.is_available():
        return {"quiet": False, "why": "no spin rate (the GPU warm-up did not run)"}
    cycles = int(PROBE_US * spin_cycles_per_us)
    limit = QUIET_FACTOR * PROBE_US + SLACK_US
    end = time.monotonic() + wait_s
    rounds = 0
    med = float("inf")
    while True:
        rounds += 1
        got = []
        for _ in range(ROUNDS):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            torch.cuda._sleep(cycles)
            e.record()
            e.synchronize()
            got.append(s.elapsed_time(e) * 1e3)
        got.sort()
        med = got[len(got) // 2]
        if med <= limit or time.monotonic() >= end:
            break
        time.sleep(0.05)
    return {"quiet": med <= limit, "median_us": round(med, 1), "expected_us": PROBE_US, "rounds": rounds}
