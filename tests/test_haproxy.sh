#!/bin/sh
# swa-server scaled out: two instances behind HAProxy running examples/deploy/haproxy.cfg as it
# is, on loopback. `make test` runs it (it skips when haproxy or swa-server is absent); by hand,
# from the project root after make:
#
#   sh tests/test_haproxy.sh [BUILD_DIR [RUN_PREFIX...]]
#
# - 200 requests of 16 conversations, the conversations at once and each one's turns in turn
#   (half keyed by the X-Conversation-Id header, half by the body's "user" field): every one is
#   answered 200, each conversation by one instance (the X-Served-By header HAProxy adds), and
#   both instances serve some;
# - the same conversations again while instance s1 is stopped (SIGTERM) with a stream in flight
#   on it: every request gets an HTTP answer (no hang, no reset); those sent once HAProxy can
#   have seen s1 down are answered 200 by s2; a request that fails does so with 502 or 503 and
#   a JSON error, and was in flight on s1 when it stopped; the stream does not hang (and ends
#   with data: [DONE] and its body's end, whole or after an error event, when the server drains
#   on SIGTERM: when it has --shutdown-timeout); s1 exits 0.
set -eu
BUILD=${1:-build}
[ $# -gt 0 ] && shift
MODEL=examples/models/swa-stories.gguf
CFG=examples/deploy/haproxy.cfg
SERVER=$BUILD/swa-server
INTER=200   # ms between health checks here (the file's default is 2 s)

skip() { echo "test_haproxy: skipped: $*"; exit 0; }
command -v haproxy >/dev/null 2>&1 || skip "haproxy is not installed (apt-get install haproxy)"
command -v curl >/dev/null 2>&1 || skip "curl is not installed (apt-get install curl)"
[ -x "$SERVER" ] || skip "$SERVER was not built (it needs libmicrohttpd-dev and libcjson-dev)"

T=$(mktemp -d)
PIDS=""   # what this test started and has not reaped: ended on exit, by SIGKILL after 5 s
cleanup() {
    for p in $PIDS; do kill "$p" 2>/dev/null || true; done
    i=0
    while [ $i -lt 50 ]; do
        alive=""
        for p in $PIDS; do kill -0 "$p" 2>/dev/null && alive=1; done
        [ -z "$alive" ] && break
        i=$((i + 1)); sleep 0.1
    done
    for p in $PIDS; do kill -9 "$p" 2>/dev/null || true; done
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() {
    echo "test_haproxy: $*" >&2
    for f in "$T"/*.log; do echo "== $f"; tail -n 5 "$f"; done >&2
    exit 1
}
now_ms() { date +%s%3N; }

# start_server NAME: an instance on a port of its choosing, 2 slots, one thread; the port is
# read from its log once it is ready.
RUNP=$*   # an emulator's words, if any
GRACEFUL=$($RUNP "$SERVER" --help 2>&1 | grep -e --shutdown-timeout || true)
start_server() {
    $RUNP "$SERVER" -m "$MODEL" --port 0 --parallel 2 -c 512 -t 1 2> "$T/$1.log" &
    echo $! > "$T/$1.pid"
    PIDS="$PIDS $!"
}
# server_port NAME: sets PORT to the instance's, once it is ready
server_port() {
    i=0
    while :; do
        PORT=$(sed -n 's|.*ready on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$T/$1.log")
        [ -n "$PORT" ] && return
        pid=$(cat "$T/$1.pid")
        if ! kill -0 "$pid" 2>/dev/null; then rc=0; wait "$pid" || rc=$?; fail "$1 exited $rc at startup"; fi
        i=$((i + 1)); [ $i -lt 600 ] || fail "$1 was not ready in 60 s"
        sleep 0.1
    done
}
start_server s1
start_server s2
server_port s1; P1=$PORT
server_port s2; P2=$PORT

# HAProxy on a random free port: a port taken makes it exit at once, and the next try picks another.
LB=""
for try in 1 2 3 4 5 6 7 8; do
    port=$(( $(od -An -N2 -tu2 /dev/urandom) % 20000 + 30000 ))
    SWA_LISTEN=127.0.0.1:$port SWA_SERVER1=127.0.0.1:$P1 SWA_SERVER2=127.0.0.1:$P2 SWA_CHECK_INTER=${INTER}ms \
        haproxy -db -f "$CFG" > "$T/haproxy.log" 2>&1 &
    hp=$!
    i=0
    while [ $i -lt 50 ] && kill -0 $hp 2>/dev/null; do
        if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health")" = 200 ]; then LB=$port; break; fi
        i=$((i + 1)); sleep 0.1
    done
    [ -n "$LB" ] && break
    kill $hp 2>/dev/null || true
    wait $hp 2>/dev/null || true
done
[ -n "$LB" ] || fail "haproxy did not start: $(cat "$T/haproxy.log")"
PIDS="$PIDS $hp"
echo "test_haproxy: haproxy on :$LB, s1 on :$P1, s2 on :$P2, health checks every $INTER ms"

# conv RUN C N: conversation C's N turns, one after another (a short message each);
# one line per request in $T/RUN.C: start_ms end_ms curl_exit http_code served_by error_in_body C
conv() {
    run=$1 c=$2 turns=$3 n=0
    out="$T/$run.$c" body="$T/body.$run.$c" hdr="$T/hdr.$run.$c"
    while [ $n -lt "$turns" ]; do
        if [ $((c % 2)) = 0 ]; then set -- -H "X-Conversation-Id: conv-$c"; user=""
        else set --; user=",\"user\":\"conv-$c\""; fi
        s=$(now_ms)
        rc=0
        code=$(curl -sS --max-time 30 -o "$body" -D "$hdr" -w '%{http_code}' "$@" \
            -H 'Content-Type: application/json' "http://127.0.0.1:$LB/v1/chat/completions" \
            -d "{\"messages\":[{\"role\":\"user\",\"content\":\"Tell me more, part $n.\"}],\"max_tokens\":4$user}" 2>> "$T/curl.log") || rc=$?
        by=$(tr -d '\r' < "$hdr" | sed -n 's/^[Xx]-[Ss]erved-[Bb]y: *//p')
        err=0
        grep -q '"error"' "$body" 2>/dev/null && err=1
        echo "$s $(now_ms) $rc $code ${by:--} $err $c" >> "$out"
        n=$((n + 1))
    done
}

# run_convs RUN N E: the 16 conversations at once, conversation c with N turns (N + 1 for c < E)
CONVS=""
run_convs() {
    c=0
    while [ $c -lt 16 ]; do
        conv "$1" $c $(($2 + (c < $3))) &
        CONVS="$CONVS $!"
        c=$((c + 1))
    done
}
wait_convs() { for p in $CONVS; do wait "$p"; done; CONVS=""; }

# ---- 1: affinity ----
run_convs one 12 8
wait_convs
total=$(cat "$T"/one.[0-9]* | grep -c . || true)
[ "$total" = 200 ] || fail "affinity run: $total requests recorded, not 200"
bad=$(cat "$T"/one.[0-9]* | awk '$3 != 0 || $4 != 200' | head -n 3)
[ -z "$bad" ] || fail "affinity run: requests not answered 200 (start end curl_exit status by error): $bad"
S1CONV=""
S1ALL=""
n1=0
c=0
while [ $c -lt 16 ]; do
    by=$(awk '{print $5}' "$T/one.$c" | sort -u)
    case $by in
        s1) n1=$((n1 + 1)); S1ALL="$S1ALL $c"; [ $((c % 2)) = 0 ] && S1CONV=$c ;;
        s2) ;;
        *) fail "affinity run: conversation $c was answered by $(echo $by)" ;;
    esac
    c=$((c + 1))
