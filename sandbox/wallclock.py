"""The parent-clock cross-check on a GPU (EVAL_RULES T-rules; rule ``timing.wall_clock``).

Each timed call's *gap* is the parent's round trip minus the GPU time the worker reported from
before its timing lead to the end event (the lead, the input copies and the flush, then the
call). What is left is the channel, the worker's own host code and the device sync; work a
candidate leaves running past its end event (a side stream it never joins, kernels a thread
queues) adds to it while the events do not see it. (The lead's spin alone is ~800 us on the
H100, and its length in time moves with the SM clock by tens of us: it is left out.)

The gap is compared with the gap of a control (sandbox/control.py: one spin kernel, outputs of
the candidate's shapes) run in the candidate's own worker, a block of control calls after each
block of candidate calls. Gaps
from two processes differ by 50-150 us on the H100 from run to run (process placement, CPU
clocks; 2026-11-24: the honest CUDA relu had gaps of 1287-1572 us, and one run in eight was
rejected by the earlier candidate-versus-eager comparison). One process's calls, interleaved,
share all of that.

Stated detection floor: ``floor = max(FLOOR_US, FRACTION x the candidate's median device
time)``. Work hidden past the end event of at least the floor is rejected; the threshold is
``THRESHOLD x floor``, so hidden work below half the floor is never flagged (the margins on
both sides absorb the noise of the statistic). The statistic is a low quantile of each
callable's gaps: scheduling noise only ever adds to a gap, hidden work adds to every call's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FLOOR_US = 20.0
FRACTION = 0.10
THRESHOLD = 0.75
QUANTILE = 0.1
CONTROL_MAX_SPIN_US = 500.0
MIN_CONTROL = 9


@dataclass
class GapCheck:
    candidate_us: float  # the QUANTILE of the candidate's gaps
    control_us: float
    excess_us: float  # candidate - control: work left past the end event, per call
    floor_us: float  # hidden work at or above this is caught
    threshold_us: float  # the excess that rejects
    n_control: int

    @property
    def hidden(self) -> bool:
        return self.excess_us > self.threshold_us

    def evidence(self) -> dict[str, float | int]:
        return {"candidate": round(self.candidate_us, 2), "control": round(self.control_us, 2),
                "excess": round(self.excess_us, 2), "floor": round(self.floor_us, 2),
                "threshold": round(self.threshold_us, 2), "quantile": QUANTILE, "n_control": self.n_control}

    def message(self) -> str:
        return (f"each candidate call took {self.excess_us:.0f} us longer on the parent's clock than a control "
                f"call run beside it in the same worker (threshold {self.threshold_us:.0f} us; floor "
                f"{self.floor_us:.0f} us = max({FLOOR_US:g} us, {FRACTION:.0%} of its device time)): work runs "
                "past the candidate's end event (an unjoined side stream, a thread's launches, a patched timer?)")


def floor_us(device_us: float) -> float:
    return max(FLOOR_US, FRACTION * device_us)


def control_spin_us(device_us: float) -> float:
    """The control's spin: the candidate's device time, capped (its length does not enter the
    gap; a similar length keeps the GPU's clocks alike)."""
    return min(max(device_us, 5.0), CONTROL_MAX_SPIN_US)


def check(candidate_gaps: list[float], control_gaps: list[float], device_us: float) -> GapCheck | None:
    """The decision on both gap samples (us); None when the control has too few calls."""
    if len(control_gaps) < MIN_CONTROL or not candidate_gaps:
        return None
    cg = float(np.quantile(candidate_gaps, QUANTILE))
    kg = float(np.quantile(control_gaps, QUANTILE))
    f = floor_us(device_us)
    return GapCheck(cg, kg, cg - kg, f, THRESHOLD * f, len(control_gaps))
