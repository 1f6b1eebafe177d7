#!/bin/sh
# swa-server beside llama.cpp's llama-server: the same GGUF file, the same slots and positions
# per slot, 2 threads each, loaded by swa-loadgen with 1, 4 and 8 concurrent streaming clients
# (/v1/completions, the same prompts and max_tokens, ignore_eos so every request generates
# max_tokens). The servers are alternated, ROUNDS times, and the table gives medians:
# aggregate generated tokens/s, median time to first token, p50 between tokens, and the
# server's peak RSS (VmHWM). Everything stays on 127.0.0.1.
#
#   sh tools/bench/server-bench.sh MODEL.gguf [ROUNDS]
#   env: LLAMA_SERVER (default /work/peer/llama.cpp/build/bin/llama-server), BUILD (build),
#        NP (8 slots), CTX (512 positions per slot), MAXTOK (64), REQS (requests per client, 4),
#        CLIENTS ("1 4 8"), THREADS (2), LLAMA_ARGS (more llama-server flags, e.g. "--poll 0")
set -eu
MODEL=$1
ROUNDS=${2:-3}
BUILD=${BUILD:-build}
LLAMA_SERVER=${LLAMA_SERVER:-/work/peer/llama.cpp/build/bin/llama-server}
NP=${NP:-8}; CTX=${CTX:-512}; MAXTOK=${MAXTOK:-64}; REQS=${REQS:-4}; CLIENTS=${CLIENTS:-"1 4 8"}; THREADS=${THREADS:-2}
OUT=$(mktemp -d /tmp/server-bench.XXXXXX)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo $((20000 + $$ % 20000)); }

run_one() {   # run_one NAME ROUND: start the server, load it, stop it
    name=$1; round=$2; port=$(free_port)
    if [ "$name" = swa ]; then
        "$BUILD/swa-server" -m "$MODEL" --host 127.0.0.1 --port "$port" -np "$NP" -c "$CTX" -t "$THREADS" 2>"$OUT/$name.log" &
    else   # llama-server's -c is the whole context, split among its slots
        "$LLAMA_SERVER" -m "$MODEL" --host 127.0.0.1 --port "$port" -np "$NP" -c $((NP * CTX)) -t "$THREADS" -tb "$THREADS" \
            ${LLAMA_ARGS:-} >"$OUT/$name.log" 2>&1 &
    fi
    pid=$!
    i=0
    until curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1; do
        i=$((i + 1)); [ $i -lt 600 ] || { echo "server-bench: $name did not start" >&2; kill $pid; exit 1; }
        sleep 0.1
    done
    for c in $CLIENTS; do
        # a failed request (a time-out, say) is counted in the table, not the end of the run
        "$BUILD/swa-loadgen" --port "$port" -c "$c" -r "$REQS" -n "$MAXTOK" --label "$name c=$c" > "$OUT/run.txt" || true
        tps=$(sed -n 's/.*throughput \([0-9.]*\) tokens\/s.*/\1/p' "$OUT/run.txt")
        ttft=$(sed -n 's/.*first token p50 \([0-9.]*\) .*/\1/p' "$OUT/run.txt")
        itl=$(sed -n 's/.*between tokens p50 \([0-9.]*\) .*/\1/p' "$OUT/run.txt")
        ok=$(sed -n 's/.*: \([0-9]*\) ok, \([0-9]*\) failed.*/\1 \2/p' "$OUT/run.txt")
        echo "$name $c $round $tps $ttft $itl $ok" >> "$OUT/results"
        echo "round $round $name c=$c: $tps tokens/s, ttft p50 $ttft ms, between tokens p50 $itl ms, ok/failed $ok" >&2
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

median() { sort -n | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else printf "%.2f\n", (a[NR/2]+a[NR/2+1])/2}'; }
echo "model $(basename "$MODEL"), $NP slots x $CTX positions, $THREADS threads, max_tokens $MAXTOK, $REQS requests per client, medians of $ROUNDS alternated rounds"
echo
echo "| clients | swa-server tokens/s | llama-server tokens/s | ratio | swa TTFT p50 ms | llama TTFT p50 ms | swa between tokens p50 ms | llama between tokens p50 ms |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for c in $CLIENTS; do
    st=$(awk -v c=$c '$1=="swa" && $2==c {print $4}' "$OUT/results" | median)
    lt=$(awk -v c=$c '$1=="llama" && $2==c {print $4}' "$OUT/results" | median)
    sf=$(awk -v c=$c '$1=="swa" && $2==c {print $5}' "$OUT/results" | median)
    lf=$(awk -v c=$c '$1=="llama" && $2==c {print $5}' "$OUT/results" | median)
    si=$(awk -v c=$c '$1=="swa" && $2==c {print $6}' "$OUT/results" | median)
    li=$(awk -v c=$c '$1=="llama" && $2==c {print $6}' "$OUT/results" | median)
    echo "| $c | $st | $lt | $(awk -v a=$st -v b=$lt 'BEGIN {printf "%.2f", a / b}') | $sf | $lf | $si | $li |"
done
echo
echo "peak RSS (VmHWM), median: swa-server $(awk '$1=="swa" {print $4}' "$OUT/rss" | median) kB, llama-server $(awk '$1=="llama" {print $4}' "$OUT/rss" | median) kB"
echo "failed requests: swa $(awk '$1=="swa" {s+=$8} END {print s+0}' "$OUT/results"), llama $(awk '$1=="llama" {s+=$8} END {print s+0}' "$OUT/results")"
rm -rf "$OUT"
