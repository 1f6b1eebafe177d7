/* libFuzzer harness: any bytes through the tokenizer (with and without BOS and special tokens)
   and back through the streaming decoder, on the vocabulary in the GGUF file named by
   SWA_FUZZ_VOCAB (`make fuzz` uses the shipped model's). Without SWA_TOKENIZE_SPECIAL, decoding
   must give the bytes back exactly (a vocabulary with byte fallback and no user-defined
   tokens, as the shipped one, can spell anything), unless the text holds "▁" itself, which
   SentencePiece reads as a space by design. A byte-level BPE vocabulary (`make fuzz` also runs
   llama.cpp's llama-bpe one when ../shared is there) spells every byte, "▁" included, when its 256
   byte characters are all normal tokens (DeepSeek LLM's are not: its "ÿ" is user-defined). */
#include "swa.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static swa_gguf *gguf;
static swa_vocab *vocab;
static int bpe;                    /* tokenizer.ggml.model "gpt2": byte-level BPE */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *path = getenv("SWA_FUZZ_VOCAB");
    swa_error err;
    (void)argc; (void)argv;
    if (!path || swa_gguf_open(path, &gguf, &err) != SWA_OK || swa_vocab_load(gguf, &vocab, &err) != SWA_OK) {
        fprintf(stderr, "fuzz_tokenizer: set SWA_FUZZ_VOCAB to a GGUF file with a llama vocabulary\n");
        exit(1);
    }
    {
        int64_t k = swa_gguf_kv_find(gguf, "tokenizer.ggml.model");
        swa_gguf_value v;
        swa_str model;
        if (k >= 0) {
            v = swa_gguf_kv_value(gguf, k);
            bpe = swa_gguf_value_str(&v, &model) == SWA_OK && model.len == 4 && !memcmp(model.ptr, "gpt2", 4);
        }
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int32_t *ids = (int32_t *)malloc((size + 2) * 2 * sizeof(int32_t));
    size_t n = 0, i;
    int flags;
    char *text = (char *)malloc(size + 64);
    int literal_space_mark = 0;
    for (i = 0; i + 2 < size && !bpe; i++) literal_space_mark |= !memcmp(data + i, "\xe2\x96\x81", 3);
    for (flags = 0; flags < 4; flags++) {
        swa_decoder d;
        size_t len = 0;
        if (swa_tokenize(vocab, (const char *)data, size, flags, ids, (size + 2) * 2, &n, NULL) != SWA_OK) abort();
        swa_decoder_init(&d, vocab);
        for (i = 0; i < n; i++) {
            if (ids[i] < 0 || ids[i] >= swa_vocab_size(vocab)) abort();
            len += swa_decoder_push(&d, ids[i], text + len, size + 64 - len);
        }
        len += swa_decoder_flush(&d, text + len, size + 64 - len);
        if (!(flags & SWA_TOKENIZE_SPECIAL) && !literal_space_mark && (len != size || memcmp(text, data, size) != 0))
            abort();
    }
    free(text);
    free(ids);
    return 0;
}
