/* What the compile-out checks whose switch leaves the sampler in (compile_no_grammar,
   compile_no_speculative) run after including swa.h: the sampler still samples greedily and
   still gives its distribution. Returns 0, or 1 after a line naming `check` and what failed. */
#include <stdio.h>

static int sampler_still_samples(const char *check)
{
    float logits[4] = {0.0f, 3.0f, 1.0f, 2.0f};
    swa_sampler_config sc = swa_sampler_config_default();
    swa_sampler *s = NULL;
    swa_token_prob p[4];
    swa_error err;
    int32_t id, n = 0;
    sc.temperature = 0;
    if (swa_sampler_create(&sc, 4, &s, &err) != SWA_OK || swa_sampler_dist(s, logits, p, 4, &n, &err) != SWA_OK) {
        printf("%s: %s\n", check, err.msg);
        swa_sampler_free(s);
        return 1;
    }
    id = swa_sampler_sample(s, logits);
    swa_sampler_free(s);
    if (id != 1) {
        printf("%s: greedy chose %d, not 1\n", check, (int)id);
        return 1;
    }
    if (n != 1 || p[0].id != 1) {
        printf("%s: greedy distribution of %d tokens, first %d, not token 1 alone\n", check, (int)n, (int)p[0].id);
        return 1;
    }
    printf("%s: ok\n", check);
    return 0;
}
