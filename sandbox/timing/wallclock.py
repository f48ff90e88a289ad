"""The cross-checks of a GPU call's reported time (rule ``timing.wall_clock``).

A candidate can hide device time from its own start/end events by leaving work running past
the end event (a side stream it never joins, kernels a thread queues) or by forging the
reported time. Three checks, each comparing the candidate with a control (sandbox/timing/control.py:
one spin kernel, the worker's snapshot of the candidate's last outputs as its outputs) run in the
candidate's own worker (a control that cannot be set up is ``rejected``: no wider fallback), a block
of control calls after each block of candidate calls, so that both sides share the process,
its CPU placement and the machine's load:

* **the tail** (floor ``max(TAIL_FLOOR_US, TAIL_FRACTION x device time)``): right after the end
  event, before any host step of its own, the worker syncs the whole device and records a
  *settled* event; settled minus end is the sync's own latency plus whatever the call left
  running. GPU timestamps, no channel and no host work in between. The settled event is made
  once, before any window: torch makes an event's CUDA event at its first record, a driver call
  that waits on other processes' context and allocation calls.
  (Until 2026-11-26 the event was recorded after the worker's host steps: releasing the previous
  call's objects, a young-generation collection, the output's unpacking. On an H200 those steps
  took 30-110 us, varying from worker to worker, so 30 us of hidden side-stream work, cheat #34,
  was inside them and escaped in 3 of 5 judgements. Until 2026-11-28 a new event was made after
  each sync: the control's tail was 20-130 us and drifted within a judgement, and #34 escaped 1
  judgement in 5 alone on an H200. A tail on the host clock, from the last look that saw the end
  event pending to the sync's return, was tried that day and dropped: the sync's own fixed cost,
  about 15-20 us, overlaps the hidden work, so #34 showed only 8-16 us of its 30.)
* **the tail after the steps** (same floor): how long a second device-wide sync, right after
  those host steps, waits (the worker's clock around the sync alone). It catches work the steps
  set off (a finalizer's or a collection callback's launch) that outlasts them. The steps' own
  time is left out: it differs between the candidate's calls and the control's by tens of us
  (an H200 judged honest kernels `rejected` when this measure ran from the end event).
* **the parent's clock** (floor ``max(PARENT_FLOOR_US, PARENT_FRACTION x device time)``): the
  parent's round trip minus the GPU time the worker reported from before its timing lead to the
  end event. What is left is the channel, the worker's host code and the sync; on the H100
  (2026-11-24) its per-call spread is 50-150 us, so only gross forgeries show here (a timer
  that under-reports by more than the floor). It is the check that does not trust the events.

Each check rejects when the low quantile of the candidate's samples exceeds the control's by
more than ``THRESHOLD x floor``: work hidden at or above the floor is caught, work under half
the floor is never flagged. A low quantile: scheduling noise only ever adds to a sample, hidden
work adds to every call's. The two tails also reject when the median of the call-by-call
differences (the i-th candidate sample less the i-th control's: the samples are taken in
alternating blocks, then in the confirmation round call by call) is over the same threshold. It
also sees work hidden in only some calls: the low quantile moves only when more than 90% of the
candidate's calls hide it, the paired median once more than half do (and fewer than half cannot
move the median time the speedup is computed from). A drift of the worker's host latency within
a judgement moves the control's low quantile without moving the pairs: on an H200 (2026-11-28)
one #34 judgement in four had a confirmation round whose control tails all sat at 71-96 us (21
us in the others), a quantile excess of 13.5 us and a paired median of 18.8 us. Replayed on 314
honest GPU verdicts of sessions 28-29 (harness/bench/tools/wallclock_replay.py) neither
statistic flagged any (largest 0.61 x the threshold), and #34's paired median was 18-30 us in
all 11 of its recorded judgements. The parent clock keeps the quantile alone (its honest paired
medians reached 0.75 x its threshold). A check that fires is confirmed before it rejects: the
timing phase runs ``CONFIRM_CALLS`` more candidate/control pairs, alternating call by call, and
only those samples decide (on the H100, 1 honest relu run in 16 had a first-round tail excess of
46 us and a parent-clock excess of 159 us; hidden work fires in every round).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TAIL_FLOOR_US = 20.0
TAIL_FRACTION = 0.10
PARENT_FLOOR_US = 200.0
PARENT_FRACTION = 0.5
THRESHOLD = 0.75
QUANTILE = 0.1
CONTROL_MAX_SPIN_US = 500.0
MIN_CONTROL = 9
STEPS_TAIL = "tail after the worker's steps"
CONFIRM_CALLS = 20  # a check that fires is re-run on this many fresh pairs, call by call; they decide


@dataclass
class GapCheck:
    what: str  # "tail", STEPS_TAIL or "parent clock"
    candidate_us: float  # the QUANTILE of the candidate's samples
    control_us: float
    excess_us: float  # candidate - control, per call
    floor_us: float  # hidden time at or above this is caught
    threshold_us: float  # the excess that rejects
    n_control: int
    paired_us: float | None = None  # the tails only: the median of call-by-call differences

    @property
    def hidden(self) -> bool:
        return self.excess_us > self.threshold_us or (self.paired_us is not None and self.paired_us > self.threshold_us)

    @property
    def shown_us(self) -> float:
        """The larger of the two excesses: the one a rejection names."""
        return max(self.excess_us, self.paired_us if self.paired_us is not None else self.excess_us)

    def evidence(self) -> dict[str, float | int | None]:
        return {"candidate": round(self.candidate_us, 2), "control": round(self.control_us, 2),
                "excess": round(self.excess_us, 2), "floor": round(self.floor_us, 2),
                "threshold": round(self.threshold_us, 2), "quantile": QUANTILE, "n_control": self.n_control,
                "paired_median": None if self.paired_us is None else round(self.paired_us, 2)}

    def message(self) -> str:
        if self.what == STEPS_TAIL:
            return (f"the device stayed busy {self.shown_us:.0f} us longer after the worker's host steps that follow "
                    f"each candidate call than after a control call's (threshold {self.threshold_us:.0f} us; floor "
                    f"{self.floor_us:.0f} us): work set off after the end event (a finalizer's launch?) or left "
                    "running past it")
        if self.what == "tail":
            return (f"the device stayed busy {self.shown_us:.0f} us longer after each candidate call's end event "
                    f"than after a control call in the same worker (threshold {self.threshold_us:.0f} us; floor "
                    f"{self.floor_us:.0f} us = max({TAIL_FLOOR_US:g} us, {TAIL_FRACTION:.0%} of its device time)): "
                    "work runs past the end event (an unjoined side stream, a thread's launches?)")
        return (f"each candidate call took {self.excess_us:.0f} us longer on the parent's clock, beyond the GPU "
                f"time it reported, than a control call in the same worker (threshold {self.threshold_us:.0f} us; "
                f"floor {self.floor_us:.0f} us = max({PARENT_FLOOR_US:g} us, {PARENT_FRACTION:.0%} of its device "
                "time)): the reported time leaves work out (a forged or patched timer?)")


def floor_us(device_us: float, what: str = "tail") -> float:
    if what in ("tail", STEPS_TAIL):
        return max(TAIL_FLOOR_US, TAIL_FRACTION * device_us)
    return max(PARENT_FLOOR_US, PARENT_FRACTION * device_us)


def control_spin_us(device_us: float) -> float:
    """The control's spin: the candidate's device time, capped (its length enters neither
    sample; a similar length keeps the GPU's clocks alike)."""
    return min(max(device_us, 5.0), CONTROL_MAX_SPIN_US)


def check(candidate: list[float], control: list[float], device_us: float, what: str = "tail") -> GapCheck | None:
    """The decision on both samples (us); None when the control has too few calls."""
    if len(control) < MIN_CONTROL or not candidate:
        return None
    c = float(np.quantile(candidate, QUANTILE))
    k = float(np.quantile(control, QUANTILE))
    f = floor_us(device_us, what)
    paired = None
    if what in ("tail", STEPS_TAIL):  # the samples alternate (blocks, then call by call): pair them in order
        m = min(len(candidate), len(control))
        paired = float(np.median(np.asarray(candidate[:m]) - np.asarray(control[:m])))
    return GapCheck(what, c, k, c - k, f, THRESHOLD * f, len(control), paired)
