#!/bin/sh
# sidebyside.sh: llama.cpp's llama-bench and swa.h's swa-bench on the same GGUF files, the two
# programs alternated model by model and round by round so both see the same machine, then one
# Markdown table of medians over the rounds (min-max in parentheses).
#
#   tools/bench/sidebyside.sh LLAMA_BUILD_DIR [-t 2] [-p 128] [-n 32] [--rounds 3] [-r 2] [--batched 1,2,4,8]
#                       [--swa-bench build/swa-bench] [--kernels best] [--fa 0|1] [--log FILE] MODEL.gguf...
#
#   -r is repetitions per program per round; --kernels goes to swa-bench (best|ref|avx2|avx-vnni|avx512|amx|neon),
#   --fa to llama-bench (flash attention off or on; default: its own default);
#   --batched B,B,...: llama-batched-bench and swa-batched-bench instead, B sequences of -p prompt
#   and -n generated tokens each (one run a round; default -p 64); the raw output of every run
#   goes to --log FILE (default: stderr).
#
# llama.cpp is not part of this repository and this script never builds or downloads it: build
# it yourself, outside the repository, and pass the directory that holds bin/llama-bench (or
# bin/llamacpp-bench, which tools/bench/build-llamacpp.sh builds on the December 2025 tree), e.g.
#   cmake -B build -DGGML_NATIVE=ON -DLLAMA_CURL=OFF -DCMAKE_BUILD_TYPE=Release
#   cmake -B build-avx2 -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
#         -DLLAMA_CURL=OFF -DCMAKE_BUILD_TYPE=Release
#   cmake --build build -j --target llama-bench llama-batched-bench
set -eu

die() { echo "sidebyside.sh: $*" >&2; exit 1; }
usage() { sed -n '5,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

[ $# -ge 1 ] || usage
LLAMA=$1; shift
THREADS=2 PP= TG=32 ROUNDS=3 REPS=2 SWA= KERNELS=best LOG= BATCHES= FA=
while [ $# -gt 0 ]; do
    case $1 in -h|--help) usage ;; -*) [ $# -ge 2 ] || die "$1 needs a value" ;; *) break ;; esac
    case $1 in
        -t) THREADS=$2 ;;
        -p) PP=$2 ;;
        -n) TG=$2 ;;
        -r) REPS=$2 ;;
        --rounds) ROUNDS=$2 ;;
        --batched) BATCHES=$2 ;;
        --swa-bench) SWA=$2 ;;
        --kernels) KERNELS=$2 ;;
        --log) LOG=$2 ;;
        --fa) FA=$2 ;;
        *) die "unknown option $1" ;;
    esac
    shift 2
