/* swa-kbench: what each matrix-product kernel costs, per instruction set, with the rows in L2.

   swa-kbench [--type TYPE] [--kernels K] [-n COLUMNS] [--ms 300]

   For each weight type and each instruction set this CPU runs (or the ones named), times the
   kernels a context calls on about 96 KB of rows that stay in the core's L2 cache, so what is
   measured is the kernel's arithmetic and not the memory system: generation's tiles of one
   token (every row once), a prompt's whole tiles (3 rows x 4 tokens; 32 x 6 for AVX-512's
   float rows), either one through the set's batch product where a context calls that for so
   few tokens (the amx set's Q4_0), and where the set has them its batch products (gemm: AMX)
   of 8 and of 64 tokens. Prints GB/s of weights per core for each (times
   the tokens each row meets), the best of 60 short runs making up about --ms
   milliseconds: on a shared machine, the least disturbed. A generation figure above the DRAM
   bandwidth one core gets means the kernel can keep up with memory. One thread; the
   activations are quantized once, untimed. */
#define _POSIX_C_SOURCE 200809L
#define SWA_INTERNALS   /* the internals it tests: swa.h, "internal declarations" */
#include "swa.h"
#define PROG "swa-kbench"
#include "tools/common/tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next_u32(void) { return (uint32_t)(rng_next(&rng) >> 32); }

/* Random rows of a type whose scales are small finite halves: the kernels' speed does not
   depend on the values, but NaNs or infinities could slow float units. */
static void random_rows(uint32_t type, uint8_t *w, size_t bytes, int64_t n_rows, int64_t n)
{
    size_t i, block = (size_t)swa_type_block_bytes(type);
    int64_t b, blocks = n_rows * (n / swa_type_block_size(type));
    float x;
    for (i = 0; i < bytes; i++) w[i] = (uint8_t)next_u32();
    if (type == SWA_TYPE_F32)
        for (i = 0; i < bytes / 4; i++) { x = (float)(next_u32() % 2001) / 1000.0f - 1.0f; memcpy(w + 4 * i, &x, 4); }
    else if (type == SWA_TYPE_F16 || type == SWA_TYPE_BF16)
        for (i = 0; i < bytes / 2; i++) w[2 * i + 1] = (uint8_t)(0x30 + next_u32() % 8);   /* exponent bits of a small number */
    else
        for (b = 0; b < blocks; b++) {
            uint8_t *blk = w + (size_t)b * block;
            size_t at[4] = {0, 2, block - 4, block - 2};   /* d (and dmin) first, or last (Q6_K, Q3_K, Q2_K) */
            int k;
            for (k = 0; k < 4; k++) blk[at[k] + 1] = (uint8_t)(0x10 + next_u32() % 8);
            if (type == SWA_TYPE_MXFP4) blk[0] = (uint8_t)(120 + next_u32() % 8);   /* E8M0: 2^-8 .. 2^-1 */
        }
}

/* GB/s of weights of one kernel over the rows, times the tokens each row meets: the type's
   tiles of nt tokens, the best of 60 short runs (on a shared machine, those no other process held up). */
static double time_kernel(const swa__kernels *k, uint32_t type, const uint8_t *w, size_t row_bytes, int64_t n_rows,
                          const uint8_t *x, size_t x_stride, int nt, int64_t n, float *y, double ms)
{
    double best = 0;
    int rep;
    for (rep = 0; rep < 60; rep++) {
        double t0 = now(), t;
        int64_t passes = 0;
        do {
            swa__dot_rows(&k->type[type], w, row_bytes, n_rows, x, x_stride, nt, n, y, n_rows);
            passes++;
        } while ((t = now() - t0) < ms / 60000.0);
        if ((double)passes * (double)nt * (double)n_rows * (double)row_bytes / t / 1e9 > best)
            best = (double)passes * (double)nt * (double)n_rows * (double)row_bytes / t / 1e9;
    }
    return best;
}

