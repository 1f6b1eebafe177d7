#!/bin/sh
# sidebyside.sh: llama.cpp's llama-bench and swa.h's swa-bench on the same GGUF files, the two
# programs alternated model by model and round by round so both see the same machine, then one
# Markdown table of medians over the rounds (min-max in parentheses).
#
#   tools/sidebyside.sh LLAMA_BUILD_DIR [-t 2] [-p 128] [-n 32] [--rounds 3] [-r 2]
#                       [--swa-bench build/swa-bench] [--kernels best] [--log FILE] MODEL.gguf...
#
#   -r is repetitions per program per round; --kernels goes to swa-bench (best|ref|avx2|avx-vnni|avx512|amx|neon);
#   the raw output of every run goes to --log FILE (default: stderr).
#
# llama.cpp is not part of this repository and this script never builds or downloads it: build
# it yourself, outside the repository, and pass the directory that holds bin/llama-bench, e.g.
#   cmake -B build -DGGML_NATIVE=ON -DLLAMA_CURL=OFF -DCMAKE_BUILD_TYPE=Release
#   cmake -B build-avx2 -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
#         -DLLAMA_CURL=OFF -DCMAKE_BUILD_TYPE=Release
#   cmake --build build -j --target llama-bench
set -eu

die() { echo "sidebyside.sh: $*" >&2; exit 1; }
usage() { sed -n '5,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

[ $# -ge 1 ] || usage
LLAMA=$1; shift
THREADS=2 PP=128 TG=32 ROUNDS=3 REPS=2 SWA=build/swa-bench KERNELS=best LOG=
while [ $# -gt 0 ]; do
    case $1 in -h|--help) usage ;; -*) [ $# -ge 2 ] || die "$1 needs a value" ;; *) break ;; esac
    case $1 in
        -t) THREADS=$2 ;;
        -p) PP=$2 ;;
        -n) TG=$2 ;;
        -r) REPS=$2 ;;
        --rounds) ROUNDS=$2 ;;
        --swa-bench) SWA=$2 ;;
        --kernels) KERNELS=$2 ;;
        --log) LOG=$2 ;;
        *) die "unknown option $1" ;;
    esac
    shift 2
done
[ $# -ge 1 ] || usage
[ -x "$LLAMA/bin/llama-bench" ] || die "no $LLAMA/bin/llama-bench (build llama.cpp first; see the top of this script)"
[ -x "$SWA" ] || die "no swa-bench at $SWA (make $SWA, or pass --swa-bench PATH)"
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

# Results, one line each: model <TAB> program <TAB> metric <TAB> value (one pp and tg per round)
round=0
while [ $round -lt "$ROUNDS" ]; do
    round=$((round + 1))
    for m in "$@"; do
        name=$(basename "$m")
        echo "## round $round/$ROUNDS, $name" | log
        run llama-bench "$LLAMA/bin/llama-bench" -m "$m" -t "$THREADS" -p "$PP" -n "$TG" -r "$REPS" -o jsonl
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
echo "CPU: ${cpu:-unknown}; llama.cpp ${commit:-unknown} ($LLAMA); $THREADS threads, pp$PP, tg$TG;"
echo "$ROUNDS rounds of $REPS repetitions per program; swa.h kernels: $KERNELS (used: ${used:-?})."
echo "Medians over the rounds in tokens/s, min-max in parentheses; ratio = swa.h / llama.cpp;"
echo "tg% = swa.h's generation as a share of its bandwidth limit (swa-bench's tg% column)."
echo "Load average before the runs: $load; after: $(cut -d" " -f1-3 /proc/loadavg 2>/dev/null)."
echo
for m in "$@"; do basename "$m"; done | awk -F'\t' -v results="$TMP/results" '
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
        print "| model file | llama.cpp pp | swa.h pp | ratio pp | llama.cpp tg | swa.h tg | ratio tg | swa tg % of limit |"
        print "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    }
    !seen[$0]++ {
        L = $0 SUBSEP "llama" SUBSEP; S = $0 SUBSEP "swa" SUBSEP
        pct = median(S "pct")
        printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $0,
            cell(L "pp", 1), cell(S "pp", 1), ratio(S "pp", L "pp"),
            cell(L "tg", 2), cell(S "tg", 2), ratio(S "tg", L "tg"), pct == "" ? "-" : sprintf("%.0f%%", pct)
    }'
