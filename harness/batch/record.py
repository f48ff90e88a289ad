"""``harness eval-batch --store DIR``: the batch as an evaluation-only run in a results store,
written through the store's API (``harness.store.Results``) so the leaderboard and
``harness runs`` read it like any run.

The run: method ``eval-batch``, LLM ``none``, variant = the batch's label; one op per
reference (the task's name), one candidate per kernel (named by its batch id; an unusable
candidate is stored with ``parse_error``), one verdict per judged kernel. At the end each op
is finished with its best valid final-mode kernel (highest speedup vs eager) as the op's final
verdict. The run id is kept in the output folder (``batch.json``), so a resumed batch keeps
writing to the same run; a kernel already stored there is not stored twice.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sandbox.contract import Task, Verdict

METHOD = "eval-batch"
LLM = "none"


class StoreRecorder:
    def __init__(
        self,
        store_dir: str | Path,
        out_dir: Path,
        *,
        label: str,
        device: str,
        config: dict[str, Any],
        rules: str = "strict",
        n_kernels: int,
    ) -> None:
        from harness.store import Results, RunSpec, new_run_id

        self.repo = Results.open(store_dir)
        meta_path = Path(out_dir) / "batch.json"
        meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
        stores = meta.get("store_runs", {})
        key = str(Path(store_dir).resolve())
        run_id = stores.get(key) or new_run_id(METHOD)
        spec = RunSpec(
            method=METHOD,
            llm=LLM,
            llm_offline=False,
            budget={"evaluations": n_kernels},
            seed=0,
            device=device,
            variant=label,
            suite=label,
            config=config,
            rules=rules,
            run_id=run_id,
        )
        self.run_id = self.repo.create_run(spec).run_id
        stores[key] = self.run_id
        meta["store_runs"] = stores
        meta_path.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
        self.ops: dict[str, str] = {}  # op -> task sha256
        self._kernels: dict[str, dict[tuple[str, str], tuple[int, bool]]] = {}

    def _op(self, task: Task) -> str:
        from harness.store import StoreError

        name = task.name
        if self.ops.get(name, task.sha256) != task.sha256:
            name = f"{task.name}-{task.sha256[:8]}"  # another file with the same stem
        try:
            self.repo.ensure_op(self.run_id, name, task.sha256)
        except StoreError:  # recorded earlier for another version of the file
            name = f"{task.name}-{task.sha256[:8]}"
            self.repo.ensure_op(self.run_id, name, task.sha256)
        if self.ops.get(name) is None:
            self.repo.start_op(self.run_id, name)
        self.ops[name] = task.sha256
        return name

    def record(
        self,
        pid: str,
        task: Task,
        source: str,
        verdict: Verdict | None,
        *,
        parse_error: str | None = None,
        config_key: str | None = None,
    ) -> None:
        """Store one kernel (a verdict, or an unusable candidate with ``parse_error``) unless
        this run holds it already."""
        from harness.store import sha256_text

        op = self._op(task)
        index = self._index(op)
        sha = sha256_text(source)
        cid, judged = index.get((pid, sha), (None, False))
        if judged or (cid is not None and verdict is None):
            return
        if cid is None:
            cid = self.repo.add_candidate(
                self.run_id,
                op,
                trial=self.repo.next_trial(self.run_id, op),
                source=source,
                name=pid,
                operator=METHOD,
                parse_error=parse_error,
            )
        if verdict is not None:
            self.repo.add_verdict(
                verdict, candidate_id=cid, task_sha256=task.sha256, config_key=config_key
            )
        index[(pid, sha)] = (cid, verdict is not None)

    def _index(self, op: str) -> dict[tuple[str, str], tuple[int, bool]]:
        """(name, source sha256) -> (candidate id, has a verdict) of the op's stored kernels,
        read once per op (a resumed batch finds what it stored before)."""
        if op not in self._kernels:
            judged = {v.candidate_id for v in self.repo.list_verdicts(self.run_id, op)}
            self._kernels[op] = {
                (c.name or "", c.source_sha256): (c.candidate_id, c.candidate_id in judged)
                for c in self.repo.list_candidates(self.run_id, op)
            }
        return self._kernels[op]

    def finish(self, error: str | None = None) -> None:
        """Close every op of the run with its best valid final-mode kernel, then the run."""
        for op in self.repo.list_ops(self.run_id):
            best = None
            for sv in self.repo.list_verdicts(self.run_id, op.op, mode="final"):
                if sv.status != "valid":
                    continue
                sp = sv.verdict.speedups.get("eager")
                score = sp.value if sp is not None else 0.0
                if best is None or score > best[0]:
                    best = (score, sv)
            n = len(self.repo.list_candidates(self.run_id, op.op))
            self.repo.finish_op(
                self.run_id,
                op.op,
                best_candidate_id=best[1].candidate_id if best else None,
                final_verdict_id=best[1].verdict_id if best else None,
                usage={"evaluations": n},
            )
        self.repo.finish_run(self.run_id, error=error)
        self.repo.close()
