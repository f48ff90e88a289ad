#!/usr/bin/env bash
# The wheels the GPU scenarios need that the device machine lacks, into ./.whl (git-ignored; it
# travels with the device call's `carry: [".whl"]`, 64 MiB at most in all): the openai client and its
# dependencies (the `scale` scenario's `harness run --llm MODEL@URL`) and, with --ray, a stripped Ray
# (the `ray-cluster` scenario; scripts/ray_wheel.py). The device's Python is 3.12.
# On the device: python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
#   --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
set -euo pipefail
cd "$(dirname "$0")/../../.."
get() {  # wheels for the device's Python and platform; extra pip options first (--no-deps)
  python3 -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d .whl "$@" 2> >(grep -v "^WARNING: Location" >&2)
}
mkdir -p .whl
get openai  # with its dependencies, resolved for the device's Python
if [ "${1:-}" = "--ray" ]; then
  get --no-deps ray==2.60.0 msgpack jsonschema jsonschema-specifications referencing rpds-py attrs
  python3 scripts/ray_wheel.py .whl/ray-2.60.0-*.whl
fi
du -sh .whl
ls .whl
