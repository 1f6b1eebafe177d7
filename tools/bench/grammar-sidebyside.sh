#!/bin/sh
# grammar-sidebyside.sh: what a grammar adds to sampling a token, swa.h's sampler
# (swa-grammar-bench) beside llama.cpp's grammar sampler (tools/bench/llamacpp_grammar.cpp), on
# the same vocabulary files, grammar texts and documents, the two programs alternated vocabulary
# by vocabulary and round by round so both see the same machine; then one Markdown table of
# medians over the rounds.
#
#   tools/bench/grammar-sidebyside.sh LLAMACPP_GRAMMAR [--rounds 3] [--reps 3] [--log FILE] [--decode T]
#                                     VOCAB.gguf...
#
#   LLAMACPP_GRAMMAR is the driver built from tools/bench/llamacpp_grammar.cpp (its top comment
#   has the command); --reps goes to both programs (each token's time is the best of its passes);
#   the raw output of every run goes to --log FILE (default: stderr). With --decode T the files
#   are models: swa-grammar-bench also times generating a token on T threads (--decode -t T) and
#   the table gains that time and the grammar's stage as a percentage of it.
#
# Two grammars: tests/data/grammar/json.gbnf over tools/bench/grammar/document.json, and the
# grammar swa_json_schema_to_grammar writes for tools/bench/grammar/nested.schema.json (written
# to a file first, so that llama.cpp is given the same text) over tools/bench/grammar/nested.json.
# Sampling runs on one thread in both programs. Run from the repository's root after
# `make build/swa-grammar-bench`.
set -eu

die() { echo "grammar-sidebyside.sh: $*" >&2; exit 1; }
usage() { sed -n '8,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

[ $# -ge 1 ] || usage
LLAMA=$1; shift
ROUNDS=3 REPS=3 LOG= DECODE=
while [ $# -gt 0 ]; do
    case $1 in
        --decode) DECODE="--decode -t $2"; shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        --reps) REPS=$2; shift 2 ;;
        --log) LOG=$2; shift 2 ;;
        -*) usage ;;
        *) break ;;
    esac
done
[ $# -ge 1 ] || usage
[ -x "$LLAMA" ] || die "no driver at $LLAMA (build tools/bench/llamacpp_grammar.cpp; see its top comment)"
SWA=build/swa-grammar-bench
[ -x "$SWA" ] || die "no $SWA (make build/swa-grammar-bench)"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
[ -n "$LOG" ] && : > "$LOG"
log() { if [ -n "$LOG" ]; then cat >> "$LOG"; else cat >&2; fi; }

D=tools/bench/grammar
"$SWA" --json-schema $D/nested.schema.json --write-grammar "$TMP/nested.gbnf" --doc $D/nested.json --reps 1 \
    "$1" > /dev/null
# name, grammar for llama.cpp, swa-grammar-bench's grammar flag, document
set_grammar() {
    case $1 in
        json) G=tests/data/grammar/json.gbnf FLAG="--grammar tests/data/grammar/json.gbnf" DOC=$D/document.json ;;
        nested) G=$TMP/nested.gbnf FLAG="--json-schema $D/nested.schema.json" DOC=$D/nested.json ;;
    esac
}

# One run's table rows to "program grammar vocabulary field value" lines; the fields are the
# means and medians of the added time and the attach time.
run_swa() {
    "$SWA" $FLAG --doc "$DOC" --reps "$REPS" $DECODE "$v" | tee -a "$TMP/raw" | awk -F'|' -v g="$gname" -v b="$(basename "$v")" '
        /^\| .*gguf/ { split($8, d, "/"); split($6, p, "/"); split($10, q, "/")
                       print "swa", g, b, "attach", $5 + 0; print "swa", g, b, "tokens", $4 + 0
                       print "swa", g, b, "alone", p[1] + 0
                       print "swa", g, b, "mean", d[1] + 0; print "swa", g, b, "median", d[2] + 0
                       if (NF > 10) { print "swa", g, b, "token", $9 + 0
                                      print "swa", g, b, "pct_mean", q[1] + 0; print "swa", g, b, "pct_median", q[2] + 0 } }' \
        >> "$TMP/values"
}
run_llama() {
    "$LLAMA" --grammar "$G" --doc "$DOC" --reps "$REPS" "$v" | tee -a "$TMP/raw" | awk -F'|' -v g="$gname" -v b="$(basename "$v")" '
        /^\| .*gguf/ { split($6, p, "/"); split($8, f, "/"); split($10, a, "/")
                       print "llama", g, b, "attach", $5 + 0; print "llama", g, b, "tokens", $4 + 0
                       print "llama", g, b, "alone", p[1] + 0
                       print "llama", g, b, "mean", f[1] + 0; print "llama", g, b, "median", f[2] + 0
                       print "llama", g, b, "after_mean", a[1] + 0; print "llama", g, b, "after_median", a[2] + 0 }' >> "$TMP/values"
}

: > "$TMP/values"
r=1
while [ "$r" -le "$ROUNDS" ]; do
    for gname in json nested; do
        set_grammar $gname
        for v in "$@"; do
            echo "round $r, $gname, $v: load average $(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo ?)" | log
            if [ $((r % 2)) -eq 1 ]; then run_swa; run_llama; else run_llama; run_swa; fi
        done
    done
    r=$((r + 1))
done
log < "$TMP/raw"

med() { # program grammar vocabulary field: the median over the rounds
    awk -v k="$1 $2 $3 $4" '$1" "$2" "$3" "$4 == k { print $5 }' "$TMP/values" | sort -g |
        awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2];
                                  else printf "%g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo "CPU: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1); $(date -u +%Y-%m-%d); $ROUNDS rounds, best of $REPS passes"
echo "a round; medians over the rounds; microseconds per token unless said; the last column: what the grammar adds" \
     "in llama.cpp (grammar first / check after) over what it adds in swa.h, means"
echo
[ -n "$DECODE" ] && DH=" token ms (${DECODE#--decode -t } threads) | grammar adds, % of a token, mean / median |" DL=" ---: | ---: |"
echo "| vocabulary | grammar | tokens | swa.h: attach ms | sampler alone | grammar adds, mean / median |${DH:-}" \
     "llama.cpp: attach ms | chain alone | grammar first adds, mean / median | check after adds, mean / median | llama.cpp / swa.h |"
echo "| --- | --- | ---: | ---: | ---: | ---: |${DL:-} ---: | ---: | ---: | ---: | ---: |"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3g", a / b; else print "-" }'; }
for gname in json nested; do
    for v in "$@"; do
        b=$(basename "$v")
        n=$(med swa $gname "$b" tokens) m=$(med llama $gname "$b" tokens)
        [ "$n" = "$m" ] || n="$n (llama.cpp: $m)"
        sm=$(med swa $gname "$b" mean) lm=$(med llama $gname "$b" mean) la=$(med llama $gname "$b" after_mean)
        D=
        [ -n "$DECODE" ] && D=" $(med swa $gname "$b" token) | $(med swa $gname "$b" pct_mean) / $(med swa $gname "$b" pct_median) |"
        echo "| $b | $gname | $n | $(med swa $gname "$b" attach) | $(med swa $gname "$b" alone)" \
             "| $sm / $(med swa $gname "$b" median) |$D $(med llama $gname "$b" attach)" \
             "| $(med llama $gname "$b" alone) | $lm / $(med llama $gname "$b" median)" \
             "| $la / $(med llama $gname "$b" after_median) | $(ratio "$lm" "$sm") / $(ratio "$la" "$sm") |"
    done
done
