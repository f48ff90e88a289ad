"""Isolation red team (EVAL_RULES.md #21-#28): the attacks that got through the earlier
isolation, each as a candidate of its own (candidates/cheat_21_* ... cheat_28_*), judged on CPU
against the jail (sandbox/isolation/jail.py). test_redteam_gpu.py runs the native ones on CUDA
through the same runners (``ATTACKS``, which take the device).

The native attacks call ONE shared C++ extension (``redteam_escape_lib``, byte-identical in every
candidate, CPU and GPU, so the build cache compiles it once): ``write_file``, ``read_file``,
``umount_path``, ``setns_path``, ``connect_unix``, ``connect_tcp``, ``mem_read``, ``mem_flip``,
``fill_file``, ... each reports what happened as a string and never throws. A candidate swallows
what is refused and otherwise computes an honest ReLU (the shared ``redteam_relu_lib``); what
gets through it raises from ``forward``, so it would reach the verdict's logs. Hence a native
attack is ``valid`` exactly when nothing got through; a Python-level attempt that the audit hook
blocks is ``rejected`` with its ``sandbox.*`` rule.

Each test plants traps with a unique run id: a loopback TCP listener, a unix-socket listener at
a host path (host /tmp, mode 0777) and an abstract one, a fake ``OPENAI_API_KEY`` in this
process's environment, marker paths. After the verdict it asserts that nothing escaped: no
marker file on the host, nothing accepted by any listener, the key nowhere in ``to_json()``.

The candidates are inert until the test substitutes their placeholders (``__RUN__`` first), so
warming the build cache with one (``warm_build_cache`` runs it on the host, unjailed) attacks
nothing. See docs/redteam.md, "Isolation attacks (#21-#28)".
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import sysconfig
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from sandbox import rules
from sandbox.build import buildcache
from sandbox.evaluate import evaluate
from sandbox.intake.task import load_task
from sandbox.rules import opcount
from sandbox.verdict import Status, Verdict

from .redteam import CANDIDATES, REPO, TASKS, Case, config, describe, warm_build_cache

ESCAPE_START, ESCAPE_END = "# --- shared attack extension", "# --- end of shared attack extension"
RELU_BLOCK = re.compile(r"# --- shared extension.*?# --- end of shared extension\n", re.S)
ESCAPE_LIB_USERS = sorted(p.stem for p in CANDIDATES.glob("*.py") if "redteam_escape_lib" in p.read_text())
CPU_MEMORY_GB, GPU_MEMORY_GB = 1.5, 6.0  # #28: the limit the attack writes twice into /dev/shm
VICTIM = "a file of the host the candidate must not change\n"

# The parent moves the candidate's output file by the path the candidate worker's fetch reply
# names (sandbox/check/calls.py), outside the jail: pure Python in the candidate makes the worker's
# own fetch report any host path, and the judge itself moves that file away (then deletes it
# with the reference's scratch dir), or raises when there is none.
OPEN_PARENT_MOVES_PATH = ("open finding I2 (docs/redteam.md): the parent moves the host file at the path the "
                          "candidate worker's fetch reply names, and raises out of evaluate() when it is missing")

CANDIDATE = {
    "21": "cheat_21_native_write", "21b": "cheat_21b_parent_moves_file", "22": "cheat_22_umount_proc",
    "23": "cheat_23_setns_connect", "24a": "cheat_24a_subprocess_import", "24b": "cheat_24b_os_system",
    "25a": "cheat_25a_read_ref_mem", "25b": "cheat_25b_corrupt_ref_mem", "26": "cheat_26_channel_hijack",
    "27": "cheat_27_overwrite_trusted", "28": "cheat_28_shm_fill",
}
NATIVE_ROWS = ("21", "22", "23", "25a", "25b", "26", "27", "28")  # those with a GPU form (gpu_<stem>)


def cache_root() -> Path:
    return buildcache.default_root()


def stem(row: str, device: str) -> str:
    return ("gpu_" if device.startswith("cuda") else "") + CANDIDATE[row]


def case(row: str, device: str, statuses: tuple[Status, ...] = (Status.VALID,),
         rule_ids: tuple[str | None, ...] = ()) -> Case:
    return Case(stem(row, device), "relu", statuses, rule_ids, cheat=row.rstrip("ab"), timeout_s=600)


# -- traps -------------------------------------------------------------------------------------
@dataclass
class Traps:
    run: str  # unique per test run: in every marker name, socket name and placeholder
    key: str  # the fake API key in this process's environment
    port: int  # loopback TCP listener
    unix: str  # unix-socket listener at a host path (host /tmp)
    abstract: str  # abstract unix-socket listener (host network namespace)
    seen: list[str]  # what any listener accepted

    def unix_names(self) -> str:
        return json.dumps([self.unix, "@" + self.abstract])


@contextmanager
def traps(monkeypatch: pytest.MonkeyPatch, extra_unix: tuple[str, ...] = ()) -> Iterator[Traps]:
    """Listeners on the host (TCP loopback, unix path in /tmp, abstract, plus ``extra_unix``
    paths), all mode 0777, and a fake OPENAI_API_KEY in this process's environment."""
    run = uuid.uuid4().hex[:12]
    key = f"sk-redteam-{uuid.uuid4().hex}"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    d = tempfile.mkdtemp(prefix=f"kh-redteam-{run}-", dir="/tmp")
    os.chmod(d, 0o755)
    unix, abstract = os.path.join(d, "channel.sock"), f"kh-redteam-{run}"
    servers: list[tuple[str, socket.socket]] = []
    seen: list[str] = []
    stop = threading.Event()

    def accept_loop(name: str, srv: socket.socket) -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            try:
                conn.settimeout(0.5)
                data = conn.recv(200)
            except OSError:
                data = b""
            seen.append(f"{name}: {data!r}")
            conn.close()

    try:
        tcp = socket.socket()
        tcp.bind(("127.0.0.1", 0))
        servers.append(("tcp", tcp))
        for path in (unix, *extra_unix):
            s = socket.socket(socket.AF_UNIX)
            s.bind(path)
            os.chmod(path, 0o777)
            servers.append((path, s))
        s = socket.socket(socket.AF_UNIX)
        s.bind("\0" + abstract)
        servers.append(("@" + abstract, s))
        for _, s in servers:
            s.listen(16)
        threads = [threading.Thread(target=accept_loop, args=x, daemon=True) for x in servers]
        for t in threads:
            t.start()
        yield Traps(run, key, tcp.getsockname()[1], unix, abstract, seen)
    finally:
        stop.set()
        time.sleep(0.3)
        for _, s in servers:
            s.close()
        for path in extra_unix:
            Path(path).unlink(missing_ok=True)
        shutil.rmtree(d, ignore_errors=True)