done
[ $n1 -gt 0 ] && [ $n1 -lt 16 ] || fail "affinity run: s1 had $n1 of the 16 conversations (hashing sent all to one)"
[ -n "$S1CONV" ] || fail "affinity run: no header-keyed conversation on s1 for the stream"
echo "test_haproxy: 200 requests of 16 conversations, each conversation on one instance: $n1 on s1, $((16 - n1)) on s2"

# ---- 2: s1 stopped mid-run ----
curl -sS -N --max-time 60 -H "X-Conversation-Id: conv-$S1CONV" -D "$T/stream.hdr" -o "$T/stream.body" \
    "http://127.0.0.1:$LB/v1/chat/completions" \
    -d '{"messages":[{"role":"user","content":"Tell me a long story."}],"max_tokens":480,"stream":true}' 2>> "$T/curl.log" &
STREAM=$!
run_convs two 10 0
i=0
until grep -q '^data: ' "$T/stream.body" 2>/dev/null; do
    i=$((i + 1)); [ $i -lt 300 ] || fail "the stream sent nothing in 30 s"
    sleep 0.1
done
KILL=$(now_ms)
kill -TERM "$(cat "$T/s1.pid")"
( while kill -0 "$(cat "$T/s1.pid")" 2>/dev/null; do sleep 0.05; done; now_ms > "$T/s1.gone" ) &
GONE=$!
rc=0
wait $STREAM || rc=$?
wait_convs
[ $rc = 28 ] && fail "the stream in flight on s1 hung"
tr -d '\r' < "$T/stream.hdr" | grep -qi '^x-served-by: s1$' || fail "the stream was not on s1"
if tail -n 2 "$T/stream.body" | grep -q '^data: \[DONE\]$'; then
    if grep -q '^data: {"error"' "$T/stream.body"; then how="with an error event and [DONE]"; else how="whole"; fi
