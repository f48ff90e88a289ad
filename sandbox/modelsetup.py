"""The models of a judgement: the task's ``Model`` in the reference worker and the candidate's
class in the candidate worker, built at a shape profile (``setup``), side by side, never twice for
the same setup; on a GPU the warm-up's first pair before the device is taken (``presetup``).
Mixed into Judge (sandbox/judge.py), which sets the attributes used here."""

from __future__ import annotations

import time
from typing import Any

from sandbox.check.calls import ReferenceFailed, Reject
from sandbox.verdict import Status

SETUP_FLOOR_S, SETUP_MULT = 10.0, 3.0  # a setup after the warm-up: max(floor, mult x the warm-up's at that profile)


class ModelSetups:
    """``setup`` and ``presetup`` of Judge."""

    def setup(self, profile: str) -> None:
        self.staged = None  # a seed's inputs differ between profiles
        common: dict[str, Any] = {
            "task_source": self.task.source, "task_path": str(self.task.path),
            "overrides": self.overrides(profile), "init_seed": self.init_seed, "entry": self.entry.name}
        # after the warm-up, a setup is bounded by the warm-up's at that profile: a constructor slow
        # only when it is judged would hold the device (sandbox/lane/firstcall.py)
        warm = None if self.phase == "warm" else self.warm_setup_s.get(profile)
        floor = 60.0 if warm is None else max(SETUP_FLOOR_S, SETUP_MULT * warm)
        # a KernelBench model's constructor is CPU work (serial RNG init: 0.2 s for a 4096x4096
        # Linear, 0.7 s at 8192), inside the GPU hold but for the first (presetup), so: the two
        # models are built side by side, each in its own process (the candidate's begun first: its
        # arena sync may ask the reference; a first call's lane watch reads its reply only after the
        # reference's), and neither worker builds again the model it already has for this setup (the
        # judged setup right after a warm-up at the same profile). The reference's warm-up only
        # staged inputs. The candidate's warm-up call ran its code on that model, but a new model
        # would not make the judged calls any cleaner: the process, its globals and its caches are
        # the same.
        t = time.monotonic()
        key = repr(sorted(common.items()))
        pending = None
        if self.cand.built_for != key:
            self.cand.built_for = None
            pending = self.cand.begin("setup", bound=self.call_bound(floor=floor), **common)
        rkey = (key, self.baseline_compile)
        if self.ref.built_for != rkey:
            self.ref.built_for = None
            rep, _ = self.ref.request("setup", compile=self.baseline_compile, **common)
            if not rep.get("ok"):
                raise ReferenceFailed(f"{self.task.path}: building Model at profile {profile!r} failed: "
                                      f"{rep.get('error')}")
            self.ref.built_for = rkey
        rep, _ = pending.result() if pending is not None else ({"ok": True}, None)
        ev = self.v.evidence  # the setups' wall time: [count, s] (each worker's own: evidence.requests)
        n, spent = ev.get("setups", [0, 0.0])
        ev["setups"] = [n + 1, round(spent + time.monotonic() - t, 3)]
        if not rep.get("ok"):
            raise Reject(Status.RUNTIME_ERROR, None, f"ModelNew(*get_init_inputs()) failed at profile {profile!r}",
                         log=rep.get("error", ""))
        if pending is not None:
            self.cand.built_for = key

    def presetup(self, profile: str) -> None:
        """On a GPU, the models of the warm-up's first profile, built before the device is taken
        (``warm`` then finds them built: ``setup`` builds nothing a worker already has). A
        KernelBench model's constructor is CPU work (serial RNG: 0.5-0.7 s for a level-2 GEMM's
        Linear, 9.5 s for level-2 task 55's) that held the GPU while no kernel ran. What runs here
        is what the import already runs outside the lock: the candidate's code (its constructor
        now too) and trusted work; the models' weights are copied to the device here. On a CPU
        the models are built inside the lock as before: there the lock keeps CPU work away from
        another judgement's host timers."""
        if not self.cfg.device.startswith("cuda"):
            return
        t = time.monotonic()
        self.setup(profile)
        self.warm_setup_s[profile] = time.monotonic() - t
        self.v.evidence["setup_before_lock_s"] = round(self.warm_setup_s[profile], 3)
