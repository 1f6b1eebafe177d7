#!/bin/sh
# Time to first token of a chat's second turn, with the first turn still held by a slot
# ("cache_prompt": true, the default) and evaluated afresh ("cache_prompt": false), on swa-server
# and, when it is there, llama-server. Turn 1 is a system prompt and a question, answered greedily
# (max_tokens 64); turn 2 sends it all back with the answer and a new question, max_tokens 1, so
# the request's time is the time to its first token. Rounds alternate the two; medians.
#
#   sh tools/bench/server-reuse.sh MODEL.gguf [ROUNDS]
#   env: LLAMA_SERVER, BUILD (build), CTX (1024), THREADS (2), SERVERS ("swa llama"), LLAMA_ARGS (more
#        llama-server flags)
set -eu
MODEL=$1
ROUNDS=${2:-5}
BUILD=${BUILD:-build}
LLAMA_SERVER=${LLAMA_SERVER:-/work/peer/llama.cpp/build/bin/llama-server}
CTX=${CTX:-1024}; THREADS=${THREADS:-2}; SERVERS=${SERVERS:-"swa llama"}
SYS="You are a storyteller for small children. Every story you tell is short and happy, with a cat, a dog or a bird in it, and a lesson about sharing, kindness or being brave. You use simple words that a child of four can follow, short sentences, and you end every story with the words The End. When a child asks what happens next, you go on with the same animals and the same place, and you never make the story sad or scary."
Q1="Tell me a story about a cat who finds a red ball in the garden."
Q2="And what did the dog do then?"
PORT=${PORT:-18731}
OUT=$(mktemp -d /tmp/server-reuse.XXXXXX)
. "$(dirname "$0")/server-common.sh"
content() { sed 's/.*"content":"\(\([^"\\]\|\\.\)*\)".*/\1/'; }
field() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }

for name in $SERVERS; do
    [ "$name" = swa ] || [ -x "$LLAMA_SERVER" ] || continue
    start_server "$name" "$PORT" 2 "$CTX" "$OUT/log"
    u="http://127.0.0.1:$PORT/v1/chat/completions"
    t1="{\"messages\":[{\"role\":\"system\",\"content\":\"$SYS\"},{\"role\":\"user\",\"content\":\"$Q1\"}],\"max_tokens\":64,\"temperature\":0"
    r=1
    while [ $r -le "$ROUNDS" ]; do
        for cache in true false; do
            a=$(curl -s "$u" -d "$t1}" | content)
            t2="{\"messages\":[{\"role\":\"system\",\"content\":\"$SYS\"},{\"role\":\"user\",\"content\":\"$Q1\"},"
            t2="$t2{\"role\":\"assistant\",\"content\":\"$a\"},{\"role\":\"user\",\"content\":\"$Q2\"}],\"max_tokens\":1,\"temperature\":0,\"cache_prompt\":$cache}"
            resp=$(curl -s -w ' TIME %{time_total}' "$u" -d "$t2")
            t=$(echo "$resp" | sed 's/.* TIME //')
            n=$(echo "$resp" | field prompt_tokens)
            c=$(echo "$resp" | field cached_tokens)
            echo "$name $cache $t ${n:-?} ${c:--}" >> "$OUT/results"
        done
        r=$((r + 1))
    done
    kill $pid; wait $pid 2>/dev/null || true
done
echo "model $(basename "$MODEL"), $CTX positions per slot, $THREADS threads, medians of $ROUNDS rounds"
echo
echo "| server | turn 2 prompt tokens | held by the slot | TTFT, reused (ms) | TTFT, evaluated afresh (ms) | ratio |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for name in $SERVERS; do
    grep -q "^$name " "$OUT/results" 2>/dev/null || continue
    tr=$(awk -v s=$name '$1==s && $2=="true" {print $3}' "$OUT/results" | median 4)
    tf=$(awk -v s=$name '$1==s && $2=="false" {print $3}' "$OUT/results" | median 4)
    n=$(awk -v s=$name '$1==s && $2=="true" {print $4}' "$OUT/results" | tail -1)
    c=$(awk -v s=$name '$1==s && $2=="true" {print $5}' "$OUT/results" | tail -1)
    echo "| $name | $n | $c | $(awk -v a=$tr 'BEGIN {printf "%.1f", 1000 * a}') | $(awk -v a=$tf 'BEGIN {printf "%.1f", 1000 * a}') | $(awk -v a=$tr -v b=$tf 'BEGIN {printf "%.2f", b / a}') |"
done
rm -rf "$OUT"
