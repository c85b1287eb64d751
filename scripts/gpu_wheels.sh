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
for package in transformers==5.24.0 tokenizers==0.23.3 accelerate==1.15.0 peft==0.21.2 datasets==5.2.0 \
    evaluate==0.4.6 dill==0.4.1 multiprocess==0.70.19 rebound==5.2.2 vega_datasets==0.9.0 ntloss==0.3.2 \
    liger-kernel==0.8.5 x-transformers==2.31.10 einx frozendict loguru torch-einops-utils; do
  "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp "${PLATFORMS[@]}" \
    -d .gpu/whl "$package"
done
du -sh .gpu/whl
