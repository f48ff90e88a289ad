"""Re-measuring a leaderboard: re-judge recorded best kernels on this machine.

Each chosen valid best kernel (a row: entry x op) is judged again with
``sandbox.evaluate.evaluate`` in final mode (a fresh secret seed, the extra shapes, the
baselines), with the config the runner built for its run (``verify_config``: the judging policy
of harness/policy.py with the rule set and the evaluator overrides the run recorded), in as many
independent sessions as the published number was measured in. A number *holds* when the new
speedup over eager (the geometric mean of the new sessions) lies inside the published 95%
interval. The published interval over k >= 2 sessions contains a re-judgement with 95%
probability (harness/stats.py ``session_speedup``), so the count that holds is Binomial(n, 0.95):
the check fails (``VerifyReport.passes`` False, exit 1) when P(X <= held) <= 0.05
(``stats.hold_rule``: of 10 rows at least 8 must hold, of 3 at least 2, of 1 it must hold).
A one-session interval (runs with ``--final-sessions 1``, the CPU default) holds timing noise
only; such rows are checked the same way and marked. The report also says whether the two
intervals overlap, and when this machine's hardware differs from the recorded one (the numbers
are compared anyway: a different GPU is a reason for a difference, not an excuse to skip).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.estimate import SpeedupCI
from harness.leaderboard.model import Entry, Leaderboard
from harness.leaderboard.tasks import find_task_file
from harness.policy import eval_config
from harness.store import fingerprint
from sandbox.contract import EvalConfig, Mode, Task, Verdict


@dataclass(frozen=True)
class VerifyRow:
    entry_id: str
    op: str
    recorded: float | None
    recorded_ci: tuple[float, float] | None
    recorded_hardware: str
    new_status: str
    new: float | None = None
    new_ci: tuple[float, float] | None = None
    holds: bool | None = None  # new value inside the recorded CI
    overlap: bool | None = None  # the two CIs overlap
    note: str = ""
    rules: str = "strict"  # the rule set it was re-judged under: the entry's recorded one
    sessions: int = 1  # judging sessions behind the published number (and the re-judgement)
    command: str = ""  # the command that re-judges this row alone


@dataclass(frozen=True)
class VerifyReport:
    hardware_here: str
    recorded_hardware: tuple[str, ...]
    rows: tuple[VerifyRow, ...]
    errors: tuple[str, ...] = field(default_factory=tuple)

    @property
    def hardware_differs(self) -> bool:
        return any(h != self.hardware_here for h in self.recorded_hardware)

    @property
    def checked(self) -> int:
        return sum(r.holds is not None for r in self.rows)

    @property
    def held(self) -> int:
        return sum(r.holds is True for r in self.rows)

    @property
    def passes(self) -> bool:
        """Enough numbers hold for their intervals' 95% level (harness/stats.py ``hold_rule``)."""
        from harness.stats import hold_rule

        return hold_rule(self.checked, self.held)[0]

    def rule(self) -> str:
        from harness.stats import hold_rule, min_holding

        n = self.checked
        if n == 0:
            return "nothing was re-judged: no number checked"
        p = hold_rule(n, self.held)[1]
        return (f"{self.held}/{n} numbers hold within their published 95% interval; the rule "
                f"(P(Binomial({n}, 0.95) <= held) > 0.05) needs at least {min_holding(n)}: "
                f"{'PASS' if self.passes else 'FAIL'} (p = {p:.3g})")  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["hardware_differs"] = self.hardware_differs
        d["held"] = self.held
        d["checked"] = self.checked
        d["passes"] = self.passes
        d["rule"] = self.rule()
        return d

    def text(self) -> str:
        lines = [f"this machine: {self.hardware_here}"]
        if self.hardware_differs:
            lines.append(
                f"note: recorded on {', '.join(self.recorded_hardware)}; hardware differs, "
                "comparing anyway (expect differences)"
            )
        lines.append(f"{'entry':40} {'op':22} {'published':>26} {'now':>26}  result")
        for r in self.rows:
            rec = _fmt(r.recorded, r.recorded_ci)
            now = _fmt(r.new, r.new_ci) if r.new is not None else r.new_status
            verdict = {True: "holds", False: "DIFFERS", None: "not checked"}[r.holds]
            if r.holds is False and r.overlap:
                verdict += " (intervals overlap)"
            if r.recorded is not None and r.recorded_ci:
                from harness.estimate import direction_of

                verdict += f"; published: {direction_of(*r.recorded_ci)}"
                if r.new_ci:
                    verdict += f", now: {direction_of(*r.new_ci)}"
            if r.sessions < 2 and r.holds is not None:
                verdict += " (one-session interval: timing noise only)"
            lines.append(f"{r.entry_id[:40]:40} {r.op[:22]:22} {rec:>26} {now:>26}  {verdict}"
                         + (f"  [{r.note}]" if r.note else ""))  # fmt: skip
        lines.append(self.rule())
        lines += [f"error: {e}" for e in self.errors]
        return "\n".join(lines)


