/* targets.h - what swa-quantize and swa-mkmodel can be asked to write: the weight types and
   llama.cpp's named mixes, each with the type of most matrices and llama.cpp's file type number
   (LLAMA_FTYPE_MOSTLY_*, stored as general.file_type), and llama.cpp's fallback for rows that are
   not whole blocks of a type. Include after tools/common/gguf_writer.h. */
#ifndef SWA_TOOLS_TARGETS_H
#define SWA_TOOLS_TARGETS_H
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { FT_Q4_0 = 2, FT_Q4_1 = 3, FT_Q8_0 = 7, FT_Q5_0 = 8, FT_Q5_1 = 9, FT_Q2_K = 10, FT_Q3_K_S = 11, FT_Q3_K_M = 12,
       FT_Q3_K_L = 13, FT_Q4_K_S = 14, FT_Q4_K_M = 15, FT_Q5_K_S = 16, FT_Q5_K_M = 17, FT_Q6_K = 18, FT_IQ4_NL = 25,
       FT_IQ4_XS = 30 };

typedef struct target { const char *name; uint32_t type, file_type; } target;

/* q3_k, q4_k and q5_k stand for the _m mixes, as in llama-quantize. */
static const target targets[] = {
    {"f32", GW_F32, 0},             {"f16", GW_F16, 1},             {"bf16", GW_BF16, 32},
    {"q4_0", GW_Q4_0, FT_Q4_0},     {"q4_1", GW_Q4_1, FT_Q4_1},     {"q5_0", GW_Q5_0, FT_Q5_0},
    {"q5_1", GW_Q5_1, FT_Q5_1},     {"q8_0", GW_Q8_0, FT_Q8_0},     {"q2_k", GW_Q2_K, FT_Q2_K},
    {"q3_k_s", GW_Q3_K, FT_Q3_K_S}, {"q3_k_m", GW_Q3_K, FT_Q3_K_M}, {"q3_k_l", GW_Q3_K, FT_Q3_K_L},
    {"q4_k_s", GW_Q4_K, FT_Q4_K_S}, {"q4_k_m", GW_Q4_K, FT_Q4_K_M}, {"q5_k_s", GW_Q5_K, FT_Q5_K_S},
    {"q5_k_m", GW_Q5_K, FT_Q5_K_M}, {"q6_k", GW_Q6_K, FT_Q6_K},     {"iq4_nl", GW_IQ4_NL, FT_IQ4_NL},
    {"iq4_xs", GW_IQ4_XS, FT_IQ4_XS}, {"q4_k", GW_Q4_K, FT_Q4_K_M}, {"q5_k", GW_Q5_K, FT_Q5_K_M},
    {"q3_k", GW_Q3_K, FT_Q3_K_M},
};
#define TARGET_NAMES "f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q2_k, q3_k_s, q3_k_m (q3_k), q3_k_l, " \
                     "q4_k_s, q4_k_m (q4_k), q5_k_s, q5_k_m (q5_k), q6_k, iq4_nl or iq4_xs, in any case (Q4_K_M), " \
                     "or llama-quantize's number for it (15)"

/* The target of that name in any case (llama-quantize prints Q4_K_M, we q4_k_m), or of that
   llama.cpp file type number (llama-quantize takes 15 for Q4_K_M); NULL for none. */
static const target *target_find(const char *name)
{
    size_t i, k;
    unsigned long ft = 0;
    for (i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        for (k = 0; name[k] && tolower((unsigned char)name[k]) == targets[i].name[k]; k++) continue;
        if (!name[k] && !targets[i].name[k]) return &targets[i];
    }
    for (k = 0; name[k] >= '0' && name[k] <= '9' && k < 4; k++) ft = ft * 10 + (unsigned long)(name[k] - '0');
    for (i = 0; k > 0 && !name[k] && i < sizeof targets / sizeof targets[0]; i++)
        if (targets[i].file_type == ft) return &targets[i];   /* the first: q4_k_m before q4_k */
    return NULL;
}

static int is_quantized(uint32_t t) { return t != GW_F32 && t != GW_F16 && t != GW_BF16; }

/* The type rows of n values get instead of `type` when they are not whole blocks of it, as
   llama.cpp falls back: Q2_K, Q3_K and IQ4_XS to IQ4_NL, Q4_K to Q5_0, Q5_K to Q5_1, Q6_K to
   Q8_0; then F16 when the rows are not whole blocks of 32 either (where llama.cpp stops). */
static uint32_t fallback_type(uint32_t type, int64_t n)
{
    uint32_t t = type;
    if (gw_row_bytes(t, n)) return t;
    switch (t) {
    case GW_Q2_K: case GW_Q3_K: case GW_IQ4_XS: t = GW_IQ4_NL; break;
    case GW_Q4_K: t = GW_Q5_0; break;
    case GW_Q5_K: t = GW_Q5_1; break;
    case GW_Q6_K: t = GW_Q8_0; break;
    default: break;
    }
    return gw_row_bytes(t, n) ? t : GW_F16;
}
#endif
