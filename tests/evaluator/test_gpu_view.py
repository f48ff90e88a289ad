"""A judging worker sees only the GPU it was given, as its cuda:0 (sandbox/worker/workerenv.one_gpu_view):
on a machine with several GPUs a candidate cannot launch work on, or read, the GPU where another
judgement is being timed, and code written for 'cuda' runs on the GPU it was handed."""

from __future__ import annotations

import os

import pytest

from sandbox.worker.workerenv import one_gpu_view
from tests.evaluator.conftest import session_spec


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


def test_the_session_starts_the_worker_on_its_gpu_alone(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "5,7")
    spec = session_spec("candidate", "cuda:1")
    assert spec.env["CUDA_VISIBLE_DEVICES"] == "7"
    assert spec.argv[spec.argv.index("--device") + 1] == "cuda:0"
    assert spec.gpu
    assert not os.path.exists(spec.scratch)  # a worker that did not start leaves no scratch behind
