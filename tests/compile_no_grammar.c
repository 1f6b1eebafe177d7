/* With SWA_NO_GRAMMAR the grammars compile out (this file's own static swa_grammar_parse would
   clash with its declaration): the sampler still samples, without constraints. */
#define SWA_NO_GRAMMAR
#define SWA_IMPLEMENTATION
#include "swa.h"
#include <stdio.h>

static int swa_grammar_parse(void) { return 0; }

int main(void)
{
    float logits[4] = {0.0f, 3.0f, 1.0f, 2.0f};
    swa_sampler_config sc = swa_sampler_config_default();
    swa_sampler *s = NULL;
    swa_error err;
    int32_t id;
    sc.temperature = 0;
    if (swa_sampler_create(&sc, 4, &s, &err) != SWA_OK) {
        printf("compile_no_grammar: %s\n", err.msg);
        return 1;
    }
    id = swa_sampler_sample(s, logits);
    swa_sampler_free(s);
    if (id != 1) {
        printf("compile_no_grammar: greedy chose %d, not 1\n", (int)id);
        return 1;
    }
    printf("compile_no_grammar: ok\n");
    return swa_grammar_parse();
}
