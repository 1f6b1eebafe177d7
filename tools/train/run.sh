#!/bin/sh
# Recreate the shipped model from its seed: corpus -> tokenizer -> training -> GGUF + references
# -> check against the C library. Run from anywhere; intermediate files go to tools/train/work/.
#
#   sh tools/train/run.sh              the whole pipeline (about an hour on 2 cores)
#   SEED=2 STEPS=200 STEPS2=100 sh tools/train/run.sh
#
# Needs Debian's python3-torch, python3-sentencepiece, python3-numpy and, for a usable speed,
# libopenblas0-openmp (Debian's torch otherwise uses the reference BLAS, about 8x slower).
# The results are bit for bit the same for the same seed, thread count and package versions.
set -eu
cd "$(dirname "$0")"
PY=/usr/bin/python3
SEED=${SEED:-1}
STEPS=${STEPS:-1000}
STEPS2=${STEPS2:-500}
THREADS=${THREADS:-2}
OUT=${OUT:-../../examples/models}
mkdir -p work

if [ "$(id -u)" = 0 ] && ! $PY -c 'import torch, sentencepiece, numpy' 2>/dev/null; then
    apt-get install -y python3-torch python3-sentencepiece python3-numpy libopenblas0-openmp
fi

$PY model.py
$PY gen_corpus.py --seed "$SEED" --out work/corpus.txt --mb 30 --heldout-kb 40
$PY train_tokenizer.py --corpus work/corpus.txt --prefix work/tokenizer --vocab 1536 --seed "$SEED"
# Phase 1: 1000 steps, peak learning rate 2e-3. Phase 2: 500 more steps from its weights with a
# fresh optimizer and a cosine from 1e-3, in which the model learns to copy names from context.
TRAIN="--seed $SEED --threads $THREADS --corpus work/corpus.txt --heldout work/heldout.txt
       --tokenizer work/tokenizer.model --log loss.tsv"
$PY train.py $TRAIN --steps "$STEPS" --out work/ckpt1.pt
$PY train.py $TRAIN --steps "$STEPS2" --init work/ckpt1.pt --lr 1e-3 --min-lr 1e-4 --warmup 20 \
    --out work/ckpt.pt
$PY export.py --ckpt work/ckpt.pt --tokenizer work/tokenizer.model --heldout-src work/heldout.txt \
    --threads "$THREADS" --outdir "$OUT"
$PY check_c.py --models "$OUT" --tokenizer work/tokenizer.model
