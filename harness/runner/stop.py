"""A run stopped before its ops are done, cleanly (issue 26, items 4 and 5): by an LLM endpoint
that stopped answering, or by SIGINT (Ctrl-C) / SIGTERM.

* ``RunStop`` is shared by the ops of a run. ``halt(reason, kind)`` stops it once; afterwards
  every LLM call and every evaluation of every op raises ``RunStopped`` (a ``BudgetExhausted``:
  methods end on it as on a spent budget), ops not started yet are left ``pending``, and the run
  is stored as ``interrupted`` with the reason, resumable with its run id.
* ``OutageWatch`` wraps the run's model below resume and metering: a call the LLM client gave up
  on after its retries (``TransientError``: connection refused, timeouts, 5xx, 429, malformed
  replies; docs/llm.md "Outages") halts the run with kind ``outage``. Each op then final-judges
  the best valid kernel it found, keeps the full error, and is stored ``interrupted``.
* A signal halts it with kind ``signal``: nothing more is judged (no final judgement), the op in
  flight is stored ``interrupted``. SIGINT arrives as ``KeyboardInterrupt``; ``stop_signals()``
  makes SIGTERM raise ``Interrupted`` (a ``KeyboardInterrupt``) the same way. ``run()`` raises
  ``RunInterrupted`` (run id and reason) once the store says so; the CLI prints the resume command.
* A signal also gives up a precompiled header being built (sandbox/build/pch.py ``abandon``): a
  judgement's build thread, or the executor's, may be in one for 75 s or more, and the stop waits
  for those threads (CI, session 23). The run resets it when it ends.
* A signal is also latched: Python drops an exception raised where it cannot propagate (an
  at-fork hook such as logging's, a ``__del__``, a weakref callback: "Exception ignored in ..."),
  so a Ctrl-C landing there was lost and the run went on to the end (CI, 2026-11-26). Under
  ``stop_signals()`` the handler records the signal first; the next ``RunStop.check()`` (each
  evaluation and LLM call) or op start raises it again.
"""

from __future__ import annotations

import contextlib
import shlex
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from harness.llm.base import BudgetExhausted, ChatRequest, ChatResult, ModelWrapper, TransientError
from sandbox.contract import precompiled_headers

OUTAGE, SIGNAL = "outage", "signal"


class RunStopped(BudgetExhausted):
    """Raised in a stopped run's LLM calls and evaluations: the method ends as on a spent budget."""


class Interrupted(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like SIGINT's ``KeyboardInterrupt``."""

    def __init__(self, signame: str = "SIGTERM") -> None:
        super().__init__(signame)
        self.signame = signame


class RunInterrupted(KeyboardInterrupt):
    """A signal ended the run: it is stored ``interrupted``; resume it with ``run_id``."""

    def __init__(self, run_id: str, reason: str, exit_code: int) -> None:
        super().__init__(f"run {run_id} {reason}")
        self.run_id, self.reason, self.exit_code = run_id, reason, exit_code


class RunStop:
    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self.reason: str | None = None
        self.kind: str | None = None

    @property
    def stopped(self) -> bool:
        return self._event.is_set()

    def halt(self, reason: str, kind: str) -> None:
        """Stop the run (the first reason is kept)."""
        with self._lock:
            if not self._event.is_set():
                self.reason, self.kind = reason, kind
                self._event.set()

    def check(self) -> None:
        if self._event.is_set():
            raise RunStopped(f"run stopped: {self.reason}")
        raise_latched_signal()


class OutageWatch(ModelWrapper):
    """The run's model: refuses calls once the run stopped; an outage halts the run."""

    def __init__(self, inner: Any, stop: RunStop) -> None:
        super().__init__(inner)
        self.stop = stop

    def handle(self, request: ChatRequest) -> ChatResult:
        self.stop.check()
        try:
            return request.send(self.inner)
        except TransientError as e:
            self.stop.halt(f"the LLM endpoint stopped answering: {e}", OUTAGE)
            raise


def signal_reason(e: BaseException) -> tuple[str, int]:
    """(words, exit status) of a signal that ended a run: 130 for SIGINT, 143 for SIGTERM."""
    if isinstance(e, Interrupted):
        return f"interrupted by {e.signame}", 128 + int(getattr(signal, e.signame, signal.SIGTERM))
    return "interrupted by SIGINT (Ctrl-C)", 130


_latched: list[str] = []  # the signal a stop_signals() handler received (one per process)


def raise_latched_signal() -> None:
    """Raise again the stop signal received under ``stop_signals()``, in case its first raise was
    dropped (an "Exception ignored in ..." context); nothing when none was received."""
    if _latched:
        name = _latched[0]
        raise KeyboardInterrupt() if name == "SIGINT" else Interrupted(name)


@contextlib.contextmanager
def stop_signals() -> Iterator[None]:
    """While the block runs: SIGTERM raises ``Interrupted`` in the main thread (as SIGINT raises
    ``KeyboardInterrupt``), and either signal is latched for ``raise_latched_signal()``. Only in
    the main thread, and SIGINT only where Python's own handler is installed (not under SIG_IGN)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_sigterm(signum: int, frame: Any) -> None:
        name = signal.Signals(signum).name
        _latched[:] = _latched or [name]
        precompiled_headers.abandon()
        raise Interrupted(name)

    def on_sigint(signum: int, frame: Any) -> None:
        _latched[:] = _latched or ["SIGINT"]
        precompiled_headers.abandon()
        signal.default_int_handler(signum, frame)

    old_hook = sys.unraisablehook

    def quiet_latched(unraisable: Any) -> None:
        if _latched and isinstance(unraisable.exc_value, KeyboardInterrupt):
            return  # the latched stop signal: raised again at the run's next step
        old_hook(unraisable)

    old_term = signal.signal(signal.SIGTERM, on_sigterm)
    old_int = signal.getsignal(signal.SIGINT)
    if old_int is signal.default_int_handler:
        signal.signal(signal.SIGINT, on_sigint)
    _latched.clear()
    sys.unraisablehook = quiet_latched
    try:
        yield
    finally:
        sys.unraisablehook = old_hook
        signal.signal(signal.SIGTERM, old_term)
        if old_int is signal.default_int_handler:
            signal.signal(signal.SIGINT, old_int)
        _latched.clear()
        precompiled_headers.reset()


def resume_command(argv: Sequence[str], run_id: str | None, seed: int | None = None) -> str:
    """The command line that resumes ``run_id``: ``argv`` (``harness run`` and its arguments) with
    ``--run-id`` set to it (None: none); with ``seed`` (one of several ``--seeds``), that seed alone."""
    args = list(argv)
    out: list[str] = []
    drop = {"--run-id"} | ({"--seed", "--seeds"} if seed is not None else set())
    i = 0
    while i < len(args):
        a = args[i]
        name = a.split("=", 1)[0]
        if name in drop:
            i += 1 if "=" in a else 2
            continue
        out.append(a)
        i += 1
    if seed is not None:
        out += ["--seed", str(seed)]
    return shlex.join([*out, *(("--run-id", run_id) if run_id else ())])
