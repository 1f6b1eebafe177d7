// llamacpp_common.h: what llamacpp_embed.cpp and llamacpp_logits.cpp both ask of llama.cpp's
// library: a context that reads a whole text in one batch with flash attention off, and that
// batch. They include it from their own folder, so their build lines name nothing more.
#ifndef LLAMACPP_COMMON_H
#define LLAMACPP_COMMON_H
#include "llama.h"

// Context parameters for a text of n tokens, read in one ubatch (an encoder must).
static llama_context_params one_batch_params(int n)
{
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = cp.n_batch = cp.n_ubatch = n > 128 ? n : 128;
#ifdef LLAMA_STATE_SEQ_FLAGS_SWA_ONLY   // the December 2025 API, whose flash attention is on by default
    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;   // (its CPU path rounds Q to F16)
#endif
    return cp;
}

// tok[0..n) on sequence 0 at positions 0..n-1, every one with its output; llama_batch_free it.
static llama_batch whole_batch(const llama_token *tok, int n)
{
    llama_batch b = llama_batch_init(n, 0, 1);
    for (int i = 0; i < n; i++) {
        b.token[i] = tok[i];
        b.pos[i] = i;
        b.n_seq_id[i] = 1;
        b.seq_id[i][0] = 0;
        b.logits[i] = 1;
    }
    b.n_tokens = n;
    return b;
}
#endif