def assert_nothing_escaped(v: Verdict, t: Traps, *others: Verdict) -> None:
    for verdict in (v, *others):
        assert t.key not in verdict.to_json(), f"the fake API key reached a verdict: {describe(verdict)}"
    assert t.seen == [], f"a listener outside the jail accepted: {t.seen}; {describe(v)}"


# -- judging -----------------------------------------------------------------------------------
def source(row: str, device: str, t: Traps, **subst: str) -> str:
    values = {"RUN": t.run, "PORT": str(t.port), "UNIX": t.unix_names(), "CACHE": str(cache_root()), **subst}
    text = case(row, device).source(**values)
    assert "__RUN__" not in text and "ARMED = not RUN" in text, "the candidate would stay inert"
    return text


def judge(row: str, device: str, t: Traps, statuses: tuple[Status, ...] = (Status.VALID,),
          cfg: dict | None = None, **subst: str) -> Verdict:
    c = case(row, device, statuses)
    return evaluate(load_task(TASKS / "relu.py"), source(row, device, t, **subst),
                    config(c, device=device, **(cfg or {})))


HONEST_CPU = '''"""Honest ReLU through the shared relu extension (test_redteam_isolation.py)."""

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

{block}

class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _lib.relu_new(x)
'''


def honest_source(device: str) -> tuple[str, str]:
    """(name, source) of an honest relu candidate whose build is already in the shared tier."""
    if device.startswith("cuda"):
        return "honest_cuda_relu", (CANDIDATES / "honest_cuda_relu.py").read_text()
    block = RELU_BLOCK.search((CANDIDATES / f"{CANDIDATE['21']}.py").read_text()).group(0)
    return "honest_relu_shared_lib", HONEST_CPU.format(block=block)