def _fmt(v: float | None, ci: tuple[float, float] | None) -> str:
    if v is None:
        return "-"
    return f"{v:.3f}x [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else f"{v:.3f}x"


def command(entry_id: str, op: str, source: str = "--leaderboard leaderboard.json") -> str:
    """The one command that re-judges a published row (run where the harness is installed)."""
    return f"harness leaderboard verify {source} --entry {entry_id} --op {op}"


def load_leaderboard(results: list[str], lb_path: str | None) -> Leaderboard:
    if lb_path:
        return Leaderboard.from_json(Path(lb_path).read_text())
    from harness.leaderboard.build import build_leaderboard
    from harness.leaderboard.collect import collect

    dirs = results or ["results"]
    return build_leaderboard(collect(dirs), dirs)


def _cuda_available() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:  # noqa: BLE001
        return False


def _default_evaluate(task: Task, source: str, config: EvalConfig) -> Verdict:
    from sandbox.contract import evaluate

    return evaluate(task, source, config)


def recorded_overrides(entry: Entry, run_id: str) -> dict[str, Any]:
    """The evaluator overrides the run ``run_id`` of ``entry`` recorded (``--eval-option``).
    A leaderboard.json written before runs carried them has them in the entry's config, which
    is its first run's."""
    ref = next((r for r in entry.runs if r.run_id == run_id), None)
    if ref is not None and ref.eval_overrides:
        return dict(ref.eval_overrides)
    if entry.runs and entry.runs[0].run_id == run_id:
        return dict(entry.config.get("eval_overrides") or {})
    return {}


def verify_config(entry: Entry, run_id: str, task: Task, *, device: str, sandbox: str) -> EvalConfig:
    """The final-mode config that re-judges a kernel of run ``run_id``: the judging policy
    (harness/policy.py) as the runner applied it, with the run's rule set (its track: never
    another) and its recorded overrides, on this machine's ``device`` and ``sandbox``."""
    return eval_config(Mode.FINAL, device, task=task, sandbox=sandbox, rules=entry.rules,
                       overrides=recorded_overrides(entry, run_id))  # fmt: skip


