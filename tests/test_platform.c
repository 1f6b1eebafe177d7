/* The platform layer, from a file that defines no feature macro (a trap once fallen into: the
   2 MB-page advice used to vanish unless the host defined _DEFAULT_SOURCE first): how a model
   reached memory, as swa_model_load_path tells and as the system can confirm; the resident
   loader allocating through the host's SWA_MALLOC, the file on a 64-byte line; a context's
   buffers on lines whatever the allocator's alignment; the CPU count. */
#include <stdlib.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The host's allocator: counts the bytes the library asked for, and hands out blocks that
   start 16 bytes past a 64-byte line (as glibc's large blocks do), the block malloc gave just
   before them. */
static size_t largest_block, live_blocks;
static void *count_malloc(size_t n)
{
    unsigned char *raw = (unsigned char *)malloc(n + 128), *p;
    if (!raw) return NULL;
    p = raw + 64 - (uintptr_t)raw % 64 + 16;
    memcpy(p - sizeof raw, &raw, sizeof raw);
    if (n > largest_block) largest_block = n;
    live_blocks++;
    return p;
}
static void count_free(void *p)
{
    unsigned char *raw;
    if (!p) return;
    memcpy(&raw, (unsigned char *)p - sizeof raw, sizeof raw);
    live_blocks--;
    free(raw);
}
#define SWA_MALLOC(n) count_malloc(n)
#define SWA_FREE(p) count_free(p)
#define SWA_IMPLEMENTATION
#include "swa.h"

#include <stdarg.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#if defined(__linux__)
#include <unistd.h>
#endif

#define MODEL "examples/models/swa-stories.gguf"   /* 5 MB: more than two 2 MB pages */

static int on_line(const void *p) { return (uintptr_t)p % 64 == 0; }

static long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    long n;
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fclose(f);
    return n;
}

#if defined(__linux__)
/* Linux with transparent huge pages built in has this folder; the advice is accepted there. */
static int kernel_has_thp(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f) return 0;
    fclose(f);
    return 1;
}
#endif

static void test_mapped(void **state)
{
    swa_model *m;
    swa_error err;
    swa_load_path want = SWA_LOAD_MAPPED;
    (void)state;
#if defined(__linux__) && !defined(SWA_NO_MMAP)
    if (kernel_has_thp()) want = SWA_LOAD_MAPPED_HUGE;
#endif
#if defined(SWA_NO_MMAP)
    want = SWA_LOAD_READ;
#endif
    assert_int_equal(swa_model_load(MODEL, &m, &err), SWA_OK);
    if (swa_model_load_path(m) != want)
        fail_msg("load path %s, expected %s", swa_load_path_name(swa_model_load_path(m)), swa_load_path_name(want));
    swa_model_free(m);
}

static void test_resident_uses_host_allocator(void **state)
{
    swa_model *m;
    swa_error err;
    (void)state;
    largest_block = 0;
    assert_int_equal(swa_model_load_resident(MODEL, &m, &err), SWA_OK);
    assert_int_equal(swa_model_load_path(m), SWA_LOAD_READ);
    assert_true(largest_block >= (size_t)file_size(MODEL));
    assert_true(on_line(m->gguf->file.data));   /* as a mapping starts on a page */
    swa_model_free(m);
    assert_int_equal(live_blocks, 0);
}

/* The load-progress callback: non-decreasing fractions ending at 1 for both load paths, and
   a nonzero answer cancels the load, with no model and nothing left allocated. */
typedef struct progress_log { int calls, cancel_at; float last; int decreasing; } progress_log;

static int on_progress(float fraction, void *data)
{
    progress_log *log = (progress_log *)data;
    if (fraction < log->last) log->decreasing = 1;
    log->last = fraction;
    return ++log->calls == log->cancel_at;
}

static void test_load_progress(void **state)
{
    int resident;
    (void)state;
    for (resident = 0; resident < 2; resident++) {
        progress_log log = {0, 0, 0.0f, 0};
        swa_model_params params = swa_model_params_default();
        swa_model *m = NULL;
        swa_error err;
        params.resident = resident;
        params.progress = on_progress;
        params.progress_data = &log;
        assert_int_equal(swa_model_load_with(MODEL, &params, &m, &err), SWA_OK);
        assert_true(log.calls >= 2);   /* the file (5 MB: one step), then the model built */
        assert_false(log.decreasing);
        assert_true(log.last == 1.0f);
        swa_model_free(m);
        memset(&log, 0, sizeof log);
        log.cancel_at = 1;   /* cancelled while the file comes in */
        assert_int_equal(swa_model_load_with(MODEL, &params, &m, &err), SWA_ERR_ABORTED);
        assert_null(m);
        assert_non_null(strstr(err.msg, "loading cancelled"));
        memset(&log, 0, sizeof log);
        log.cancel_at = 2;   /* cancelled once the model is built */
        assert_int_equal(swa_model_load_with(MODEL, &params, &m, &err), SWA_ERR_ABORTED);
        assert_null(m);
        assert_int_equal(live_blocks, 0);
    }
}

