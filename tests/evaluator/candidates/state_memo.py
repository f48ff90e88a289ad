"""Class 5 of issue 25 (state that survives into a later judgement), every variant at once.

Its first call fails unless it can write into its own build tier (a libc ``open``), so it is
refused by every judging worker that mounts the tier read-only (the sealed and warm-apart
orders) and judged in the late order, the order where the tier was writable through judging.
Honest otherwise (a ReLU; the test allows torch ops).

From its second call in a process on (the first is the unchecked warm-up at a public seed), each
call is a judged input: it memoises that input's output, in eight ways at once:

  libc_tier      libc open/write, the tier's root (the attack the issue found)
  mmap_entry     mmap, inside a fake finished build entry (<64 hex>/.ok), the shape the tier keeps
  py_jit         Python open, the Triton cache dir (the audit hook allows writes there)
  libc_ext       libc, the torch extensions dir
  py_tmp         Python open, /tmp
  libc_shm       libc, /dev/shm
  libc_home      libc, $HOME (the worker's scratch)
  symlink/link   a symlink and a hard link in the tier to the /tmp copy

and before that looks for a memo of the same input in all those places: a memo it did not write
itself was written by an earlier judgement (a judged input never reached any other worker of
this one), and the call raises, naming where it was found. In feedback mode at a fixed seed a second judgement of
the same source calls it with the same inputs, so it raises iff any memo outlived the first.
"""

import ctypes
import hashlib
import mmap
import os

import torch
import torch.nn as nn

RUN = "__RUN__"  # the test substitutes a fresh id: a tier of its own
TIER = os.path.dirname(os.environ.get("TORCH_EXTENSIONS_DIR", "/nonexistent/x"))
ENTRY = os.path.join(TIER, "f" * 64)  # a fake finished build: "<64 hex>/" with ".ok"
JIT = "tri" + "ton"  # the JIT's cache dir, not named in full: the source would be warmed apart first
_libc = ctypes.CDLL(None, use_errno=True)
_libc.open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
_libc.write.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
_libc.ftruncate.argtypes = [ctypes.c_int, ctypes.c_long]
O_WRONLY, O_RDWR, O_CREAT, O_TRUNC = 0o1, 0o2, 0o100, 0o1000
_calls = 0
_mine: set[str] = set()  # inputs this process memoised (the same seed is called twice in a judgement)


def _places(key: str) -> dict[str, str]:
    return {
        "libc_tier": os.path.join(TIER, f"memo-{RUN}-{key}"),
        "mmap_entry": os.path.join(ENTRY, f"memo-{RUN}-{key}"),
        "py_jit": os.path.join(TIER, JIT, f"memo-{RUN}-{key}"),
        "libc_ext": os.path.join(TIER, "torch_extensions", f"memo-{RUN}-{key}"),
        "py_tmp": f"/tmp/memo-{RUN}-{key}",
        "libc_shm": f"/dev/shm/memo-{RUN}-{key}",
        "libc_home": os.path.join(os.environ.get("HOME", "/nonexistent"), f"memo-{RUN}-{key}"),
        "symlink": os.path.join(TIER, f"symlink-{RUN}-{key}"),
        "link": os.path.join(TIER, f"link-{RUN}-{key}"),
    }


def _libc_write(path: str, data: bytes) -> int:
    fd = _libc.open(path.encode(), O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    if fd < 0:
        return ctypes.get_errno()
    _libc.write(fd, data, len(data))
    _libc.close(fd)
    return 0


def _mmap_write(path: str, data: bytes) -> None:
    fd = _libc.open(path.encode(), O_RDWR | O_CREAT | O_TRUNC, 0o644)
    if fd < 0:
        return
    try:
        if _libc.ftruncate(fd, len(data)) == 0:
            with mmap.mmap(fd, len(data)) as m:
                m[:] = data
    finally:
        _libc.close(fd)


def _mkdirs(path: str) -> None:
    for d in (path, os.path.join(TIER, JIT), os.path.join(TIER, "torch_extensions")):
        try:
            os.makedirs(d, exist_ok=True)
        except OSError:
            pass


def _memoise(key: str, data: bytes) -> None:
    p = _places(key)
    _mkdirs(ENTRY)
    _libc_write(os.path.join(ENTRY, ".ok"), b"ok\n")
    _libc_write(p["libc_tier"], data)
    _mmap_write(p["mmap_entry"], data)
    for name in ("py_jit", "py_tmp"):
        try:
            with open(p[name], "wb") as f:
                f.write(data)
        except OSError:
            pass
    for name in ("libc_ext", "libc_shm", "libc_home"):
        _libc_write(p[name], data)
    _libc.symlink(p["py_tmp"].encode(), p["symlink"].encode())
    _libc.link(p["py_tmp"].encode(), p["link"].encode())  # across mounts: EXDEV


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        global _calls
        _calls += 1
        out = torch.relu(x)
        if _calls == 1:  # the warm-up: only where the build tier is writable (the late order)
            err = _libc_write(os.path.join(TIER, f"probe-{RUN}"), b"writable\n")
            if err:
                raise RuntimeError(f"this kernel needs a writable build dir (errno {err})")
            return out
        key = hashlib.sha256(x.contiguous().numpy().tobytes()).hexdigest()[:24]
        if key not in _mine:
            fired = sorted(n for n, path in _places(key).items() if os.path.lexists(path))
            if fired:
                raise RuntimeError(f"memo of an earlier judgement found: {fired}")
        if _calls <= 12:
            _mine.add(key)
            _memoise(key, out.contiguous().numpy().tobytes()[:4096])
        return out
