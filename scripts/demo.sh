#!/usr/bin/env bash
# The main job on embedded defaults: EvoEngineer-Full driven by the built-in offline model
# (deterministic, no API key) over the smoke suite on the CPU, results in ./results/harness.sqlite,
# then the static leaderboard in ./site/_build (open site/_build/index.html).
# CPU timings use host timers: they exercise the pipeline and are never leaderboard numbers.
# Extra arguments go to `harness run` (e.g. --budget 45 for the paper's budget; --device cuda on a GPU).
#
# Resumable to the end: the run's id is fixed (demo-evoengineer), so running this script again
# continues an interrupted demo where it stopped (finished ops are skipped, nothing is judged
# twice). Ctrl-C stops the run (stored as interrupted) and the script still builds the leaderboard
# from the ops finished so far, then says how to continue. Measured times: README.md.
# DEMO_RESULTS and DEMO_SITE move the results store and the site (default: results, site/_build).
set -euo pipefail
cd "$(dirname "$0")/.."
H=.venv/bin/harness
[[ -x $H ]] || H=harness
RESULTS=${DEMO_RESULTS:-results}
SITE=${DEMO_SITE:-site/_build}
$H doctor
trap ':' INT TERM  # Ctrl-C reaches the harness too: it stores the run interrupted; the script goes on
rc=0
$H run --method evoengineer --llm offline --suite smoke --device cpu --budget 6 --seed 0 \
  --results "$RESULTS" --run-id demo-evoengineer "$@" || rc=$?
trap - INT TERM
if $H leaderboard build --results "$RESULTS" --out "$SITE"; then
  echo "demo: leaderboard at $SITE/index.html (preview: $H leaderboard serve --dir $SITE)"
else
  echo "demo: no leaderboard yet (it needs one finished op)" >&2
fi
if ((rc != 0)); then
  echo "demo: run demo-evoengineer stopped (exit $rc); run \`bash scripts/demo.sh\` again to continue it where it stopped" >&2
  exit "$rc"
fi
