/* libFuzzer harness: any bytes as a snapshot, loaded into one sequence or all of a context
   whose sequences hold tokens. Half the inputs get their checksum made right first, so that the
   fuzzer reaches the checks behind it. Whatever the bytes, a load that fails must leave the
   context exactly as it was (its own snapshot, byte for byte), and nothing may crash or read
   outside the input (AddressSanitizer and UndefinedBehaviorSanitizer, by `make fuzz`).

   The model is SWA_FUZZ_MODEL (a small GGUF file: `make fuzz` writes one with a windowed and a
   global layer). Started with SWA_FUZZ_SEEDS=DIR, it first writes into DIR the context's own
   snapshots, of one sequence and of all, as the corpus to start from. */
#define SWA_INTERNALS   /* swa__xxh64_of, to make an input's checksum right */
#include "swa.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static swa_model *model;
static swa_ctx *ctx;
static uint8_t *before;         /* the context's state, as its snapshot of every sequence */
static size_t before_size;

/* Sequence 0 past the window, sequence 1 a few tokens, sequence 2 empty. */
static void fill(void)
{
    int32_t tok[40], seq[40];
    swa_batch b;
    int i;
    for (i = 0; i < 40; i++) {
        tok[i] = (i * 7 + 3) % 200;
        seq[i] = i < 30 ? 0 : 1;
    }
    memset(&b, 0, sizeof b);
    b.n = 40;
    b.token = tok;
    b.seq = seq;
    swa_ctx_reset(ctx);
    if (swa_ctx_decode(ctx, &b, NULL, NULL) != SWA_OK) abort();
}

static uint8_t *snapshot(int32_t seq, size_t *size)
{
    uint8_t *p;
    *size = swa_state_size(ctx, seq);
    p = (uint8_t *)malloc(*size);
    if (!p || swa_state_save(ctx, seq, p, *size, NULL, NULL) != SWA_OK) abort();
    return p;
}

/* An input: the flag byte (see LLVMFuzzerTestOneInput), then the snapshot. */
static void write_seed(const char *dir, const char *name, uint8_t flags, const uint8_t *p, size_t n)
{
    char path[4096];
    FILE *f;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!(f = fopen(path, "wb")) || fwrite(&flags, 1, 1, f) != 1 || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "fuzz_state: cannot write %s\n", path);
        exit(1);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *path = getenv("SWA_FUZZ_MODEL"), *seeds = getenv("SWA_FUZZ_SEEDS");
    swa_ctx_config cfg;
    swa_error err;
    (void)argc;
    (void)argv;
    if (!path) {
        fprintf(stderr, "fuzz_state: set SWA_FUZZ_MODEL to a small GGUF model\n");
        exit(1);
    }
    memset(&cfg, 0, sizeof cfg);
    cfg.n_seq = 3;
    cfg.n_ctx = 48;
    cfg.n_rewind = 2;
    cfg.n_threads = 1;
    if (swa_model_load(path, &model, &err) != SWA_OK || swa_ctx_create(model, &cfg, &ctx, &err) != SWA_OK) {
        fprintf(stderr, "fuzz_state: %s\n", err.msg);
        exit(1);
    }
    fill();
    before = snapshot(-1, &before_size);
    if (seeds) {
        size_t n;
        uint8_t *one = snapshot(0, &n);
        write_seed(seeds, "all", 0, before, before_size);     /* into every sequence */
        write_seed(seeds, "one", 4, one, n);                  /* into sequence 1 */
        free(one);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the first byte: bit 0 makes the checksum right, bits 1-2 pick the sequence (-1, 0, 1, 2) */
    uint8_t *buf, *now;
    size_t now_size;
    int32_t seq;
    swa_status s;
    if (size < 1) return 0;
    seq = (int32_t)((data[0] >> 1) & 3) - 1;
    buf = (uint8_t *)malloc(size - 1 ? size - 1 : 1);   /* exactly sized: reading past it is caught */
    memcpy(buf, data + 1, size - 1);
    if ((data[0] & 1) && size - 1 >= 16) {
        uint64_t sum = swa__xxh64_of(buf, size - 9, 0);
        memcpy(buf + size - 9, &sum, 8);
    }
    s = swa_state_load(ctx, seq, buf, size - 1, NULL);
    if (s != SWA_OK) {
        now = snapshot(-1, &now_size);
        if (now_size != before_size || memcmp(now, before, now_size) != 0) {
            fprintf(stderr, "fuzz_state: a refused snapshot (status %d) changed the context\n", (int)s);
            abort();
        }
        free(now);
    } else {
        int32_t t = 5;   /* what loaded can be evaluated on */
        swa_batch b;
        memset(&b, 0, sizeof b);
        b.n = 1;
        b.token = &t;
        b.seq = seq >= 0 ? &seq : NULL;
        swa_ctx_decode(ctx, &b, NULL, NULL);
        fill();
    }
    free(buf);
    return 0;
}