/* The same for the set's batch product of nt tokens (packed once, untimed); 0 without one. */
static double time_gemm(const swa__kernels *k, uint32_t type, const uint8_t *w, size_t row_bytes, int64_t n_rows,
                        const uint8_t *x, size_t x_stride, int nt, int64_t n, float *y, double ms)
{
    uint64_t pack_bytes, scratch_bytes;
    void *pack, *scratch;
    double best = 0;
    int rep;
    if (!k->type[type].gemm) return 0;
    k->gemm_memory(nt, n, &pack_bytes, &scratch_bytes);
    pack = malloc((size_t)pack_bytes);
    scratch = malloc((size_t)scratch_bytes);
    if (!pack || !scratch) fail("out of memory");
    (swa__act_kind(type) == SWA__ACT_Q8 ? k->pack_q8 : k->pack_q8k)(x, x_stride, nt, n, pack);
    for (rep = 0; rep < 60; rep++) {
        double t0 = now(), t;
        int64_t passes = 0;
        do {
            k->type[type].gemm(w, row_bytes, n_rows, pack, nt, n, y, n_rows, scratch);
            passes++;
        } while ((t = now() - t0) < ms / 60000.0);
        if ((double)passes * (double)nt * (double)n_rows * (double)row_bytes / t / 1e9 > best)
            best = (double)passes * (double)nt * (double)n_rows * (double)row_bytes / t / 1e9;
    }
    free(pack);
    free(scratch);
    return best;
}

/* What a context calls for nt tokens: the batch product from the type's gemm_from on, else
   the tiles. */
static double time_tokens(const swa__kernels *k, uint32_t type, const uint8_t *w, size_t row_bytes, int64_t n_rows,
                          const uint8_t *x, size_t x_stride, int nt, int64_t n, float *y, double ms)
{
    if (k->type[type].gemm && nt >= k->type[type].gemm_from)
        return time_gemm(k, type, w, row_bytes, n_rows, x, x_stride, nt, n, y, ms);
    return time_kernel(k, type, w, row_bytes, n_rows, x, x_stride, nt, n, y, ms);
}

/* A figure, or a dash where the set has no such kernel. */
static void print_figure(double gbs)
{
    if (gbs > 0) printf(" %.1f |", gbs);
    else printf(" - |");
}

static void usage(FILE *f)
{
    fprintf(f, "usage: swa-kbench [--type f32|f16|bf16|q8_0|q4_0|iq4_nl|mxfp4|q4_k|...] [--kernels ref|avx2|avx-vnni|avx512|amx|neon]\n"
               "                  [-n COLUMNS] [--ms MILLISECONDS]\n"
               "  --type T      one weight type (default: every type the library computes with)\n"
               "  --kernels K   one instruction set (default: every one this CPU runs, the reference included)\n"
               "  -n N          row length (default 2048, a multiple of 256)\n"
               "  --ms M        time per measurement (default 300)\n");
}

