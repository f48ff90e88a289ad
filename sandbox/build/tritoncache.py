"""Triton's cache for a judging worker: read the candidate's built kernels, write its own misses.

A candidate built apart (sandbox/build/buildphase.py) reaches its judging worker with its namespace of
the build cache mounted read-only: Triton's compiled kernels, launchers and autotune results, all
made by the warm-apart worker on the same shapes. Triton's own file cache writes into the cache
directory for any key it has not seen, so a key the warm-apart worker missed (a shape it did not
run, an autotuner keyed on a value that changes per call: cheat #35) failed to write into the
read-only mount: a false runtime error. ``OverlayCacheManager`` (Triton's TRITON_CACHE_MANAGER)
reads the worker's private directory, then the read-only tier; it writes only the private one,
which goes with the worker's scratch.

With it the judging worker can also take the warm-apart worker's autotune results
(TRITON_CACHE_AUTOTUNING=1, both workers): an autotuned kernel is tuned once, in the warm-apart
worker, instead of again in the judging worker while the device is held (1-2 s on
triton_softmax_autotune, H100).

The harness's own Triton warm-up (sandbox/worker/tritonwarm.py) runs before the seal and must never load
what a candidate put in its cache: it clears ``RO_ENV`` for its call, and the manager is then a
plain private file cache.
"""

from __future__ import annotations

import json
import os
import uuid

try:  # Triton loads the class by name and checks that a class named CacheManager is in its MRO
    from triton.runtime.cache import FileCacheManager as _Base
except ImportError:  # a machine without Triton (the CPU tests): the same behaviour, our own code
    _Base = object

RO_ENV = "KH_TRITON_CACHE_RO"
MANAGER = "sandbox.build.tritoncache:OverlayCacheManager"


def overlay_env(ro_cache: str, private: str) -> dict[str, str]:
    """The judging worker's Triton variables: private writes over the read-only build cache."""
    return {"TRITON_CACHE_MANAGER": MANAGER, RO_ENV: ro_cache, "TRITON_CACHE_DIR": private,
            "TRITON_CACHE_AUTOTUNING": "1"}


class OverlayCacheManager(_Base):  # type: ignore[misc, valid-type]
    """Triton's cache interface (get_file, put, get_group, put_group) over two directories."""

    def __init__(self, key: str, override: bool = False, dump: bool = False) -> None:
        self.key = key
        if override or dump:  # Triton's debugging directories: as Triton does, if ever asked
            var, sub = ("TRITON_OVERRIDE_DIR", "override") if override else ("TRITON_DUMP_DIR", "dump")
            home = os.environ.get("TRITON_HOME") or os.path.expanduser("~")
            top = os.environ.get(var, "").strip() or os.path.join(home, ".triton", sub)
            self.ro_dir = None
        else:
            top = os.environ.get("TRITON_CACHE_DIR", "").strip()
            if not top:
                raise RuntimeError("OverlayCacheManager needs TRITON_CACHE_DIR (the worker's private cache)")
            ro = os.environ.get(RO_ENV, "").strip()
            self.ro_dir = os.path.join(ro, key) if ro else None
        self.cache_dir = os.path.join(top, key)
        self.lock_path = os.path.join(self.cache_dir, "lock")
        if not override:
            os.makedirs(self.cache_dir, exist_ok=True)

    def _make_path(self, filename: str) -> str:
        return os.path.join(self.cache_dir, filename)

    def has_file(self, filename: str) -> bool:
        return self.get_file(filename) is not None

    def get_file(self, filename: str) -> str | None:
        for d in (self.cache_dir, self.ro_dir):
            if d is not None:
                p = os.path.join(d, filename)
                if os.path.exists(p):
                    return p
        return None

    def get_group(self, filename: str) -> dict[str, str] | None:
        path = self.get_file(f"__grp__{filename}")
        if path is None:
            return None
        with open(path) as f:
            children = json.load(f).get("child_paths")
        if children is None:
            return None
        return {name: p for name, p in children.items() if os.path.exists(p)}

    def put_group(self, filename: str, group: dict[str, str]) -> str:
        return self.put(json.dumps({"child_paths": group}), f"__grp__{filename}", binary=False)

    def put(self, data: bytes | str, filename: str, binary: bool = True) -> str:
        path = self._make_path(filename)
        tmp = os.path.join(self.cache_dir, f"tmp.pid_{os.getpid()}_{uuid.uuid4()}")
        os.makedirs(tmp, exist_ok=True)
        part = os.path.join(tmp, filename)
        if isinstance(data, bytes):
            with open(part, "wb") as f:
                f.write(data)
        else:
            with open(part, "w") as f:
                f.write(str(data))
        os.replace(part, path)  # atomic: a reader never sees half a file
        os.removedirs(tmp)
        return path
