#!/bin/sh
# Recreate the shipped model from its seed: corpus -> tokenizer -> training -> GGUF + references
# -> check against the C library. Run from anywhere; intermediate files go to tools/train/work/.
#
#   sh tools/train/run.sh              the whole pipeline (about an hour on 2 cores)
#   SEED=2 STEPS=200 STEPS2=100 sh tools/train/run.sh
#   NAME=swa-stories-draft SIZE="--layers 3 --dim 128 --heads 4 --kv-heads 2 --ffn 352" \
#       STEPS=450 STEPS2=0 LR=3e-3 MIN_LR=3e-4 THREADS=1 LOG=loss-draft.tsv MIN_GAP=0.05 \
#       sh tools/train/run.sh
#                                      the draft model for speculative decoding (same vocabulary)
#
# NAME names the output (NAME.gguf, NAME.ref.json) and the checkpoints (work/NAME.pt); SIZE is
# train.py's shape flags; STEPS2=0 skips the second phase; MIN_GAP is check_c.py's --min-gap.
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
NAME=${NAME:-swa-stories}
SIZE=${SIZE:-"--layers 6 --dim 256 --heads 8 --kv-heads 4 --ffn 704"}
LR=${LR:-2e-3}
MIN_LR=${MIN_LR:-2e-4}
LOG=${LOG:-loss.tsv}
MIN_GAP=${MIN_GAP:-0}
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
       --tokenizer work/tokenizer.model --log $LOG $SIZE"
CKPT=work/$NAME.pt
if [ "$STEPS2" -gt 0 ]; then
    $PY train.py $TRAIN --steps "$STEPS" --lr "$LR" --min-lr "$MIN_LR" --out "work/$NAME.phase1.pt"
    $PY train.py $TRAIN --steps "$STEPS2" --init "work/$NAME.phase1.pt" --lr 1e-3 --min-lr 1e-4 \
        --warmup 20 --out "$CKPT"
else
    $PY train.py $TRAIN --steps "$STEPS" --lr "$LR" --min-lr "$MIN_LR" --out "$CKPT"
fi
$PY export.py --ckpt "$CKPT" --tokenizer work/tokenizer.model --heldout-src work/heldout.txt \
    --threads "$THREADS" --outdir "$OUT" --name "$NAME"
$PY check_c.py --models "$OUT" --name "$NAME" --tokenizer work/tokenizer.model \
    --min-gap "$MIN_GAP"
