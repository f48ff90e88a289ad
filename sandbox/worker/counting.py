"""The candidate worker's counting state (mixed into sandbox/worker/main.py's Worker; the counter is
sandbox/rules/opcount.py): the tripwires and library counts set before the import, the per-call records
(op trees, calls of its own code, library calls, the probe) folded into signatures, what is the
candidate's own (sandbox/rules/ownhooks.py), and the monitor report's fields for all of it."""

from __future__ import annotations

import os
from typing import Any

from sandbox.rules.atenops import is_op

MAX_SIGNATURES = 64  # distinct per-call signatures kept between two monitor reports


class Counting:
    """Mixed into Worker, which sets the attributes used here (the counter, the role's modules,
    the per-call state initialised in its constructor)."""

    def _counting_setup(self, req: dict[str, Any], cr: str) -> None:
        """Before the candidate: tripwires, library counts, what "its own" means."""
        oc, torch = self.opcount, self._torch_module
        trusted_tier = os.path.dirname(os.path.dirname(req["opcount"]))
        self._roots = self._ownhooks.trusted_roots([trusted_tier])
        self._cand_dirs = tuple(os.path.realpath(d) for d in (cr, *[x for x in self.shared if x != trusted_tier],
                                                               self.scratch, "/tmp", "/var/tmp", "/dev/shm",
                                                               os.environ.get("TMPDIR", "/tmp")) if d)
        self._ns0 = self._ownhooks.op_namespaces(torch)
        self._own_attr: set[str] = set()
        self._tripwires.install(torch, oc, self._ns0, self._own_attr, is_op)
        if oc.has_py:
            self._lib_installed = self._ownhooks.install_library_counts(oc, torch, cuda=self.cuda)

    def _witness(self) -> None:
        """The op counter saw a probe fired at the end of the call (sandbox/rules/opcount.cpp)."""
        if self._counting():
            self._probe_ok = self.opcount.probe()

    def _counting(self) -> bool:
        return self.opcount is not None and self._target == "candidate"

    def _collect_call(self) -> None:
        """The previous counted call's record (op trees, own calls, library calls, the probe),
        folded into the per-call signatures the monitor report carries (sandbox/rules/partial.py)."""
        if not self._call_pending:
            return
        self._call_pending = False
        c = self.opcount
        trees = c.take_trees()
        own, own_ns, bridge, numpy = c.take_py()
        key = (tuple(sorted(trees.items())), own > 0)
        if key in self._calls or len(self._calls) < MAX_SIGNATURES:
            self._calls[key] = self._calls.get(key, 0) + 1
        else:
            self._calls_overflow += 1
        self._lib[0] += bridge
        self._lib[1] += numpy
        self._own_ns += own_ns
        self._fwd_sum += self._fwd_ns
        self._probe_fail += not self._probe_ok

    def _own_refresh(self, force: bool = False) -> None:
        """What is the candidate's own (sandbox/rules/ownhooks.py): its extension functions wrapped for
        counting, its op namespaces, the link check of every object it brought in. Without
        ``force``, only when an object was mapped since the last look (or an op namespace
        registered from Python)."""
        oc, oh = self.opcount, getattr(self, "_ownhooks", None)
        if oc is None or oh is None or not hasattr(self, "_roots"):
            return
        torch = self._torch_module  # the module itself, bound at start (not sys.modules' entry)
        roots, mine = self._roots, self._cand_dirs
        paths = [p for p in oh.mapped_objects() if p not in self._scanned and oh.provided(p, roots, mine)]
        if not (force or paths or self._own_attr - self._own_namespaces):
            return
        if oc.has_py:
            new = [mod for mod in oh.candidate_modules(roots, mine) if id(mod) not in self._wrapped]
            if new:
                self._wrap_missed = getattr(self, "_wrap_missed", 0) + oh.wrap_own(oc, new)
                self._wrapped.update(id(mod) for mod in new)
        self._own_namespaces = oh.own_namespaces(torch, self._ns0, self._own_attr, roots, mine)
        if paths:
            self._linked.update(oh.link_report(torch, paths))
            self._scanned.update(paths)

    def _counting_report(self, rep: dict[str, Any], hooks: list[str]) -> None:
        """The monitor report's counting fields (sandbox/rules/customcode.py reads them)."""
        oc = self.opcount
        self._collect_call()
        if not hooks:
            self._own_refresh()
        rep["counter"] = {"flags": oc.flags(), "probe_failed": self._probe_fail, "rf_enabled": oc.rf_enabled(),
                          "py_hooks": oc.has_py, "library_hooks": getattr(self, "_lib_installed", None)}
        rep["calls"] = [{"trees": dict(k[0]), "own": k[1], "n": n} for k, n in self._calls.items()]
        rep["calls_overflow"] = self._calls_overflow
        rep["library"] = {"bridge": self._lib[0], "numpy": self._lib[1]}
        rep["own_ns"], rep["fwd_ns"] = self._own_ns, self._fwd_sum
        rep["own_namespaces"] = sorted(self._own_namespaces)
        rep["linked"] = self._linked
        self._calls, self._calls_overflow, self._lib = {}, 0, [0, 0]
        self._own_ns = self._fwd_sum = 0