else
    how="cut"
fi
[ $rc = 0 ] || how="$how, its connection closed before the chunked body's end (curl exit $rc)"
# A server that drains on SIGTERM (it has --shutdown-timeout) ends every stream with [DONE] and
# the end of its body; one that stops at once may cut a stream between two events.
if [ -n "$GRACEFUL" ] && [ "$how" != whole ] && [ "$how" != "with an error event and [DONE]" ]; then
    fail "the stream in flight on s1 ended $how: $(tail -c 300 "$T/stream.body")"
fi

# s1 sees the signal within 250 ms, and HAProxy sees it down after two failed checks; before
# that, a request it refuses is retried on s2. Past this (a second of slack for a loaded
# machine or a sanitizer's build), nothing may go to s1.
DOWN=$((KILL + 1000 + 3 * INTER))
total=$(cat "$T"/two.[0-9]* | grep -c . || true)
[ "$total" = 160 ] || fail "failover run: $total requests recorded, not 160"
bad=$(cat "$T"/two.[0-9]* | awk '$3 != 0 || $4 == "000"' | head -n 3)
[ -z "$bad" ] || fail "failover run: requests without an HTTP answer (start end curl_exit status by error): $bad"
bad=$(cat "$T"/two.[0-9]* | awk -v k="$KILL" '$4 != 200 && !(($4 == 502 || $4 == 503) && $6 == 1 && $1 < k && $5 != "s2")' | head -n 3)
[ -z "$bad" ] || fail "failover run: failures other than a JSON 502/503 in flight on s1 at the stop: $bad"
bad=$(cat "$T"/two.[0-9]* | awk -v d="$DOWN" '$1 >= d && ($4 != 200 || $5 != "s2")' | head -n 3)
[ -z "$bad" ] || fail "failover run: requests sent $((DOWN - KILL)) ms after the stop not answered 200 by s2: $bad"
failed=$(cat "$T"/two.[0-9]* | awk '$4 != 200' | wc -l)
late1=$(cat "$T"/two.[0-9]* | awk -v k="$KILL" '$1 >= k && $5 == "s1"' | wc -l)
retried=$(cat "$T"/two.[0-9]* | awk -v k="$KILL" -v s1="$S1ALL" \
    'BEGIN { split(s1, a, " "); for (i in a) on1[a[i]] = 1 } $1 < k && $2 > k && $5 == "s2" && ($7 in on1)' | wc -l)
after=$(cat "$T"/two.[0-9]* | awk -v d="$DOWN" '$1 >= d' | wc -l)
moved=$(cat "$T"/two.[0-9]* | awk -v k="$KILL" '$1 >= k && $5 == "s2"' | wc -l)
i=0
while kill -0 $GONE 2>/dev/null; do
    i=$((i + 1)); [ $i -lt 300 ] || fail "s1 did not exit within 30 s of SIGTERM"
    sleep 0.1
done
rc=0
wait "$(cat "$T/s1.pid")" || rc=$?
PIDS=$(echo $PIDS | tr ' ' '\n' | grep -vx "$(cat "$T/s1.pid")" | tr '\n' ' ')
[ $rc = 0 ] || fail "s1 exited $rc after SIGTERM"
echo "test_haproxy: s1 stopped mid-run: 160 requests, $failed failed (JSON 502/503, in flight on s1), $retried in flight on s1 at the stop answered by s2 (retried), $late1 sent after the stop answered by s1, $moved by s2, $after sent $((DOWN - KILL)) ms or more after it, all by s2; the stream in flight on s1 ended $how; s1 exited 0 after $(($(cat "$T/s1.gone") - KILL)) ms"
