#!/bin/sh
# Conversations returning to their cache: swa-loadgen --conversations K --turns T (K chats of T
# turns taken in turn over SLOTS slots, each turn sending the chat so far, greedy) against
# swa-server with its snapshot cache (the default), swa-server with --cache-ram 0, and
# llama-server when it is there, in alternation, ROUNDS times. Per run: the prompt tokens the
# server evaluated, the median and p99 time to first token; then the medians over the rounds
# with their range.
#
#   sh tools/bench/conversations.sh MODEL.gguf [ROUNDS]
#   env: LLAMA_SERVER, BUILD (build), SLOTS (4), CTX (per slot, 512), THREADS (2), K (32), T (6),
#        N (max_tokens, 24), SERVERS ("swa swa-nocache llama"), LLAMA_ARGS (extra, e.g. --chat-template llama2)
set -eu
MODEL=$1
ROUNDS=${2:-3}
BUILD=${BUILD:-build}
LLAMA_SERVER=${LLAMA_SERVER:-/work/peers/llama.cpp/build/bin/llama-server}
SLOTS=${SLOTS:-4}; CTX=${CTX:-512}; THREADS=${THREADS:-2}; K=${K:-32}; T=${T:-6}; N=${N:-24}
SERVERS=${SERVERS:-"swa swa-nocache llama"}
LLAMA_ARGS=${LLAMA_ARGS:-}
PORT=${PORT:-18741}
OUT=$(mktemp -d /tmp/conversations.XXXXXX)

run() {   # name: start the server, run the workload, stop it; a line of results
    case $1 in
    swa) "$BUILD/swa-server" -m "$MODEL" --port $PORT -np "$SLOTS" -c "$CTX" -t "$THREADS" --log-disable 2>"$OUT/log" & ;;
    swa-nocache) "$BUILD/swa-server" -m "$MODEL" --port $PORT -np "$SLOTS" -c "$CTX" -t "$THREADS" --log-disable \
                 --cache-ram 0 2>"$OUT/log" & ;;
    llama) [ -x "$LLAMA_SERVER" ] || return 0
           # shellcheck disable=SC2086
           "$LLAMA_SERVER" -m "$MODEL" --host 127.0.0.1 --port $PORT -np "$SLOTS" -c $((SLOTS * CTX)) -t "$THREADS" \
               -tb "$THREADS" --metrics $LLAMA_ARGS >"$OUT/log" 2>&1 & ;;
    esac
    pid=$!
    until curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; do
        kill -0 $pid 2>/dev/null || { echo "$1 did not start:" >&2; tail -3 "$OUT/log" >&2; exit 1; }
        sleep 0.2
    done
    "$BUILD/swa-loadgen" --port $PORT --conversations "$K" --turns "$T" -c "$SLOTS" -n "$N" --timeout 600 >"$OUT/run" || true
    kill $pid; wait $pid 2>/dev/null || true
    ev=$(sed -n 's/.*evaluated \([0-9]*\).*/\1/p' "$OUT/run")
    p50=$(sed -n 's/.*time to first token p50 \([0-9.]*\) p90 [0-9.]* p99 \([0-9.]*\) ms.*/\1/p' "$OUT/run")
    p99=$(sed -n 's/.*time to first token p50 \([0-9.]*\) p90 [0-9.]* p99 \([0-9.]*\) ms.*/\2/p' "$OUT/run")
    sent=$(sed -n 's/.*prompt tokens sent \([0-9]*\).*/\1/p' "$OUT/run")
    ok=$(sed -n 's/.*: \([0-9]*\) ok, \([0-9]*\) failed.*/\1 \2/p' "$OUT/run")
    PORT=$((PORT + 1))   # the closed port may refuse a listener for a while
    echo "$1 ${ev:-?} ${p50:-?} ${p99:-?} ${sent:-?} ${ok:-? ?}" | tee -a "$OUT/results" >&2
}

r=1
while [ $r -le "$ROUNDS" ]; do
    for name in $SERVERS; do run "$name"; done
    r=$((r + 1))
done
stat() { sort -n | awk '{a[NR]=$1} END {m = NR % 2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2; printf "%.1f (%.1f-%.1f)", m, a[1], a[NR]}'; }
echo "model $(basename "$MODEL"), $K chats x $T turns over $SLOTS slots of $CTX positions, max_tokens $N, $THREADS threads;"
echo "medians of $ROUNDS alternated runs (range); $(lscpu | sed -n 's/^Model name: *//p'), $(date -u +%Y-%m-%d)"
echo
echo "| server | prompt tokens sent | evaluated | TTFT p50 (ms) | TTFT p99 (ms) | requests ok/failed |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
for name in $SERVERS; do
    grep -q "^$name " "$OUT/results" 2>/dev/null || continue
    sent=$(awk -v s=$name '$1==s {print $5}' "$OUT/results" | tail -1)
    ev=$(awk -v s=$name '$1==s {print $2}' "$OUT/results" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    p50=$(awk -v s=$name '$1==s {print $3}' "$OUT/results" | stat)
    p99=$(awk -v s=$name '$1==s {print $4}' "$OUT/results" | stat)
    okf=$(awk -v s=$name '$1==s {o+=$6; f+=$7} END {print o "/" f}' "$OUT/results")
    echo "| $name | $sent | $ev | $p50 | $p99 | $okf |"
done
rm -rf "$OUT"