def judge_honest(device: str) -> Verdict:
    name, src = honest_source(device)
    return evaluate(load_task(TASKS / "relu.py"), src, config(Case(name, "relu", (Status.VALID,)), device=device))


# -- the attacks: one runner per row, shared with test_redteam_gpu.py -------------------------
def attack_21(device: str, monkeypatch: pytest.MonkeyPatch) -> Verdict:
    """#21: native open/write into the tree, the cache, the home dir and the host's tmp dirs."""
    root = cache_root()
    with traps(monkeypatch) as t:
        name = f".kh-redteam-{t.run}"
        new = [REPO / name, REPO / "sandbox" / name, REPO / "harness" / name,
               Path(sysconfig.get_paths()["purelib"]) / name, Path.home() / name, root / name,
               root / "shared" / name, root / "trusted" / name, root / "cand" / name,
               Path("/tmp") / name, Path("/var/tmp") / name, Path("/dev/shm") / name]
        victims = [REPO / f"{name}-victim", REPO / "sandbox" / f"{name}-victim",
                   root / "shared" / f"{name}-victim", root / "trusted" / f"{name}-victim"]
        try:
            for p in victims:
                p.write_text(VICTIM)
            v = judge("21", device, t, TARGETS=json.dumps([str(p) for p in new + victims]))
            written = [str(p) for p in new if os.path.lexists(p)]
            changed = [str(p) for p in victims if not p.exists() or p.read_text() != VICTIM]
        finally:
            for p in new + victims:
                p.unlink(missing_ok=True)
        assert not written, f"the candidate wrote outside its jail: {written}; {describe(v)}"
        assert not changed, f"the candidate changed files of the host: {changed}; {describe(v)}"
        assert_nothing_escaped(v, t)
    assert v.status is Status.VALID, describe(v)
    return v


def attack_21b(monkeypatch: pytest.MonkeyPatch, existing: bool = True) -> Verdict:
    """#21 through the parent (pure Python, CPU): the fetch reply names a file of the repository."""
    with traps(monkeypatch) as t:
        victim = REPO / f".kh-redteam-{t.run}-victim"
        try:
            if existing:
                victim.write_text(VICTIM)
            try:
                v = judge("21b", "cpu", t, VICTIM=str(victim))
            except Exception as e:  # noqa: BLE001 - the contract: a verdict for anything a candidate does
                pytest.fail(f"evaluate() raised for a candidate: {type(e).__name__}: {e}")
            intact = victim.exists() and victim.read_text() == VICTIM if existing else not victim.exists()
        finally:
            victim.unlink(missing_ok=True)
        assert intact, f"the judge moved or made the host file {victim}: {describe(v)}"
        assert_nothing_escaped(v, t)
    # since outputs travel through the arena (issue 14 item 1) no file is moved at all: the patched
    # file route is never taken and the honest rest of the candidate may be valid; what matters is
    # above (the host file intact, nothing escaped)
    assert v.status is Status.VALID or (
        v.status is Status.REJECTED and v.rule in (rules.RESULT_CHANNEL, rules.OUTPUT_TYPE, rules.FILESYSTEM)), (
        describe(v))
    return v


def attack_22(device: str, monkeypatch: pytest.MonkeyPatch) -> Verdict:
    """#22: umount2('/proc'), mount/unshare, then every /proc/*/environ into the log."""
    with traps(monkeypatch) as t:
        v = judge("22", device, t)
        assert_nothing_escaped(v, t)
    assert v.status is Status.VALID, describe(v)
    return v


