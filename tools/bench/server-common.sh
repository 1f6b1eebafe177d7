# What tools/bench/server-bench.sh and server-reuse.sh share; they source it after setting MODEL,
# BUILD, LLAMA_SERVER and THREADS (and, if they like, LLAMA_ARGS: more llama-server flags).

# start_server NAME PORT SLOTS CTX LOG: swa-server (NAME swa) or llama-server (any other NAME) on
# 127.0.0.1:PORT with SLOTS slots of CTX positions each, its output in LOG; returns with its pid in
# $pid once /health answers, and ends the script when that takes more than a minute.
start_server() {
    name=$1; port=$2; slots=$3; ctx=$4; log=$5
    if [ "$name" = swa ]; then
        "$BUILD/swa-server" -m "$MODEL" --host 127.0.0.1 --port "$port" -np "$slots" -c "$ctx" -t "$THREADS" 2>"$log" &
    else   # llama-server's -c is the whole context, split among its slots
        "$LLAMA_SERVER" -m "$MODEL" --host 127.0.0.1 --port "$port" -np "$slots" -c $((slots * ctx)) -t "$THREADS" \
            -tb "$THREADS" ${LLAMA_ARGS:-} >"$log" 2>&1 &
    fi
    pid=$!
    i=0
    until curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1; do
        i=$((i + 1)); [ $i -lt 600 ] || { echo "$(basename "$0" .sh): $name did not start" >&2; kill $pid; exit 1; }
        sleep 0.1
    done
}

# median DIGITS: the median of the numbers on stdin, one a line; of an even count, the mean of
# the middle two with DIGITS decimals.
median() {
    sort -n | awk -v f="%.$1f\n" '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else printf f, (a[NR/2]+a[NR/2+1])/2}'
}
