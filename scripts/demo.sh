#!/usr/bin/env bash
# The main job on embedded defaults: EvoEngineer-Full driven by the built-in offline model
# (deterministic, no API key) over the smoke suite on the CPU, results in ./results/harness.sqlite,
# then the static leaderboard in ./site/_build (open site/_build/index.html).
# CPU timings use host timers: they exercise the pipeline and are never leaderboard numbers.
# Extra arguments go to `harness run` (e.g. --budget 45 for the paper's budget; --device cuda on a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
H=.venv/bin/harness
[[ -x $H ]] || H=harness
$H doctor
$H run --method evoengineer --llm offline --suite smoke --device cpu --budget 6 --seed 0 \
  --results results --run-id demo-evoengineer "$@"
$H leaderboard build --results results --out site/_build
echo "demo: leaderboard at site/_build/index.html (preview: $H leaderboard serve --dir site/_build)"
