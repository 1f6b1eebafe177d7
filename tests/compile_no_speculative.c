/* With SWA_NO_SPECULATIVE speculative decoding compiles out (this file's own static
   swa_spec_create would clash with its declaration): the sampler still samples, and its
   distribution is still there. */
#define SWA_NO_SPECULATIVE
#define SWA_IMPLEMENTATION
#include "swa.h"
#include <stdio.h>

static int swa_spec_create(void) { return 0; }

int main(void)
{
    float logits[4] = {0.0f, 3.0f, 1.0f, 2.0f};
    swa_sampler_config sc = swa_sampler_config_default();
    swa_sampler *s = NULL;
    swa_token_prob p[4];
    swa_error err;
    int32_t n = 0;
    sc.temperature = 0;
    if (swa_sampler_create(&sc, 4, &s, &err) != SWA_OK || swa_sampler_dist(s, logits, p, 4, &n, &err) != SWA_OK) {
        printf("compile_no_speculative: %s\n", err.msg);
        return 1;
    }
    swa_sampler_free(s);
    if (n != 1 || p[0].id != 1) {
        printf("compile_no_speculative: greedy distribution of %d tokens, first %d, not token 1 alone\n", (int)n,
               (int)p[0].id);
        return 1;
    }
    printf("compile_no_speculative: ok\n");
    return swa_spec_create();
}
