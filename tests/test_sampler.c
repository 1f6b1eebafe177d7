/* The sampler: greedy and top-k 1 agree, a seed reproduces its draws, frequencies follow the
   softmax, and each filter keeps exactly the tokens it should. */
#include "swa.h"
#include "swa.h"
#define GW_IMPLEMENTATION
#include "tools/common/gguf_writer.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>
#include "tests/testutil.h"

static swa_sampler *make(float temp, int32_t top_k, float top_p, float min_p, uint64_t seed, int32_t n)
{
    swa_sampler_config c = {.temperature = temp, .top_k = top_k, .top_p = top_p, .min_p = min_p, .seed = seed};
    swa_sampler *s;
    swa_error err;
    if (swa_sampler_create(&c, n, &s, &err) != SWA_OK) fail_msg("%s", err.msg);
    return s;
}

static void random_logits(float *x, int n, uint64_t seed)
{
    int i;
    for (i = 0; i < n; i++) x[i] = (float)((tu_lcg_next(&seed) >> 33) % 2000) / 100.0f - 10.0f;
}

static void test_top_k_1_is_greedy(void **state)
{
    float logits[1000];
    int round;
    (void)state;
    for (round = 0; round < 20; round++) {
        swa_sampler *greedy = make(0.0f, 0, 0, 0, 1, 1000), *k1 = make(1.5f, 1, 0.9f, 0, (uint64_t)round, 1000);
        random_logits(logits, 1000, (uint64_t)round + 100);
        assert_int_equal(swa_sampler_sample(greedy, logits), swa_argmax(logits, 1000));
        assert_int_equal(swa_sampler_sample(k1, logits), swa_argmax(logits, 1000));
        swa_sampler_free(greedy);
        swa_sampler_free(k1);
    }
}

/* The same seed draws the same tokens; another seed does not; reset starts over. */
static void test_seed_reproduces(void **state)
{
    float logits[300];
    int32_t a[200], b[200], c[200];
    swa_sampler *s1 = make(1.0f, 40, 0.95f, 0.01f, 42, 300), *s2 = make(1.0f, 40, 0.95f, 0.01f, 42, 300);
    swa_sampler *s3 = make(1.0f, 40, 0.95f, 0.01f, 43, 300);
    int i, same = 0;
    (void)state;
    random_logits(logits, 300, 7);
    for (i = 0; i < 300; i++) logits[i] *= 0.2f;   /* flat enough that draws vary */
    for (i = 0; i < 200; i++) {
        a[i] = swa_sampler_sample(s1, logits);
        b[i] = swa_sampler_sample(s2, logits);
        c[i] = swa_sampler_sample(s3, logits);
        same += a[i] == c[i];
    }
    assert_memory_equal(a, b, sizeof a);
    assert_true(same < 100);
    swa_sampler_reset(s1);
    for (i = 0; i < 200; i++) assert_int_equal(swa_sampler_sample(s1, logits), a[i]);
    /* the generator is integer-only: its first value for seed 42 is fixed on every machine,
       computed here with the published splitmix64 constants and testutil.h's xorshift64* */
    {
        uint64_t x = 42 + 0x9e3779b97f4a7c15ull, st;
        x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
        x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
        st = (x ^ (x >> 31)) | 1;
        swa_sampler_free(s3);
        s3 = make(1.0f, 0, 0, 0, 42, 300);
        assert_true(swa_sampler_uniform(s3) == (float)(tu_rng_next(&st) >> 40) / 16777216.0f);
    }
    swa_sampler_free(s1);
    swa_sampler_free(s2);
    swa_sampler_free(s3);
}

/* 200,000 draws at temperature 0.7 from 5 tokens: each frequency within 0.005 of
   softmax(logits / 0.7) (the standard error is at most 0.0011, so this is over 4 sigma). */
static void test_frequencies_follow_softmax(void **state)
{
    const float logits[5] = {1.0f, 2.0f, 0.5f, -1.0f, 1.5f}, T = 0.7f;
    double want[5], sum = 0.0;
    int count[5] = {0}, i;
    swa_sampler *s = make(T, 0, 0, 0, 2026, 5);
    (void)state;
    for (i = 0; i < 5; i++) sum += (want[i] = exp(logits[i] / T));
    for (i = 0; i < 200000; i++) count[swa_sampler_sample(s, logits)]++;
    for (i = 0; i < 5; i++) {
        double got = count[i] / 200000.0;
        if (fabs(got - want[i] / sum) > 0.005) fail_msg("token %d: frequency %.4f, softmax %.4f", i, got, want[i] / sum);
    }
    swa_sampler_free(s);
}

