"""Start a method as an isolated program that talks only to the two harness endpoints.

``IsolatedMethod`` is a ``Method`` the runner drives like any other. Its ``optimize``:

1. makes a private socket dir with ``eval.sock`` (harness/endpoints/eval_server.py, bound
   to the runner's ``evaluate``: budget, storage and verdict reuse apply) and ``llm.sock``
   (the LLM gateway, harness/llm/gateway.py, serving the runner's metered ``llm``);
2. starts the program through an isolation backend (``process``: bwrap/unshare namespaces;
   ``docker``: a container with ``network_mode="none"``), with the socket dir bind-mounted
   and an environment scrubbed to an allowlist plus the endpoint variables. The upstream API
   key is never in it: OPENAI_API_KEY is the gateway's per-run token;
3. yields each proposal the program had judged, as the in-process method would have;
4. kills the program and stops both endpoints when it ends or the runner closes it.

The default program is ``python -m harness.endpoints.method_main --method NAME`` (any
built-in or submission folder); ``argv`` runs anything else (docs/method-protocol.md).
"""

from __future__ import annotations

import os
import queue
import secrets
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from harness.endpoints.eval_server import EvalEndpoint
from harness.llm.base import CallContext, ChatModel
from harness.methods.base import Budget, EvaluateFn, Proposal, TaskContext
from sandbox.contract import Launcher, Limits, Mount, WorkerSpec

REPO_ROOT = Path(__file__).resolve().parents[2]
ENV_ALLOW = (
    "PATH",
    "LANG",
    "LC_ALL",
    "TZ",
    "CUDA_VISIBLE_DEVICES",
    "CUDA_HOME",
    "TORCH_CUDA_ARCH_LIST",
    "LD_LIBRARY_PATH",
)


class MethodProgramError(RuntimeError):
    """The method program failed (non-zero exit); the message carries its log tail."""


@dataclass
class ProgramSettings:
    sandbox: str = "process"  # "process" | "docker"
    argv: list[str] | None = None  # None: python -m harness.endpoints.method_main --method NAME
    extra_env: dict[str, str] = field(default_factory=dict)  # never put secrets here
    mounts: list[Mount] = field(default_factory=list)  # e.g. the submission folder, read-only
    hide: list[str] = field(default_factory=list)  # e.g. the results dir
    limits: Limits | None = None
    launcher: Launcher | None = None  # override (tests: a DockerLauncher on the host-env image)


