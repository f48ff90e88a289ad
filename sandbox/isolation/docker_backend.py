"""Docker backend: one evaluator worker = one locked-down container (docker SDK; podman too).

The worker program and its channel are the process backend's (``python -m sandbox.worker``
over a unix socket, sandbox/worker/channel.py): this module only *launches* it. Every path the worker
needs (channel dir, scratch, build cache) is bind-mounted at the same path inside, so argv
and env need no rewriting. Each container gets:

* ``network_mode="none"`` (unless the spec asks for network), read-only root, tmpfs /tmp;
* a non-root user (the caller's uid, or 65534 when the harness runs as root: the writable
  mounts are then chowned to it), ``cap_drop=ALL``, ``no-new-privileges``;
* memory (no swap), pids and CPU limits; RLIMIT_FSIZE/CPU/CORE as ulimits;
* GPUs through CDI names on podman (``nvidia.com/gpu=N``) or device requests on Docker;
* labels (engine.LABEL*) so that the next start removes what a crashed harness left, and an
  in-container ``timeout -s KILL`` backstop so a container outlives no deadline even then.

Exit codes follow ``subprocess``: a container killed by signal N reports ``-N``.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field

from sandbox.isolation import engine
from sandbox.isolation.base import WorkerSpec
from sandbox.isolation.docker_handle import ContainerHandle, track

DEFAULT_IMAGE = "kernel-harness:latest"
IMAGE_PYTHON = "/opt/venv/bin/python"  # the Dockerfile's venv (the worker's env sets PATH itself)
NOBODY = "65534:65534"
_cleaned: set[str] = set()  # base urls whose leftovers were already cleaned by this process


class ImageUnavailable(engine.SandboxUnavailable):
    """The image to run is not on the engine; the message says how to build or choose one."""


@dataclass(frozen=True)
class ImageSpec:
    """Which image runs the worker, and what of the host it sees.

    ``python``: the interpreter inside the image; replaces ``argv[0]`` when argv[0] is a
    python path that only exists on the host (None keeps argv as is).
    ``host_mounts``: host paths bind-mounted read-only at the same path (the "host env"
    image used in tests: an empty rootfs plus the host's /usr, Python and checkout).
    """

    image: str = DEFAULT_IMAGE
    python: str | None = None
    host_mounts: tuple[str, ...] = ()
    user: str | None = None  # "uid:gid"; None = caller's uid, or 65534 when root

    @classmethod
    def from_env(cls) -> ImageSpec:
        """HARNESS_DOCKER_IMAGE / HARNESS_DOCKER_PYTHON / HARNESS_DOCKER_HOST_MOUNTS (a:b:c)."""
        mounts = tuple(p for p in os.environ.get("HARNESS_DOCKER_HOST_MOUNTS", "").split(":") if p)
        return cls(
            image=os.environ.get("HARNESS_DOCKER_IMAGE", DEFAULT_IMAGE),
            python=os.environ.get("HARNESS_DOCKER_PYTHON") or (IMAGE_PYTHON if not mounts else None),
            host_mounts=mounts,
            user=os.environ.get("HARNESS_DOCKER_USER") or None,
        )


@dataclass
class ContainerOptions:
    cpus: float | None = None  # nano_cpus; None = no CPU quota
    default_memory_bytes: int = 16 * 1024**3  # when the spec's limits name none
    tmpfs_size: str = "1g"
    shm_size: str = "1g"
    backstop_grace_s: float = 30.0  # in-container `timeout -s KILL` = wall_seconds + grace
    extra_labels: dict[str, str] = field(default_factory=dict)


def _user_for(spec_user: str | None) -> str:
    if spec_user:
        return spec_user
    uid, gid = os.getuid(), os.getgid()
    return NOBODY if uid == 0 else f"{uid}:{gid}"


def _chown_tree(path: str, uid: int, gid: int) -> None:
    """Make a writable mount usable by the container user (only where ownership differs)."""
    if not os.path.exists(path):
        return
    for root, dirs, files in os.walk(path):
        for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
            try:
                st = os.lstat(name)
                if st.st_uid != uid or st.st_gid != gid:
                    os.lchown(name, uid, gid)
            except OSError:
                pass


def _under(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def gpu_request(engine_info: engine.EngineInfo, env: dict[str, str]):
    """(devices, device_requests) for the GPUs named by CUDA_VISIBLE_DEVICES (all if unset)."""
    import docker

    vis = env.get("CUDA_VISIBLE_DEVICES", "").strip()
    ids = [d.strip() for d in vis.split(",") if d.strip()] if vis else []
    if engine_info.podman:  # CDI names (nvidia-ctk cdi generate)
        return [f"nvidia.com/gpu={i}" for i in ids] or ["nvidia.com/gpu=all"], None
    req = docker.types.DeviceRequest(
        device_ids=ids or None, count=None if ids else -1, capabilities=[["gpu"]]
    )
    return None, [req]


def container_gpu_env(env: dict[str, str]) -> dict[str, str]:
    """Inside the container the passed GPUs are numbered from 0: renumber CUDA_VISIBLE_DEVICES
    (UUIDs stay as they are: they are global)."""
    vis = env.get("CUDA_VISIBLE_DEVICES", "").strip()
    ids = [d.strip() for d in vis.split(",") if d.strip()]
    if ids and all(i.isdigit() for i in ids):
        return {**env, "CUDA_VISIBLE_DEVICES": ",".join(str(n) for n in range(len(ids)))}
    return dict(env)


class DockerLauncher:
    """``Launcher`` for ``EvalConfig.sandbox == "docker"``."""

    name = "docker"

    def __init__(self, image: ImageSpec | None = None, client=None,
                 options: ContainerOptions | None = None) -> None:
        self.image = image or ImageSpec.from_env()
        self.options = options or ContainerOptions()
        self._client = client
        self._info: engine.EngineInfo | None = None

    @property
    def client(self):
        if self._client is None:
            self._client = engine.connect()
        url = str(self._client.api.base_url)
        if url not in _cleaned:
            _cleaned.add(url)
            engine.cleanup_leftovers(self._client)
        return self._client

    @property
    def engine_info(self) -> engine.EngineInfo:
        if self._info is None:
            self._info = engine.describe_client(self.client)
        return self._info

    def image_digest(self) -> str:
        """The image's content id (sha256:...) and repo digest when it has one."""
        img = self.client.images.get(self.image.image)
        digests = img.attrs.get("RepoDigests") or []
        return digests[0] if digests else img.id

    def environment(self) -> dict:
        """What goes into ``verdict.environment`` for a verdict judged in a container."""
        info = self.engine_info
        return {"sandbox": "docker", "engine": info.name, "engine_version": info.version,
                "image": self.image.image, "image_digest": self.image_digest()}

    def describe(self) -> str:
        try:
            info = self.engine_info
            return f"docker: {info.name} {info.version}, image {self.image.image} ({self.image_digest()})"
        except Exception as e:  # noqa: BLE001 - doctor line, never raises
            return f"docker: unavailable ({e})"

    def _require_image(self, client) -> None:
        import docker

        try:
            client.images.get(self.image.image)
        except docker.errors.ImageNotFound as e:
            raise ImageUnavailable(
                f"container image {self.image.image!r} is not present on the engine "
                f"({engine.describe_client(client).line()}). Build it with `nox -s image` (needs "
                "a registry for the CUDA base image), or on a machine without one use the host-env "
                "image: eval \"$(python -m sandbox.isolation.hostenv)\" (docs/containers.md)."
            ) from e

    def _argv(self, spec: WorkerSpec) -> list[str]:
        argv = list(spec.argv)
        if self.image.python and argv and "python" in os.path.basename(argv[0]):
            argv[0] = self.image.python
        grace = self.options.backstop_grace_s
        return ["timeout", "-s", "KILL", str(int(spec.limits.wall_seconds + grace)), *argv]

    def _volumes(self, spec: WorkerSpec, uid: int, gid: int, chown: bool) -> dict:
        vols: dict[str, dict[str, str]] = {}
        for p in self.image.host_mounts:
            if os.path.exists(p):
                vols[os.path.realpath(p)] = {"bind": p, "mode": "ro"}
        for m in spec.mounts:
            if not os.path.exists(m.source):
                continue
            if m.writable and chown:
                _chown_tree(m.source, uid, gid)
            vols[os.path.realpath(m.source)] = {"bind": m.target, "mode": "rw" if m.writable else "ro"}
        os.makedirs(spec.scratch, exist_ok=True)
        if chown:
            _chown_tree(spec.scratch, uid, gid)
        vols[os.path.realpath(spec.scratch)] = {"bind": spec.scratch, "mode": "rw"}
        return vols

    def start(self, spec: WorkerSpec) -> ContainerHandle:
        self._require_image(self.client)
        user = _user_for(self.image.user)
        uid, gid = (int(x) for x in user.split(":"))
        vols = self._volumes(spec, uid, gid, chown=os.getuid() == 0 and uid != 0)
        visible = [v["bind"] for v in vols.values()]
        tmpfs = {"/tmp": f"rw,size={self.options.tmpfs_size},mode=1777"}
        for h in spec.hide:  # mask what a mount would expose (results dir, parent's dir)
            if _under(h, visible) and h not in visible:
                tmpfs[h] = "rw,size=1m,mode=0700"
        lim = spec.limits
        mem = lim.rss_bytes or lim.address_space_bytes or self.options.default_memory_bytes
        import docker

        ulimits = [docker.types.Ulimit(name="core", soft=0, hard=0), *_engine_safe_ulimits()]
        if lim.file_size_bytes:
            ulimits.append(docker.types.Ulimit(name="fsize", soft=lim.file_size_bytes,
                                               hard=lim.file_size_bytes))
        if lim.cpu_seconds:
            ulimits.append(docker.types.Ulimit(name="cpu", soft=lim.cpu_seconds, hard=lim.cpu_seconds))
        labels = {engine.LABEL: "1", engine.LABEL_PID: str(os.getpid()),
                  engine.LABEL_HOST: socket.gethostname(),
                  engine.LABEL_ROLE: _role(spec.argv), **self.options.extra_labels}
        kw = dict(
            command=self._argv(spec), environment=dict(spec.env), working_dir=spec.cwd,
            user=user, volumes=vols, tmpfs=tmpfs, read_only=True,
            network_mode="bridge" if spec.network else "none",
            cap_drop=["ALL"], security_opt=["no-new-privileges"],
            mem_limit=mem, memswap_limit=mem, pids_limit=lim.max_processes,
            ulimits=ulimits, labels=labels, shm_size=self.options.shm_size,
            detach=True, stdin_open=False, tty=False,
        )
        if self.options.cpus:
            kw["nano_cpus"] = int(self.options.cpus * 1e9)
        if lim.niceness > 0:  # a background build: the smallest CPU weight (default 1024)
            kw["cpu_shares"] = 2
        if spec.gpu:
            kw["environment"] = container_gpu_env(spec.env)
            devices, requests = gpu_request(self.engine_info, spec.env)
            if devices:
                kw["devices"] = devices
            if requests:
                kw["device_requests"] = requests
        client = self.client
        container = client.containers.create(self.image.image, **kw)
        untrack = track(container)
        try:
            container.start()
        except Exception:
            untrack()
            container.remove(force=True)
            raise
        return ContainerHandle(container, spec.log_path,
                               lim.wall_seconds + self.options.backstop_grace_s, memory_bytes=mem,
                               quotas=spec.quotas)


def _engine_safe_ulimits() -> list:
    """nofile/nproc no higher than ours: runc cannot raise a limit its caller lacks (podman
    in CI: "error setting rlimit type 7: operation not permitted"), and naming any ulimit in
    the API replaces the engine's defaults."""
    import resource

    import docker

    out = []
    for name, res, cap in (("nofile", resource.RLIMIT_NOFILE, 1024),
                           ("nproc", resource.RLIMIT_NPROC, 4096)):
        soft, _hard = resource.getrlimit(res)
        val = cap if soft == resource.RLIM_INFINITY else min(cap, soft)
        out.append(docker.types.Ulimit(name=name, soft=val, hard=val))
    return out


def _role(argv: list[str]) -> str:
    return argv[argv.index("--role") + 1] if "--role" in argv[:-1] else "worker"
