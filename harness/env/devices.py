"""``--device`` checked against what this machine has, before anything starts (issue 26, item 2):
one line naming the value, what the machine has and the fix (``UserError``: exit 2), instead of a
worker's traceback after a minute. Every command that takes ``--device`` calls ``resolve_device``."""

from __future__ import annotations

import re

from harness.usererror import UserError

_CUDA = re.compile(r"^cuda(?::(\d+))?$")


def _torch_cuda() -> tuple[bool, int, str]:
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        return False, 0, f"torch does not import ({type(e).__name__})"
    build = f"torch {torch.__version__}" + ("" if torch.version.cuda else ", a CPU-only build")
    try:
        n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    except Exception:  # noqa: BLE001
        n = 0
    return n > 0, n, build


def resolve_device(device: str | None, *, option: str = "--device") -> str:
    """``None`` -> ``cuda`` where a GPU is visible, else ``cpu``; ``cpu``, ``cuda``, ``cuda:N`` are
    checked against this machine; anything else is refused."""
    if device is None or device == "":
        return "cuda" if _torch_cuda()[0] else "cpu"
    d = device.strip().lower()
    if d == "cpu":
        return "cpu"
    m = _CUDA.match(d)
    if m is None:
        raise UserError(f"{option} {device}: not a device this harness judges on; use cpu, cuda or cuda:N "
                        "(`harness doctor` lists this machine's GPUs)")
    ok, n, build = _torch_cuda()
    if not ok:
        raise UserError(f"{option} {device}: no CUDA GPU is visible to torch here ({build}); use {option} cpu, "
                        "or run on a machine with an NVIDIA GPU (`harness doctor` says what this one has)")
    if m.group(1) is not None and int(m.group(1)) >= n:
        raise UserError(f"{option} {device}: this machine has {n} GPU(s) (cuda:0..cuda:{n - 1}); "
                        "pick one of them (`harness doctor` lists them)")
    return d