def program_env(
    scratch: str, endpoints: dict[str, str], extra: dict[str, str] | None = None
) -> dict[str, str]:
    """The program's whole environment: an allowlist of the harness's, plus the endpoints."""
    env = {k: os.environ[k] for k in ENV_ALLOW if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update(
        HOME=scratch,
        TMPDIR=scratch,
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONPATH=str(REPO_ROOT),
        PYTHONUNBUFFERED="1",
    )
    env.update(extra or {})
    env.update(endpoints)
    return env


def _get_launcher(settings: ProgramSettings) -> Launcher:
    if settings.launcher is not None:
        return settings.launcher
    from sandbox.contract import get_launcher

    return get_launcher(settings.sandbox)


def _start_gateway(llm: ChatModel, socket_path: str, token: str, context: CallContext):
    """Serve ``llm`` on ``socket_path`` with bearer ``token`` (helper D's gateway)."""
    from harness.llm.gateway import Gateway

    return Gateway(llm, unix_socket=socket_path, token=token, context=context).start()


class MethodProgram:
    """One run of a method program for one op (used by ``IsolatedMethod.optimize``)."""

    def __init__(self, method: str, settings: ProgramSettings) -> None:
        self.method = method
        self.settings = settings
        self.proposals: queue.Queue[Proposal] = queue.Queue()
        self.dir = tempfile.mkdtemp(prefix="kh-method-")
        self.scratch = os.path.join(self.dir, "scratch")
        self.sockets = os.path.join(self.dir, "sockets")
        self.log_path = os.path.join(self.dir, "program.log")
        self.eval_endpoint: EvalEndpoint | None = None
        self.gateway = None
        self.handle = None

    def _argv(self) -> list[str]:
        if self.settings.argv:
            return list(self.settings.argv)
        target = self.method
        if (Path(target) / "submission.toml").is_file():
            target = str(Path(target).resolve())
        return [sys.executable, "-m", "harness.endpoints.method_main", "--method", target]

    def start(
        self, task: TaskContext, llm: ChatModel, evaluate: EvaluateFn, budget: Budget
    ) -> MethodProgram:
        os.makedirs(self.scratch)
        os.makedirs(self.sockets)
        os.chmod(self.dir, 0o755)
        os.chmod(self.sockets, 0o755)  # the tokens, not file modes, guard the sockets
        eval_sock = os.path.join(self.sockets, "eval.sock")
        llm_sock = os.path.join(self.sockets, "llm.sock")
        eval_token, llm_token = secrets.token_urlsafe(32), "kh-gw-" + secrets.token_urlsafe(32)
        self.eval_endpoint = EvalEndpoint(
            eval_sock, task, evaluate, budget, token=eval_token, on_proposal=self.proposals.put
        ).start()
        os.chmod(eval_sock, 0o666)
        ctx = CallContext(op=task.op, method=Path(self.method).name, purpose="method-program")
        self.gateway = _start_gateway(llm, llm_sock, llm_token, ctx)
        os.chmod(llm_sock, 0o666)
        env = program_env(
            self.scratch,
            {
                "HARNESS_OP": task.op,
                "HARNESS_EVAL_SOCKET": eval_sock,
                "HARNESS_EVAL_URL": "http://localhost",
                "HARNESS_EVAL_TOKEN": eval_token,
                "HARNESS_LLM_SOCKET": llm_sock,
                "OPENAI_BASE_URL": "http://localhost/v1",
                "OPENAI_API_KEY": llm_token,
                "HARNESS_LLM_MODEL": getattr(llm, "name", "default"),
            },
            self.settings.extra_env,
        )
        # the jail shows a worker only the evaluator package; a method program also runs the
        # harness's client side (harness/, the built-in methods and submissions), read-only
        code = [Mount(str(REPO_ROOT / d), str(REPO_ROOT / d), writable=False)
                for d in ("harness", "submissions", "reference_ops", "site") if (REPO_ROOT / d).is_dir()]
        mounts = [Mount(self.sockets, self.sockets, writable=False), *code, *self.settings.mounts]
        argv = self._argv()
        for a in argv[1:]:  # the program's own files (a script, a submission folder): read-only
            if os.path.isabs(a) and os.path.exists(a) and not a.startswith(("/usr/", "/etc/")):
                mounts.append(Mount(a, a, writable=False))
        wall = (budget.wall_s * 1.5 + 120) if budget.wall_s else 24 * 3600.0
        limits = self.settings.limits or Limits(
            wall_seconds=wall, max_processes=512, rss_bytes=16 * 1024**3
        )
        spec = WorkerSpec(
            argv=argv,
            env=env,
            cwd=self.scratch,
            scratch=self.scratch,
            mounts=mounts,
            hide=list(self.settings.hide),
            limits=limits,
            network=False,
            gpu=False,
            log_path=self.log_path,
            connects=True,  # to its two endpoints' unix sockets (the only ones it is shown)
        )  # kernels run in the evaluator, not here
        self.handle = _get_launcher(self.settings).start(spec)
        return self

    def log_tail(self, n: int = 4000) -> str:
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-n:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self.handle is not None:
            self.handle.kill()  # also after a normal exit: reaps what the program left behind
        for srv in (self.eval_endpoint, self.gateway):
            if srv is not None:
                try:
                    srv.stop()
                except Exception:  # noqa: BLE001 - stopping is best effort
                    pass
        shutil.rmtree(self.dir, ignore_errors=True)


class IsolatedMethod:
    """A method run as its own program behind the two endpoints (see module docstring)."""

    paper = ""

    def __init__(self, method: str, settings: ProgramSettings | None = None) -> None:
        self.inner = method
        self.settings = settings or ProgramSettings()
        self.name = Path(method).name if os.sep in method else method
        self.variant = f"isolated ({self.settings.sandbox})"
        self.last_log = ""

    def optimize(
        self, task: TaskContext, llm: ChatModel, evaluate: EvaluateFn, budget: Budget
    ) -> Iterator[Proposal]:
        prog = MethodProgram(self.inner, self.settings)
        try:
            prog.start(task, llm, evaluate, budget)  # inside try: a failed start cleans up too
            while True:
                try:
                    yield prog.proposals.get(timeout=0.2)
                    continue
                except queue.Empty:
                    pass
                if prog.handle.poll() is not None and prog.proposals.empty():
                    break
            rc = prog.handle.poll()
            self.last_log = prog.log_tail()
            if rc != 0:
                raise MethodProgramError(
                    f"method program {self.inner!r} exited with status {rc} on op {task.op}; "
                    f"its log ends:\n{self.last_log}"
                )
        finally:
            self.last_log = self.last_log or prog.log_tail()
            prog.stop()
