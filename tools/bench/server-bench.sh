#!/bin/sh
# swa-server beside llama.cpp's llama-server: the same GGUF file, the same slots and positions
# per slot, 2 threads each, loaded by swa-loadgen with CLIENTS concurrent streaming clients
# (/v1/completions, the same prompts and max_tokens, ignore_eos so every request generates
# max_tokens). The servers are alternated, ROUNDS times, and the table gives medians:
# aggregate generated tokens/s, p50 and p99 time to first token, p50 between tokens, and the
# server's peak RSS (VmHWM). Everything stays on 127.0.0.1.
#
#   sh tools/bench/server-bench.sh MODEL.gguf [ROUNDS]
#   env: LLAMA_SERVER (default /work/peers/llama.cpp/build/bin/llama-server), BUILD (build),
#        NP (8 slots), CTX (512 positions per slot), MAXTOK (64), REQS (requests per client, 4),
#        CLIENTS ("1 4 8"), THREADS (2), LLAMA_ARGS (more llama-server flags, e.g. "--poll 0"),
#        TIMEOUT (seconds swa-loadgen waits on a silent connection before it counts the request failed, 120)
set -eu
MODEL=$1
ROUNDS=${2:-3}
BUILD=${BUILD:-build}
LLAMA_SERVER=${LLAMA_SERVER:-/work/peers/llama.cpp/build/bin/llama-server}
NP=${NP:-8}; CTX=${CTX:-512}; MAXTOK=${MAXTOK:-64}; REQS=${REQS:-4}; TIMEOUT=${TIMEOUT:-120}; CLIENTS=${CLIENTS:-"1 4 8"}; THREADS=${THREADS:-2}
OUT=$(mktemp -d /tmp/server-bench.XXXXXX)
. "$(dirname "$0")/server-common.sh"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo $((20000 + $$ % 20000)); }

run_one() {   # run_one NAME ROUND: start the server, load it, stop it
    name=$1; round=$2; port=$(free_port)
    start_server "$name" "$port" "$NP" "$CTX" "$OUT/$name.log"
    for c in $CLIENTS; do
        # a failed request (a time-out, say) is counted in the table, not the end of the run
        "$BUILD/swa-loadgen" --port "$port" -c "$c" -r "$REQS" -n "$MAXTOK" --timeout "$TIMEOUT" --label "$name c=$c" > "$OUT/run.txt" || true
        tps=$(sed -n 's/.*throughput \([0-9.]*\) tokens\/s.*/\1/p' "$OUT/run.txt")
        ttft=$(sed -n 's/.*first token p50 \([0-9.]*\) .*/\1/p' "$OUT/run.txt")
        ttft99=$(sed -n 's/.*first token p50 [0-9.]* p90 [0-9.]* p99 \([0-9.]*\) .*/\1/p' "$OUT/run.txt")
        itl=$(sed -n 's/.*between tokens p50 \([0-9.]*\) .*/\1/p' "$OUT/run.txt")
        ok=$(sed -n 's/.*: \([0-9]*\) ok, \([0-9]*\) failed.*/\1 \2/p' "$OUT/run.txt")
        echo "$name $c $round $tps $ttft $itl ${ttft99:-?} ${ok:-0 0}" >> "$OUT/results"
        echo "round $round $name c=$c: $tps tokens/s, ttft p50 $ttft p99 $ttft99 ms, between tokens p50 $itl ms, ok/failed $ok" >&2
    done
    rss=$(awk '/VmHWM/ {print $2}' /proc/$pid/status)
    echo "$name rss $round $rss" >> "$OUT/rss"
    kill $pid; wait $pid 2>/dev/null || true
}

r=1
while [ $r -le "$ROUNDS" ]; do   # alternate which goes first
    if [ $((r % 2)) -eq 1 ]; then run_one swa $r; run_one llama $r; else run_one llama $r; run_one swa $r; fi
    r=$((r + 1))
done

echo "model $(basename "$MODEL"), $NP slots x $CTX positions, $THREADS threads, max_tokens $MAXTOK, $REQS requests per client, medians of $ROUNDS alternated rounds"
echo
echo "| clients | swa-server tokens/s | llama-server tokens/s | ratio | swa TTFT p50 ms | llama TTFT p50 ms | swa TTFT p99 ms | llama TTFT p99 ms | swa between tokens p50 ms | llama between tokens p50 ms |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for c in $CLIENTS; do
    st=$(awk -v c=$c '$1=="swa" && $2==c {print $4}' "$OUT/results" | median 2)
    lt=$(awk -v c=$c '$1=="llama" && $2==c {print $4}' "$OUT/results" | median 2)
    sf=$(awk -v c=$c '$1=="swa" && $2==c {print $5}' "$OUT/results" | median 2)
    lf=$(awk -v c=$c '$1=="llama" && $2==c {print $5}' "$OUT/results" | median 2)
    si=$(awk -v c=$c '$1=="swa" && $2==c {print $6}' "$OUT/results" | median 2)
    li=$(awk -v c=$c '$1=="llama" && $2==c {print $6}' "$OUT/results" | median 2)
    s9=$(awk -v c=$c '$1=="swa" && $2==c {print $7}' "$OUT/results" | median 2)
    l9=$(awk -v c=$c '$1=="llama" && $2==c {print $7}' "$OUT/results" | median 2)
    echo "| $c | $st | $lt | $(awk -v a=$st -v b=$lt 'BEGIN {printf "%.2f", a / b}') | $sf | $lf | $s9 | $l9 | $si | $li |"
done
echo
echo "peak RSS (VmHWM), median: swa-server $(awk '$1=="swa" {print $4}' "$OUT/rss" | median 2) kB, llama-server $(awk '$1=="llama" {print $4}' "$OUT/rss" | median 2) kB"
echo "failed requests: swa $(awk '$1=="swa" {s+=$9} END {print s+0}' "$OUT/results"), llama $(awk '$1=="llama" {s+=$9} END {print s+0}' "$OUT/results")"
rm -rf "$OUT"
