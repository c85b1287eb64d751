#!/usr/bin/env bash
# Set up hf_numbers in ./.venv from scratch: idempotent, safe to run before every command.
# - An existing PyTorch (e.g. a CUDA build of a GPU machine) is kept: the venv sees the
#   system site-packages, and torch is installed only when none can be imported.
# - Otherwise torch==2.13.0 is installed (the local CPU build on machines that ship it).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv --system-site-packages .venv
fi
if ! .venv/bin/python -c "import torch" >/dev/null 2>&1; then
    .venv/bin/python -m pip install --quiet "torch==2.13.0"
fi
# Reinstall only when the package metadata changed since the last run.
stamp=.venv/.hf_numbers_installed
if [ ! -f "$stamp" ] || [ setup.cfg -nt "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    .venv/bin/python -m pip install --quiet -e ".[test]"
    touch "$stamp"
fi