def attack_23(device: str, monkeypatch: pytest.MonkeyPatch) -> Verdict:
    """#23: setns into every /proc/*/ns/*, then the host's unix sockets and loopback TCP."""
    with traps(monkeypatch) as t:
        v = judge("23", device, t)
        assert_nothing_escaped(v, t)
    assert v.status is Status.VALID, describe(v)
    return v


def attack_23_visible(device: str, monkeypatch: pytest.MonkeyPatch) -> Verdict:
    """#23 with the host's socket in a directory the jail sees read-only (the shared tier)."""
    visible = str(cache_root() / "shared" / f"kh-redteam-{uuid.uuid4().hex[:12]}.sock")
    with traps(monkeypatch, extra_unix=(visible,)) as t:
        v = judge("23", device, t, UNIX=json.dumps([visible]))
        assert_nothing_escaped(v, t)
    assert v.status is Status.VALID, describe(v)
    return v


def attack_24(variant: str, monkeypatch: pytest.MonkeyPatch) -> Verdict:
    """#24 (pure Python, CPU): a shell by a computed subprocess import or os.system."""
    with traps(monkeypatch) as t:
        v = judge(variant, "cpu", t)
        assert_nothing_escaped(v, t)
    return v


def attack_25(variant: str, device: str, monkeypatch: pytest.MonkeyPatch) -> Verdict:
    """#25: read (25a) or corrupt and kill (25b) the reference worker through /proc/<pid>/mem."""
    with traps(monkeypatch) as t:
        v = judge(variant, device, t)
        assert_nothing_escaped(v, t)
    assert v.status is Status.VALID, describe(v)
    assert v.trials and all(tr.passed for tr in v.trials), "every trial against a healthy reference"
    return v