/* Probabilities at T = 1 of {3, 2, 1, 0, -5}: 0.6439, 0.2369, 0.0871, 0.0321, 0.0002.
   top-p 0.85 keeps the first two (0.6439 + 0.2369 = 0.8808 >= 0.85);
   min-p 0.1 keeps tokens with p >= 0.0644: the first three; top-k 2 the first two. */
static void test_filters(void **state)
{
    const float logits[5] = {3.0f, 2.0f, 1.0f, 0.0f, -5.0f};
    int seen_p[5] = {0}, seen_min[5] = {0}, seen_k[5] = {0}, i;
    swa_sampler *p = make(1.0f, 0, 0.85f, 0, 1, 5), *m = make(1.0f, 0, 0, 0.1f, 2, 5), *k = make(1.0f, 2, 0, 0, 3, 5);
    (void)state;
    for (i = 0; i < 20000; i++) {
        seen_p[swa_sampler_sample(p, logits)]++;
        seen_min[swa_sampler_sample(m, logits)]++;
        seen_k[swa_sampler_sample(k, logits)]++;
    }
    assert_true(seen_p[0] && seen_p[1] && !seen_p[2] && !seen_p[3] && !seen_p[4]);
    assert_true(seen_min[0] && seen_min[1] && seen_min[2] && !seen_min[3] && !seen_min[4]);
    assert_true(seen_k[0] && seen_k[1] && !seen_k[2] && !seen_k[3] && !seen_k[4]);
    swa_sampler_free(p);
    swa_sampler_free(m);
    swa_sampler_free(k);
}

/* Penalty 2: a positive logit is halved, a negative one doubled, each token once however often
   it repeats, and only within the last repeat_last_n tokens. The sampler remembers what it
   returns; swa_sampler_accept adds tokens it did not choose. */
static void test_repetition_penalty(void **state)
{
    const float logits[4] = {4.0f, 3.0f, -1.0f, -1.5f};
    swa_sampler_config c;
    swa_sampler *s;
    (void)state;
    memset(&c, 0, sizeof c);
    c.repeat_penalty = 2.0f;
    c.repeat_last_n = 3;
    assert_int_equal(swa_sampler_create(&c, 4, &s, NULL), SWA_OK);
    assert_int_equal(swa_sampler_sample(s, logits), 0);   /* remembered: 4 -> 2, token 1 (3) wins */
    assert_int_equal(swa_sampler_sample(s, logits), 1);   /* 3 -> 1.5; token 0 at 2 wins again */
    assert_int_equal(swa_sampler_sample(s, logits), 0);   /* history 0, 1, 0: 0 halved once, */
    assert_int_equal(swa_sampler_sample(s, logits), 0);   /* not twice, and still ahead of 1 */
    swa_sampler_accept(s, 3);
    swa_sampler_accept(s, 3);
    swa_sampler_accept(s, 3);          /* only 3 remains of the last three: 0 is back to 4 */
    assert_int_equal(swa_sampler_sample(s, logits), 0);
    swa_sampler_reset(s);              /* forgets: 0 again, at full strength */
    assert_int_equal(swa_sampler_sample(s, logits), 0);
    swa_sampler_free(s);
    /* -1 * 2 = -2 < -1.5: a penalised negative logit drops below its neighbour */
    assert_int_equal(swa_sampler_create(&c, 4, &s, NULL), SWA_OK);
    {
        const float neg[4] = {-1.0f, -1.5f, -9.0f, -9.0f};
        swa_sampler_accept(s, 0);
        assert_int_equal(swa_sampler_sample(s, neg), 1);
    }
    swa_sampler_free(s);
}

/* A greedy sampler with these penalties over the last `last` tokens, having seen hist[0..n). */
static int32_t penalised(float rep, float pres, float freq, int32_t last, const int32_t *hist, int n, const float *logits)
{
    swa_sampler_config c = {.repeat_penalty = rep, .repeat_last_n = last, .presence_penalty = pres, .frequency_penalty = freq};
    swa_sampler *s;
    int32_t id;
    int i;
    assert_int_equal(swa_sampler_create(&c, 4, &s, NULL), SWA_OK);
    for (i = 0; i < n; i++) swa_sampler_accept(s, hist[i]);
    id = swa_sampler_sample(s, logits);
    swa_sampler_free(s);
    return id;
}

