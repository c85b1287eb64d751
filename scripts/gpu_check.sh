#!/bin/bash
# The GPU checks of one lease (run on the lent machine, wheels from scripts/gpu_wheels.sh in .gpu/whl): the tests
# marked gpu, then the benchmarks in order of importance, each inside the time left (BUDGET seconds, default 540).
# Everything is printed; tables and the tests' report go to $OUT (the device tool's folder that comes back).
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
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv
python3 -c "import torch, transformers, peft, datasets, liger_kernel, x_transformers, hf_numbers
print('torch', torch.__version__, 'cuda', torch.version.cuda, 'transformers', transformers.__version__, 'peft',
      peft.__version__, 'datasets', datasets.__version__)" || exit 1
B="python3 benchmarks/bench_gpu.py --warmup 3 --steps 10"
# Each compiled row compiles for 40-65 s on the H200 (2026-12-04); the tests take about 100 s.
run 150 python3 -m pytest -q -m gpu -n 12 -p no:cacheprovider -p no:benchmark tests/test_gpu_step.py tests/test_gpu.py \
  -rfs --tb=short --junitxml "$OUT/gpu_tests.xml"
run 150 $B --dropout 0 --encodings xval --ways compiled --output "$OUT/gpu_gpt2_dropout0.md"
run 90 $B --dropout 0 --no-plain --encodings --peer --ways compiled --output "$OUT/gpu_peer.md"
run 150 $B --preset smollm2-135m --encodings xval --ways compiled --output "$OUT/gpu_smollm2.md"
run 60 python3 benchmarks/bench_generation.py --device cuda --backbones gpt2 --encodings xval \
  --batch-sizes 1 64 --hidden 768 --layers 12 --heads 12 --vocab 50304 --new-tokens 64 --rounds 3 --cache static \
  --output "$OUT/generation_static.md"
run 120 $B --dropout 0 --seq-lens 4096 --encodings xval --ways compiled --output "$OUT/gpu_4k.md"
echo "total $(($(date +%s) - START))s"
