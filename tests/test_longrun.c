/* A million tokens through a tiny model with W = 64: the library allocates nothing after the
   context is created, the cache and the process's resident memory are the same at 10,000 and
   at 1,000,000 tokens, and no logit is ever NaN or infinite. (Emulated and sanitized builds
   stop at 100,000.) */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

static long library_allocations;
static void *counting_malloc(size_t n)
{
    library_allocations++;
    return malloc(n);
}
#define SWA_MALLOC(n) counting_malloc(n)
#define SWA_FREE(p) free(p)
#define SWA_IMPLEMENTATION
#include "swa.h"
#define GW_IMPLEMENTATION
#include "tools/common/gguf_writer.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "tests/testutil.h"

#define EARLY 10000

/* Under a sanitizer or an emulator (SWA_TEST_QUICK) the runtime's own bookkeeping grows the
   resident set: the pages are then reported but not compared; the allocation count still is. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

/* Emulated and sanitized builds run ten times slower: 100,000 tokens there. */
#if defined(SWA_TEST_QUICK) || SANITIZED
#define TOTAL 100000
#else
#define TOTAL 1000000
#endif

/* Anonymous resident pages (resident minus file-backed, from /proc/self/statm): what heap or
   stack growth would show. File-backed pages are left out because code paths of libc and libm
   taken for the first time late in the run page in their text. */
static long resident_pages(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, rss = -1, shared = 0;
    if (f) {
        if (fscanf(f, "%ld %ld %ld", &size, &rss, &shared) != 3) rss = -1;
        fclose(f);
    }
    return rss < 0 ? -1 : rss - shared;
}

static void test_million_tokens(void **state)
{
    tu_spec s;
    tu_model tm;
    swa_model *model;
    swa_ctx *ctx;
    swa_ctx_config cfg;
    swa_error err;
    const float *logits;
    uint64_t rng = 7;
    size_t cache_early = 0;
    long rss_early = 0, rss_late, allocations_before;
    int32_t tok = 1;
    long i;
    int k, bad = 0;
    (void)state;
    memset(&s, 0, sizeof s);
    s.n_layer = 2; s.n_embd = 32; s.n_head = 2; s.n_kv_head = 1; s.n_ff = 32; s.n_vocab = 64;
    s.n_ctx = 128; s.type = GW_Q8_0; s.window = 64; s.seed = 11;
    model = tu_build_load(&tm, &s);
    memset(&cfg, 0, sizeof cfg);
    cfg.n_threads = 1;
    assert_int_equal(swa_ctx_create(model, &cfg, &ctx, &err), SWA_OK);
    allocations_before = library_allocations;
    assert_true(allocations_before > 0);           /* the counter sees the library's calls */
    for (i = 0; i < TOTAL; i++) {
        if (swa_ctx_eval(ctx, &tok, 1, &logits, &err) != SWA_OK) fail_msg("token %ld: %s", i, err.msg);
        for (k = 0; k < s.n_vocab; k++) bad += !isfinite(logits[k]);
        tok = (int32_t)(tu_rng_next(&rng) % (uint64_t)s.n_vocab);   /* a random walk through the vocabulary */
        if (i + 1 == EARLY) {
            cache_early = swa_ctx_cache_bytes(ctx);
            rss_early = resident_pages();
        }
    }
    rss_late = resident_pages();
    fprintf(stderr, "test_longrun: %d tokens; cache %zu bytes; anonymous resident %ld pages at %d tokens, %ld at the end\n",
            TOTAL, swa_ctx_cache_bytes(ctx), rss_early, EARLY, rss_late);
    assert_int_equal(bad, 0);
    assert_int_equal(library_allocations, allocations_before);
    assert_int_equal(swa_ctx_pos(ctx), TOTAL);
    assert_int_equal(swa_ctx_cache_bytes(ctx), cache_early);
    assert_true(rss_early > 0);
#ifndef SWA_TEST_QUICK
    if (!SANITIZED) assert_int_equal(rss_late, rss_early);
#endif
    swa_ctx_free(ctx);
    swa_model_free(model);
    tu_free(&tm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_million_tokens),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
