/* printable.h - a helper the tools share for showing bytes from untrusted files safely. */
#ifndef SWA_TOOLS_PRINTABLE_H
#define SWA_TOOLS_PRINTABLE_H
#include <stddef.h>
#include <stdint.h>

/* Bytes in the UTF-8 sequence at p[0..n) if it is valid and safe to print, else 0. We refuse
   overlong forms, surrogates and U+0080..U+009F, which some terminals take as controls. */
static size_t printable_utf8(const unsigned char *p, size_t n)
{
    size_t len, i;
    uint32_t cp;
    if (p[0] >= 0x20 && p[0] < 0x7f) return 1;
    if (p[0] >= 0xc2 && p[0] <= 0xdf) { len = 2; cp = p[0] & 0x1fu; }
    else if ((p[0] & 0xf0) == 0xe0) { len = 3; cp = p[0] & 0x0fu; }
    else if (p[0] >= 0xf0 && p[0] <= 0xf4) { len = 4; cp = p[0] & 0x07u; }
    else return 0;
    if (len > n) return 0;
    for (i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (p[i] & 0x3fu);
    }
    if (cp < 0xa0 || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        return 0;
    return len;
}
#endif
