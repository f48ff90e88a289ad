"""GPU memory one judging worker shares with the other through a file descriptor (issue 27, goal 1).

The arena's regions (sandbox/worker/arena.py) live in host memory on a CPU. On a GPU the
reference worker makes them in device memory instead, with CUDA's virtual memory management
(the driver API: ``cuMemCreate`` with a POSIX file descriptor handle type, ``cuMemMap``,
``cuMemSetAccess``), exports ``cand_in`` and ``out`` as file descriptors
(``cuMemExportToShareableHandle``) and hands them to the parent over its channel; the parent
hands them on to the candidate worker, which imports and maps them
(``cuMemImportFromShareableHandle``). No CUDA IPC by process id, no shared namespace: the fd is
the capability, carried with SCM_RIGHTS like the host arena's memfds, so the jail's namespaces and
containers change nothing. ``ref_in`` (the reference's own inputs) is never exported.

A ``Block`` is one such allocation mapped in this process; ``tensor()`` is a flat uint8 tensor over
it, made through ``__cuda_array_interface__``: the tensor keeps the block alive, and the block is
unmapped and released only when the last view of it is gone (``__del__``), so a region replaced
while a view of it lives is never freed under that view.

The driver is reached with ctypes (``libcuda.so.1``, already loaded by torch), in the thread that
made torch's CUDA context current. Any failure raises ``DeviceMemError``; the caller then falls
back to the host arena for the whole judgement (recorded in its evidence).
"""

from __future__ import annotations

import ctypes
from typing import Any

_POSIX_FD = 1  # CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
_PINNED = 1  # CU_MEM_ALLOCATION_TYPE_PINNED
_LOC_DEVICE = 1  # CU_MEM_LOCATION_TYPE_DEVICE
PROT_READ, PROT_READWRITE = 1, 3  # CU_MEM_ACCESS_FLAGS_PROT_*
_GRANULARITY_RECOMMENDED = 1
_ATTR_VMM, _ATTR_POSIX_FD = 102, 103  # CU_DEVICE_ATTRIBUTE_*


class DeviceMemError(RuntimeError):
    pass


class _Location(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class _AllocFlags(ctypes.Structure):
    _fields_ = [("compressionType", ctypes.c_ubyte), ("gpuDirectRDMACapable", ctypes.c_ubyte),
                ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 4)]


class _Prop(ctypes.Structure):  # CUmemAllocationProp (cuda.h, CUDA 11.2 and later)
    _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int), ("location", _Location),
                ("win32HandleMetaData", ctypes.c_void_p), ("allocFlags", _AllocFlags)]


class _Access(ctypes.Structure):  # CUmemAccessDesc
    _fields_ = [("location", _Location), ("flags", ctypes.c_int)]


_lib: Any = None


def _driver() -> Any:
    global _lib
    if _lib is None:
        try:
            _lib = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise DeviceMemError(f"the CUDA driver library cannot be loaded: {e}") from e
    return _lib


def _check(res: int, what: str) -> None:
    if res != 0:
        msg = ctypes.c_char_p()
        try:
            _driver().cuGetErrorString(res, ctypes.byref(msg))
        except Exception:  # noqa: BLE001
            pass
        text = msg.value.decode(errors="replace") if msg.value else "unknown error"
        raise DeviceMemError(f"{what} failed: CUDA error {res} ({text})")


def _prop(device: int) -> _Prop:
    p = _Prop()
    p.type, p.requestedHandleTypes = _PINNED, _POSIX_FD
    p.location.type, p.location.id = _LOC_DEVICE, device
    return p


def supported(device: int) -> str | None:
    """None when ``device`` can make and export such memory; else why not."""
    lib = _driver()
    for attr, what in ((_ATTR_VMM, "virtual memory management"), (_ATTR_POSIX_FD, "POSIX fd export")):
        v = ctypes.c_int(0)
        try:
            _check(lib.cuDeviceGetAttribute(ctypes.byref(v), attr, device), "cuDeviceGetAttribute")
        except DeviceMemError as e:
            return str(e)
        if not v.value:
            return f"the device does not support {what}"
    return None


