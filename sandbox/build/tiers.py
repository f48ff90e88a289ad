"""A candidate's build tier, as judgements see it: a private working copy per judgement, sealed
build entries kept between judgements, and a size quota.

The build cache keeps one tier per candidate source (``buildcache.layout``: ``cand/<hash>/``).
No jail ever mounts that directory. Each judgement gets a **working copy** (``WorkTier``): a
fresh host directory, seeded by the parent with the tier's sealed files and bound at the tier's
own path inside every jail of that judgement (so that paths recorded inside builds, such as
Triton's group files, stay valid):

* the build worker (sandbox/build/prebuild.py: import and ``ModelNew(...)``, no call) and the
  warm-apart worker (sandbox/build/buildphase.py: import and the first calls) mount it writable;
* a judging worker mounts it read-only in the sealed and warm-apart orders, and writable in the
  late order (it compiles at its own import there);
* when the judgement ends the copy is deleted, with everything written into it.

**What survives a judgement** is only what the parent *promotes* after a build worker finished
with "built" (``WorkTier.promote``): new build entries (a finished ``load_inline``/``load``
build, ``<64 hex>/`` holding ``.ok`` or ``.failed``, and the ``cupy/`` and ``torch_extensions/``
caches), copied as regular files and directories (no symlink, device, socket or FIFO is copied
and none is followed; each copy a new inode with plain modes), never overwriting a file the tier
already has nor adding one to a build entry it has. The build worker runs no call: none of the judgement's inputs exists yet. What a
worker that made calls wrote (the warm-apart worker's JIT caches, the late order's judging
worker's builds) is never kept, so in no order does anything a candidate writes while it is
judged reach a later judgement; a source that compiles at its first call compiles again in each
judgement. A tier's files are listed with their sizes and sha256 in a **seal**
(``<cache root>/seals/<hash>.json``, outside every jail); a tier whose files do not match its
seal is deleted, and the next build worker builds it again.

**Quota.** A working copy may hold at most ``quota_bytes()`` (1 GiB; ``KH_BUILD_TIER_QUOTA``)
and ``MAX_FILES`` entries: the process backend's watchdog checks it four times a second in every
worker that mounts it writable and kills the worker above it (``rejected sandbox.resources``,
the message naming the quota), and ``promote`` checks it again before anything is kept. What a
tier keeps on the host is therefore bounded by the quota per source.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from typing import Any

DEFAULT_QUOTA = 1 << 30  # bytes a candidate's build tier may hold (KH_BUILD_TIER_QUOTA)
MAX_FILES = 20000  # entries; more counts as over the quota (proctree._dir_bytes' cap)
_BUILD_ENTRY = re.compile(r"[0-9a-f]{64}")  # buildcache.entry: a finished build's directory
_CACHES = ("cupy", "torch_extensions")  # caches a build at import may fill (workerenv.scrubbed_env)
_CHUNK = 1 << 20


def built_before(root: str, own: str) -> bool:
    """A build worker finished "built" for the tier ``own`` before (only then is anything promoted):
    its seal under ``root`` lists a finished build entry. A hint for the order of work, never a
    verdict: the entry may be of other settings (torch, the compile cuts), and the judge's own build
    step then builds it."""
    try:
        with open(os.path.join(root, "seals", os.path.basename(own) + ".json")) as f:
            files = json.load(f).get("files", {})
    except (OSError, ValueError, AttributeError):
        return False
    return any(_BUILD_ENTRY.fullmatch(rel.split(os.sep, 1)[0]) and rel.endswith(os.sep + ".ok") for rel in files)


def quota_bytes() -> int:
    """The build tier's quota in bytes (KH_BUILD_TIER_QUOTA in the parent's environment)."""
    try:
        return max(1 << 20, int(os.environ.get("KH_BUILD_TIER_QUOTA") or DEFAULT_QUOTA))
    except ValueError:
        return DEFAULT_QUOTA


class TierQuotaExceeded(RuntimeError):
    """The working copy holds more than its quota: the message says how much."""


def remove_tree(path: str | os.PathLike[str]) -> None:
    """Delete ``path`` whatever a jailed process did to its modes (a directory made 0o000 stops
    ``shutil.rmtree`` of an ordinary user; the jail's uid is that user's)."""

    def fix(func: Any, p: str, info: Any) -> None:
        if isinstance(info[1], FileNotFoundError):
            return
        try:
            os.chmod(os.path.dirname(p), 0o700)
            if os.path.isdir(p) and not os.path.islink(p):
                os.chmod(p, 0o700)
                shutil.rmtree(p, onerror=fix)  # its entries could not be listed before
            else:
                func(p)
        except OSError:
            pass

    if os.path.lexists(path):
        shutil.rmtree(path, onerror=fix)


def tree_bytes(path: str) -> tuple[int, int]:
    """(bytes held in files, entries) under ``path``, symlinks not followed."""
    total, seen, stack = 0, 0, [path]
    while stack:
        try:
            it = os.scandir(stack.pop())
        except OSError:
            continue
        with it:
            for e in it:
                seen += 1
                try:
                    if e.is_dir(follow_symlinks=False):
                        stack.append(e.path)
                    else:
                        st = e.stat(follow_symlinks=False)
                        total += max(st.st_size, st.st_blocks * 512)
                except OSError:
                    pass
    return total, seen


def over_quota(path: str, limit: int) -> str | None:
    """What the verdict says when the files under ``path`` are above ``limit`` bytes or
    ``MAX_FILES`` entries (the watchdog's check and ``WorkTier.promote``'s); None below."""
    used, entries = tree_bytes(path)
    if used <= limit and entries <= MAX_FILES:
        return None
    return (f"build tier quota: {used} bytes in {entries} entries written; the quota is {limit} bytes "
            f"and {MAX_FILES} entries (KH_BUILD_TIER_QUOTA)")


def _walk_regular(top: str) -> list[str]:
    """Relative paths of the regular files under ``top`` (no symlink followed or listed)."""
    out: list[str] = []
    stack = [""]
    while stack:
        rel = stack.pop()
        try:
            it = os.scandir(os.path.join(top, rel) if rel else top)
        except OSError:
            continue
        with it:
            for e in it:
                r = os.path.join(rel, e.name) if rel else e.name
                try:
                    st = os.lstat(e.path)
                except OSError:
                    continue
                if stat.S_ISDIR(st.st_mode):
                    stack.append(r)
                elif stat.S_ISREG(st.st_mode):
                    out.append(r)
    return sorted(out)


def _promotable(rel: str, src_top: str) -> bool:
    """A file of a build entry or of a JIT cache (see the module docstring)."""
    head = rel.split(os.sep, 1)[0]
    if head in _CACHES:
        return os.sep in rel
    if _BUILD_ENTRY.fullmatch(head) and os.sep in rel:
        d = os.path.join(src_top, head)
        return os.path.isfile(os.path.join(d, ".ok")) or os.path.isfile(os.path.join(d, ".failed"))
    return False


def _entries(files: Any) -> dict[str, list[str]]:
    """The build entries among ``files`` (tier-relative paths), each as the first 12 characters of
    its key and its files' names (at most 12): what a later process finds (verdict: build_tier)."""
    out: dict[str, list[str]] = {}
    for rel in files:
        head, _, rest = str(rel).partition(os.sep)
        if _BUILD_ENTRY.fullmatch(head):
            out.setdefault(head[:12], []).append(rest)
    return {h: sorted(v)[:12] for h, v in sorted(out.items())}


