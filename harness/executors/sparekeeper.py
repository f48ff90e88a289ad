"""Reference workers started ahead of the local pipeline's judgements (sandbox/lane/spares.py).

A judgement's reference worker took 10-17 s to start on one H200 beside a batch's builds (torch and
torch.compile's modules), the longest step before every judgement's import (session 32, call 2). A
keeper thread per device starts them while units wait, as many as the device's judging threads could
take next: at most ``judges_per_device``, and no more than the units not yet judging on it. The
judge takes one whose settings match and starts its own otherwise. Each spare is a fresh worker,
taken by one judgement; the keeper closes those left when the executor closes.

On by default on GPU devices with the real judge in final mode with the compile baseline (the only
case with a preload to hide); ``spare_references=False`` or ``KH_SPARE_REFERENCES=0`` turn it off, and
``spare_references=True`` turns it on for any device (tests on a CPU).
"""

from __future__ import annotations

import os
import threading
from typing import Any

from sandbox.contract import EvalConfig, spare_references

MAX_FAILED_STARTS = 3  # a device whose spares fail to start this often gets none (judgements start their own)


class SpareKeeper:
    """Mixed into LocalExecutor, which sets ``_cv``, ``_closed``, ``_units``, ``_running``,
    ``devices`` and ``judges_per_device``, has ``lane_config`` (harness/executors/lanechoice.py),
    and calls ``_start_spares(enabled)`` after its judging threads start, ``_spare_config(config)``
    from ``submit`` and ``_stop_spares()`` from ``close`` once every judgement is done (a spare's
    worker dies with the thread that started it)."""

    _cv: threading.Condition
    _closed: bool
    _units: dict[int, Any]
    _running: dict[str, int]
    devices: list[str]
    judges_per_device: int
    lane_config: Any

    def _start_spares(self, enabled: bool | None, real_judge: bool) -> None:
        env = os.environ.get("KH_SPARE_REFERENCES", "").strip()
        self._spare_any = bool(enabled)  # turned on explicitly: any device, any settings
        if enabled is None:
            enabled = real_judge and env != "0"
            self._spare_devices = [d for d in self.devices if d.startswith("cuda")] if enabled else []
        else:
            self._spare_devices = list(self.devices) if enabled else []
        self._spare_cfg: EvalConfig | None = None  # the settings of the units submitted last
        self._spares_end = False
        self._spare_keys: set[tuple[Any, ...]] = set()
        self._keepers = [threading.Thread(target=self._spare_loop, args=(d,), name=f"kh-spares-{d}", daemon=True)
                         for d in self._spare_devices]
        for t in self._keepers:
            t.start()

    def _spare_config(self, config: EvalConfig) -> None:
        """From ``submit``: the settings the next spares are started with (a GPU judgement's with the
        compile baseline; any, when turned on explicitly)."""
        gpu_final = config.device.startswith("cuda") and spare_references.preload_for(config)
        if not self._spare_devices or not (self._spare_any or gpu_final):
            return  # a CPU judgement's: a spare's start-up would run beside host timers
        with self._cv:
            self._spare_cfg = config
            self._cv.notify_all()

    def _spares_wanted(self, device: str, have: int) -> bool:
        """Under ``_cv``: another spare for ``device``: the units not yet judging, shared over the
        keepers' devices, exceed the spares it has, up to its judging threads."""
        waiting = len(self._units) - sum(self._running.values())
        share = -(-waiting // max(1, len(self._spare_devices)))
        return have < min(self.judges_per_device, share)

    def _spare_loop(self, device: str) -> None:
        failed = 0
        src: EvalConfig | None = None  # the submitted settings ``cfg`` and ``key`` were made from
        key: tuple[Any, ...] = ()
        cfg: EvalConfig | None = None
        while True:
            with self._cv:
                while not self._spares_end:
                    if not self._closed and self._spare_cfg is not None and failed < MAX_FAILED_STARTS:
                        if src is not self._spare_cfg:
                            src = self._spare_cfg
                            cfg = self.lane_config(src, device)
                            key = spare_references.key(cfg, spare_references.preload_for(cfg))
                            self._spare_keys.add(key)
                        if self._spares_wanted(device, spare_references.count(key)):
                            break
                    self._cv.wait(timeout=0.5)
                if self._spares_end:
                    break
            assert cfg is not None
            try:
                w = spare_references.start(cfg, spare_references.preload_for(cfg))
            except Exception:  # noqa: BLE001 - the judgements start their own, and say why if they cannot
                failed += 1
                continue
            spare_references.put(key, w)
        with self._cv:
            keys = list(self._spare_keys)
        spare_references.close(keys)

    def _stop_spares(self) -> None:
        """After every judgement of the executor is done: the keepers close their spares and end."""
        with self._cv:
            self._spares_end = True
            self._cv.notify_all()
        for t in self._keepers:
            t.join()
