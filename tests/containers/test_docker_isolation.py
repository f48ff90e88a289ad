"""The docker backend's isolation, through the docker SDK against a real engine (podman here).

Each test starts real containers from the host-env image with the launcher the evaluator
uses, runs a small hostile Python program inside, and asserts what the container allowed.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time

import pytest

from sandbox.isolation.base import Limits, Mount, WorkerSpec

pytestmark = pytest.mark.podman

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


_SCRATCH: list[str] = []


def _mkscratch() -> str:
    _SCRATCH.append(tempfile.mkdtemp(prefix="kh-ctest-"))
    return _SCRATCH[-1]


@pytest.fixture(autouse=True)
def _remove_scratch_dirs():
    yield
    while _SCRATCH:
        shutil.rmtree(_SCRATCH.pop(), ignore_errors=True)


def _spec(code: str, scratch: str, **limits) -> WorkerSpec:
    lim = {"wall_seconds": 30.0, "max_processes": 64, "rss_bytes": 512 * 1024**2, **limits}
    return WorkerSpec(
        argv=[sys.executable, "-c", textwrap.dedent(code)],
        env={"PATH": "/usr/bin:/bin", "HOME": scratch, "PYTHONPATH": REPO},
        cwd=scratch, scratch=scratch, limits=Limits(**lim), log_path=os.path.join(scratch, "log"),
    )


def _run(launcher, code: str, timeout: float = 60, **limits) -> tuple[int | None, str, object]:
    scratch = _mkscratch()
    h = launcher.start(_spec(code, scratch, **limits))
    rc = h.wait(timeout)
    if rc is None:
        h.kill()
        rc = h.poll()
    with open(os.path.join(scratch, "log")) as f:
        return rc, f.read(), h


def _labelled(client) -> list:
    return client.containers.list(all=True, filters={"label": "kernel-harness=1"})


def test_worker_runs_as_non_root_without_capabilities(launcher):
    rc, out, _ = _run(launcher, """
        import os
        caps = [l for l in open('/proc/self/status') if l.startswith('CapEff')][0].split()[1]
        print('uid', os.getuid(), 'caps', caps)
    """)
    assert rc == 0, out
    uid = int(out.split()[1])
    assert uid != 0
    assert int(out.split()[3], 16) == 0


def test_network_call_from_inside_fails(launcher):
    rc, out, _ = _run(launcher, """
        import socket
        try:
            socket.create_connection(('1.1.1.1', 53), timeout=3)
            print('NETWORK-REACHED')
        except OSError as e:
            print('blocked', e.errno)
        print('ifaces', sorted(n for _, n in socket.if_nameindex()))
    """)
    assert rc == 0, out
    assert "NETWORK-REACHED" not in out and "blocked" in out
    assert "ifaces ['lo']" in out


def test_write_to_root_filesystem_fails(launcher):
    rc, out, _ = _run(launcher, f"""
        import os
        for p in ('/evil', '/usr/evil', '/etc/evil', {os.path.join(REPO, 'evil')!r}):
            try:
                open(p, 'w').write('x')
                print('WROTE', p)
            except OSError as e:
                print('denied', p, e.errno)
        open('ok-in-scratch', 'w').write('fine')
        print('scratch ok')
    """)
    assert rc == 0, out
    assert "WROTE" not in out
    assert "scratch ok" in out
    assert not os.path.exists(os.path.join(REPO, "evil"))


def test_fork_bomb_is_contained(launcher):
    rc, out, h = _run(launcher, """
        import os, time
        n = 0
        try:
            for _ in range(10000):
                if os.fork() == 0:
                    time.sleep(60); os._exit(0)
                n += 1
        except OSError as e:
            print('fork refused after', n, 'errno', e.errno, flush=True)
        time.sleep(60)
    """, timeout=5, max_processes=32)
    assert "fork refused after" in out, out
    assert int(out.split("after")[1].split()[0]) < 32
    assert rc is not None and rc < 0  # killed by us at the deadline, not exited by itself
    assert h.container.id not in [c.id for c in _labelled(launcher.client)]


def test_memory_bomb_is_contained(launcher):
    rc, out, h = _run(launcher, """
        blocks = []
        for i in range(64):
            blocks.append(bytearray(64 * 1024 * 1024))
            print('allocated MiB', 64 * (i + 1), flush=True)
        print('ALL-ALLOCATED')
    """, rss_bytes=256 * 1024**2)
    assert "ALL-ALLOCATED" not in out
    assert rc == -signal.SIGKILL
    assert "memory" in (h.violation() or "")


def test_container_is_removed_after_exit_and_after_kill(launcher):
    _, _, h1 = _run(launcher, "print('bye')")
    scratch = _mkscratch()
    h2 = launcher.start(_spec("import time; time.sleep(60)", scratch))
    assert h2.poll() is None
    h2.kill()
    assert h2.poll() == -signal.SIGKILL
    ids = [c.id for c in _labelled(launcher.client)]
    assert h1.container.id not in ids and h2.container.id not in ids


def test_hidden_path_is_masked_inside_a_visible_mount(launcher, tmp_path):
    secret_dir = tmp_path / "results"
    secret_dir.mkdir()
    (secret_dir / "expected.pt").write_text("the answers")
    scratch = _mkscratch()
    spec = _spec(f"""
        try:
            print('READ', open({str(secret_dir / 'expected.pt')!r}).read())
        except OSError as e:
            print('hidden', e.errno)
    """, scratch)
    spec = WorkerSpec(**{**spec.__dict__, "mounts": [Mount(str(tmp_path), str(tmp_path))],
                         "hide": [str(secret_dir)]})
    h = launcher.start(spec)
    assert h.wait(60) == 0
    out = open(os.path.join(scratch, "log")).read()
    assert "hidden" in out and "the answers" not in out, out


_ORPHAN_PARENT = """
import sys, tempfile, time
sys.path.insert(0, {repo!r})
from sandbox.isolation.base import Limits, WorkerSpec
from sandbox.isolation.docker_backend import DockerLauncher, ImageSpec
image = ImageSpec(image={image!r}, python=None, host_mounts={mounts!r})
s = tempfile.mkdtemp()
h = DockerLauncher(image=image).start(WorkerSpec(argv=[sys.executable, '-c', 'import time; time.sleep(120)'],
    env={{'PATH': '/usr/bin:/bin'}}, cwd=s, scratch=s, limits=Limits(wall_seconds=120)))
