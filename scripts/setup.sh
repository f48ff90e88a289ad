#!/usr/bin/env bash
# Install everything the harness needs into ./.venv, from nothing.
#   bash scripts/setup.sh            Python side: venv, torch (CPU build unless a GPU is present), the package
#   bash scripts/setup.sh --system   also the system tools the tests use: bubblewrap, podman, chromium,
#                                    binutils (c++filt), the kernel's syscall headers
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

if [[ "${1:-}" == "--system" ]] && command -v apt-get >/dev/null; then
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  need=()
  command -v bwrap >/dev/null || need+=(bubblewrap)
  command -v podman >/dev/null || need+=(podman runc)
  command -v chromium >/dev/null || need+=(chromium)
  command -v c++filt >/dev/null || need+=(binutils)  # tests/evaluator/test_kernelnames.py
  [[ -e /usr/include/asm-generic/unistd.h ]] || need+=(linux-libc-dev)  # seccomp's syscall table test
  if ((${#need[@]})); then
    echo "setup: installing system packages: ${need[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
  fi
fi

[[ -x .venv/bin/python ]] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  # torch's CPU build where there is no NVIDIA GPU: a plain `pip install torch` pulls a multi-GB CUDA build.
  if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
    .venv/bin/python -m pip install -q "torch>=2.4"
  else
    .venv/bin/python -m pip install -q "${HARNESS_TORCH_SPEC:-torch==2.13.0}" \
      || .venv/bin/python -m pip install -q --index-url https://download.pytorch.org/whl/cpu torch
  fi
fi
.venv/bin/python -m pip install -q -e '.[dev]'
echo "setup: ok ($(.venv/bin/python -c 'import torch,sys;print("python",sys.version.split()[0],"torch",torch.__version__)'))"
