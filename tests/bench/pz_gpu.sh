#!/usr/bin/env bash
# Issue 37's checks on a CUDA machine, in one command from the repository root:
#   COPYAUDIT_SMOLLM2_GGUF=/path/to/SmolLM2-135M-Instruct.Q4_1.gguf tests/bench/pz_gpu.sh OUT_DIR
# Needs torch, transformers, gguf, numpy and pytest only (no textual, no SQLite). The GGUF
# is converted once into $COPYAUDIT_CACHE_DIR (default ~/.cache/copyaudit). Stages:
#   check: tests/test_pz_embedded.py on 1,000 windows, CUDA, float32 (the acceptance test)
#   embedded: bench_pz.py, the embedded model, float32 then bfloat16, 1,000 windows
#   random: Llama 3.2 1B and Llama 3.1 8B shapes with random weights, bfloat16 (8B also
#           float32 on 256 windows: batched vs one at a time in float32)
#   oom: the 1B shape with batch 512 in 5% of the GPU's memory: the batch must halve
# Each stage's output goes to OUT_DIR/<stage>.log; one failing does not stop the rest.
# About 5 minutes on an H200.
set -u
if [ $# -ne 1 ]; then
    echo "usage: $0 OUT_DIR (see the comment at the top)" >&2
    exit 2
fi
out=$1
py=${PYTHON:-python3}
cd "$(dirname "$0")/../.."
export PYTHONPATH=$PWD HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1
mkdir -p "$out"

stage() {  # stage NAME SECONDS COMMAND...: run with a time limit, keep the output
    local name=$1 limit=$2
    shift 2
    echo "== $name: $*" | tee -a "$out/$name.log"
    local start=$SECONDS
    timeout "$limit" "$@" 2>&1 | grep -v "Loading weights" | tee -a "$out/$name.log"
    echo "== $name: exit ${PIPESTATUS[0]} after $((SECONDS - start)) s" | tee -a "$out/$name.log"
}

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$out/gpu.log"
$py -c "import torch, transformers; print('torch', torch.__version__, 'transformers',
transformers.__version__)" | tee -a "$out/gpu.log"

bench="$py tests/bench/bench_pz.py --device cuda"
stage check 180 env COPYAUDIT_PZ_CHECK_WINDOWS=1000 COPYAUDIT_PZ_CHECK_DEVICE=cuda \
    COPYAUDIT_PZ_CHECK_BATCH=64 $py -m pytest --noconftest -p no:cacheprovider -o addopts= \
    -s -q tests/test_pz_embedded.py
stage embedded 90 $bench --dtype float32 --windows 1000 --batch-size 64 --check 1000
stage embedded 60 $bench --dtype bfloat16 --windows 1000 --batch-size 64 --check 0
stage random 60 $bench --random-config llama-3.2-1b --dtype bfloat16 --windows 1000 \
    --batch-size 64 --check 0
stage random 120 $bench --random-config llama-3.1-8b --dtype bfloat16 --windows 1000 \
    --batch-size 64 --check 0
stage random 90 $bench --random-config llama-3.1-8b --dtype float32 --windows 256 \
    --batch-size 64 --check 0
stage oom 60 $bench --random-config llama-3.2-1b --dtype bfloat16 --windows 512 \
    --batch-size 512 --memory-fraction 0.05 --check 0
