#!/usr/bin/env python3
"""Every ``gpu``-marked test, run in parts that each fit one device call, each run recorded.

Run on a machine with a CUDA GPU, from the repository root:

    python3 harness/bench/tools/gpu_tests.py --list              # the plan: parts, their tests, estimated seconds
    python3 harness/bench/tools/gpu_tests.py --part 2            # run part 2 of the plan (one device call)
    python3 harness/bench/tools/gpu_tests.py --missing           # the tests no record covers yet, as many as fit
    python3 harness/bench/tools/gpu_tests.py --coverage          # which gpu tests no recorded run covers (no GPU needed)

Each run writes one record, ``docs/records/gpu-runs/<date>-<gpu>-<label>.json`` (and a copy to $OUT when
set, so that it comes back from a device call): the machine, the commit, and every test's node
id, outcome and seconds. A test counts as covered once a record shows it ran (passed, failed,
xfailed or xpassed; a skip does not count). ``tests/architecture/test_gpu_coverage.py`` lists in
CI the gpu tests that no record covers. Outcomes are written as each test ends, so a part cut by
its time limit still records what finished; ``--missing`` then picks up the rest.

Parts are packed to ``--part-s`` estimated seconds (default 360) from each file's default below,
so that ``--part N`` names the same tests whatever records exist; ``--missing`` packs by the
newest recorded seconds where a test has them. Each run is killed at ``--budget-s`` (default
520): under the device call's 10 minutes with the start.
The last thing printed is a short table (outcome counts, the record's path).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:  # run as `python3 harness/bench/tools/gpu_tests.py` from the checkout
    sys.path.insert(0, str(ROOT))
RECORDS = ROOT / "docs" / "records" / "gpu-runs"
RAN = {"passed", "failed", "error", "xfailed", "xpassed"}  # outcomes that mean the test ran on a GPU
OUTCOMES = RAN | {"skipped", "not_run"}
# seconds per test on a fresh H100 machine when no record has timed it yet (gpu-check records of
# sessions 3-11: red-team cases 25-35 s, each CUDA build 30-60 s, the suite's ops 1-2 s)
FILE_DEFAULT_S = {
    "tests/suite/test_suite_gpu.py": 3.0,
    "tests/evaluator/test_gpu.py": 45.0,
    "tests/evaluator/test_devarena.py": 40.0,
    "tests/evaluator/test_compare.py": 5.0,
    "tests/evaluator/test_fused_compare.py": 5.0,
    "tests/evaluator/test_setup_beside.py": 20.0,
    "tests/llm/test_llm_offline_cuda.py": 60.0,
    "tests/adversarial/test_redteam_gpu.py": 50.0,
    "tests/conformance/test_conformance_gpu.py": 300.0,  # one group of rows: builds, then judges
    # estimates, not yet measured by this runner (each a judgement with a build on a fresh machine)
    "tests/adversarial/test_judge_integrity.py": 40.0,
    "tests/evaluator/test_tritonkeys.py": 40.0,
    "tests/executors/test_slow_first_call_gpu.py": 60.0,
    "tests/suite/test_degenerate_tasks.py": 30.0,
    "tests/suite/test_seed_kernels.py": 60.0,
    "tests/suite/test_task_size.py": 10.0,
}
DEFAULT_S = 60.0
PART_S = 360.0  # estimated seconds per part: headroom for the first test of a part building its extension
BUDGET_S = 520.0
REPORT_ENV = "KH_GPU_TESTS_REPORT"  # the plugin below appends one JSON line per finished test here


# -- which tests ---------------------------------------------------------------------------------
def gpu_files() -> list[str]:
    """Test files whose code names ``pytest.mark.gpu`` (the attribute, not a mention in a string)."""
    import ast

    def marks_gpu(tree: ast.AST) -> bool:
        return any(isinstance(n, ast.Attribute) and n.attr == "gpu" and isinstance(n.value, ast.Attribute)
                   and n.value.attr == "mark" for n in ast.walk(tree))

    return [p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "tests").rglob("test_*.py"))
            if marks_gpu(ast.parse(p.read_text(errors="replace")))]


def gpu_nodes(files: list[str] | None = None) -> list[str]:
    """Node ids of every gpu-marked test (pytest's collection, -m gpu), in file order."""
    files = files if files is not None else gpu_files()
    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "gpu", "-p", "no:cacheprovider",
                        *files], cwd=ROOT, capture_output=True, text=True, timeout=600)
    nodes = [ln.strip() for ln in r.stdout.splitlines() if "::" in ln and not ln.startswith(" ")]
    if r.returncode not in (0, 5) or (files and not nodes):
        raise RuntimeError(f"collecting the gpu tests failed (exit {r.returncode}):\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
    return nodes


# -- records -------------------------------------------------------------------------------------
def load_records(folder: Path = RECORDS) -> list[dict]:
    """Every record, oldest first; a malformed one raises ValueError naming the file and field."""
    out = []
    for p in sorted(folder.glob("*.json")):
        try:
            rec = json.loads(p.read_text())
        except json.JSONDecodeError as e:
            raise ValueError(f"{p}: not JSON ({e})") from None
        for field in ("date", "gpu", "commit", "tests"):
            if field not in rec:
                raise ValueError(f"{p}: field {field!r} missing (write records with harness/bench/tools/gpu_tests.py)")
        for node, t in rec["tests"].items():
            if t.get("outcome") not in OUTCOMES:
                raise ValueError(f"{p}: tests[{node!r}].outcome is {t.get('outcome')!r}, not one of {sorted(OUTCOMES)}")
        rec["_path"] = p.relative_to(ROOT).as_posix() if p.is_relative_to(ROOT) else str(p)
        out.append(rec)
    return sorted(out, key=lambda r: r["date"])


def latest(records: list[dict]) -> dict[str, dict]:
    """Per node id, its newest record entry that ran (with the record's date, gpu and path)."""
    out: dict[str, dict] = {}
    for rec in records:
        for node, t in rec["tests"].items():
            if t["outcome"] in RAN:  # seconds as if alone: a test in one of N shards at once took about N x longer
                out[node] = {**t, "seconds": float(t.get("seconds") or 0.0) / max(1, int(rec.get("shards") or 1)),
                             "date": rec["date"], "gpu": rec["gpu"], "record": rec["_path"]}
    return out


def coverage(nodes: list[str], records: list[dict]) -> dict[str, list[str]]:
    """uncovered: gpu tests no record shows run; failing: their newest run failed; stale: recorded
    node ids that no longer exist (renamed or removed tests)."""
    last = latest(records)
    return {"uncovered": [n for n in nodes if n not in last],
            "failing": [n for n in nodes if n in last and last[n]["outcome"] in ("failed", "error")],
            "stale": sorted(set(last) - set(nodes))}


# -- plan ----------------------------------------------------------------------------------------
def estimate(node: str, last: dict[str, dict]) -> float:
    if node in last and last[node].get("seconds"):
        return float(last[node]["seconds"])
    return FILE_DEFAULT_S.get(node.split("::")[0], DEFAULT_S)


def plan(nodes: list[str], last: dict[str, dict], part_s: float = PART_S) -> list[list[str]]:
    """Parts of ``nodes`` whose estimates add up to at most ``part_s`` each: each test, in order,
    goes into the first part with room (a test estimated above ``part_s`` gets a part of its own)."""
    parts: list[list[str]] = []
    totals: list[float] = []
    for n in nodes:
        s = estimate(n, last)
        i = next((k for k, t in enumerate(totals) if t + s <= part_s), None)
        if i is None:
            parts.append([])
            totals.append(0.0)
            i = len(parts) - 1
        parts[i].append(n)
        totals[i] += s
    return parts


# -- run -----------------------------------------------------------------------------------------
def run_nodes(nodes: list[str], budget_s: float, log: Path) -> tuple[dict[str, dict], int, float]:
    """pytest on ``nodes`` (this file as a plugin that reports each test as it ends), killed at
    ``budget_s``. Returns (outcomes by node id, pytest's exit code or 124, seconds)."""
    report = log.with_suffix(".jsonl")
    report.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONUNBUFFERED": "1", REPORT_ENV: str(report),
           "PYTHONPATH": os.pathsep.join([str(ROOT / "harness" / "bench" / "tools"), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    per_test = os.environ.get("GPU_TESTS_TEST_TIMEOUT", str(int(max(60, budget_s - 30))))
    import importlib.util

    timeout = ["--timeout", per_test] if importlib.util.find_spec("pytest_timeout") else []  # absent on the device image
    cmd = [sys.executable, "-m", "pytest", "-p", "gpu_tests", "-p", "no:cacheprovider", "-v", "-rA",
           *timeout, *nodes]
    t0 = time.monotonic()
    with open(log, "w") as f:
        p = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc = p.wait(timeout=budget_s)
        except subprocess.TimeoutExpired:  # the whole group: pytest, its workers, their builds
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            rc = 124
    seconds = time.monotonic() - t0
    got: dict[str, dict] = {}
    if report.exists():
        for line in report.read_text().splitlines():
            d = json.loads(line)
            got[d.pop("node")] = d
    out = {n: got.get(n, {"outcome": "not_run", "seconds": 0.0}) for n in nodes}
    return out, rc, seconds


def shard(nodes: list[str], n: int, last: dict[str, dict]) -> list[list[str]]:
    """``nodes`` in ``n`` groups of about equal estimated seconds (longest first, each to the group
    with the least so far), each group in the given order."""
    groups: list[list[str]] = [[] for _ in range(max(1, n))]
    totals = [0.0] * len(groups)
    for node in sorted(nodes, key=lambda x: -estimate(x, last)):
        i = totals.index(min(totals))
        groups[i].append(node)
        totals[i] += estimate(node, last)
    order = {x: k for k, x in enumerate(nodes)}
    return [sorted(g, key=order.__getitem__) for g in groups if g]


def run_sharded(nodes: list[str], shards: int, budget_s: float, log: Path,
                last: dict[str, dict]) -> tuple[dict[str, dict], int, float]:
    """``run_nodes`` in ``shards`` pytest processes at once (judgements still take the GPU one at a
    time: the device lock is machine-wide; builds and worker start-ups overlap). Logs
    ``<log>-<k>.log``; the exit code is the first non-zero one."""
    from concurrent.futures import ThreadPoolExecutor

    groups = shard(nodes, shards, last)
    if len(groups) == 1:
        return run_nodes(nodes, budget_s, log)
    t0 = time.monotonic()
    with ThreadPoolExecutor(len(groups)) as pool:
        res = list(pool.map(lambda kg: run_nodes(kg[1], budget_s, log.with_name(f"{log.stem}-{kg[0]}.log")),
                            enumerate(groups, 1)))
    tests = {n: t for r in res for n, t in r[0].items()}
    rc = next((r[1] for r in res if r[1] != 0), 0)
    return {n: tests[n] for n in nodes}, rc, time.monotonic() - t0


def machine() -> dict[str, str]:
    code = ("import torch, json; p = torch.cuda.get_device_properties(0) if torch.cuda.is_available() else None; "
            "print(json.dumps({'gpu': p.name if p else 'none', 'torch': torch.__version__, 'cuda': torch.version.cuda}))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    try:
        return json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"gpu": "unknown", "torch": "unknown", "cuda": "unknown"}


def commit() -> str:
    r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return os.environ.get("KH_COMMIT") or (r.stdout.strip() if r.returncode == 0 else "unknown")


def write_record(label: str, tests: dict[str, dict], rc: int, seconds: float, info: dict[str, str],
                 folder: Path = RECORDS, shards: int = 1) -> list[Path]:
    from harness.bench import record

    date = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    name = f"{time.strftime('%Y-%m-%d-%H%M', time.gmtime())}-{record.slug(info.get('gpu', 'unknown'))}-{label}.json"
    rec = {"date": date, **info, "commit": commit(), "command": " ".join(sys.argv), "label": label,
           "exit": rc, "seconds": round(seconds, 1), "shards": max(1, shards), "tests": tests}
    return record.save(rec, name, folder)


# -- the plugin side (loaded with -p gpu_tests in the child pytest) ----------------------------------
_ACC: dict[str, dict] = {}


def pytest_runtest_logreport(report):  # noqa: D401 - pytest hook
    path = os.environ.get(REPORT_ENV)
    if not path:
        return
    acc = _ACC.setdefault(report.nodeid, {"outcome": None, "seconds": 0.0, "message": ""})
    acc["seconds"] += report.duration
    if hasattr(report, "wasxfail"):
        acc["outcome"] = "xpassed" if report.passed else "xfailed"
    elif report.failed:
        acc["outcome"] = "failed" if report.when == "call" else "error"
        acc["message"] = str(report.longrepr).strip().splitlines()[-1][:300] if report.longrepr else ""
    elif report.skipped:
        acc["outcome"] = "skipped"
        lr = report.longrepr
        acc["message"] = str(lr[2] if isinstance(lr, tuple) else lr)[:300]
    elif report.when == "call" and acc["outcome"] is None:
        acc["outcome"] = "passed"
    if report.when == "teardown":
        d = _ACC.pop(report.nodeid)
        d["outcome"] = d["outcome"] or "error"
        d["seconds"] = round(d["seconds"], 2)
        with open(path, "a") as f:
            f.write(json.dumps({"node": report.nodeid, **d}) + "\n")


def parse_log(text: str) -> dict[str, dict]:
    """Outcomes (``-rA``'s ``PASSED node`` lines) and seconds (``--durations=0``) in a pytest log."""
    tests: dict[str, dict] = {}
    for m in re.finditer(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S+::\S+)", text, re.M):
        kind = {"XFAIL": "xfailed", "XPASS": "xpassed"}.get(m.group(1), m.group(1).lower())
        tests[m.group(2)] = {"outcome": kind, "seconds": 0.0, "message": ""}
    for m in re.finditer(r"^([0-9.]+)s (?:call|setup|teardown)\s+(\S+::\S+)", text, re.M):
        if m.group(2) in tests:
            tests[m.group(2)]["seconds"] = round(tests[m.group(2)]["seconds"] + float(m.group(1)), 2)
    return tests


def record_logs(a: argparse.Namespace) -> int:
    if not (a.date and a.gpu and a.commit):
        raise SystemExit("--from-logs needs --date, --gpu and --commit: the record says when, where and what ran")
    tests: dict[str, dict] = {}
    for log in a.from_logs:
        tests.update(parse_log(log.read_text(errors="replace")))
    known = set(gpu_nodes())
    tests = {n: t for n, t in tests.items() if n in known}
    if not tests:
        raise SystemExit(f"no gpu-marked test outcomes in {[str(x) for x in a.from_logs]}")
    from harness.bench import record

    gpu = record.slug(a.gpu)
    stamp = re.sub(r"[^0-9]", "", a.date)[:12]
    path = a.records / f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]}-{stamp[8:12]}-{gpu}-{a.label}.json"
    rec = {"date": a.date, "gpu": a.gpu, "torch": "see the logs", "cuda": "see the logs", "commit": a.commit,
           "command": " ".join(sys.argv), "label": a.label,
           "exit": int(any(t["outcome"] in ("failed", "error") for t in tests.values())),
           "seconds": round(sum(t["seconds"] for t in tests.values()), 1), "shards": max(1, a.shards), "tests": tests}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")
    print(f"{len(tests)} outcomes recorded: {path}")
    return 0


# -- main ----------------------------------------------------------------------------------------
def expand_nodes(asked: list[str], gpu_nodes: list[str]) -> list[str]:
    """``--nodes`` as given, a test file (or a node id up to its test's name, without the
    parameters) standing for every gpu-marked test in it, in the plan's order."""
    out: list[str] = []
    for x in asked:
        hits = [n for n in gpu_nodes if n == x or n.startswith(x + "::") or n.startswith(x + "[")]
        out += [n for n in (hits or [x]) if n not in out]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--list", action="store_true", help="print the plan")
    g.add_argument("--part", type=int, help="run this part of the plan (1-based)")
    g.add_argument("--missing", action="store_true", help="run the gpu tests no record covers, as many as fit")
    g.add_argument("--nodes", nargs="+", help="run these node ids (a test file: its gpu-marked tests)")
    g.add_argument("--coverage", action="store_true", help="list gpu tests no record covers; exit 1 if any")
    g.add_argument("--from-logs", nargs="+", type=Path, metavar="LOG",
                   help="record the outcomes in pytest logs (-rA, --durations=0) of a GPU run made another way "
                        "(harness/bench/tools/gpu_integrity.sh's shards); give --date, --gpu, --commit, --label")
    ap.add_argument("--part-s", type=float, default=PART_S, help="estimated seconds per part")
    ap.add_argument("--budget-s", type=float, default=BUDGET_S, help="kill the run after this many seconds")
    ap.add_argument("--shards", type=int, default=1,
                    help="pytest processes at once (--missing then takes about --part-s seconds for each)")
    ap.add_argument("--out", default=os.environ.get("OUT", "gpu-tests-out"), help="folder for the pytest log")
    ap.add_argument("--records", type=Path, default=RECORDS, help="the records' folder")
    ap.add_argument("--date", help="--from-logs: when the logs' run was made (YYYY-MM-DD HH:MM UTC)")
    ap.add_argument("--gpu", help="--from-logs: the GPU it ran on")
    ap.add_argument("--commit", help="--from-logs: the commit it ran")
    ap.add_argument("--label", default="logs", help="--from-logs: the record's label")
    a = ap.parse_args(argv)
    if a.from_logs:
        return record_logs(a)
    nodes = gpu_nodes()
    records = load_records(a.records)
    last = latest(records)
    parts = plan(nodes, {}, a.part_s)  # from the files' defaults only: part N names the same tests after a record lands
    if a.list or a.coverage:
        if a.list:
            for i, p in enumerate(parts, 1):
                print(f"part {i}: {len(p)} tests, ~{sum(estimate(n, {}) for n in p):.0f} s "
                      f"(recorded: ~{sum(estimate(n, last) for n in p):.0f} s)")
                for n in p:
                    print(f"   {estimate(n, {}):6.0f} s  {n}")
        cov = coverage(nodes, records)
        print(f"\n{len(nodes)} gpu tests in {len(parts)} parts; {len(records)} records; "
              f"{len(nodes) - len(cov['uncovered'])} covered, {len(cov['uncovered'])} not yet, "
              f"{len(cov['failing'])} failing at their last run, {len(cov['stale'])} stale record entries")
        for what in ("uncovered", "failing", "stale"):
            for n in cov[what]:
                print(f"  {what}: {n}")
        return 1 if a.coverage and cov["uncovered"] else 0
    if a.part is not None:
        if not 1 <= a.part <= len(parts):
            ap.error(f"--part {a.part}: the plan has parts 1..{len(parts)} (--list shows them)")
        todo, label = parts[a.part - 1], f"part{a.part}of{len(parts)}"
    elif a.missing:
        todo, total, label = [], 0.0, "missing"
        for n in coverage(nodes, records)["uncovered"]:
            if todo and total + estimate(n, last) > a.part_s * max(1, a.shards):
                break
            todo.append(n)
            total += estimate(n, last)
        if not todo:
            print("every gpu test is covered by a record; nothing to run")
            return 0
    else:
        todo = expand_nodes(a.nodes, nodes)
        unknown = sorted(set(todo) - set(nodes))
        if unknown:
            ap.error(f"not gpu-marked tests (or misspelt): {unknown[:5]}")
        label = "nodes"
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    info = machine()
    print(f"== {label}: {len(todo)} tests on {info.get('gpu')} in {max(1, a.shards)} shard(s), "
          f"killed at {a.budget_s:.0f} s", flush=True)
    tests, rc, seconds = run_sharded(todo, a.shards, a.budget_s, out / f"gpu-tests-{label}.log", last)
    paths = write_record(label, tests, rc, seconds, info, a.records, shards=a.shards)
    counts: dict[str, int] = {}
    for t in tests.values():
        counts[t["outcome"]] = counts.get(t["outcome"], 0) + 1
    for n, t in tests.items():
        if t["outcome"] not in ("passed", "xfailed"):
            print(f"  {t['outcome']:8s} {n}  {t.get('message', '')[:160]}")
    print(f"\nlabel     exit  seconds  {'  '.join(f'{k}={v}' for k, v in sorted(counts.items()))}")
    print(f"{label:9s} {rc:>4}  {seconds:7.1f}  record: {paths[0]}")
    return 0 if rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