def verify(
    lb: Leaderboard,
    *,
    device: str | None = None,
    sandbox: str = "process",
    entries: set[str] | None = None,
    ops: set[str] | None = None,
    progress: Callable[[str], None] = lambda s: None,
    evaluate_fn: Callable[[Task, str, EvalConfig], Verdict] | None = None,
    limit: int | None = None,
    jobs: int = 1,
) -> VerifyReport:
    """Re-judge the valid best kernels of ``entries`` x ``ops`` (all when empty), at most
    ``limit`` rows in ranking order. ``evaluate_fn``: the evaluator (``_default_evaluate``).
    ``jobs`` > 1 re-judges that many rows at once (threads; each row's sessions one after the
    other; the evaluator's device lock lets one judgement hold a GPU at a time, as in a run)."""
    from sandbox.contract import load_task

    evaluate_fn = evaluate_fn or _default_evaluate
    here = fingerprint.hardware_label(fingerprint.environment(probe_torch=False))
    slots: list[VerifyRow | tuple] = []  # a row now, or the work that makes it
    recorded_hw: set[str] = set()
    for e in lb.entries:
        if entries and e.entry_id not in entries:
            continue
        for o in e.ops:
            k = o.best
            if (ops and o.op not in ops) or k is None or k.final_status != "valid":
                continue
            if limit is not None and len(slots) >= limit:
                break
            recorded_hw.add(k.hardware)
            rec = k.speedups.get("eager")
            n_sessions = rec.sessions if rec else k.sessions
            base = dict(entry_id=e.entry_id, op=o.op, recorded=rec.value if rec else None,
                        recorded_ci=(rec.ci_low, rec.ci_high) if rec else None,
                        recorded_hardware=k.hardware, rules=e.rules, sessions=n_sessions,
                        command=command(e.entry_id, o.op))  # fmt: skip
            path = find_task_file(o.op)
            if path is None:
                slots.append(VerifyRow(**base, new_status="skipped", note="task file not in reference_ops/"))
                continue
            task = load_task(path)
            note = "task file changed since the run" if task.sha256 != k.task_sha256 else ""
            dev = device or k.device
            if dev.startswith("cuda") and not _cuda_available():
                slots.append(VerifyRow(**base, new_status="skipped",
                                       note="recorded on CUDA; no CUDA device here (run it on a GPU machine)"))  # fmt: skip
                continue
            cfg = verify_config(e, k.run_id, task, device=dev, sandbox=sandbox)
            slots.append((base, task, k.source, cfg, rec, note))
    errors: list[str] = []

    def rejudge(slot: VerifyRow | tuple) -> VerifyRow:
        if isinstance(slot, VerifyRow):
            return slot
        return _rejudge(*slot, evaluate_fn=evaluate_fn, progress=progress, errors=errors)

    if jobs > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="verify") as pool:
            rows = list(pool.map(rejudge, slots))
    else:
        rows = [rejudge(s) for s in slots]
    return VerifyReport(here, tuple(sorted(recorded_hw)), tuple(rows), tuple(errors))


def _rejudge(base: dict[str, Any], task: Task, source: str, cfg: EvalConfig, rec: SpeedupCI | None,
             note: str, *, evaluate_fn: Callable, progress: Callable[[str], None],
             errors: list[str]) -> VerifyRow:
    """One row: its kernel judged in as many fresh sessions as its published number had."""
    from sandbox.contract import CandidateError

    n = base["sessions"]
    verdicts: list[Verdict] = []
    try:
        for i in range(n):
            progress(f"verify: {base['entry_id']} {base['op']} on {cfg.device}, session {i + 1}/{n} ...")
            verdicts.append(evaluate_fn(task, source, cfg))
            if not verdicts[-1].valid:
                break
    except CandidateError as exc:
        errors.append(f"{base['entry_id']}/{base['op']}: {exc}")
        return VerifyRow(**base, new_status="candidate_error", note=str(exc)[:200])
    return _row(base, verdicts, rec, note)


def _row(base: dict[str, Any], verdicts: list[Verdict], rec: SpeedupCI | None, note: str) -> VerifyRow:
    """The row of a re-judged kernel: its sessions' speedups over eager combined as published."""
    from harness.stats import combine_sessions

    bad = next((v for v in verdicts if not v.valid), None)
    per = [v.speedups.get("eager") for v in verdicts]
    if bad is not None or rec is None or any(s is None for s in per):
        v = bad or verdicts[-1]
        return VerifyRow(**base, new_status=v.status.value, holds=False if rec else None,
                         note="; ".join(n for n in (note, v.message[:120]) if n))  # fmt: skip
    new = combine_sessions([SpeedupCI.from_verdict(s) for s in per])
    host = any(v.host_timers for v in verdicts)
    return VerifyRow(
        **base, new_status="valid", new=new.value, new_ci=(new.ci_low, new.ci_high),
        holds=rec.ci_low <= new.value <= rec.ci_high,
        overlap=new.ci_low <= rec.ci_high and rec.ci_low <= new.ci_high,
        note="; ".join(n for n in (note, "host timers" if host else "") if n),
    )  # fmt: skip
