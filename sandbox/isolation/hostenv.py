"""The "host environment" image: an empty rootfs that borrows the host's Python read-only.

Where no registry can be reached (this project's CI), the real image (Dockerfile) cannot be
built. Tests and CPU users instead import a tiny image whose root holds only the host's
top-level symlinks (``/bin -> usr/bin`` on merged-/usr systems) and empty mount points, and
bind-mount the host's /usr, /etc, the Python installation, the virtualenv and the checkout
read-only at the same paths. Nothing of the host is writable inside.

    spec = hostenv_spec(client)            # builds the image once, returns an ImageSpec
    DockerLauncher(image=spec)
"""

from __future__ import annotations

import io
import json
import os
import sys
import tarfile
from pathlib import Path

from sandbox.isolation.docker_backend import ImageSpec

HOSTENV_IMAGE = "localhost/kernel-harness-hostenv:1"
REPO_ROOT = Path(__file__).resolve().parents[2]
_TOP = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")


def _rootfs_tar() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for d in ("proc", "sys", "dev", "tmp", "etc", "usr", "run", "var", "home"):
            ti = tarfile.TarInfo(d)
            ti.type, ti.mode = tarfile.DIRTYPE, 0o1777 if d == "tmp" else 0o755
            tar.addfile(ti)
        for name in _TOP:
            p = Path("/") / name
            if p.is_symlink():
                ti = tarfile.TarInfo(name)
                ti.type, ti.linkname = tarfile.SYMTYPE, os.readlink(p)
                tar.addfile(ti)
    return buf.getvalue()


def host_mounts() -> tuple[str, ...]:
    """Host paths the worker needs, read-only: system, Python, venv, checkout, CUDA."""
    paths = ["/usr", "/etc"]
    paths += [f"/{n}" for n in _TOP if os.path.isdir(f"/{n}") and not os.path.islink(f"/{n}")]
    paths += [os.path.realpath(sys.base_prefix), sys.prefix, str(REPO_ROOT)]
    cuda = os.environ.get("CUDA_HOME") or ("/usr/local/cuda" if os.path.isdir("/usr/local/cuda") else "")
    if cuda:
        paths.append(cuda)
    out: list[str] = []
    for p in paths:
        if os.path.exists(p) and not any(p == q or p.startswith(q.rstrip("/") + "/") for q in out):
            out.append(p)
    return tuple(out)


def ensure_hostenv_image(client, name: str = HOSTENV_IMAGE) -> str:
    """Import the empty-rootfs image once (podman tags imports ':latest': re-tag). Returns its id."""
    try:
        return client.images.get(name).id
    except Exception:  # noqa: BLE001 - docker.errors.ImageNotFound
        pass
    repo, _, tag = name.rpartition(":")
    out = client.api.import_image_from_data(_rootfs_tar(), repository=repo, tag=tag)
    image_id = None
    for line in str(out).splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        image_id = msg.get("id") or msg.get("status") or image_id
    img = client.images.get(image_id) if image_id else client.images.get(f"{repo}:latest")
    img.tag(repo, tag)
    return img.id


def hostenv_spec(client) -> ImageSpec:
    ensure_hostenv_image(client)
    return ImageSpec(image=HOSTENV_IMAGE, python=None, host_mounts=host_mounts())


def hostenv_env(client) -> dict[str, str]:
    """Environment variables that make ``DockerLauncher()`` (``--sandbox docker``) use this image."""
    spec = hostenv_spec(client)
    return {"HARNESS_DOCKER_IMAGE": spec.image, "HARNESS_DOCKER_HOST_MOUNTS": ":".join(spec.host_mounts)}


if __name__ == "__main__":  # python -m sandbox.isolation.hostenv  -> export lines for a shell
    from sandbox.isolation.engine import connect

    for k, v in hostenv_env(connect()).items():
        print(f"export {k}={v}")