def granularity(device: int) -> int:
    g = ctypes.c_size_t(0)
    p = _prop(device)
    _check(_driver().cuMemGetAllocationGranularity(ctypes.byref(g), ctypes.byref(p), _GRANULARITY_RECOMMENDED),
           "cuMemGetAllocationGranularity")
    return int(g.value) or (2 << 20)


class Block:
    """One allocation of ``size`` bytes on ``device``, mapped here: made (``fd`` None) or
    imported from an exported fd (the fd is not closed here). ``prot``: this process's access."""

    def __init__(self, size: int, device: int, fd: int | None = None, prot: int = PROT_READWRITE) -> None:
        lib = _driver()
        self.ptr, self.handle, self.device = 0, 0, device
        g = granularity(device)
        self.size = -(-max(int(size), 1) // g) * g
        h = ctypes.c_ulonglong(0)
        if fd is None:
            p = _prop(device)
            _check(lib.cuMemCreate(ctypes.byref(h), ctypes.c_size_t(self.size), ctypes.byref(p), ctypes.c_ulonglong(0)),
                   f"cuMemCreate of {self.size} bytes")
        else:
            _check(lib.cuMemImportFromShareableHandle(ctypes.byref(h), ctypes.c_void_p(fd), _POSIX_FD),
                   "cuMemImportFromShareableHandle")
        self.handle = h.value
        try:
            ptr = ctypes.c_ulonglong(0)
            _check(lib.cuMemAddressReserve(ctypes.byref(ptr), ctypes.c_size_t(self.size), ctypes.c_size_t(g),
                                           ctypes.c_ulonglong(0), ctypes.c_ulonglong(0)), "cuMemAddressReserve")
            self.ptr = ptr.value
            _check(lib.cuMemMap(ctypes.c_ulonglong(self.ptr), ctypes.c_size_t(self.size), ctypes.c_size_t(0),
                                ctypes.c_ulonglong(self.handle), ctypes.c_ulonglong(0)), "cuMemMap")
            self._mapped = True
            a = _Access()
            a.location.type, a.location.id, a.flags = _LOC_DEVICE, device, prot
            _check(lib.cuMemSetAccess(ctypes.c_ulonglong(self.ptr), ctypes.c_size_t(self.size), ctypes.byref(a),
                                      ctypes.c_size_t(1)), "cuMemSetAccess")
        except BaseException:
            self.release()
            raise
        self.prot = prot

    def export(self) -> int:
        """A new file descriptor for this allocation (the caller closes it)."""
        fd = ctypes.c_int(-1)
        _check(_driver().cuMemExportToShareableHandle(ctypes.byref(fd), ctypes.c_ulonglong(self.handle), _POSIX_FD,
                                                      ctypes.c_ulonglong(0)), "cuMemExportToShareableHandle")
        return int(fd.value)

    def tensor(self, torch: Any) -> Any:
        """A flat uint8 tensor over the whole block on this device; it keeps the block alive."""
        return torch.as_tensor(_View(self), device=f"cuda:{self.device}")

    def release(self) -> None:
        lib = _driver()
        if self.ptr:
            if getattr(self, "_mapped", False):
                lib.cuMemUnmap(ctypes.c_ulonglong(self.ptr), ctypes.c_size_t(self.size))
                self._mapped = False
            lib.cuMemAddressFree(ctypes.c_ulonglong(self.ptr), ctypes.c_size_t(self.size))
            self.ptr = 0
        if self.handle:
            lib.cuMemRelease(ctypes.c_ulonglong(self.handle))
            self.handle = 0

    def __del__(self) -> None:  # the last view is gone; work queued on it has been synchronized by
        try:                    # the owner (a region is replaced only between requests, after a sync)
            self.release()
        except Exception:  # noqa: BLE001 - at interpreter exit the driver may be gone
            pass


class _View:
    """``__cuda_array_interface__`` over a block; torch keeps this object (and so the block) alive
    as long as any tensor made from it lives."""

    def __init__(self, block: Block) -> None:
        self.block = block
        self.__cuda_array_interface__ = {"shape": (block.size,), "typestr": "|u1", "data": (block.ptr, False),
                                         "version": 3, "strides": None, "stream": None}