print(h.container.id, flush=True)
time.sleep(300)
"""

_NEXT_START = """
import sys
sys.path.insert(0, {repo!r})
from sandbox.isolation.docker_backend import DockerLauncher, ImageSpec
DockerLauncher(image=ImageSpec(image={image!r})).client  # the first use cleans up
"""


def test_killed_harness_leaves_no_container_after_next_start(docker_client, hostenv_image):
    env = {**os.environ}
    code = _ORPHAN_PARENT.format(repo=REPO, image=hostenv_image.image, mounts=hostenv_image.host_mounts)
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
    try:
        cid = p.stdout.readline().strip()
        assert cid, "the parent did not start its container"
        assert docker_client.containers.get(cid).status == "running"
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait(10)
    # SIGKILL ran no cleanup: the container is still there ...
    assert cid in [c.id for c in _labelled(docker_client)]
    # ... until the next harness start removes what a dead harness left.
    subprocess.run([sys.executable, "-c", _NEXT_START.format(repo=REPO, image=hostenv_image.image)],
                   check=True, env=env, timeout=60)
    deadline = time.monotonic() + 10
    while cid in [c.id for c in _labelled(docker_client)] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert cid not in [c.id for c in _labelled(docker_client)]


def test_container_dies_at_its_deadline_even_when_nobody_kills_it(docker_client, hostenv_image):
    from sandbox.isolation.docker_backend import ContainerOptions, DockerLauncher

    launcher = DockerLauncher(image=hostenv_image, client=docker_client,
                              options=ContainerOptions(backstop_grace_s=2))
    scratch = _mkscratch()
    h = launcher.start(_spec("import time; time.sleep(120)", scratch, wall_seconds=1.0))
    cid = h.container.id
    # nobody calls kill(): the in-container `timeout -s KILL` ends it at wall + grace (3 s)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and docker_client.containers.get(cid).status == "running":
        time.sleep(0.5)
    assert docker_client.containers.get(cid).status != "running"
    assert h.poll() == -signal.SIGKILL
    assert "wall" in (h.violation() or "")
    assert cid not in [c.id for c in _labelled(docker_client)]


def test_missing_image_is_a_setup_error_that_says_how_to_get_one(docker_client):
    from sandbox.isolation.docker_backend import DockerLauncher, ImageSpec
    from sandbox.isolation.engine import SandboxUnavailable

    launcher = DockerLauncher(image=ImageSpec(image="localhost/kh-no-such-image:0"), client=docker_client)
    scratch = _mkscratch()
    with pytest.raises(SandboxUnavailable) as err:
        launcher.start(_spec("print(1)", scratch))
    assert "nox -s image" in str(err.value) and "sandbox.isolation.hostenv" in str(err.value)