/* OpenAI's definitions: logit - presence * (count > 0) - frequency * count, the count taken over
   the last repeat_last_n tokens, after the repetition penalty (llama.cpp's order). Each case sits
   on one side of a margin worked out by hand. */
static void test_presence_frequency(void **state)
{
    const float l[4] = {4.0f, 3.2f, -1.0f, -1.5f};
    const int32_t once[1] = {0}, twice[2] = {0, 0}, old[3] = {0, 0, 2};
    (void)state;
    assert_int_equal(penalised(1, 0.5f, 0, 64, once, 1, l), 0);    /* 4 - 0.5 = 3.5 > 3.2 */
    assert_int_equal(penalised(1, 1.0f, 0, 64, once, 1, l), 1);    /* 4 - 1 = 3.0 < 3.2 */
    assert_int_equal(penalised(1, 0.5f, 0, 64, twice, 2, l), 0);   /* presence counts once: 3.5 */
    assert_int_equal(penalised(1, 0, 0.3f, 64, twice, 2, l), 0);   /* 4 - 2 x 0.3 = 3.4 */
    assert_int_equal(penalised(1, 0, 0.5f, 64, twice, 2, l), 1);   /* 4 - 2 x 0.5 = 3.0 */
    assert_int_equal(penalised(1, 0, 0.5f, 2, old, 3, l), 0);      /* the last 2 hold one 0: 3.5 */
    assert_int_equal(penalised(1, 0, -0.5f, 64, once, 1, l), 0);   /* negative: encourages */
    /* repetition first, then presence: 4 / 2 - 1 = 1.0 against 3.2 / 2 - 1 = 0.6 */
    {
        const int32_t both[2] = {0, 1};
        assert_int_equal(penalised(2, 1.0f, 0, 64, both, 2, l), 0);
        /* frequency 0.5 after the repetition penalty, history 0, 0, 1: 4 / 2 - 2 x 0.5 = 1.0 for
           token 0 against 3.2 / 2 - 0.5 = 1.1 for token 1 */
        {
            const int32_t h[3] = {0, 0, 1};
            assert_int_equal(penalised(2, 0, 0.5f, 64, h, 3, l), 1);
            assert_int_equal(penalised(2, 0, 0.3f, 64, h, 3, l), 0);   /* 2 - 0.6 = 1.4 against 1.6 - 0.3 = 1.3 */
        }
    }
}

/* A bias is added to its token's logit; -100 or less bans it whatever its logit; a new set
   replaces the old; bad ids or NaN biases change nothing. */
static void test_logit_bias(void **state)
{
    const float l[4] = {4.0f, 3.2f, -1.0f, -1.5f}, big[4] = {150.0f, 0, 0, 0};   /* not "far": a macro in windef.h */
    const int32_t ids[2] = {1, 2}, bad[1] = {4}, ban[1] = {0};
    const float up[2] = {1.0f, 0.5f}, nan_bias[1] = {NAN}, hundred[1] = {-100.0f};
    swa_sampler *s = make(0.0f, 0, 0, 0, 1, 4), *t = make(1.0f, 0, 0, 0, 9, 4);
    swa_error err;
    int i, zeros = 0;
    (void)state;
    assert_int_equal(swa_sampler_sample(s, l), 0);
    assert_int_equal(swa_sampler_set_logit_bias(s, ids, up, 2, &err), SWA_OK);
    assert_int_equal(swa_sampler_sample(s, l), 1);                 /* 3.2 + 1 = 4.2 > 4 */
    assert_int_equal(swa_sampler_set_logit_bias(s, bad, up, 1, &err), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_sampler_set_logit_bias(s, ids, nan_bias, 1, &err), SWA_ERR_INVALID_ARG);
    assert_int_equal(swa_sampler_sample(s, l), 1);                 /* still the old bias */
    assert_int_equal(swa_sampler_set_logit_bias(s, ids, up + 1, 1, &err), SWA_OK);
    assert_int_equal(swa_sampler_sample(s, l), 0);                 /* replaced: 3.2 + 0.5 = 3.7 < 4 */
    assert_int_equal(swa_sampler_set_logit_bias(s, NULL, NULL, 0, &err), SWA_OK);
    assert_int_equal(swa_sampler_sample(s, l), 0);
    /* banned: never drawn, where -100 added to 150 would leave it winning every draw */
    assert_int_equal(swa_sampler_set_logit_bias(t, ban, hundred, 1, &err), SWA_OK);
    for (i = 0; i < 2000; i++) zeros += swa_sampler_sample(t, big) == 0;
    assert_int_equal(zeros, 0);
    swa_sampler_free(s);
    swa_sampler_free(t);
}

