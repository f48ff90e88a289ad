# syntax=docker/dockerfile:1
# The kernel-harness GPU image: CUDA devel (nvcc for load_inline), Python 3.12, torch (CUDA
# build, with Triton), and the harness. The docker backend runs evaluator workers and method
# programs in it (docs/containers.md).
#
# Build for linux/amd64 (what `nox -s image` runs; the platform is a build flag, not a FROM flag):
#   docker build -t kernel-harness:latest --platform linux/amd64 .
# Another CUDA/torch pair: --build-arg CUDA_IMAGE=... --build-arg TORCH_INDEX_URL=... --build-arg TORCH_VERSION=...
ARG CUDA_IMAGE=nvidia/cuda:12.6.3-devel-ubuntu24.04
FROM ${CUDA_IMAGE}

ARG TORCH_VERSION=2.7.1
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cu126
ARG PIP_VERSION=24.3.1

LABEL org.opencontainers.image.title="kernel-harness" \
      org.opencontainers.image.description="Sandboxed judge and runner for LLM-driven GPU kernel optimizers" \
      org.opencontainers.image.licenses="MIT"

ENV DEBIAN_FRONTEND=noninteractive \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    CUDA_HOME=/usr/local/cuda \
    HARNESS_CACHE=/cache

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

# System packages: Python, a C++ toolchain for load_inline (the devel base has nvcc and g++),
# ninja for torch extension builds, coreutils for the in-container `timeout` backstop.
# Versions follow the pinned base image (apt cannot pin across Ubuntu point releases).
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        python3 python3-venv python3-dev ninja-build ca-certificates coreutils \
    && rm -rf /var/lib/apt/lists/*

# torch with CUDA (brings its matching Triton), in a venv (PEP 668 on Ubuntu 24.04).
RUN python3 -m venv "$VIRTUAL_ENV" \
    && pip install "pip==${PIP_VERSION}" \
    && pip install --index-url "${TORCH_INDEX_URL}" "torch==${TORCH_VERSION}"

# The harness itself (not editable: the image is immutable; its digest goes into verdicts).
WORKDIR /opt/kernel-harness
COPY pyproject.toml README.md ./
COPY harness ./harness
COPY sandbox ./sandbox
COPY reference_ops ./reference_ops
RUN pip install . \
    && python -c "import torch, triton, harness, sandbox; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__)"

# Non-root user; the build cache is the only writable place in the image.
RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin harness \
    && mkdir -p /cache \
    && chown harness:harness /cache
USER 10001:10001
WORKDIR /home/harness

CMD ["harness", "--help"]
