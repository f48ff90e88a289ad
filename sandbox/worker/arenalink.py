"""The parent's side of a worker's arena (sandbox/worker/arena.py), mixed into ``WorkerSession``
(sandbox/worker/session.py): handing the worker its regions, and keeping its mappings current as
the regions grow. Host memfds: the parent makes them and hands their fds over. Device memory
(sandbox/worker/devarena.py): the reference worker (the owner) makes the regions and sends back
the exported fds of the candidate's two; the candidate's session maps each again when its
generation moves. Only the reference's fds are ever taken (sandbox/worker/session.py)."""

from __future__ import annotations

import os
from typing import Any

from sandbox.worker.arena import CANDIDATE_REGIONS, DeviceArenaFailed
from sandbox.worker.sessionerrors import ProtocolViolation, WorkerDied


class ArenaLink:
    """Uses the session's ``role``, ``handle`` and ``_request``."""

    arena: Any
    arena_regions: tuple[str, ...]
    arena_mapped: dict[str, int]
    arena_gen: dict[str, int]
    arena_info: dict[str, Any]
    role: str
    handle: Any
    _request: Any

    def attach_arena(self, arena: Any, regions: tuple[str, ...]) -> None:
        """Hand the worker the fds of ``regions`` of ``arena`` over its channel (SCM_RIGHTS);
        from then on a region the parent grew is remapped before the worker's next request, and
        a reference worker that needs a larger region (``kind: arena``) gets it and is asked
        again. Only the parent sizes regions: a candidate worker's ``need`` is never honoured."""
        self.arena, self.arena_regions = arena, tuple(regions)
        self.arena_mapped, self.arena_gen = {}, {}
        if arena.device:  # sandbox/worker/devarena.py: the reference makes the regions, the candidate maps them
            if arena.owner is None:
                if self.role != "reference":
                    raise ValueError("a device arena is made by the reference worker: attach it first")
                arena.owner = self
            self._sync_device()
            return
        rep, _ = self._request("arena", fds=[arena.fds[r] for r in regions], names=list(regions),
                               sizes={r: arena.sizes[r] for r in regions})
        self._mapped(rep)

    def _sync_device(self) -> None:
        """Device arena: the owner (reference) makes every region whose size changed and sends back
        the exported fds; another session first has the owner catch up, then maps each region
        the owner made again since (its generation moved)."""
        a = self.arena
        sizes = {r: a.sizes[r] for r in self.arena_regions}
        if a.owner is self:
            if sizes == self.arena_mapped:
                return
            export = [r for r in self.arena_regions if r in CANDIDATE_REGIONS]
            rep, _ = self._request("arena", device=True, sizes=sizes, export=export)
            got = rep.pop("_fds", [])
            if not rep.get("ok"):
                raise DeviceArenaFailed(f"reference worker: {str(rep.get('error', ''))[:500]}")
            names = rep.get("fds")
            if not isinstance(names, list) or not set(names) <= set(export):
                for fd in got:
                    os.close(fd)
                raise ProtocolViolation(f"reference worker exported {names!r}")
            a.adopt(names, got)
            self._mapped(rep)
            return
        a.owner._sync_arena()
        stale = [r for r in self.arena_regions if self.arena_gen.get(r) != a.gen[r] and r in a.fds]
        if not stale:
            return
        rep, _ = self._request("arena", device=True, names=stale, fds=[a.fds[r] for r in stale],
                               sizes={r: a.sizes[r] for r in stale})
        if not rep.get("ok"):
            raise DeviceArenaFailed(f"candidate worker: {str(rep.get('error', ''))[:500]}")
        self.arena_gen.update({r: a.gen[r] for r in stale})
        self._mapped(rep)

    def _mapped(self, rep: dict[str, Any]) -> None:
        if not rep.get("ok"):
            raise WorkerDied(f"{self.role} worker could not map the arena: {str(rep.get('error', ''))[:500]}")
        self.arena_info = {"sizes": rep.get("sizes"), "pinned": rep.get("pinned"),
                           **({"readonly": rep["readonly"]} if "readonly" in rep else {})}
        self.arena_mapped = {r: self.arena.sizes[r] for r in self.arena_regions}
        note = getattr(self.handle, "set_shared_allowance", None)
        if callable(note):  # the watchdog does not count the arena's pages as the worker's memory
            note(self.arena.total(self.arena_regions))

    def _sync_arena(self) -> None:
        if self.arena is None:
            return
        if self.arena.device:
            self._sync_device()
            return
        sizes = {r: self.arena.sizes[r] for r in self.arena_regions}
        if sizes != self.arena_mapped:
            rep, _ = self._request("arena", sizes=sizes)
            self._mapped(rep)

