// llamacpp_embed: the pooled, normalized embedding llama.cpp's library computes for a text, for
// cross-checking swa_ctx_embed and swa-embedding on the same file (tests/data/embed-*.ref). Not
// built by the Makefile (it needs a llama.cpp build); against the December 2025 tree that
// tools/bench/build-llamacpp.sh exports (OUT below is its OUT_DIR), in one line:
//   g++ -O2 -std=c++17 -I$OUT/src/llama/llama.cpp/include -I$OUT/src/ml/backend/ggml/ggml/include
//       tools/reference/llamacpp_embed.cpp -o llamacpp_embed -L$OUT/build/bin -lllama -lggml -lggml-base
//       -Wl,-rpath,$OUT/build/bin
//   llamacpp_embed MODEL.gguf TEXT
// The text is tokenized as llama-embedding does (the vocabulary's BOS/EOS, control tokens parsed)
// and read in one batch on sequence 0 with the embeddings on, flash attention off; for each of
// mean, last and cls pooling it prints the pooled embedding scaled to unit euclidean length (in double,
// as common_embd_normalize does with 2). Output, on stdout:
//   tokens: N id id ...
//   mean: D v v ...        (%.9g: each float exactly)
//   last: D v v ...
//   cls: D v v ...
#include "llama.h"
#include "llamacpp_common.h"
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

static bool embed(llama_model *m, const std::vector<llama_token> &tok, enum llama_pooling_type pooling, const char *name)
{
    int n = (int)tok.size();
    llama_context_params cp = one_batch_params(n);
    cp.embeddings = true;
    cp.pooling_type = pooling;
    llama_context *c = llama_init_from_model(m, cp);
    if (!c) return false;
    llama_batch b = whole_batch(tok.data(), n);
    bool ok = llama_decode(c, b) == 0;
    const float *e = ok ? llama_get_embeddings_seq(c, 0) : nullptr;
    if (e) {
        int d = llama_model_n_embd(m);
        double sum = 0.0;
        for (int i = 0; i < d; i++) sum += (double)e[i] * e[i];
        double scale = sum > 0.0 ? 1.0 / std::sqrt(sum) : 0.0;
        printf("%s: %d", name, d);
        for (int i = 0; i < d; i++) printf(" %.9g", (double)(float)(e[i] * scale));
        printf("\n");
    }
    llama_batch_free(b);
    llama_free(c);
    return e != nullptr;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: llamacpp_embed MODEL.gguf TEXT\n");
        return 2;
    }
    llama_backend_init();
    llama_model *m = llama_model_load_from_file(argv[1], llama_model_default_params());
    if (!m) return 4;
    const llama_vocab *v = llama_model_get_vocab(m);
    int len = (int)strlen(argv[2]);
    std::vector<llama_token> tok(len + 8);
    int n = llama_tokenize(v, argv[2], len, tok.data(), (int)tok.size(), true, true);
    if (n <= 0) return 5;
    tok.resize(n);
    printf("tokens: %d", n);
    for (int i = 0; i < n; i++) printf(" %d", tok[i]);
    printf("\n");
    if (!embed(m, tok, LLAMA_POOLING_TYPE_MEAN, "mean") || !embed(m, tok, LLAMA_POOLING_TYPE_LAST, "last") ||
        !embed(m, tok, LLAMA_POOLING_TYPE_CLS, "cls"))
        return 6;
    llama_model_free(m);
    return 0;
}
