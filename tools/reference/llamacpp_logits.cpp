// llamacpp_logits: every position's logits from llama.cpp's library, for cross-checking swa.h on
// the same file. Not built by the Makefile (it needs a llama.cpp build):
//   g++ -O2 -std=c++17 -I$LLAMA/include -I$LLAMA/ggml/include tools/reference/llamacpp_logits.cpp -o llamacpp_logits
//       -L$LLAMA/build/bin -lllama -lggml -lggml-base -Wl,-rpath,$LLAMA/build/bin   (one line)
//   llamacpp_logits MODEL.gguf N TOKENS.bin OUT.bin    (int32 tokens in; float32 [N][n_vocab] out)
// The cache is F32 and flash attention off so that only the arithmetic differs. Builds against
// the February 2025 tree as above, or the December 2025 one with tools/bench/build-llamacpp.sh.
#include "llama.h"
#include "llamacpp_common.h"
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: llamacpp_logits MODEL.gguf N TOKENS.bin OUT.bin\n");
        return 2;
    }
    int n = atoi(argv[2]);
    std::vector<int32_t> tok(n > 0 ? n : 1);
    FILE *f = fopen(argv[3], "rb");
    if (n <= 0 || !f || fread(tok.data(), 4, n, f) != (size_t)n) return 3;
    fclose(f);
    llama_backend_init();
    llama_model *m = llama_model_load_from_file(argv[1], llama_model_default_params());
    if (!m) return 4;
    llama_context_params cp = one_batch_params(n);
    cp.type_k = GGML_TYPE_F32;
    cp.type_v = GGML_TYPE_F32;
    llama_context *c = llama_init_from_model(m, cp);
    if (!c) return 5;
    llama_batch b = whole_batch(tok.data(), n);
    if (llama_decode(c, b)) return 6;
    int V = llama_vocab_n_tokens(llama_model_get_vocab(m));
    FILE *o = fopen(argv[4], "wb");
    if (!o) return 7;
    for (int i = 0; i < n; i++) fwrite(llama_get_logits_ith(c, i), 4, V, o);
    fclose(o);
    llama_batch_free(b);
    llama_free(c);
    llama_model_free(m);
    return 0;
}
