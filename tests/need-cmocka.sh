#!/bin/sh
# Make sure cmocka can be linked with $CC; install it (Debian's libcmocka-dev, or its arm64
# build for the aarch64 cross compiler) when we are root with apt-get.
CC=${CC:-cc}
pkg=libcmocka-dev
case "$CC" in aarch64*) pkg=libcmocka-dev:arm64 ;; esac
probe() {
    printf '#include <stdarg.h>\n#include <stddef.h>\n#include <setjmp.h>\n#include <stdint.h>\n#include <cmocka.h>\nint main(void){return 0;}\n' |
        $CC -x c - -lcmocka -o /dev/null 2>/dev/null
}
probe && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "cmocka is missing for $CC: installing $pkg with apt-get"
    case "$pkg" in *:arm64) dpkg --add-architecture arm64 ;; esac
    apt-get install -y "$pkg" >/dev/null 2>&1 ||
        { apt-get update >/dev/null 2>&1 && apt-get install -y "$pkg" >/dev/null; }
    probe && exit 0
fi
echo "error: the tests need cmocka for $CC. Install it with: sudo apt-get install $pkg" >&2
exit 1
