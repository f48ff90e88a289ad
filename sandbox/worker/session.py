"""Parent side of one worker: launch it through a backend, talk to it, kill it.

``WorkerSession`` owns one worker process: it scrubs the environment, makes the private
scratch dir and socket, starts the worker via a launcher, accepts exactly one connection,
and sends requests with a deadline, measuring each round trip with the parent's own clock.
A reply that does not answer the request just sent (wrong id, extra bytes, malformed
JSON) raises ``ProtocolViolation`` (rule sandbox.result_channel).
"""

from __future__ import annotations

import hmac
import os
import secrets
import select
import socket
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sandbox.build.tiers import remove_tree
from sandbox.isolation.base import Launcher, Limits, Mount, WorkerSpec
from sandbox.worker import channel, threadworkers
from sandbox.worker.arena import DeviceArenaFailed  # noqa: F401 - raised by the arena link, caught by callers
from sandbox.worker.arenalink import ArenaLink
from sandbox.worker.sessionerrors import CallTimeout, ProtocolViolation, WorkerDied
from sandbox.worker.workerenv import one_gpu_view, scrubbed_env

_DEBUG = bool(os.environ.get("KH_DEBUG"))
WAIT_SLICE_S = 0.25  # how often a warm-up request's wait asks whether to give up the device
REPLY_GRACE_S = 5.0  # to read a begun request's reply that had started to arrive (Pending.result)


