#!/bin/sh
# cmocka-source.sh DIR: unpack Debian's cmocka source into DIR, for the MinGW build (Debian packages
# no Windows cmocka). The source comes through the machine's own apt sources: their deb entries
# are read again as deb-src into a private apt state under DIR, so apt checks the archive's
# signatures and the files' hashes as it does for any package, and no host is named here.
set -eu
mkdir -p "$1"
dir=$(cd "$1" && pwd)   # apt reads relative Dir:: paths from /etc/apt
state=$dir/apt
mkdir -p "$state/lists/partial" "$state/cache/archives/partial" "$state/sources.list.d"
found=0
for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    sed 's/^Types:.*/Types: deb-src/' "$f" > "$state/sources.list.d/$(basename "$f")"
    found=1
done
if [ -f /etc/apt/sources.list ]; then
    sed -n 's/^deb \(.*\)/deb-src \1/p' /etc/apt/sources.list > "$state/sources.list"
    [ -s "$state/sources.list" ] && found=1
fi
[ "$found" = 1 ] || { echo "cmocka-source.sh: no apt sources on this machine to fetch cmocka's source from" >&2; exit 1; }
set -- -o Dir::Etc::SourceList="$state/sources.list" -o Dir::Etc::SourceParts="$state/sources.list.d" \
       -o Dir::State::Lists="$state/lists" -o Dir::Cache="$state/cache" -o Debug::NoLocking=1
apt-get "$@" -q update >"$state/update.log" 2>&1 || { cat "$state/update.log" >&2; exit 1; }
(cd "$dir" && apt-get "$@" -q source --download-only cmocka >"$state/source.log" 2>&1) ||
    { cat "$state/source.log" >&2; exit 1; }
orig=$(ls "$dir"/cmocka_*.orig.tar.* | head -n 1)
mkdir -p "$dir/src"
tar -C "$dir/src" --strip-components=1 -xf "$orig"
echo "cmocka-source.sh: $(basename "$orig") unpacked into $dir/src"
