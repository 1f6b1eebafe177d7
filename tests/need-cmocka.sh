#!/bin/sh
# Make sure cmocka (Debian: libcmocka-dev) can be linked; install it when we are root with apt-get.
CC=${CC:-cc}
probe() {
    printf '#include <stdarg.h>\n#include <stddef.h>\n#include <setjmp.h>\n#include <stdint.h>\n#include <cmocka.h>\nint main(void){return 0;}\n' |
        $CC -x c - -lcmocka -o /dev/null 2>/dev/null
}
probe && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "cmocka is missing: installing libcmocka-dev with apt-get"
    apt-get install -y libcmocka-dev >/dev/null 2>&1 ||
        { apt-get update >/dev/null 2>&1 && apt-get install -y libcmocka-dev >/dev/null; }
    probe && exit 0
fi
echo "error: the tests need cmocka. Install it with: sudo apt-get install libcmocka-dev" >&2
exit 1