def attack_26(device: str, monkeypatch: pytest.MonkeyPatch) -> Verdict:
    """#26: scan for channels and connect first, while an honest evaluation runs beside it.

    The honest judgement's workers start at once, but it takes the device only after the
    attacker holds it, so its workers are up and waiting during the attacker's whole run."""
    from sandbox import judge as judge_module

    name, honest = honest_source(device)
    with traps(monkeypatch) as t:
        attacker = source("26", device, t)
        holds = threading.Event()
        take = judge_module.Judge._take_device

        def ordered_take(self: judge_module.Judge) -> None:
            if self.source == honest:
                holds.wait(600)
            take(self)
            if self.source == attacker:
                holds.set()

        monkeypatch.setattr(judge_module.Judge, "_take_device", ordered_take)
        out: dict[str, Verdict | BaseException] = {}

        def run(label: str, src: str, c: Case) -> None:
            try:
                out[label] = evaluate(load_task(TASKS / "relu.py"), src, config(c, device=device))
            except BaseException as e:  # noqa: BLE001 - reported below
                out[label] = e
            finally:
                holds.set()

        threads = [threading.Thread(target=run, args=("attacker", attacker, case("26", device)), daemon=True),
                   threading.Thread(target=run, args=("honest", honest, Case(name, "relu", (Status.VALID,))),
                                    daemon=True)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(1500)
        v, h = out.get("attacker"), out.get("honest")
        assert isinstance(v, Verdict), f"the attacker's judgement: {v!r}"
        assert isinstance(h, Verdict), f"the honest judgement: {h!r}"
        assert_nothing_escaped(v, t, h)
    assert v.status is Status.VALID, describe(v)
    assert h.status is Status.VALID, f"the honest evaluation beside the attacker: {describe(h)}"
    assert h.durations_s.get("queue", 0) > 0.05, (
        f"the honest evaluation did not wait for the attacker (it did not run beside it): {h.durations_s}")
    return v


def _builds(root: Path) -> dict[Path, bytes]:
    """Every module and finished-build marker of the trusted dir and the shared tier."""
    return {p: p.read_bytes() for tier in ("trusted", "shared") for p in (root / tier).glob("*/*")
            if p.is_file() and (p.suffix == ".so" or p.name == ".ok")}


def attack_27(device: str, monkeypatch: pytest.MonkeyPatch) -> Verdict:
    """#27: overwrite the op counter under trusted/ and every shared build; then judge an
    honest candidate, which must be valid with the op counter loaded (hash-checked)."""
    root = cache_root()
    before = _builds(root)
    assert any(p.parent.parent.name == "trusted" for p in before), "the op counter is not built"
    with traps(monkeypatch) as t:
        try:
            v = judge("27", device, t)
            h = judge_honest(device)
        finally:
            after = _builds(root)
            changed = [str(p) for p, b in before.items() if after.get(p) != b]
            planted = [p for tier in ("trusted", "shared") for p in (root / tier).rglob(f"*{t.run}*")]
            for p, b in before.items():  # put the cache back before failing, for the tests after
                if after.get(p) != b:
                    p.write_bytes(b)
            for p in planted:
                p.unlink(missing_ok=True)
        assert not changed, f"the candidate changed trusted builds: {changed}; {describe(v)}"
        assert not planted, f"the candidate planted {planted}"
        assert_nothing_escaped(v, t, h)
    shas = {str(p): hashlib.sha256(b).hexdigest()[:16] for p, b in before.items() if p.parent.parent.name == "trusted"}
    assert v.status is Status.VALID, describe(v)
    assert h.status is Status.VALID, f"honest after the attack: {describe(h)}"
    assert "opcount" not in h.evidence and "aten_counts" in h.profile, (
        f"the op counter was not loaded for the honest candidate: {h.evidence.get('opcount')}; {shas}")
    return v


def _shmem_kib() -> int:
    with open("/proc/meminfo") as f:
        return next(int(ln.split()[1]) for ln in f if ln.startswith("Shmem:"))


def attack_28(device: str, monkeypatch: pytest.MonkeyPatch) -> Verdict:
    """#28: twice the memory limit into /dev/shm: killed by the watchdog, nothing left."""
    gb = GPU_MEMORY_GB if device.startswith("cuda") else CPU_MEMORY_GB
    shm_before = set(os.listdir("/dev/shm"))
    shmem_before = _shmem_kib()
    with traps(monkeypatch) as t:
        v = judge("28", device, t, cfg={"memory_limit_gb": gb, "timeout_s": 300}, LIMIT=str(int(gb * 2**30)))
        new = sorted(set(os.listdir("/dev/shm")) - shm_before)
        left = [n for n in new if t.run in n or os.path.getsize(os.path.join("/dev/shm", n)) > 64 << 20]
        for n in left:
            Path("/dev/shm", n).unlink(missing_ok=True)
        assert not left, f"files left in the host's /dev/shm: {left}"
        assert_nothing_escaped(v, t)
    assert v.status is Status.REJECTED and v.rule == rules.RESOURCES, describe(v)
    # the jail's tmpfs goes with its mount namespace. The attack held at least the limit (1.5 GiB on a
    # CPU) when the watchdog killed it; 1 GiB of slack is for the machine's other shared memory (the
    # arenas, memfds, of judgements that the suite's other xdist worker runs meanwhile)
    deadline = time.monotonic() + 30
    while _shmem_kib() > shmem_before + (1 << 20) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _shmem_kib() <= shmem_before + (1 << 20), (
        f"shared memory still held after the verdict: {_shmem_kib()} KiB, {shmem_before} KiB before")
    return v


ATTACKS: dict[str, Callable[[str, pytest.MonkeyPatch], Verdict]] = {
    "21": attack_21, "22": attack_22, "23": attack_23,
    "25a": lambda device, mp: attack_25("25a", device, mp), "25b": lambda device, mp: attack_25("25b", device, mp),
    "26": attack_26, "27": attack_27, "28": attack_28,
}
"""The native rows by id; each runner takes the device ("cpu" or "cuda")."""


# -- CPU tests ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def warm_escape_lib() -> None:
    """Compile the attack extension (and the relu one) into the shared tier once, and the op
    counter into trusted/, outside any evaluation's clock. The candidate is inert here."""
    warm_build_cache(CANDIDATE["21"])
    path, why_not = opcount.ensure(str(cache_root() / "trusted"))
    assert path, f"the op counter could not be built: {why_not}"


slow = [pytest.mark.slow, pytest.mark.timeout(1800), pytest.mark.usefixtures("warm_escape_lib")]


def _slow(f):
    for m in slow:
        f = m(f)
    return f


@_slow
def test_21_native_writes_never_reach_the_host(monkeypatch):
    attack_21("cpu", monkeypatch)


@_slow
def test_21b_the_judge_never_moves_a_host_file_the_reply_names(monkeypatch):
    attack_21b(monkeypatch, existing=True)


@_slow
def test_21b_a_reply_naming_a_missing_host_file_gets_a_verdict(monkeypatch):
    attack_21b(monkeypatch, existing=False)


@_slow
def test_22_umount_proc_is_refused_and_no_environ_holds_a_key(monkeypatch):
    attack_22("cpu", monkeypatch)


@_slow
def test_23_setns_is_refused_and_host_sockets_are_out_of_reach(monkeypatch):
    attack_23("cpu", monkeypatch)


@_slow
def test_23_host_socket_in_a_read_only_bound_dir_is_out_of_reach(monkeypatch):
    attack_23_visible("cpu", monkeypatch)


@_slow
def test_24a_subprocess_at_import_stays_in_the_jail(monkeypatch):
    v = attack_24("24a", monkeypatch)
    assert v.status is Status.VALID, describe(v)


@_slow
def test_24b_os_system_while_judged_is_rejected(monkeypatch):
    v = attack_24("24b", monkeypatch)
    assert v.status is Status.REJECTED and v.rule == rules.SUBPROCESS, describe(v)


@_slow
def test_25a_reference_memory_cannot_be_read(monkeypatch):
    attack_25("25a", "cpu", monkeypatch)


@_slow
def test_25b_reference_cannot_be_corrupted_or_killed(monkeypatch):
    attack_25("25b", "cpu", monkeypatch)


@_slow
def test_26_no_channel_to_hijack_beside_an_honest_evaluation(monkeypatch):
    attack_26("cpu", monkeypatch)


@_slow
def test_27_trusted_and_shared_builds_stay_intact(monkeypatch):
    attack_27("cpu", monkeypatch)


@_slow
def test_28_shm_beyond_the_memory_limit_is_rejected(monkeypatch):
    attack_28("cpu", monkeypatch)


# -- hygiene of the candidates (fast, no compile) ------------------------------------------------
def _block(text: str) -> str:
    a = text.index(ESCAPE_START)
    return text[a: text.index(ESCAPE_END)]


def test_shared_attack_extension_is_byte_identical():
    """One build of redteam_escape_lib for every isolation candidate, CPU and GPU."""
    assert len(ESCAPE_LIB_USERS) >= 2 * len(NATIVE_ROWS), ESCAPE_LIB_USERS
    blocks = {s: _block((CANDIDATES / f"{s}.py").read_text()) for s in ESCAPE_LIB_USERS}
    first = blocks[ESCAPE_LIB_USERS[0]]
    assert [s for s, b in blocks.items() if b != first] == []


@pytest.mark.parametrize("row", NATIVE_ROWS)
def test_gpu_variant_attacks_like_the_cpu_one(row: str):
    """Everything after the attack extension is the same code in both forms."""
    cpu, gpu = ((CANDIDATES / f"{stem(row, d)}.py").read_text() for d in ("cpu", "cuda"))
    assert cpu.split(ESCAPE_END, 1)[1] == gpu.split(ESCAPE_END, 1)[1]
    assert "redteam_relu_lib" in cpu and "redteam_cuda_lib" in gpu


@pytest.mark.parametrize("row", list(CANDIDATE))
def test_candidate_is_inert_until_substituted(row: str):
    """Unsubstituted (as warm_build_cache runs it, on the host), no attack may run."""
    text = (CANDIDATES / f"{CANDIDATE[row]}.py").read_text()
    assert 'RUN = "__RUN__"' in text and 'ARMED = not RUN.startswith("__")' in text
    assert "\nif ARMED:\n" in text
