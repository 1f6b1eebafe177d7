#!/bin/sh
# Every relative link in the Markdown documents (README.md, CHANGELOG.md, docs/ and docs/log/)
# reaches a file that exists, and every #anchor it names is a heading of that file, spelled as
# GitHub spells heading anchors: lower case, punctuation dropped, spaces as hyphens, a repeated
# heading's anchor suffixed -1, -2, ... Links inside fenced code blocks are not links. Run from
# the project root; exits 1 after listing every broken link.
set -eu
files=$(ls README.md CHANGELOG.md docs/*.md docs/log/*.md 2>/dev/null)

# anchors FILE: one anchor a line for each heading outside fenced code
anchors() {
    awk '
        /^(```|~~~)/ { fence = !fence; next }
        fence { next }
        /^#+ / {
            h = $0; sub(/^#+ +/, "", h); sub(/ +#* *$/, "", h)
            h = tolower(h); gsub(/[^a-z0-9 _-]/, "", h); gsub(/ /, "-", h)
            if (h in seen) { seen[h]++; print h "-" seen[h] - 1 } else { seen[h] = 1; print h }
        }' "$1"
}

# links FILE: one target a line for each inline link outside fenced code and code spans
links() {
    awk '
        /^(```|~~~)/ { fence = !fence; next }
        fence { next }
        {
            line = $0; gsub(/`[^`]*`/, "", line)
            while (match(line, /\]\([^) ]+[) ]/)) {
                print substr(line, RSTART + 2, RLENGTH - 3)
                line = substr(line, RSTART + RLENGTH)
            }
        }' "$1"
}

bad=0
for f in $files; do
    dir=$(dirname "$f")
    for target in $(links "$f"); do
        case $target in http://*|https://*|mailto:*) continue ;; esac
        path=${target%%#*}
        anchor=
        case $target in *#*) anchor=${target#*#} ;; esac
        if [ -z "$path" ]; then dest=$f; else dest=$dir/$path; fi
        if [ ! -e "$dest" ]; then
            echo "$f: link to $target: $dest does not exist"; bad=1; continue
        fi
        if [ -n "$anchor" ]; then
            case $dest in *.md) ;; *) continue ;; esac
            if ! anchors "$dest" | grep -qxF -- "$anchor"; then
                echo "$f: link to $target: no heading with anchor #$anchor in $dest"; bad=1
            fi
        fi
    done
done
[ $bad = 0 ] || exit 1
echo "test_docs: every relative link and anchor in $(echo $files | wc -w) documents resolves"
