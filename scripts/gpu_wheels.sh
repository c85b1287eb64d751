#!/bin/bash
# Wheels that the lent GPU machine lacks (it has torch, triton, numpy, pyarrow, pytest, pytest-xdist, hypothesis, but
# no package index), for Python 3.12 x86-64, into .gpu/whl (ignored by git: add `/.gpu/` to .git/info/exclude).
# Then: the device tool's run with carry [".gpu"] and the command `bash scripts/gpu_check.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .gpu/whl
PY=${PYTHON:-.venv/bin/python}
PLATFORMS=(--platform manylinux_2_28_x86_64 --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64
           --platform manylinux2014_x86_64 --platform manylinux1_x86_64)
# the lock's versions (what the CPU suite ran on), and the GPU extra's and the peer benchmark's packages
names='transformers|tokenizers|accelerate|peft|datasets|evaluate|dill|multiprocess|rebound|vega-datasets|ntloss'
mapfile -t locked < <(grep -E "^($names)==" requirements/lock.txt)
for package in "${locked[@]}" liger-kernel==0.8.5 x-transformers==2.31.10 einx frozendict loguru torch-einops-utils; do
  "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp "${PLATFORMS[@]}" \
    -d .gpu/whl "$package"
done
du -sh .gpu/whl