def _makedirs(d: str) -> None:
    """``os.makedirs`` with plain modes (0o755) whatever the umask: a jail's uid reads them."""
    if os.path.isdir(d):
        return
    _makedirs(os.path.dirname(d))
    try:
        os.mkdir(d)
    except FileExistsError:
        return
    os.chmod(d, 0o755)


def _copy_file(src: str, dst: str) -> tuple[int, str]:
    """Copy a regular file without following a symlink at ``src``; (size, sha256). The copy is a
    new inode with plain modes (0o644, 0o755 when executable): no hard link, no xattr."""
    fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, f"not a regular file: {src}")
        h = hashlib.sha256()
        n = 0
        _makedirs(os.path.dirname(dst))
        tmp = f"{dst}.kh-tmp-{os.getpid()}"
        with open(tmp, "wb") as out:
            while True:
                b = os.read(fd, _CHUNK)
                if not b:
                    break
                out.write(b)
                h.update(b)
                n += len(b)
        os.chmod(tmp, 0o755 if st.st_mode & 0o100 else 0o644)
        os.replace(tmp, dst)
        return n, h.hexdigest()
    finally:
        os.close(fd)


@dataclass
class WorkTier:
    """One judgement's private working copy of a candidate's build tier (the module docstring).

    ``own``: the tier's path (where jails see the copy); ``path``: the copy on the host."""

    own: str
    path: str
    seal_path: str
    quota: int = DEFAULT_QUOTA
    evidence: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def open(cls, root: str, own: str, quota: int | None = None) -> WorkTier:
        """A fresh working copy of the tier ``own`` (under the cache ``root``), seeded from its
        sealed files; a tier that does not match its seal is deleted first."""
        seals = os.path.join(root, "seals")
        os.makedirs(seals, exist_ok=True)
        path = tempfile.mkdtemp(prefix="kh-tier-")
        # readable by the jail's uid where nothing writable made it the owner (a judging worker that
        # mounts it read-only after the executor's build worker; a container's user), as the tier was
        os.chmod(path, 0o755)
        t = cls(own, path, os.path.join(seals, os.path.basename(own) + ".json"), quota or quota_bytes())
        with t._locked():
            t.evidence.update(t._seed())
        return t

    # -- the seal -----------------------------------------------------------------------
    def _locked(self) -> Any:
        import contextlib

        @contextlib.contextmanager
        def lock() -> Any:
            with open(self.seal_path + ".lock", "w") as f:
                fcntl.flock(f, fcntl.LOCK_EX)
                yield

        return lock()

    def _read_seal(self) -> dict[str, list[Any]]:
        try:
            with open(self.seal_path) as f:
                files = json.load(f).get("files", {})
            return {str(k): list(v) for k, v in files.items()}
        except (OSError, ValueError, AttributeError):
            return {}

    def _write_seal(self, files: dict[str, list[Any]]) -> None:
        tmp = f"{self.seal_path}.kh-tmp-{os.getpid()}"
        with open(tmp, "w") as f:
            json.dump({"version": 1, "files": files}, f, sort_keys=True)
        os.replace(tmp, self.seal_path)

    def _drop(self, why: str) -> dict[str, Any]:
        remove_tree(self.own)
        try:
            os.unlink(self.seal_path)
        except FileNotFoundError:
            pass
        remove_tree(self.path)
        os.makedirs(self.path)
        os.chmod(self.path, 0o755)
        return {"sealed_files": 0, "dropped": why[:300]}

    def _seed(self) -> dict[str, Any]:
        """Copy the sealed tier into the working copy, checking each file against the seal."""
        sealed = self._read_seal()
        if not os.path.isdir(self.own):
            if sealed:
                self._drop("the seal names files the tier does not have")
            return {"sealed_files": 0}
        present = _walk_regular(self.own)
        if not sealed:  # written before tiers were sealed, or by anything else: not trusted
            return self._drop("the tier has no seal") if present or os.listdir(self.own) else {"sealed_files": 0}
        extra = sorted(set(present) - set(sealed))
        if extra:
            return self._drop(f"files the seal does not list: {extra[:3]}")
        n = 0
        for rel, (size, digest) in sealed.items():
            try:
                got = _copy_file(os.path.join(self.own, rel), os.path.join(self.path, rel))
            except OSError as e:
                return self._drop(f"{rel}: {e}")
            if got != (size, digest):
                return self._drop(f"{rel} does not match its seal")
            n += size
        return {"sealed_files": len(sealed), "seeded_bytes": n, "entries": _entries(sealed)}

    # -- quota and promotion --------------------------------------------------------------
    def check_quota(self) -> None:
        over = over_quota(self.path, self.quota)
        if over:
            raise TierQuotaExceeded(over)

    def promote(self, by: str) -> dict[str, Any]:
        """Keep the new build entries a build step (``by``) wrote into the working copy; raises
        TierQuotaExceeded (nothing kept) when the copy is over its quota."""
        self.check_quota()
        kept = skipped = 0
        why_not: list[str] = []  # the first files not kept, and why (a build entry a later process cannot load)
        with self._locked():
            sealed = self._read_seal()
            if os.path.isdir(self.own) and set(_walk_regular(self.own)) != set(sealed):
                self._drop_persistent_only()
                sealed = {}
            entries = {r.split(os.sep, 1)[0] for r in sealed if _BUILD_ENTRY.fullmatch(r.split(os.sep, 1)[0])}
            new = [r for r in _walk_regular(self.path) if r not in sealed]
            for rel in new:
                if not _promotable(rel, self.path) or rel.split(os.sep, 1)[0] in entries:  # a sealed build: as it was
                    skipped += 1
                    why_not.append(f"{rel[:80]}: {'sealed entry' if rel.split(os.sep, 1)[0] in entries else 'not a build'}")
                    continue
                try:
                    sealed[rel] = list(_copy_file(os.path.join(self.path, rel), os.path.join(self.own, rel)))
                    kept += 1
                except OSError as e:
                    skipped += 1
                    why_not.append(f"{rel[:80]}: {e}"[:200])
            if kept:
                self._write_seal(sealed)
        info = {"by": by, "kept_files": kept, "not_kept": skipped, **({"not_kept_first": why_not[:5]} if why_not else {}),
                "entries": _entries(sealed)}
        self.evidence.setdefault("promoted", []).append(info)
        return info

    def _drop_persistent_only(self) -> None:
        remove_tree(self.own)
        try:
            os.unlink(self.seal_path)
        except FileNotFoundError:
            pass

    def close(self) -> None:
        """Delete the working copy and everything written into it."""
        remove_tree(self.path)

