#!/usr/bin/env bash
# Set up hf_numbers in ./.venv from scratch: idempotent, safe to run before every command.
# - The exact tested versions: every dependency is installed as requirements/lock.txt pins it
#   (a pip constraints file made by scripts/lock.sh), so a fresh clone reproduces the README's figures.
#   `pip install .` outside this script keeps setup.cfg's ranges instead.
# - A PyTorch the machine already has (e.g. the CUDA build of a GPU machine) is kept: then the venv sees
#   the system site-packages; otherwise the venv is isolated and gets requirements/torch.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    if "$PYTHON" -c "import torch" >/dev/null 2>&1; then
        "$PYTHON" -m venv --system-site-packages .venv
    else
        "$PYTHON" -m venv .venv
    fi
fi
if ! .venv/bin/python -c "import torch" >/dev/null 2>&1; then
    .venv/bin/python -m pip install --quiet --constraint requirements/lock.txt -r requirements/torch.txt
fi
# Reinstall only when the package metadata or the lock changed since the last run.
stamp=.venv/.hf_numbers_installed
if [ ! -f "$stamp" ] || [ setup.cfg -nt "$stamp" ] || [ pyproject.toml -nt "$stamp" ] \
        || [ requirements/lock.txt -nt "$stamp" ]; then
    .venv/bin/python -m pip install --quiet --constraint requirements/lock.txt -e ".[test,docs,peft,ntl,gguf]"
    touch "$stamp"
fi
