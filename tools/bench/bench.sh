#!/bin/sh
# make bench: a small standard set of benchmarks, written to $BUILD/bench.md as a Markdown table.
# Models with random weights in real shapes are generated once into $BUILD/bench/ (about 2 GB);
# each runs mapped (swa_model_load) and read into memory (--no-mmap).
# BENCH_SHAPES="stories15m tinyllama" BENCH_TYPES="f16 q8_0 q4_0 q4_k" narrow or widen the set.
set -eu
BUILD=${1:-build}
THREADS=${THREADS:-$(nproc)}
SHAPES=${BENCH_SHAPES:-"stories15m tinyllama"}
TYPES=${BENCH_TYPES:-"f16 q8_0 q4_0"}
OUT=$BUILD/bench.md
mkdir -p "$BUILD/bench"
{
    echo "# swa-bench, $(date -u +%Y-%m-%d), $(uname -m), $THREADS threads"
    echo
    echo "Medians over 3 runs, ± half the range. tg% is generation as a share of the bandwidth limit"
    echo "(each repetition against the read bandwidth measured just before it ÷ the bytes one token reads)."
    echo
    echo "| model | type | load | threads | kernels | pp128 t/s | tg32 t/s | depth | GB/s | MB/token | tg% |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
} > "$OUT"
for shape in $SHAPES; do
    for type in $TYPES; do
        model=$BUILD/bench/$shape-$type.gguf
        [ -f "$model" ] || "$BUILD/swa-mkmodel" --shape "$shape" --type "$type" "$model" >&2
        "$BUILD/swa-bench" -m "$model" -t "$THREADS" -r 3 --markdown >> "$OUT"
        "$BUILD/swa-bench" -m "$model" -t "$THREADS" -r 3 --no-mmap --markdown >> "$OUT"
    done
    # the scalar reference on the same file, for the SIMD speed-up as a ratio from this run
    "$BUILD/swa-bench" -m "$BUILD/bench/$shape-q4_0.gguf" -t "$THREADS" -r 3 --kernels ref -p 32 -n 8 --markdown >> "$OUT" || true
done
# what a grammar (json.gbnf) adds to sampling a token on the test vocabularies (skipped without ../shared)
{ echo; "$BUILD/swa-grammar-bench"; } >> "$OUT"
# speculative decoding: one verification of k tokens, and prompt lookup end to end on the shipped model
if [ -f "$BUILD/bench/tinyllama-q4_0.gguf" ]; then
    { echo; "$BUILD/swa-spec-bench" -m "$BUILD/bench/tinyllama-q4_0.gguf" -t "$THREADS" -r 3; } >> "$OUT"
fi
{ echo; "$BUILD/swa-spec-bench" -m examples/models/swa-stories.gguf -f tools/bench/spec-prompt.txt -t "$THREADS" -r 5; } >> "$OUT"
cat "$OUT"
