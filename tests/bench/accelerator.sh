#!/usr/bin/env bash
# The accelerator figures in the README, in one command on a CUDA machine:
#   tests/bench/accelerator.sh TOKENIZER_DIR OUT_DIR
# TOKENIZER_DIR holds SmolLM2's config.json and tokenizer files (the embedded default's
# converted cache, ~/.cache/copyaudit/models/smollm2-135m-instruct, without its weights).
# Models of the published shapes get random weights (random_models.py): speed depends on
# the shapes alone, and the real weights are too large to travel to a lent machine.
# Each kind of benchmark's output goes to OUT_DIR/<kind>.log (gpu, judge, models, decop,
# run); one failing does not stop the rest. About 12 minutes on an H100.
set -u
if [ $# -ne 2 ]; then
    echo "usage: $0 TOKENIZER_DIR OUT_DIR (see the comment at the top)" >&2
    exit 2
fi
source_dir=$1
out=$2
py=${PYTHON:-python3}
models=${MODELS_DIR:-/tmp/copyaudit-random-models}
export HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1
cd "$(dirname "$0")/../.."
mkdir -p "$out" "$models"

stage() {  # stage NAME COMMAND...: run, keep its output in OUT_DIR/NAME.log
    local name=$1
    shift
    echo "== $name: $*" | tee -a "$out/$name.log"
    local start=$SECONDS
    "$@" 2>&1 | grep -v "Writing model shards\|Loading weights" | tee -a "$out/$name.log"
    echo "== $name: exit ${PIPESTATUS[0]} after $((SECONDS - start)) s" | tee -a "$out/$name.log"
}

nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv | tee "$out/gpu.log"
$py -c "import torch, transformers; print('torch', torch.__version__, 'transformers',
transformers.__version__)" | tee -a "$out/gpu.log"

# The seq2seq event judge, batched vs one pair per call: the trained tiny T5, then
# Flan-T5-XL's shape (bfloat16).
stage judge $py tests/bench/bench_event_judge.py --only seq2seq --device cuda \
    --generations 10
stage judge $py tests/bench/bench_event_judge.py --only seq2seq --device cuda \
    --generations 4 --t5-shape flan-t5-xl

for shape in smollm2-135m smollm2-1.7b; do
    stage models $py tests/bench/random_models.py causal "$shape" \
        "$models/$shape" --from "$source_dir"
done
# DE-COP: 24 orders of 10 bundled passages, one prompt per pass vs batches of 48, and
# prefix sharing; float32 as well for the 135M shape (the probabilities' agreement).
for shape in smollm2-135m smollm2-1.7b; do
    stage decop $py tests/bench/bench_decop.py --model "$models/$shape" \
        --device cuda --passages 10 --batch-size 48
done
stage decop $py tests/bench/bench_decop.py \
    --model "$models/smollm2-135m" --device cuda --dtype float32 --passages 10 --batch-size 48
# Generation through the real runner: 16 literal cases (200 new tokens each), one at a
# time vs one batch of 16 (the batch first).
for shape in smollm2-135m smollm2-1.7b; do
    stage run $py tests/bench/bench_run.py 16 --model "$models/$shape" \
        --device cuda --batch-sizes 16,1
done
