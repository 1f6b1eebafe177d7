#!/bin/sh
# The example programs as a user runs them, on the model in examples/models, and the documents'
# C fragments against them. `make test` runs it; by hand, from the project root after make:
#
#   sh tests/test_examples.sh [BUILD_DIR [RUN_PREFIX...]]    RUN_PREFIX: an emulator, e.g. qemu-aarch64-static
#
# - swa-simple (the README's program) prints the prompt and a continuation, and on a missing
#   file exits 1 with a message;
# - swa-sequences, swa-control, swa-chat, swa-grammar and swa-speculative exit 0 having checked what they show (a
#   restored snapshot gives the logits of the sequence saved, an abort stops at a chunk's end, the
#   same text embeds to the same vector, a sampled sentence matches the grammar, drafts verified give plain greedy's tokens);
# - every line of every C fragment in README.md and docs/*.md is a line of one of examples/*.c
#   (compared without the indentation), so each call a document shows is compiled and run here.
set -eu
BUILD=${1:-build}
[ $# -gt 0 ] && shift
MODEL=examples/models/swa-stories.gguf
fail() { echo "test_examples: $*" >&2; exit 1; }

SIMPLE="$BUILD/swa-simple"
PROMPT="Once upon a time"
out=$(${1+"$@"} "$SIMPLE" "$MODEL") || fail "$SIMPLE failed"
case $out in
    "$PROMPT"?*) ;;
    *) fail "$SIMPLE printed no continuation of \"$PROMPT\": [$out]" ;;
esac
if msg=$(${1+"$@"} "$SIMPLE" "$BUILD/no-such-model.gguf" 2>&1 >/dev/null) || [ -z "$msg" ]; then
    fail "$SIMPLE on a missing file did not fail with a message"
fi
echo "test_examples: swa-simple: $(printf '%s' "$out" | wc -w) words; a missing model: $msg"

for p in sequences control chat grammar speculative; do
    out=$(${1+"$@"} "$BUILD/swa-$p" "$MODEL" 2>/dev/null) || fail "$BUILD/swa-$p failed"
    [ -n "$out" ] || fail "$BUILD/swa-$p printed nothing"
    echo "test_examples: swa-$p: $(printf '%s\n' "$out" | tail -n 1 | cut -c1-100)"
done

# Each fragment's lines, without indentation, must each be a line of an example.
lines=$(mktemp)
trap 'rm -f "$lines"' EXIT
sed 's/^[[:space:]]*//' examples/*.c | sort -u > "$lines"
n=0
for doc in README.md docs/*.md; do
    awk '/^```c$/ {on = 1; next} /^```/ {on = 0} on' "$doc" | sed 's/^[[:space:]]*//' | grep -v '^$' | {
        while IFS= read -r line; do
            grep -Fxq -- "$line" "$lines" || fail "$doc: this line of a C fragment is in no example: $line"
        done
    }
    n=$((n + $(grep -c '^```c$' "$doc" || true)))
done
echo "test_examples: $n C fragments in the documents, every line compiled in examples/"