done
[ $# -ge 1 ] || usage
if [ -n "$BATCHES" ]; then
    echo "$BATCHES" | grep -Eq '^[1-9][0-9]*(,[1-9][0-9]*)*$' || die "--batched wants sizes like 1,2,4,8"
    LLAMA_BENCH=llama-batched-bench SWA=${SWA:-build/swa-batched-bench} PP=${PP:-64}
    max=$(echo "$BATCHES" | tr ',' '\n' | sort -n | tail -n 1)
    CTX=$(( (max * (PP + TG) + 255) / 256 * 256 ))   # llama.cpp's cache for the largest B
else
    LLAMA_BENCH=llama-bench SWA=${SWA:-build/swa-bench} PP=${PP:-128}
    # a tree without llama-bench (December 2025's, in ollama): our driver on its llama.h
    [ -x "$LLAMA/bin/llama-bench" ] || [ ! -x "$LLAMA/bin/llamacpp-bench" ] || LLAMA_BENCH=llamacpp-bench
fi
[ -x "$LLAMA/bin/$LLAMA_BENCH" ] || die "no $LLAMA/bin/$LLAMA_BENCH (build llama.cpp first; see the top of this script)"
[ -x "$SWA" ] || die "no $(basename "$SWA") at $SWA (make it, or pass --swa-bench PATH)"
for m in "$@"; do [ -f "$m" ] || die "no model file $m"; done
load=$(cut -d" " -f1-3 /proc/loadavg 2>/dev/null) || load=unknown

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
[ -n "$LOG" ] && : > "$LOG"
log() { if [ -n "$LOG" ]; then cat >> "$LOG"; else cat >&2; fi; }
# run NAME CMD...: CMD's stdout to $TMP/out and the log; on failure its stderr's tail, then exit
run() {
    prog=$1; shift
    if ! "$@" > "$TMP/out" 2> "$TMP/err"; then
        tail -n 5 "$TMP/err" >&2
        die "$prog failed: $*"
    fi
    log < "$TMP/out"
}

# Results, one line each: model <TAB> program <TAB> metric <TAB> value (one pp and tg per round;
# batched: pp.B and tg.B for each B)

# Both batched benches print llama-batched-bench's table: | PP | TG | B | N_KV | T_PP s | S_PP
# t/s | T_TG s | S_TG t/s | T s | S t/s |.
batched_rows() {
    awk -F'|' -v name="$1" -v prog="$2" '
        NF >= 11 && $4 ~ /^ *[0-9]+ *$/ { b = $4 + 0; printf "%s\t%s\tpp.%d\t%s\n%s\t%s\ttg.%d\t%s\n", name, prog, b, $7 + 0, name, prog, b, $9 + 0; found++ }
        END { exit !found }' "$TMP/out" >> "$TMP/results" || die "no table from $2's batched bench on $m"
}

batched_round() {
    run llama-batched-bench "$LLAMA/bin/llama-batched-bench" -m "$m" -c "$CTX" -b 2048 -ub 512 -npp "$PP" -ntg "$TG" \
        -npl "$BATCHES" -t "$THREADS"
    batched_rows "$name" llama
    run swa-batched-bench "$SWA" -m "$m" -p "$PP" -n "$TG" -b "$BATCHES" -t "$THREADS" -r 1 --kernels "$KERNELS"
    batched_rows "$name" swa
    awk -v name="$name" '/^model .*kernels / { sub(/.*kernels /, ""); sub(/,.*/, ""); printf "%s\tswa\tkernels\t%s\n", name, $0; exit }' \
        "$TMP/out" >> "$TMP/results"
}

round=0
while [ $round -lt "$ROUNDS" ]; do
    round=$((round + 1))
    for m in "$@"; do
        name=$(basename "$m")
        echo "## round $round/$ROUNDS, $name" | log
        if [ -n "$BATCHES" ]; then batched_round; continue; fi
        run "$LLAMA_BENCH" "$LLAMA/bin/$LLAMA_BENCH" -m "$m" -t "$THREADS" -p "$PP" -n "$TG" -r "$REPS" ${FA:+-fa "$FA"} -o jsonl
        # one JSON object a line, one per test; the round's value is the median of its samples_ts
        awk -v name="$name" '
            function field(key,   s) {
                if (!match($0, "\"" key "\": *(\"[^\"]*\"|\\[[^]]*\\]|[^,}]*)")) return ""
                s = substr($0, RSTART, RLENGTH); sub(/^[^:]*: *[["]? */, "", s); sub(/ *[]"]$/, "", s)
                return s
            }
            /^\{/ {
                n = split(field("samples_ts"), w, / *, */)
                for (i = 2; i <= n; i++) for (j = i; j > 1 && w[j-1] + 0 > w[j] + 0; j--) { t = w[j]; w[j] = w[j-1]; w[j-1] = t }
                if (n == 0) die = 1
                printf "%s\tllama\t%s\t%s\n", name, (field("n_gen") + 0 > 0 ? "tg" : "pp"), n % 2 ? w[(n + 1) / 2] : (w[n / 2] + w[n / 2 + 1]) / 2
                printf "%s\tllama\tcommit\t%s\n", name, field("build_commit")
                found++
            }
            END { exit die || !found }' "$TMP/out" >> "$TMP/results" || die "cannot read llama-bench -o jsonl output on $m"
        run swa-bench "$SWA" -m "$m" -t "$THREADS" -p "$PP" -n "$TG" -r "$REPS" --markdown --kernels "$KERNELS"
        # | model | type | load | threads | kernels | pp t/s | tg t/s | depth | GB/s | MB/token | tg% |
        awk -F'|' -v name="$name" -v pp="$PP" -v tg="$TG" '
            /^\|/ && NF >= 13 {
                for (i = 2; i <= 12; i++) { f[i] = $i; gsub(/^ +| +$/, "", f[i]) }
                if (pp > 0) printf "%s\tswa\tpp\t%s\n", name, f[7] + 0
                if (tg > 0) printf "%s\tswa\ttg\t%s\n%s\tswa\tpct\t%s\n", name, f[8] + 0, name, f[12] + 0
                printf "%s\tswa\tkernels\t%s\n", name, f[6]
                found = 1; exit
            }
            END { exit !found }' "$TMP/out" >> "$TMP/results" || die "no table row from swa-bench on $m"
    done
done

# llama-bench's own build_commit first: the build directory may sit inside another checkout
commit=$(awk -F'\t' '$3 == "commit" && $4 != "" { print $4; exit }' "$TMP/results")
[ -n "$commit" ] || commit=$(git -C "$LLAMA/.." rev-parse --short HEAD 2>/dev/null) || commit=
cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null) || cpu=unknown
used=$(awk -F'\t' '$3 == "kernels" && !s[$4]++ { printf "%s%s", n++ ? "," : "", $4 }' "$TMP/results")
echo "# swa.h and llama.cpp side by side, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "CPU: ${cpu:-unknown}; llama.cpp ${commit:-unknown} ($LLAMA${FA:+, -fa $FA}); $THREADS threads, pp$PP, tg$TG;"
if [ -n "$BATCHES" ]; then
    echo "$ROUNDS rounds of one run per program; swa.h kernels: $KERNELS (used: ${used:-?})."
    echo "B sequences of pp$PP and tg$TG each; aggregate speeds (S_PP, S_TG: B x tokens over the time)."
    echo "Medians over the rounds in tokens/s, min-max in parentheses; ratio = swa.h / llama.cpp;"
    echo "own B = 1: swa.h's tg at this B over its tg at B = 1."
else
    echo "$ROUNDS rounds of $REPS repetitions per program; swa.h kernels: $KERNELS (used: ${used:-?})."
    echo "Medians over the rounds in tokens/s, min-max in parentheses; ratio = swa.h / llama.cpp;"
    echo "tg% = swa.h's generation as a share of its bandwidth limit (swa-bench's tg% column)."
fi
echo "Load average before the runs: $load; after: $(cut -d" " -f1-3 /proc/loadavg 2>/dev/null)."
echo
for m in "$@"; do basename "$m"; done | awk -F'\t' -v results="$TMP/results" -v batches="$BATCHES" '
    function median(key,   n, i, j, t, w, s) {
        n = split(vals[key], s, " ")
        if (n == 0) return ""
        for (i = 1; i <= n; i++) w[i] = s[i] + 0
        for (i = 2; i <= n; i++) for (j = i; j > 1 && w[j-1] > w[j]; j--) { t = w[j]; w[j] = w[j-1]; w[j-1] = t }
        lo[key] = w[1]; hi[key] = w[n]
        return n % 2 ? w[(n + 1) / 2] : (w[n / 2] + w[n / 2 + 1]) / 2
    }
    function cell(key, d,   x) {
        x = median(key)
        if (x == "") return "-"
        return sprintf("%.*f (%.*f-%.*f)", d, x, d, lo[key], d, hi[key])
    }
    function ratio(a, b,   x, y) {
        x = median(a); y = median(b)
        return x == "" || y == "" || y == 0 ? "-" : sprintf("%.2f", x / y)
    }
    BEGIN {
        while ((getline line < results) > 0) {
            split(line, f, "\t")
            k = f[1] SUBSEP f[2] SUBSEP f[3]
            vals[k] = vals[k] " " f[4]
        }
        if (batches != "") {
            nb = split(batches, bs, ",")
            print "| model file | B | llama.cpp pp | swa.h pp | ratio pp | llama.cpp tg | swa.h tg | ratio tg | own B = 1 |"
            print "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
        } else {
            print "| model file | llama.cpp pp | swa.h pp | ratio pp | llama.cpp tg | swa.h tg | ratio tg | swa tg % of limit |"
            print "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
        }
    }
    batches != "" && !seen[$0]++ {
        L = $0 SUBSEP "llama" SUBSEP; S = $0 SUBSEP "swa" SUBSEP
        for (i = 1; i <= nb; i++) {
            b = bs[i] + 0
            printf "| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", $0, b,
                cell(L "pp." b, 1), cell(S "pp." b, 1), ratio(S "pp." b, L "pp." b),
                cell(L "tg." b, 2), cell(S "tg." b, 2), ratio(S "tg." b, L "tg." b), ratio(S "tg." b, S "tg.1")
        }
        next
    }
    !seen[$0]++ {
        L = $0 SUBSEP "llama" SUBSEP; S = $0 SUBSEP "swa" SUBSEP
        pct = median(S "pct")
        printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $0,
            cell(L "pp", 1), cell(S "pp", 1), ratio(S "pp", L "pp"),
            cell(L "tg", 2), cell(S "tg", 2), ratio(S "tg", L "tg"), pct == "" ? "-" : sprintf("%.0f%%", pct)
    }'
