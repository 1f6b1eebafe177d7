#!/bin/sh
# examples/simple.c as a user runs it: on the model in examples/models it must exit 0 and print
# the prompt and a continuation; on a missing file, exit 1 with a message. `make test` runs it;
# by hand, from the project root after make:
#
#   sh tests/test_simple.sh [BUILD_DIR [RUN_PREFIX...]]    RUN_PREFIX: an emulator, e.g. qemu-aarch64-static
set -eu
BUILD=${1:-build}
[ $# -gt 0 ] && shift
SIMPLE="$BUILD/swa-simple"
PROMPT="Once upon a time"
if ! out=$(${1+"$@"} "$SIMPLE" examples/models/swa-stories.gguf); then
    echo "test_simple: $SIMPLE failed" >&2
    exit 1
fi
case $out in
    "$PROMPT"?*) ;;
    *) echo "test_simple: $SIMPLE printed no continuation of \"$PROMPT\": [$out]" >&2; exit 1 ;;
esac
if msg=$(${1+"$@"} "$SIMPLE" "$BUILD/no-such-model.gguf" 2>&1 >/dev/null) || [ -z "$msg" ]; then
    echo "test_simple: $SIMPLE on a missing file did not fail with a message" >&2
    exit 1
fi
echo "test_simple: $(printf '%s' "$out" | wc -w) words; a missing model: $msg"
