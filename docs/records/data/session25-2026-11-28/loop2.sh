#!/usr/bin/env bash
# Phase two of ctrlc.py for each DELAY, from a copy of one phase-one result (BASE), each trial with a
# fresh build cache that keeps the precompiled headers and the reference builds of WARM (so softmax's
# candidate must be built). Run from the repository root; load the machine beside it with e.g.
#   for i in 1 2; do (timeout 600 bash -c 'while :; do :; done' &); done
set -u
BASE=${BASE:?a results folder after phase one} WARM=${WARM:?a HARNESS_CACHE after phase one}
export HARNESS_CACHE=/tmp/kh-ctrlc-cache TORCH_EXTENSIONS_DIR=/tmp/kh-ctrlc-te WAIT=${WAIT:-300}
for d in "$@"; do
  rm -rf "$HARNESS_CACHE" "$TORCH_EXTENSIONS_DIR" /tmp/kh-ctrlc-t
  mkdir -p "$HARNESS_CACHE/build"
  cp -r "$WARM/pch" "$WARM/peaks" "$HARNESS_CACHE/"
  cp -r "$WARM/build/reference" "$WARM/build/trusted" "$HARNESS_CACHE/build/"
  cp -r "$BASE" /tmp/kh-ctrlc-t
  echo "=== delay $d"
  timeout 900 .venv/bin/python "$(dirname "$0")/ctrlc.py" /tmp/kh-ctrlc-t "$d"
done
