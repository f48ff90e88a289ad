#!/bin/bash
# A/B: the level-2 GEMM task (KernelBench level2 first Gemm file, 8192x8192 Linear) judged with its own
# Model as ModelNew, feedback mode, CPU; before (444c194, setups one after the other) and after (HEAD)
# Session 24, 2026-11-28 02:06-02:15 UTC, the 2-core development box, otherwise idle (load 0.1-0.8).
# /tmp/before24 = `git worktree add /tmp/before24 444c194`; /work/main was at c213478. Each run is
# started from its own tree (cd): `python -m` puts the working directory first on sys.path, and an
# earlier try launched from /work/main ran the new code for both (discarded).
for round in 1 2; do
for tree in /tmp/before24 /work/main; do
  out=/tmp/l2/ab-$(basename $tree)-$round.json
  cd $tree && PYTHONPATH=$tree /work/main/.venv/bin/python -m harness eval /tmp/l2/ref.py /tmp/l2/cand.py --device cpu \
      --mode feedback --allow-torch-ops --json --max-timing-s 0.3 > $out
  python3 -c "
import json,sys; d=json.load(open('$out')); ev=d['evidence']; r=ev['requests']
print('$tree', '$round', d['status'], 'ref', r['reference.setup'], 'cand', r['candidate.setup'], 'setups', ev.get('setups'), 'exclusive', d['durations_s']['exclusive'])"
done; done
