/* libFuzzer harness: any bytes split at the first NUL into a GBNF grammar and a text. The
   grammar is parsed (a refusal must leave *out NULL and say where); a parsed one matches the
   text whole, and the text again in pieces of 1 to 4 bytes through a state, with a copy made
   half way; the whole-text verdict and the pieces' must agree. */
#include "swa.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data, *nul = (const char *)memchr(data, 0, size);
    size_t glen = nul ? (size_t)(nul - text) : size, at, where;
    const char *input = nul ? nul + 1 : text + size;
    size_t len = size - glen - (nul ? 1 : 0);
    swa_grammar *g = NULL;
    swa_grammar_state *st, *copy = NULL;
    swa_status whole, s = SWA_OK;
    swa_error err;
    if (swa_grammar_parse(text, glen, NULL, &g, &err) != SWA_OK) {
        if (g || !strstr(err.msg, "grammar")) abort();
        return 0;
    }
    whole = swa_grammar_match(g, input, len, &where, NULL);
    if (whole != SWA_OK && whole != SWA_ERR_NO_MATCH && whole != SWA_ERR_UNSUPPORTED && whole != SWA_ERR_NOMEM) abort();
    if (where > len) abort();
    if (swa_grammar_state_create(g, &st, NULL) == SWA_OK) {
        for (at = 0; at < len && s == SWA_OK; at += 1 + at % 4) {
            size_t n = len - at < 1 + at % 4 ? len - at : 1 + at % 4;
            s = swa_grammar_state_accept(st, input + at, n, NULL, NULL);
            if (!copy && at >= len / 2) swa_grammar_state_copy(st, &copy, NULL);
        }
        if (whole == SWA_OK && (s != SWA_OK || !swa_grammar_state_can_end(st))) abort();
        if (whole == SWA_ERR_NO_MATCH && s == SWA_OK && swa_grammar_state_can_end(st)) abort();
        if (copy) swa_grammar_state_reset(copy);
        swa_grammar_state_free(copy);
        swa_grammar_state_free(st);
    }
    swa_grammar_free(g);
    return 0;
}
