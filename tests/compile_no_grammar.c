/* With SWA_NO_GRAMMAR the grammars compile out (this file's own static swa_grammar_parse would
   clash with its declaration): the sampler still samples, without constraints. */
#define SWA_NO_GRAMMAR
#define SWA_IMPLEMENTATION
#include "swa.h"
#include "tests/compile_sampler_check.h"

static int swa_grammar_parse(void) { return 0; }

int main(void)
{
    return sampler_still_samples("compile_no_grammar") || swa_grammar_parse();
}
