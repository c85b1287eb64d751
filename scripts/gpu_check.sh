#!/bin/bash
# The GPU checks of one lease (run on the lent machine, wheels from scripts/gpu_wheels.sh in .gpu/whl): the tests
# marked gpu, then the benchmarks in order of importance, each inside the time left (BUDGET seconds, default 540).
# Everything is printed; tables go to $OUT (the device tool's folder that comes back).
cd "$(dirname "$0")/.." || exit 1
START=$(date +%s); DEADLINE=$((START + ${BUDGET:-540})); OUT=${OUT:-/tmp/gpu_out}; mkdir -p "$OUT"
left() { echo $((DEADLINE - $(date +%s))); }
run() {  # run LIMIT COMMAND...: at most LIMIT seconds, fewer when the budget has less left
  local limit=$1 l; shift; l=$(left)
  [ "$l" -lt 20 ] && { echo "SKIP (no time): $*"; return; }
  [ "$limit" -gt "$l" ] && limit=$l
  echo "=== [$(($(date +%s) - START))s] $* (limit ${limit}s)"; timeout "$limit" "$@"; echo "=== rc $?"
}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .gpu/whl/*.whl \
  || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
B="python3 benchmarks/bench_gpu.py --warmup 3 --steps 10"
run 150 python3 -m pytest -q -m gpu -n 8 -p no:cacheprovider tests/test_gpu_step.py tests/test_gpu.py -rs
run 120 $B --encodings xval fone --ways eager compiled --output "$OUT/gpu_gpt2.md"
run 60 $B --no-plain --encodings --peer --ways compiled --output "$OUT/gpu_peer.md"
run 60 python3 benchmarks/bench_generation.py --device cuda --backbones gpt2 --encodings xval fone \
  --batch-sizes 1 64 --hidden 768 --layers 12 --heads 12 --vocab 50304 --new-tokens 64 --rounds 3 \
  --output "$OUT/generation.md"
run 120 $B --preset smollm2-135m --encodings xval --ways compiled --output "$OUT/gpu_smollm2.md"
run 90 $B --seq-lens 4096 --encodings xval --ways compiled --output "$OUT/gpu_4k.md"
echo "total $(($(date +%s) - START))s"