/* NaN logits never win; all -inf gives the first token; ids from outside the vocabulary are
   not remembered (and cannot write outside the sampler). */
static void test_odd_logits(void **state)
{
    const float nan_first[8] = {NAN, 0, 0, 9, 0, 0, 0, 0};
    float none[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
    swa_sampler_config c;
    swa_sampler *s = make(1.0f, 0, 0, 0, 5, 8), *g = make(0.0f, 0, 0, 0, 5, 8), *k = make(1.0f, 3, 0.9f, 0, 5, 4);
    int i, threes = 0;
    (void)state;
    for (i = 0; i < 1000; i++) threes += swa_sampler_sample(s, nan_first) == 3;
    assert_true(threes > 990);                         /* e^9 against seven e^0: 99.9 % */
    assert_int_equal(swa_sampler_sample(g, nan_first), 3);
    assert_int_equal(swa_argmax(nan_first, 8), 3);
    assert_int_equal(swa_sampler_sample(k, none), 0);
    swa_sampler_free(s);
    swa_sampler_free(g);
    swa_sampler_free(k);
    memset(&c, 0, sizeof c);
    c.repeat_penalty = 1.5f;
    assert_int_equal(swa_sampler_create(&c, 8, &s, NULL), SWA_OK);
    swa_sampler_accept(s, 100000);
    swa_sampler_accept(s, -5);
    assert_int_equal(swa_sampler_sample(s, nan_first), 3);
    swa_sampler_free(s);
}

static void test_bad_config(void **state)
{
    swa_sampler_config c;
    swa_sampler *s;
    swa_error err;
    (void)state;
    memset(&c, 0, sizeof c);
    c.top_p = 1.5f;
    assert_int_equal(swa_sampler_create(&c, 10, &s, &err), SWA_ERR_INVALID_ARG);
    assert_null(s);
    c.top_p = 0.5f;
    c.temperature = NAN;
    assert_int_equal(swa_sampler_create(&c, 10, &s, &err), SWA_ERR_INVALID_ARG);
    c.temperature = 1.0f;
    assert_int_equal(swa_sampler_create(&c, 0, &s, &err), SWA_ERR_INVALID_ARG);
    swa_sampler_free(NULL);
}

/* swa_sampler_config_default has the values its comment in swa.h gives, and swa_sampler_create
   accepts them: the sampler draws what one made from those values written by hand draws. */
static void test_config_default(void **state)
{
    swa_sampler_config c = swa_sampler_config_default();
    swa_sampler *s = NULL, *by_hand;
    swa_error err;
    float logits[300];
    int i;
    (void)state;
    assert_true(c.temperature == 0.8f);
    assert_int_equal(c.top_k, 40);
    assert_true(c.top_p == 0.95f);
    assert_true(c.min_p == 0.05f);
    assert_true(c.repeat_penalty == 1.0f);
    assert_int_equal(c.repeat_last_n, 64);
    assert_int_equal(c.seed, 42);
    if (swa_sampler_create(&c, 300, &s, &err) != SWA_OK) fail_msg("%s", err.msg);
    assert_non_null(s);
    by_hand = make(0.8f, 40, 0.95f, 0.05f, 42, 300);   /* no penalty: 0 means off, as 1 does */
    random_logits(logits, 300, 11);
    for (i = 0; i < 300; i++) logits[i] *= 0.2f;      /* flat enough that draws vary */
    for (i = 0; i < 100; i++) assert_int_equal(swa_sampler_sample(s, logits), swa_sampler_sample(by_hand, logits));
    swa_sampler_free(s);
    swa_sampler_free(by_hand);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_top_k_1_is_greedy),
        cmocka_unit_test(test_seed_reproduces),
        cmocka_unit_test(test_frequencies_follow_softmax),
        cmocka_unit_test(test_filters),
        cmocka_unit_test(test_repetition_penalty),
        cmocka_unit_test(test_presence_frequency),
        cmocka_unit_test(test_logit_bias),
        cmocka_unit_test(test_odd_logits),
        cmocka_unit_test(test_bad_config),
        cmocka_unit_test(test_config_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