int main(int argc, char **argv)
{
    const char *only_type = NULL;
    int32_t only_kernels = -1, level;
    int64_t n = 2048;
    double ms = 300;
    uint32_t type;
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
        if (!strcmp(a, "--version")) { printf("swa-kbench %s\n", swa_version()); return 0; }
        if (!v) { fprintf(stderr, "swa-kbench: %s needs a value or is unknown\n", a); usage(stderr); return 2; }
        i++;
        if (!strcmp(a, "--type")) only_type = v;
        else if (!strcmp(a, "--kernels") && swa_kernels_from_name(v) > 0) only_kernels = swa_kernels_from_name(v);
        else if (!strcmp(a, "-n") && atoll(v) > 0 && atoll(v) % 256 == 0) n = atoll(v);
        else if (!strcmp(a, "--ms") && atof(v) > 0) ms = atof(v);
        else { fprintf(stderr, "swa-kbench: bad flag or value: %s %s\n", a, v); usage(stderr); return 2; }
    }
    if (only_type) {
        for (type = 0; type < SWA__N_TYPES; type++)
            if (swa__type(type) && swa__type(type)->dequant && !strcmp(swa_type_name(type), only_type)) break;
        if (type == SWA__N_TYPES) {
            char upper[16];
            size_t c;
            for (c = 0; only_type[c] && c + 1 < sizeof upper; c++)
                upper[c] = (char)(only_type[c] >= 'a' && only_type[c] <= 'z' ? only_type[c] - 32 : only_type[c]);
            upper[c] = 0;
            for (type = 0; type < SWA__N_TYPES; type++)
                if (swa__type(type) && swa__type(type)->dequant && !strcmp(swa_type_name(type), upper)) break;
            if (type == SWA__N_TYPES) { fprintf(stderr, "swa-kbench: no kernels for type \"%s\"\n", only_type); return 2; }
        }
    }
    printf("| type | kernels | generation GB/s | prompt GB/s x tokens (whole tiles) |"
           " batch of 8, GB/s x tokens (gemm) | batch of 64, GB/s x tokens (gemm) |\n| --- | --- | --- | --- | --- | --- |\n");
    for (type = 0; type < SWA__N_TYPES; type++) {
        const swa__type_info *ti = swa__type(type);
        char lower[16];
        size_t row_bytes, c;
        int64_t n_rows;
        uint8_t *w, *x;
        float *xf, *y;
        if (!ti || !ti->dequant) continue;
        for (c = 0; ti->name[c] && c + 1 < sizeof lower; c++)
            lower[c] = (char)(ti->name[c] >= 'A' && ti->name[c] <= 'Z' ? ti->name[c] + 32 : ti->name[c]);
        lower[c] = 0;
        if (only_type && strcmp(only_type, lower)) continue;
        row_bytes = (size_t)(n / ti->block_size * ti->block_bytes);
        n_rows = (int64_t)(96 * 1024 / row_bytes / 12 * 12);   /* whole tiles of 3 and of 4 rows */
        if (n_rows < 12) n_rows = 12;
        w = (uint8_t *)malloc(row_bytes * (size_t)n_rows);
        x = (uint8_t *)malloc(64 * swa__act_bytes(ti->act, n + 255));
        xf = (float *)malloc(sizeof(float) * (size_t)n);
        y = (float *)malloc(sizeof(float) * 64 * (size_t)n_rows);
        if (!w || !x || !xf || !y) { fprintf(stderr, "swa-kbench: out of memory\n"); return 1; }
        random_rows(type, w, row_bytes * (size_t)n_rows, n_rows, n);
        for (level = SWA_KERNELS_REF; level <= SWA__KERNELS_LAST; level++) {
            swa__kernels k;
            size_t x_stride = swa__act_bytes(ti->act, n + 255);
            int t;
            int64_t j;
            if (swa__kernels_resolve(level) != level || (only_kernels > 0 && level != only_kernels)) continue;
            swa__kernels_setup(&k, level);
            for (t = 0; t < 64; t++) {
                for (j = 0; j < n; j++) xf[j] = (float)(next_u32() % 2001) / 1000.0f - 1.0f;
                if (ti->act == SWA__ACT_Q8) swa__quantize_q8g(k.quantize_q8, xf, x + (size_t)t * x_stride, n);
                else if (ti->act == SWA__ACT_Q8K) k.quantize_q8k(xf, x + (size_t)t * x_stride, n);
                else memcpy(x + (size_t)t * x_stride, xf, sizeof(float) * (size_t)n);
            }
            printf("| %s | %s |", ti->name, k.name);
            print_figure(time_tokens(&k, type, w, row_bytes, n_rows, x, x_stride, 1, n, y, ms));
            print_figure(time_tokens(&k, type, w, row_bytes, n_rows, x, x_stride, k.type[type].tile_tokens, n, y, ms));
            print_figure(time_gemm(&k, type, w, row_bytes, n_rows, x, x_stride, 8, n, y, ms));
            print_figure(time_gemm(&k, type, w, row_bytes, n_rows, x, x_stride, 64, n, y, ms));
            printf("\n");
            fflush(stdout);
        }
        free(w); free(x); free(xf); free(y);
    }
    return 0;
}
