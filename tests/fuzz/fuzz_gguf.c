/* libFuzzer harness: any bytes through the GGUF reader, the model loader, the vocabulary, and,
   when a model loads, a context and a short evaluation. Nothing may crash or read outside the
   buffer (run under AddressSanitizer and UndefinedBehaviorSanitizer by `make fuzz`). */
#include "swa.h"
#include <stdlib.h>
#include <string.h>

static void walk_values(const swa_gguf *g)
{
    int64_t i;
    for (i = 0; i < swa_gguf_kv_count(g); i++) {
        swa_gguf_value v = swa_gguf_kv_value(g, i), e;
        int64_t k;
        double f;
        swa_str s;
        swa_gguf_value_int(&v, &k);
        swa_gguf_value_float(&v, &f);
        swa_gguf_value_str(&v, &s);
        if (v.type == SWA_GGUF_ARRAY && v.n > 0) {
            swa_gguf_value_at(&v, 0, &e);
            swa_gguf_value_at(&v, v.n - 1, &e);
            if (e.type == SWA_GGUF_ARRAY && e.n > 0) swa_gguf_value_at(&e, e.n - 1, &e);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* a private, exactly sized and aligned copy, so reading past the end is caught */
    uint8_t *buf = (uint8_t *)malloc(size ? size : 1);
    swa_gguf *g;
    swa_model *m;
    memcpy(buf, data, size);
    if (swa_gguf_open_memory(buf, size, &g, NULL) == SWA_OK) {
        swa_vocab *v;
        walk_values(g);
        if (swa_vocab_load(g, &v, NULL) == SWA_OK) swa_vocab_free(v);
        swa_gguf_close(g);
    }
    if (swa_model_load_memory(buf, size, &m, NULL) == SWA_OK) {
        swa_ctx_config cfg;
        swa_ctx *c;
        memset(&cfg, 0, sizeof cfg);
        cfg.n_threads = 1;
        cfg.n_ctx = 16;
        cfg.n_batch = 4;
        /* hostile hyperparameters can ask for a huge context: only evaluate modest ones */
        if (swa_ctx_memory_size(m, &cfg) < ((size_t)64 << 20) && swa_ctx_create(m, &cfg, &c, NULL) == SWA_OK) {
            int32_t tok[3] = {0, 1, 2};
            swa_ctx_eval(c, tok, 3, NULL, NULL);
            swa_ctx_free(c);
        }
        swa_model_free(m);
    }
    free(buf);
    return 0;
}