static void test_load_from_memory(void **state)
{
    swa_model *m;
    swa_error err;
    long n = file_size(MODEL);
    FILE *f = fopen(MODEL, "rb");
    void *buf = malloc((size_t)n);
    (void)state;
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    assert_int_equal(swa_model_load_memory(buf, (size_t)n, &m, &err), SWA_OK);
    assert_int_equal(swa_model_load_path(m), SWA_LOAD_MEMORY);
    assert_int_equal(swa_model_load_path(NULL), SWA_LOAD_MEMORY);
    swa_model_free(m);
    free(buf);
}

/* Every buffer of a context starts on a 64-byte line, though the allocator's blocks do not (a
   zmm load across two lines costs two): the activations, the quantized and packed tokens, the
   rings, the threads' scratch. */
static void test_context_lines(void **state)
{
    swa_model *m;
    swa_ctx *c;
    swa_error err;
    swa_ctx_config cfg;
    int32_t tokens[40];
    int64_t l;
    int i;
    (void)state;
    assert_int_equal(swa_model_load(MODEL, &m, &err), SWA_OK);
    cfg = swa_ctx_config_default(m);
    cfg.n_threads = 2;
    cfg.n_batch = 40;
    largest_block = 0;
    assert_int_equal(swa_ctx_create(m, &cfg, &c, &err), SWA_OK);
    assert_false(on_line(c));
    for (i = 0; i < 40; i++) tokens[i] = 1 + i;
    assert_int_equal(swa_ctx_eval(c, tokens, 40, NULL, &err), SWA_OK);
    assert_true(on_line(c->x) && on_line(c->xb) && on_line(c->q) && on_line(c->k) && on_line(c->v) && on_line(c->att));
    assert_true(on_line(c->xq) && on_line(c->gate) && on_line(c->up) && on_line(c->logits) && on_line(c->scores));
    assert_true(on_line(c->q8) && on_line(c->kc) && on_line(c->vc));
    assert_true(!c->xpack || on_line(c->xpack));
    assert_true(!c->gemm_scratch || on_line(c->gemm_scratch));
    for (l = 0; l < m->hp.n_layer; l++) assert_true(on_line(c->k_cache[l]) && on_line(c->v_cache[l]));
    assert_true(swa_ctx_memory_size(m, &cfg) >= largest_block);
    swa_ctx_free(c);
    swa_model_free(m);
}

/* A missing file and a folder: SWA_ERR_IO, with the path named. */
static void test_open_errors(void **state)
{
    swa_model *m;
    swa_error err;
    (void)state;
    assert_int_equal(swa_model_load("no-such-model.gguf", &m, &err), SWA_ERR_IO);
    assert_non_null(strstr(err.msg, "no-such-model.gguf"));
    assert_int_equal(swa_model_load("examples", &m, &err), SWA_ERR_IO);
    assert_int_equal(swa_model_load_resident("examples", &m, &err), SWA_ERR_IO);
}

/* The default thread count is the CPUs online, as the system tells it another way: sysconf on
   Linux, NUMBER_OF_PROCESSORS on Windows. */
static void test_cpu_count(void **state)
{
    swa_model *m;
    swa_error err;
    swa_ctx_config cfg;
    long want = -1;
    (void)state;
#if defined(_WIN32)
    if (getenv("NUMBER_OF_PROCESSORS")) want = atol(getenv("NUMBER_OF_PROCESSORS"));
#elif defined(__linux__)
    want = sysconf(_SC_NPROCESSORS_ONLN);
#endif
    assert_int_equal(swa_model_load(MODEL, &m, &err), SWA_OK);
    cfg = swa_ctx_config_default(m);
    printf("online CPUs: %d\n", cfg.n_threads);
    assert_true(cfg.n_threads >= 1);
    if (want > 0) assert_int_equal(cfg.n_threads, want > 256 ? 256 : want);
    swa_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mapped),
        cmocka_unit_test(test_resident_uses_host_allocator),
        cmocka_unit_test(test_load_progress),
        cmocka_unit_test(test_load_from_memory),
        cmocka_unit_test(test_open_errors),
        cmocka_unit_test(test_context_lines),
        cmocka_unit_test(test_cpu_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
