"""A judging worker sees only the GPU it was given, as its cuda:0 (sandbox/session.one_gpu_view):
on a machine with several GPUs a candidate cannot launch work on, or read, the GPU where another
judgement is being timed, and code written for 'cuda' runs on the GPU it was handed."""

from __future__ import annotations

import os
import time

import pytest

from sandbox.isolation.base import Limits
from sandbox.session import WorkerSession, one_gpu_view


@pytest.mark.parametrize(
    ("device", "env", "want"),
    [
        ("cuda:1", {}, ("cuda:0", "1")),
        ("cuda:0", {}, ("cuda:0", "0")),
        ("cuda:1", {"CUDA_VISIBLE_DEVICES": "2,3"}, ("cuda:0", "3")),
        ("cuda:0", {"CUDA_VISIBLE_DEVICES": "GPU-aa, GPU-bb"}, ("cuda:0", "GPU-aa")),
        ("cuda", {"CUDA_VISIBLE_DEVICES": "2,3"}, ("cuda", None)),  # no index: left to the process's view
        ("cpu", {"CUDA_VISIBLE_DEVICES": "1"}, ("cpu", None)),
    ],
)
def test_a_worker_sees_its_one_gpu_as_cuda0(device, env, want):
    assert one_gpu_view(device, env) == want


def test_a_gpu_this_process_does_not_see_is_a_clear_error():
    with pytest.raises(ValueError, match=r"cuda:2.*sees GPUs \['4', '5'\].*cuda:0\.\.cuda:1"):
        one_gpu_view("cuda:2", {"CUDA_VISIBLE_DEVICES": "4,5"})


class _Refuse(Exception):
    pass


class _RecordingLauncher:
    """Stands in front of the real launch only to read the spec the session built."""

    inherits_fds = True

    def __init__(self) -> None:
        self.spec = None

    def start(self, spec):
        self.spec = spec
        raise _Refuse


def test_the_session_starts_the_worker_on_its_gpu_alone(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "5,7")
    launcher = _RecordingLauncher()
    with pytest.raises(_Refuse):
        WorkerSession("candidate", launcher, "cuda:1", None, time.monotonic() + 10, Limits())
    spec = launcher.spec
    assert spec.env["CUDA_VISIBLE_DEVICES"] == "7"
    assert spec.argv[spec.argv.index("--device") + 1] == "cuda:0"
    assert spec.gpu
    assert not os.path.exists(spec.scratch)  # a worker that did not start leaves no scratch behind
