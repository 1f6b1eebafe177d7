/* libFuzzer harness: any bytes as a JSON Schema, converted to GBNF. A failure must come with a
   message and no text; a success gives NUL-terminated text with a root rule, which the grammar
   parser reads without a syntax error (it may still refuse it for left recursion, which a
   schema's anyOf of $refs can make, or for its size), and which then matches at least one of a
   few JSON texts or none, without an error other than "no match" or the parse limit. */
#include "swa.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const texts[] = {"{}", "[]", "null", "0", "\"\"", "{\"a\": 1}", "[1, \"x\"]", "true"};
    char *gbnf = NULL;
    swa_grammar *g = NULL;
    swa_error err;
    size_t i;
    if (swa_json_schema_to_grammar((const char *)data, size, &gbnf, &err) != SWA_OK) {
        if (gbnf || !err.msg[0]) abort();
        return 0;
    }
    if (!gbnf || !strstr(gbnf, "root ::= ")) abort();
    if (swa_grammar_parse(gbnf, strlen(gbnf), "root", &g, &err) != SWA_OK) {
        if (!strstr(err.msg, "left-recursive") && !strstr(err.msg, "too large")) abort();
        free(gbnf);   /* SWA_FREE is free here */
        return 0;
    }
    for (i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        swa_status st = swa_grammar_match(g, texts[i], strlen(texts[i]), NULL, &err);
        if (st != SWA_OK && st != SWA_ERR_NO_MATCH && st != SWA_ERR_UNSUPPORTED) abort();
    }
    swa_grammar_free(g);
    free(gbnf);   /* SWA_FREE is free here */
    return 0;
}
