#!/usr/bin/env bash
# Drift check: does hf_numbers still work on the releases a user would install today?
#
#   bash scripts/check_latest.sh            # newest release of every dependency, setup.cfg's upper bounds ignored
#   bash scripts/check_latest.sh --lowest   # setup.cfg's lower bounds exactly (the oldest versions we claim)
#   bash scripts/check_latest.sh --full     # the whole suite instead of the smoke subset (either mode)
#
# It builds a scratch environment (.venv-latest or .venv-lowest, not seeing the system site-packages),
# prints the versions it got, runs the smoke subset (`pytest -m smoke`: every backbone x encoding forward,
# backward, save/reload and remote code, generation, pipelines, tokenizers, one CLI run), then loads
# checkpoints saved under the tested set (.venv, from scripts/setup.sh) with remote code in the scratch
# environment and the other way round. Exit status 0 when everything passed. Record the result in the
# README's "Tested versions"; raise an upper bound in setup.cfg only after it passes there.
set -uo pipefail
cd "$(dirname "$0")/.."
mode=latest suite=(-m smoke)
for arg in "$@"; do
    case "$arg" in
        --lowest) mode=lowest ;;
        --full) suite=() ;;
        *) echo "usage: bash scripts/check_latest.sh [--lowest] [--full]" >&2; exit 2 ;;
    esac
done
venv=.venv-$mode
started=$(date +%s)

# setup.cfg's requirements (install_requires, the test extra and the pretrained-model extras), with their bounds.
mapfile -t requirements < <(python3 - <<'PY'
import configparser
config = configparser.ConfigParser()
config.read("setup.cfg")
extras = config["options.extras_require"]
for text in (config["options"]["install_requires"], *(extras[name] for name in ("test", "peft", "ntl", "gguf"))):
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        if line:
            print(line)
PY
)
if [ "$mode" = latest ]; then  # every name without its bounds: the newest release pip finds
    mapfile -t wanted < <(printf '%s\n' "${requirements[@]}" | sed -E 's/[<>=!~ ].*$//')
else  # every lower bound pinned exactly
    mapfile -t wanted < <(printf '%s\n' "${requirements[@]}" | sed -E 's/^([A-Za-z0-9_.-]+)>=([^,]+).*$/\1==\2/')
fi

bash scripts/setup.sh >/dev/null || { echo "scripts/setup.sh failed: the tested environment is needed too" >&2; exit 1; }
rm -rf "$venv"
python3 -m venv "$venv"
# PIP_CONSTRAINT=/dev/null: a machine-wide pip constraint (such as a torch cap) must not hide the newest release.
if ! PIP_CONSTRAINT=/dev/null "$venv/bin/python" -m pip install --quiet "${wanted[@]}" \
        || ! "$venv/bin/python" -m pip install --quiet --no-deps -e .; then
    echo "DRIFT CHECK ($mode): could not install ${wanted[*]}" >&2
    exit 1
fi

echo "== drift check ($mode), $(date -u +%Y-%m-%d): versions"
"$venv/bin/python" - <<'PY'
import importlib.metadata as metadata
import platform

names = ["torch", "transformers", "tokenizers", "accelerate", "datasets", "evaluate", "safetensors",
         "huggingface_hub", "numpy", "peft", "ntloss", "gguf"]
print(f"Python {platform.python_version()}, " + ", ".join(f"{n} {metadata.version(n)}" for n in names))
PY

failed=()
echo "== $venv: pytest ${suite[*]:-(whole suite)}"
"$venv/bin/python" -m pytest -q -p no:cacheprovider "${suite[@]}" || failed+=("pytest ${suite[*]:-} on $venv")
# Checkpoints (with their remote code) saved under one environment, loaded under the other.
cross=(tests/test_modeling.py -k remote_code_under_another_environment)
echo "== saved under $venv, loaded under .venv"
HF_NUMBERS_OTHER_PYTHON=.venv/bin/python "$venv/bin/python" -m pytest -q -p no:cacheprovider "${cross[@]}" \
    || failed+=("checkpoints saved under $venv, loaded under .venv")
echo "== saved under .venv, loaded under $venv"
HF_NUMBERS_OTHER_PYTHON="$venv/bin/python" .venv/bin/python -m pytest -q -p no:cacheprovider "${cross[@]}" \
    || failed+=("checkpoints saved under .venv, loaded under $venv")

echo "== drift check ($mode) took $(( $(date +%s) - started )) s"
if [ ${#failed[@]} -gt 0 ]; then
    printf 'FAILED: %s\n' "${failed[@]}"
    exit 1
fi
echo "PASSED"
