"""The control callable of the parent-clock cross-check (sandbox/timing/wallclock.py).

Run in the candidate's own worker, interleaved with the candidate's timed calls, through the
same request path (prepare, lead, input copies, flush, events, sync, output snapshot): one
spin kernel on the timing stream, and as its outputs the worker's snapshot of the candidate's
last outputs (same sizes, strides and dtypes; nothing allocated, so a candidate that fills the
device's memory cannot stop the control from being set up). Its work ends at its end event by
construction, so the difference between the candidate's per-call overhead on the parent's clock
and the control's is the work the candidate left running past its own end event, measured in
one process under the same load.
"""

from __future__ import annotations

from typing import Any


class Control:
    """``control(*inputs)``: spin ``cycles`` on the current stream, return ``like`` (the worker's
    own tensors: the candidate never holds them)."""

    def __init__(self, torch: Any, spin: Any, cycles: int, like: list[Any]) -> None:
        self._spin = spin
        self._cycles = max(int(cycles), 1)
        self._outs = list(like or [])

    def __call__(self, *inputs: Any) -> Any:
        self._spin(self._cycles)
        if len(self._outs) == 1:
            return self._outs[0]
        return tuple(self._outs)