class WorkerSession(ArenaLink):
    """``cache_root``: the worker's own build dir (a candidate's namespace of the build cache,
    sandbox/build/buildcache.py), as the worker sees it; ``tier``: the host dir bound there (the
    judgement's working copy of that tier, sandbox/build/tiers.py: writable with ``tier_quota`` bytes
    at most unless ``cache_ro``); ``shared``: read-only dirs it may load from (the trusted tier
    of the cache, the harness's own helpers)."""

    def __init__(self, role: str, launcher: Launcher, device: str, cache_root: str | None,
                 deadline: float, limits: Limits, hide: list[str] | None = None,
                 shared: list[str] | None = None, uid: int | None = None, cache_ro: bool = False,
                 cuda_build: bool = False, persist: str | None = None, preload: bool = False,
                 tier: str | None = None, tier_quota: int | None = None, inductor: bool = False) -> None:
        self.role = role
        self.built_for: Any = None  # what its models were last set up for (sandbox/judge.py: Judge.setup)
        self.deadline = deadline
        self.scratch = tempfile.mkdtemp(prefix=f"kh-{role}-")
        os.chmod(self.scratch, 0o700)
        os.makedirs(os.path.join(self.scratch, "tmp"), exist_ok=True)
        self.log_path = os.path.join(self.scratch, "worker.log")
        self.next_id = 0
        self.op_time: dict[str, list[float]] = {}  # op -> [requests, seconds] on the parent's clock
        cache_root = cache_root or os.path.join(self.scratch, "cache")  # None: private, gone with the scratch
        os.makedirs(cache_root, exist_ok=True)
        self.cache_root, self.persist, self.seeded, self.harvested = cache_root, persist, 0, 0
        self._exit_asked = self._harvest_done = False
        self.preload_s: dict[str, float] | None = None
        self.start_s: float | None = None
        if persist is not None:
            from sandbox.check import refcache

            self.seeded = refcache.seed(persist, cache_root)
        shared = [d for d in (shared or []) if os.path.isdir(d)]
        worker_device, visible = one_gpu_view(device, dict(os.environ))
        argv = [sys.executable, "-m", "sandbox.worker", "--role", role, "--scratch", self.scratch,
                "--device", worker_device, "--cache-root", cache_root, *(a for d in shared for a in ("--shared", d)),
                *(["--preload-compile"] if preload else [])]
        mounts = [Mount(d, d, False) for d in shared]
        quotas: tuple[tuple[str, int], ...] = ()
        if not cache_root.startswith(self.scratch + "/"):  # read-only when a build worker made it (judge.py)
            mounts.append(Mount(tier or cache_root, cache_root, not cache_ro))
            if tier is not None and not cache_ro and tier_quota:
                quotas = ((tier, int(tier_quota)),)
        self.listener: channel.Listener | None = None
        self._secret = secrets.token_hex(16)
        pass_fds: tuple[int, ...] = ()
        if getattr(launcher, "inherits_fds", False):
            # an inherited socketpair: no path anyone else could connect to; the worker reads a
            # per-worker secret from a pipe at start-up (and closes it) and sends it in its hello
            self.sock, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            rd, wr = os.pipe()
            os.write(wr, self._secret.encode())
            os.close(wr)
            argv += ["--fd", str(child.fileno()), "--secret-fd", str(rd)]
            pass_fds = (child.fileno(), rd)
        else:  # a container: a socket in a private dir that only this container mounts
            self.listener = channel.Listener()
            argv += ["--socket", self.listener.path, "--secret", self._secret]
            mounts.append(Mount(self.listener.dir, self.listener.dir, True))
        env = scrubbed_env(self.scratch, cache_root, device.startswith("cuda"), cuda_build)
        if visible is not None:
            env["CUDA_VISIBLE_DEVICES"] = visible
        if role == "candidate" and device.startswith("cuda"):
            env["TRITON_CACHE_AUTOTUNING"] = "1"  # tuned once, where the candidate is built or warmed
            if cache_ro:  # reads the build cache, writes its own misses (sandbox/build/tritoncache.py)
                from sandbox.build import tritoncache

                env.update(tritoncache.overlay_env(env["TRITON_CACHE_DIR"], os.path.join(self.scratch, "triton")))
        if persist is not None or inductor:  # inductor: a spare, given its entry when taken (adopt)
            from sandbox.check import refcache

            env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(cache_root, refcache.INDUCTOR)
        spec = WorkerSpec(
            argv=argv, env=env, cwd=self.scratch,
            scratch=self.scratch, mounts=mounts, hide=list(hide or []), limits=limits,
            gpu=device.startswith("cuda"), log_path=self.log_path, pass_fds=pass_fds, uid=uid, quotas=quotas,
        )
        try:
            self.handle = launcher.start(spec)
        except BaseException:
            if self.listener is not None:
                self.listener.close()
            remove_tree(self.scratch)  # nothing started: nothing of it is left
            raise
        finally:
            if pass_fds:
                child.close()
                os.close(rd)
        if not threadworkers.started(self.handle):  # this thread's work was given up (a stopped run)
            if self.listener is not None:
                self.listener.close()
            remove_tree(self.scratch)
            raise WorkerDied(f"{role} worker: the run stopped; the work of the thread that started it was given up")
        self.isolation = self.handle.isolation
        self.arena: Any = None  # sandbox/arena.Arena shared with the other worker, once attached
        self.arena_regions: tuple[str, ...] = ()
        self.arena_mapped: dict[str, int] = {}
        self.arena_gen: dict[str, int] = {}  # device arena: the generation of each region it maps
        self.arena_info: dict[str, Any] = {}  # the worker's last answer to "arena" (sizes, pinned)
        # called while a request waits for its reply, during a judgement's warm-up (sandbox/lane/firstcall.py)
        self.on_wait: Callable[[], float] | None = None

    def adopt(self, deadline: float, persist: str | None) -> None:
        """A spare reference worker (sandbox/lane/spares.py) taken by the judgement of this thread:
        the judgement's deadline, its task's reference cache entry copied into the worker's cache
        (torch.compile reads it at its first call, long after this), and this thread's record of the
        worker (a stopped run kills it: sandbox/worker/threadworkers.py). Raises WorkerDied, the
        worker killed, when this thread's work was given up."""
        self.deadline = deadline
        if persist is not None:
            from sandbox.check import refcache

            self.persist = persist
            self.seeded = refcache.seed(persist, self.cache_root)
        threadworkers.ended(self.handle)
        if not threadworkers.started(self.handle):
            self.close()
            raise WorkerDied(f"{self.role} worker: the run stopped; the work of the thread that took it was given up")

    def connect(self) -> None:
        """Accept the worker's one connection and read its hello (call from the launching thread's
        lifetime: PR_SET_PDEATHSIG is tied to the thread that started the worker)."""
        role, deadline = self.role, self.deadline
        if self.listener is not None:
            try:
                self.sock = self.listener.accept(min(deadline, time.monotonic() + 120),
                                                 alive=lambda: self.handle.poll() is None)
            except channel.ChannelError as e:
                self.close()
                raise WorkerDied(f"{role} worker did not start: {e}\n{self.log_tail()}",
                                 timed_out=isinstance(e, channel.ChannelTimeout)) from e
        try:
            hello = self._recv()
        except WorkerDied as e:
            self.close()
            raise WorkerDied(f"{role} worker did not start: {e}\n{self.log_tail()}", timed_out=e.timed_out) from e
        if hello.get("op") != "hello" or not hello.get("ok"):
            self.close()
            raise WorkerDied(f"{role} worker failed to start: {hello.get('error', hello)}")
        if not hmac.compare_digest(str(hello.get("secret", "")), self._secret):
            self.close()
            raise ProtocolViolation(f"{role} worker's first message did not carry its secret")
        self.preload_s = hello.get("preload_s")  # sandbox/refcache.preload, when it ran
        self.start_s = hello.get("age_s")  # the worker process's own start-up, to its hello (its clock)

    def _recv(self, deadline: float | None = None) -> dict[str, Any]:
        try:
            return channel.recv(self.sock, self.deadline if deadline is None else deadline)
        except channel.ChannelTimeout as e:
            raise WorkerDied(f"{self.role} worker: no answer before the deadline", timed_out=True) from e
        except channel.ChannelError as e:
            time.sleep(0.05)
            code = self.handle.poll()
            if code is None and "malformed" in str(e):
                raise ProtocolViolation(f"{self.role} worker sent a malformed message: {e}") from e
            raise WorkerDied(f"{self.role} worker died ({_describe_exit(code)}): {e}") from e

    def request(self, op: str, *, bound: tuple[float, str] | None = None, **kw: Any) -> tuple[dict[str, Any], int]:
        """Send one request; return (reply, round-trip ns on the parent's clock). ``bound``:
        (absolute monotonic deadline, what it is) for this request, tighter than the
        judgement's; past it the worker is killed by the caller (CallTimeout)."""
        for _ in range(3):
            self._sync_arena()
            rep, rtt = self._request(op, bound=bound, **kw)
            if not self._sized_arena(rep):
                break
        return rep, rtt

    def _sized_arena(self, rep: dict[str, Any]) -> bool:
        """A reference's reply asking for a bigger arena region (the trusted worker's inputs: it
        sizes them): grown here, and the request is to be sent again."""
        if not (rep.get("kind") == "arena" and self.role == "reference" and self.arena is not None
                and rep.get("region") in self.arena.sizes and isinstance(rep.get("need"), int)):
            return False
        self.arena.ensure(rep["region"], rep["need"])
        return True

    def begin(self, op: str, *, bound: tuple[float, str] | None = None, **kw: Any) -> Pending:
        """Send a request and return at once; ``Pending.result()`` waits for its reply as
        ``request`` would. Nothing may be asked of this worker in between, nor of the reference
        while a candidate's arena sync could ask it (so a candidate's request is begun first).
        A judgement sets its two workers' models up side by side this way (judge.py: setup)."""
        self._sync_arena()
        return Pending(self, op, bound, kw, self._send(op, kw.pop("fds", None), kw))

    def _request(self, op: str, *, bound: tuple[float, str] | None = None, fds: list[int] | None = None,
                 **kw: Any) -> tuple[dict[str, Any], int]:
        return self._receive(op, bound, self._send(op, fds, kw))

    def _send(self, op: str, fds: list[int] | None, kw: dict[str, Any]) -> int:
        self.next_id += 1
        msg = {"op": op, "id": self.next_id, **kw}
        t0 = time.monotonic_ns()
        try:
            channel.send(self.sock, msg)
            if fds:  # one byte carries them, right after the request (the worker's take_fds)
                socket.send_fds(self.sock, [b"F"], fds)
        except OSError as e:
            raise WorkerDied(f"{self.role} worker died ({_describe_exit(self.handle.poll())}): {e}") from e
        return t0

    def _receive(self, op: str, bound: tuple[float, str] | None, t0: int) -> tuple[dict[str, Any], int]:
        if bound is not None and bound[0] < self.deadline:
            limit = self._await_reply(bound[0])
            try:
                rep = self._recv(limit)
            except WorkerDied as e:
                if not e.timed_out:
                    raise
                spent = (time.monotonic_ns() - t0) / 1e9
                raise CallTimeout(f"the {self.role}'s {op} request ran {spent:.1f} s, past its bound: {bound[1]}") from e
        else:
            self._await_reply(self.deadline)
            rep = self._recv()
        if op == "arena" and self.role == "reference" and rep.get("ok") and isinstance(rep.get("fds"), list) \
                and rep["fds"]:  # the device arena's exported regions follow the reply (devarena.py)
            try:
                rep["_fds"] = channel.recv_fds(self.sock, len(rep["fds"]), self.deadline)
            except channel.ChannelError as e:
                raise ProtocolViolation(f"reference worker: the arena's fds did not follow its reply: {e}") from e
        rtt = time.monotonic_ns() - t0
        acc = self.op_time.setdefault(op, [0, 0.0])
        acc[0] += 1
        acc[1] += rtt / 1e9
        if _DEBUG:
            print(f"[kh] {self.role} {op} {rtt / 1e6:.1f} ms", file=sys.stderr)
        if rep.get("id") != self.next_id:
            raise ProtocolViolation(
                f"{self.role} worker answered request {self.next_id} ({op}) with a message for id {rep.get('id')!r}")
        if channel.pending(self.sock):
            raise ProtocolViolation(f"{self.role} worker sent an unsolicited extra message after {op}")
        return rep, rtt

    def _await_reply(self, deadline: float) -> float:
        """Without ``on_wait``: ``deadline``. With it (a judgement's warm-up, sandbox/lane/firstcall.py):
        wait for the reply in slices of WAIT_SLICE_S, calling ``on_wait`` after each; it may give
        up the device meanwhile (the worker stopped) and returns the seconds that took, by which
        the deadline moves (it moves the judgement's own deadlines itself). Returns the deadline."""
        while self.on_wait is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            ready, _, _ = select.select([self.sock], [], [], min(WAIT_SLICE_S, left))
            if ready:
                break
            deadline += self.on_wait()
        return deadline

    def freeze(self) -> Any:
        """Stop the worker's whole tree (sandbox/isolation): for the judge's output checks."""
        fn = getattr(self.handle, "freeze", None)
        return fn() if fn is not None else None

    def thaw(self, token: Any) -> None:
        if token is not None:
            self.handle.thaw(token)

    def log_tail(self, n: int = 4000) -> str:
        try:
            data = Path(self.log_path).read_text(errors="replace")
        except OSError:
            return ""
        return data[-n:]

    def close(self) -> None:
        try:
            self.stop_begin()
            self.stop_end()
        finally:
            self.cleanup()

    def stop_begin(self) -> None:
        """Ask the worker to exit (stop_end waits for it): a judgement asks both of its workers
        first, so their CUDA contexts are torn down at once, not one after the other."""
        if getattr(self, "sock", None) is not None and not self._exit_asked:
            self._exit_asked = True
            try:
                channel.send(self.sock, {"op": "exit"})
            except OSError:
                pass
            self.sock.close()

    def stop_end(self) -> None:
        """The worker and anything it left behind are gone once this returns (the device is
        then free of its work)."""
        self.handle.wait(0.5)
        self.handle.kill()  # kills it if it is still there, and reaps anything it left behind
        threadworkers.ended(self.handle)

    def cleanup(self) -> None:
        """After the worker is gone, outside the device lock: files only."""
        if self.listener is not None:
            self.listener.close()
            self.listener = None
        if self.persist is not None and not self._harvest_done:  # nothing writes its cache any more
            from sandbox.check import refcache

            self._harvest_done = True
            self.harvested = refcache.harvest(self.cache_root, self.persist)
        remove_tree(self.scratch)  # whatever the worker did to its modes: nothing of it is left


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        import signal

        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    if code > 128:  # bwrap / unshare / shells report a signal death as 128 + signal
        import signal

        try:
            return f"killed by {signal.Signals(code - 128).name} (exit status {code})"
        except ValueError:
            pass
    return f"exit status {code}"


class Pending:
    """A request sent with ``WorkerSession.begin`` whose reply is still to be read."""

    def __init__(self, session: WorkerSession, op: str, bound: tuple[float, str] | None, kw: dict[str, Any],
                 t0: int) -> None:
        self.session, self.op, self.bound, self.kw, self.t0 = session, op, bound, kw, t0

    def result(self) -> tuple[dict[str, Any], int]:
        """The reply. One already arriving was given within its bound, even where the bound has
        passed while the caller waited on the other worker: its reading gets REPLY_GRACE_S more. A
        reply still to come is held to the bound."""
        s = self.session
        bound = self.bound
        if bound is not None and channel.pending(s.sock):
            bound = (max(bound[0], time.monotonic() + REPLY_GRACE_S), bound[1])
        rep, rtt = s._receive(self.op, bound, self.t0)
        if s._sized_arena(rep):
            return s.request(self.op, bound=self.bound, **self.kw)
        return rep, rtt
