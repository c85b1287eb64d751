#!/usr/bin/env bash
# Regenerate requirements/lock.txt, the exact versions scripts/setup.sh installs (the tested set).
# pip-tools resolves setup.cfg's ranges (with the extras setup.sh installs; not `bench`, the peer benchmark's
# x-transformers, which CI does not need) to the newest releases, with torch held at
# requirements/torch.txt and left out of the lock, so that a GPU machine keeps its own torch build.
# Run it when a range in setup.cfg moves, then run the suite and the drift check before committing. pip-compile keeps
# a pin the range still allows: to move one, name it (`bash scripts/lock.sh --upgrade-package accelerate`).
set -euo pipefail
cd "$(dirname "$0")/.."
tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
python3 -m venv "$tools"
"$tools/bin/python" -m pip install --quiet "pip-tools==7.6.2"
CUSTOM_COMPILE_COMMAND="bash scripts/lock.sh" "$tools/bin/pip-compile" --quiet --extra test --extra docs --extra peft --extra ntl --extra gguf --strip-extras --no-emit-index-url --no-emit-find-links \
    --unsafe-package torch --constraint requirements/torch.txt \
    --output-file requirements/lock.txt "$@" setup.cfg
