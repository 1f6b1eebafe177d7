/* swa.h - v0.11.0 - CPU inference for Mistral-style transformers with a
   rolling-buffer KV cache and sliding-window attention.  MIT licence at end of file.

   Do this in exactly one C or C++ file:      #define SWA_IMPLEMENTATION
                                              #include "swa.h"
   Every other file includes "swa.h" plainly. Link with -lm -lpthread (on Windows nothing
   more: the pool uses Win32 threads).

CONTENTS (each a "==== name ====" banner below; the sets of SIMD kernels come last, so that
a reader following a token from the file to its logits never crosses them)
    public API              status and errors, tensor types, GGUF reader, model, context and
                            sequences, tokenizer, chat templates, sampler
    internal declarations   includes, the instruction sets the compiler can build, the kernel
                            table's types (SWA_INTERNALS shows them to the kernel tests)
    utilities, platform     errors, checked sizes, half floats, mapping a file; threads, locks,
                            atomics and the pool's state
    GGUF reader             header, metadata and tensor table, every size checked
    weight types            activation blocks; per type its scalar reference kernels (dot, rows
                            to float); attention and element-wise references; the descriptors
    model                   the architecture table, hyperparameters, tensors by name and shape
    context                 configuration, memory, the per-layer rings and where a position lives
    the forward pass        matrix products over the pool, attention over the rings, a layer, a
                            chunk of tokens, the logits
    sequences, snapshots    copy, reset, rewind; snapshots to buffers and files; abort, threads
    thread pool             workers that claim shares of a task
    tokenizer               Unicode tables, pre-tokenizer expressions, SentencePiece and byte-level BPE
    JSON and text buffers   a checked JSON reader (one allocation per tree) and a growing buffer
    chat templates, sampler
    SIMD kernels            AVX2 + FMA + F16C, AVX-VNNI, AVX-512 + VNNI, AMX (beside it the order of
                            its sums, as a scalar reference), NEON
    dispatch                what the CPU runs; each set's kernels filled in by name, over its parent's

QUICK START
    #define SWA_IMPLEMENTATION          // in exactly one .c file
    #include "swa.h"
    #include <stdio.h>

    int main(int argc, char **argv) {
        const char *path = argc > 1 ? argv[1] : "examples/models/swa-stories.gguf";
        swa_model *model = NULL; const swa_vocab *vocab; swa_ctx *ctx = NULL; swa_sampler *sampler = NULL;
        swa_error err; swa_decoder dec; const float *logits; int32_t tok[64]; size_t n;
        swa_sampler_config sc = swa_sampler_config_default();  // temperature 0.8, top-k 40, ...
        char text[64];
        sc.seed = 1234;                                        // any field, by name
        if (swa_model_load(path, &model, &err) || swa_model_vocab(model, &vocab, &err) ||
            swa_ctx_create(model, NULL, &ctx, &err) ||
            swa_sampler_create(&sc, swa_vocab_size(vocab), &sampler, &err) ||
            swa_tokenize(vocab, "Once upon a time", 16, SWA_TOKENIZE_ADD_BOS, tok, 64, &n, &err)) {
            fprintf(stderr, "%s\n", err.msg);                  // what failed, and why
            return 1;
        }
        swa_decoder_init(&dec, vocab);
        for (size_t i = 0; i < n; i++)                         // the prompt, through the decoder too
            fwrite(text, 1, swa_decoder_push(&dec, tok[i], text, sizeof text), stdout);
        for (int i = 0; i < 100 && swa_ctx_eval(ctx, tok, n, &logits, &err) == SWA_OK; i++, n = 1) {
            tok[0] = swa_sampler_sample(sampler, logits);      // and remembered for the penalty
            if (tok[0] == swa_vocab_eos(vocab)) break;
            fwrite(text, 1, swa_decoder_push(&dec, tok[0], text, sizeof text), stdout);
        }
        fwrite(text, 1, swa_decoder_flush(&dec, text, sizeof text), stdout);
        putchar('\n');
        swa_sampler_free(sampler); swa_ctx_free(ctx); swa_model_free(model);
        return 0;
    }
    (examples/simple.c is this program.)

CONFIGURATION (define before the implementation include)
    SWA_STATIC         make every public function static (SWADEF = static)
    SWA_NO_MMAP        read the file into one allocation instead of mapping it
    SWA_MALLOC(n)      allocator, default malloc; define SWA_FREE(p) with it
    SWA_FREE(p)        deallocator, default free
    SWA_ASSERT(x)      internal invariant check, default assert(x)
    SWA_NO_THREADS     compile the thread pool out; every context computes on the caller's thread
    SWA_NO_SIMD        compile out every SIMD kernel (SWA_NO_AVX2, SWA_NO_AVX_VNNI, SWA_NO_AVX512,
                       SWA_NO_AMX, SWA_NO_NEON: one of them; SWA_NO_AVX2 takes the other x86
                       ones with it, SWA_NO_AVX512 the AMX set)
    SWA_NO_TOKENIZER   compile the tokenizer out: swa_vocab_load fails with SWA_ERR_UNSUPPORTED,
                       a model has no vocabulary, and the tokenize/decode calls are not declared
    SWA_NO_SAMPLER     compile the sampler out (swa_argmax stays)
    SWA_NO_STDIO       no files but the model's: swa_state_save_file and swa_state_load_file are
                       not declared (snapshots still go to and from buffers), and no stdio call
                       touches a file. <stdio.h> stays for snprintf and vsnprintf into error
                       messages; the library never uses a FILE *, and reads and writes files
                       with the OS's open/read/write/mmap (CreateFile on Windows)

THE WINDOW
    Layer l keeps the keys and values of its last W_l positions only: position i lives in slot
    i mod W_l, and a query at position i attends to keys j with i - W_l < j <= i (W_l tokens,
    itself included, as in Mistral's reference code). The window comes from the GGUF key
    {arch}.attention.sliding_window: a number for the windowed layers, or an array with one
    entry per layer where 0 marks a full-attention (global) layer. A number applies to the
    layers {arch}.attention.sliding_window_pattern names (a period p: l mod p < p - 1; or one
    bool per layer), else to the architecture's pattern (Gemma 2: every other layer from the
    first; Gemma 3: five of six), else to every layer. A window longer than the trained
    context ({arch}.context_length) is full attention. A global layer's cache holds
    swa_ctx_config.n_ctx positions and evaluation past them fails with SWA_ERR_CONTEXT_FULL,
    unless swa_ctx_config.n_sink > 0 asks for attention sinks (an approximation: the first
    n_sink positions and a ring of the last n_ctx - n_sink). swa_ctx_config.window overrides the
    model's window for every layer (as a sliding window).
    Two more masks keep the same ring of W slots. Llama 4's chunked layers (W from
    llama4.attention.chunk_size, default 8192) let position i see the keys of its own chunk:
    i - i mod W <= j <= i, at most W of them. EmbeddingGemma is an encoder: its windowed layers
    see |i - j| <= W/2 on both sides and its global ones the whole text, so a text is evaluated
    at once, from position 0 (swa_ctx_embed), in one chunk of at most n_batch tokens.

MEMORY
    Weights are used where they lie: in the file mapping (advised to use 2 MB pages), or in the
    caller's buffer for swa_model_load_memory. A context allocates at create time (cache +
    scratch, and per-thread scratch apart; swa_ctx_memory_size tells how much) and never per
    token; generation can go on forever with a window, in constant memory.

SEQUENCES
    A context holds swa_ctx_config.n_seq sequences, each with its own rings and position.
    swa_ctx_decode evaluates a batch of tokens from several of them in one forward pass, so each
    weight is read once per batch. Sequences can be copied (fork a prompt), reset, rewound by up
    to n_rewind + 1 tokens (n_rewind extra ring slots), and saved to or restored from a snapshot
    whose size is fixed by the window. An abort callback is asked between layers; a chunk's keys
    go into the rings only once it is through, so an aborted evaluation leaves no trace.

THREADS
    A model is immutable after load and may be shared by any number of contexts and threads.
    A context is used by one thread at a time. Each context owns a pool of n_threads - 1
    workers (pthreads, or Win32 threads on Windows), started in swa_ctx_create and joined in swa_ctx_free; they split matrix
    rows and attention heads so that every output is computed by one thread with the same code:
    the logits are bit-identical for any thread count. A share no worker has started is taken
    by the calling thread, so a core held by another process delays a token less.

TOKENIZER AND SAMPLER
    SentencePiece BPE vocabularies as GGUF stores them (tokenizer.ggml.model "llama": Llama,
    Mistral, TinyLlama, Phi-3, Gemma...): merges by score, byte fallback, "▁" for spaces, control
    tokens only on request. Byte-level BPE vocabularies (tokenizer.ggml.model "gpt2": GPT-2,
    Llama 3, Qwen 2, tekken, SmolLM, DeepSeek, StarCoder...): merges by rank and the
    pre-tokenizer the file names, written here over Unicode category tables. swa_decoder turns
    ids back into text without splitting UTF-8 characters. The sampler does repetition penalty,
    top-k, top-p, min-p and temperature with its own seeded generator, so a seed gives the same
    choices everywhere.

CHAT TEMPLATES
    tokenizer.chat_template is recognised by its markers, as llama.cpp does without a Jinja
    engine (ChatML, Llama 2 and 3, Mistral v1/v3/v3-tekken/v7, Gemma, Phi-3/4, DeepSeek), and
    swa_chat_format writes a conversation in that family's format; see the section's comment.

ERRORS
    Every fallible call returns swa_status (SWA_OK = 0, errors are negative; swa_status_str names
    them) and fills the optional swa_error with the code and a message naming what failed, e.g.
    "tensor blk.3.attn_q.weight: shape 64x32, want 64x64". The library never prints, never
    exits and never aborts on bad input. Every count, size and offset read from a file is
    checked against the file's length, with overflow in mind.

FILE FORMAT
    GGUF versions 2 and 3, little-endian, architectures "llama" (with experts: Mixtral),
    "gemma2", "gemma3" (text), "phi3", "qwen2", "qwen3", "qwen3moe", "gpt-oss", "mistral3"
    (Ministral 3 text), "olmo2" (OLMo 2 and 3), "cohere2" (Command R7B), "llama4" (Llama 4
    text: chunked attention, a shared expert), "exaone4" (EXAONE 4), "gemma-embedding"
    (EmbeddingGemma, an encoder for swa_ctx_embed), "smallthinker" and "afmoe" (Arcee
    Trinity) with llama.cpp's key
    and tensor names and stored conventions (one description row per architecture drives the
    loader and the one forward pass). Weight types F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1,
    IQ4_NL, MXFP4, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and IQ4_XS (ggml's block layouts), used in place;
    the small norm vectors may be of any of them and are converted to float at load.

KERNELS
    Each kernel has a scalar reference and, beside it, SIMD twins: AVX2/FMA/F16C, AVX-VNNI and
    AVX-512 (F, BW, VL and VNNI) on x86-64, compiled with target attributes and chosen at run
    time after cpuid and xgetbv, and NEON on AArch64; on Linux, AMX tiles for the Q8_0, Q4_0,
    Q4_K, Q5_K, Q6_K and IQ4_XS products of prompts and batches. A context fills its kernel table once, by name: the
    reference, then AVX2, then AVX-VNNI or AVX-512 (and AMX), each overriding what it has.
    As in ggml, quantized weights meet activations quantized to 8 bits. swa_ctx_config.kernels
    picks the widest set the CPU runs (SWA_KERNELS_BEST), the reference (SWA_KERNELS_REF) or a
    named set; keys and values are cached in F16 unless kv_type says otherwise.
    The GGUF reader itself understands every metadata type and the sizes of every ggml type,
    so swa_gguf_* can inspect any GGUF file.

REVISION HISTORY
    0.11.0 gpt-oss (attention sinks, swiglu_oai), mistral3, olmo2 (OLMo 2 and 3), cohere2
           (Command R7B); YaRN; AVX-512 Q4_0/Q8_0 prompt kernels with a row in each lane;
           attention's work dealt to the threads in turn.
    0.10.0 mixtures of experts (Mixtral, qwen3moe); MXFP4; every chat template of llama.cpp's
           December 2025 formatter; snapshots checked whole, with a checksum, before anything
           changes; the sampler records its own tokens; swa_ctx_embed on a named sequence;
           the abort callback asked before the output layer too; C89 stops at one #error.
    0.9.0  the header in reader order with a table of contents; swa_sampler_config_default;
           swa_model_load_with the one loader (a caller's buffer in its params too);
           SWA_NO_STDIO; SWA_INTERNALS, a test-only switch, so the implementation builds once.
    0.8.4  faster AMX batched products (see docs/performance.md).
    0.8.3  AVX-512 float prompts meet the rows in column chunks that stay in L1; float
           generation prefetches long rows ahead; AMX Q8_0 batches of 2 to 7 on the
           gathered-word kernels.
    0.8.2  AMX Q4_0 products of 1 to 7 tokens, generation included, on gathered-word kernels;
           generation prefetches into L2, then into L1.
    0.8.1  AVX-512 float tiles of 4 rows x 6 tokens; larger row blocks for float rows; each
           type's tile shape in the kernel table.
    0.8.0  Q4_K, Q5_K and Q6_K prompts and batches on AMX tiles, in orders of their own that
           the dots keep bit for bit.
    0.7.2  the AVX2, AVX-VNNI and AVX-512 tile loops prefetch their rows (batches of 2 to 4
           sequences); AMX Q4_0 dots gather block sums with packs and madds.
    0.7.1  faster batches of 2 to 8 sequences on AMX (see docs/performance.md).
    0.7.0  the AMX kernel set: Q8_0 and Q4_0 prompts and batches on AMX tiles, in a residue
           order the dots keep bit for bit; swa-generate --parallel and --sinks.
    0.6.0  gemma2, gemma3, phi3, qwen2 and qwen3 through one forward pass, per-layer window
           patterns, attention sinks; Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, IQ4_NL and IQ4_XS; byte-level
           BPE with every llama.cpp pre-tokenizer; chat templates; sequences batched in one pass,
           rewind, snapshots, abort and load-progress callbacks, embeddings; Windows.
    0.5.0  kernels by name from one descriptor per type; AVX-512 VNNI and AVX-VNNI
           kernels; Q5_K; generation prefetches ahead of its rows.
    0.4.1  pool shares claimed by whichever thread is free, the caller included;
           swa_model_load faults the mapping in whole, in file order.
    0.4.0  Q8_0/Q4_0 kernels 8 blocks at a time, AVX2 and NEON K-quant tiles,
           mapped files advised to 2 MB pages, prompt rows taken in chunks.
    0.3.0  AVX2 and NEON kernels, Q4_K and Q6_K, F16 KV cache, element-wise SIMD.
    0.2.0  tokenizer, streaming decoder, sampler, thread pool.
    0.1.0  GGUF reader, llama forward pass, per-layer rolling-buffer KV cache.
*/
#if !defined(__cplusplus) && !defined(_MSC_VER) && (!defined(__STDC_VERSION__) || __STDC_VERSION__ < 199901L)
#error "swa.h needs C99 or later (or C++): compile with -std=c99, -std=c11 or newer"
#define SWA_H             /* and nothing more of it, so that this is the only error */
#define SWA__DECLARED
#define SWA__IMPLEMENTED
#endif

#ifndef SWA_H
#define SWA_H

#include <stddef.h>
#include <stdint.h>

#define SWA_VERSION_MAJOR 0
#define SWA_VERSION_MINOR 11
#define SWA_VERSION_PATCH 0

#if defined(SWA_STATIC) && defined(__GNUC__)
#define SWADEF static __attribute__((unused))   /* a program need not call every function */
#elif defined(SWA_STATIC)
#define SWADEF static
#else
#define SWADEF extern
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ==== status and errors ==== */

typedef enum swa_status {
    SWA_OK                = 0,
    SWA_ERR_INVALID_ARG   = -1,  /* NULL where a value is needed, token id out of range, ... */
    SWA_ERR_IO            = -2,  /* the file cannot be opened, read or mapped */
    SWA_ERR_FORMAT        = -3,  /* the file is not valid GGUF, or is truncated or inconsistent */
    SWA_ERR_UNSUPPORTED   = -4,  /* valid, but not something we run: architecture, type, ... */
    SWA_ERR_MODEL         = -5,  /* a missing key or tensor, a shape that does not fit */
    SWA_ERR_NOMEM         = -6,  /* an allocation failed or a size does not fit in memory */
    SWA_ERR_CONTEXT_FULL  = -7,  /* a full-attention layer would need more than n_ctx positions */
    SWA_ERR_NOT_FOUND     = -8,  /* a metadata key, array element or vocabulary is absent */
    SWA_ERR_BUFFER_TOO_SMALL = -9, /* the caller's buffer cannot hold the result */
    SWA_ERR_ABORTED       = -10  /* the abort callback stopped an evaluation */
} swa_status;

/* Every fallible call returns a status and, when err is not NULL, fills it with the status and
   a message naming what failed. A call that fails leaves the objects it was given as they were,
   with two exceptions its comment states: an evaluation stopped by the abort callback keeps the
   chunks it completed, and swa_ctx_set_threads, when the system refuses a thread, goes on with
   one. Outputs (buffers, *out pointers) are unspecified after an error unless stated. */
typedef struct swa_error {
    swa_status code;
    char msg[256];
} swa_error;

SWADEF const char *swa_status_str(swa_status s);  /* "SWA_ERR_FORMAT", never NULL */
SWADEF int32_t     swa_cpu_count(void);           /* CPUs online (1..256): the default n_threads */
SWADEF const char *swa_version(void);             /* "MAJOR.MINOR.PATCH" of SWA_VERSION_* */

/* ==== tensor types (ggml's type ids) ==== */

typedef enum swa_type {
    SWA_TYPE_F32  = 0,
    SWA_TYPE_F16  = 1,
    SWA_TYPE_Q4_0 = 2,
    SWA_TYPE_Q4_1 = 3,
    SWA_TYPE_Q5_0 = 6,
    SWA_TYPE_Q5_1 = 7,
    SWA_TYPE_Q8_0 = 8,
    SWA_TYPE_Q2_K = 10,
    SWA_TYPE_Q3_K = 11,
    SWA_TYPE_Q4_K = 12,
    SWA_TYPE_Q5_K = 13,
    SWA_TYPE_Q6_K = 14,
    SWA_TYPE_IQ4_NL = 20,
    SWA_TYPE_IQ4_XS = 23,
    SWA_TYPE_BF16 = 30,
    SWA_TYPE_MXFP4 = 39
} swa_type;

/* Name of any ggml type id ("Q4_K", "IQ2_XS", ...); NULL for ids ggml does not define. */
SWADEF const char *swa_type_name(uint32_t type);
/* Elements per block and bytes per block of a ggml type; 0 for unknown ids. */
SWADEF int64_t swa_type_block_size(uint32_t type);
SWADEF int64_t swa_type_block_bytes(uint32_t type);

/* Convert n elements of a row of `type` to float (n a multiple of the block size). Every weight
   type the model loader accepts; SWA_ERR_UNSUPPORTED for others. */
SWADEF swa_status swa_dequantize_row(uint32_t type, const void *src, float *dst, int64_t n);

/* ==== GGUF reader ==== */

typedef struct swa_gguf swa_gguf;   /* opaque, immutable after open */

typedef struct swa_str {            /* a string inside the file: not NUL-terminated */
    const char *ptr;
    size_t len;
} swa_str;

typedef enum swa_gguf_type {
    SWA_GGUF_U8 = 0, SWA_GGUF_I8 = 1, SWA_GGUF_U16 = 2, SWA_GGUF_I16 = 3,
    SWA_GGUF_U32 = 4, SWA_GGUF_I32 = 5, SWA_GGUF_F32 = 6, SWA_GGUF_BOOL = 7,
    SWA_GGUF_STRING = 8, SWA_GGUF_ARRAY = 9, SWA_GGUF_U64 = 10, SWA_GGUF_I64 = 11,
    SWA_GGUF_F64 = 12
} swa_gguf_type;

/* A metadata value. Arrays are read element by element with swa_gguf_value_at. */
typedef struct swa_gguf_value {
    swa_gguf_type type;
    swa_gguf_type elem_type;        /* arrays only */
    uint64_t n;                     /* arrays: element count; strings: byte length */
    const uint8_t *data;            /* the payload, inside the file */
    const uint64_t *index;          /* private: element offsets of a string array, or NULL */
} swa_gguf_value;

typedef struct swa_gguf_tensor {
    swa_str name;
    uint32_t type;                  /* ggml type id */
    uint32_t n_dims;                /* 1..4 */
    int64_t ne[4];                  /* ne[0] is the row length; unused dimensions are 1 */
    uint64_t offset;                /* from the start of the data section */
    uint64_t nbytes;
    const void *data;               /* inside the file */
} swa_gguf_tensor;

/* Open a GGUF file (mapped read-only) or a caller-owned buffer that must outlive the handle.
   Validates the whole header, metadata and tensor table. SWA_ERR_IO, _FORMAT, _UNSUPPORTED,
   _NOMEM. The handle is freed with swa_gguf_close (NULL is fine). */
SWADEF swa_status swa_gguf_open(const char *path, swa_gguf **out, swa_error *err);
SWADEF swa_status swa_gguf_open_memory(const void *data, size_t size, swa_gguf **out,
                                       swa_error *err);
SWADEF void       swa_gguf_close(swa_gguf *g);

SWADEF uint32_t   swa_gguf_version(const swa_gguf *g);
SWADEF uint64_t   swa_gguf_alignment(const swa_gguf *g);
SWADEF uint64_t   swa_gguf_data_offset(const swa_gguf *g);   /* file offset of tensor data */
SWADEF uint64_t   swa_gguf_file_size(const swa_gguf *g);

SWADEF int64_t    swa_gguf_kv_count(const swa_gguf *g);
SWADEF int64_t    swa_gguf_kv_find(const swa_gguf *g, const char *key);   /* -1 if absent */
SWADEF swa_str    swa_gguf_kv_key(const swa_gguf *g, int64_t i);
SWADEF swa_gguf_value swa_gguf_kv_value(const swa_gguf *g, int64_t i);

/* Element j of an array value (O(1) for numbers and top-level string arrays). SWA_ERR_NOT_FOUND
   past the end, SWA_ERR_INVALID_ARG if arr is not an array. */
SWADEF swa_status swa_gguf_value_at(const swa_gguf_value *arr, uint64_t j, swa_gguf_value *elem);
/* Scalar conversions. Integers and bools convert to int64 (a u64 above INT64_MAX fails);
   integers and floats convert to double. SWA_ERR_INVALID_ARG for the wrong type. */
SWADEF swa_status swa_gguf_value_int(const swa_gguf_value *v, int64_t *out);
SWADEF swa_status swa_gguf_value_float(const swa_gguf_value *v, double *out);
SWADEF swa_status swa_gguf_value_str(const swa_gguf_value *v, swa_str *out);
SWADEF const char *swa_gguf_type_name(swa_gguf_type t);    /* "u32", "array", ...; "?" */

SWADEF int64_t    swa_gguf_tensor_count(const swa_gguf *g);
SWADEF int64_t    swa_gguf_tensor_find(const swa_gguf *g, const char *name);  /* -1 if absent */
SWADEF const swa_gguf_tensor *swa_gguf_tensor_at(const swa_gguf *g, int64_t i);  /* NULL if out of range */

/* ==== model ==== */

typedef struct swa_model swa_model;   /* opaque, immutable after load, shareable across threads */

typedef struct swa_hparams {
    int32_t n_layer;
    int32_t n_embd;
    int32_t n_head;
    int32_t n_kv_head;
    int32_t head_dim;      /* {arch}.attention.key_length, default n_embd / n_head */
    int32_t n_ff;
    int32_t n_vocab;
    int32_t n_ctx_train;   /* {arch}.context_length; 0 when the file does not say */
    int32_t n_rot;         /* {arch}.rope.dimension_count, default head_dim */
    float   rope_base;     /* {arch}.rope.freq_base, default 10000 */
    float   rms_eps;       /* {arch}.attention.layer_norm_rms_epsilon, default 1e-5 (cohere2: the
                              LayerNorms' attention.layer_norm_epsilon) */
    int32_t window;        /* largest sliding window over the layers; 0: no layer has one */
    uint32_t weight_type;  /* the most common type of the layer matrices */
    const char *arch;      /* general.architecture: "llama", "gemma2", "gemma3", "phi3", "qwen2", "qwen3", "qwen3moe",
                              "gpt-oss", "mistral3", "olmo2", "cohere2", "llama4", "exaone4",
                              "gemma-embedding", "smallthinker", "afmoe" */
    int32_t n_windowed;    /* layers with a sliding window in the file; the others attend to everything */
    int32_t n_expert;      /* {arch}.expert_count: experts per layer; 0: a dense feed-forward */
    int32_t n_expert_used; /* {arch}.expert_used_count: experts each token goes through */
    int32_t n_ff_exp;      /* rows of each expert's gate and up (llama: n_ff) */
} swa_hparams;

/* Load a GGUF model. swa_model_load_with is the one loader; the three calls after it are
   shorthands for it. The bytes come from exactly one place:
   - path (params->data NULL): the file is mapped read-only (on Linux advised to use 2 MB pages
     and faulted in whole, in file order, whatever feature macros the host defined), or, with
     params->resident, read into memory from SWA_MALLOC, advised to use 2 MB pages where the
     OS offers them: slower to open and not shared between processes, but in 2 MB pages however
     the file was cached. A mapped file gets them only for what the mapping itself reads from
     disk; a file the page cache already holds in 4 KB pages (one just written, say) costs a
     TLB miss per page each token (docs/performance.md).
   - params->data and params->size (path NULL): a GGUF image in the caller's memory, used in
     place, never copied: 4-byte aligned at least (as malloc's is), and it must outlive the model.
   Either way the weights are used where they lie. params may be NULL, which is the same as a
   zeroed struct (swa_model_params_default): map path, no progress. The progress callback is
   called as the file comes into memory (the share of its bytes faulted in or read, in steps of
   64 MB; nothing for the caller's memory) and once with 1 when the model is built; returning
   nonzero cancels the load with SWA_ERR_ABORTED. On any error *out is NULL and nothing stays
   allocated or mapped. Errors: SWA_ERR_INVALID_ARG (out is NULL; both path and params->data,
   or neither; resident with data; size without data; a misaligned buffer), _IO, _FORMAT,
   _UNSUPPORTED (another architecture, a weight type we do not run), _MODEL (missing key or
   tensor, wrong shape), _NOMEM, _ABORTED. The model is freed with swa_model_free (NULL is
   fine). */
typedef int (*swa_progress_fn)(float fraction, void *data);
typedef struct swa_model_params {
    int32_t resident;              /* 0 = map the file; 1 = read it into memory (path only)   */
    swa_progress_fn progress;      /* NULL = none; progress(fraction, progress_data)          */
    void *progress_data;
    const void *data;              /* NULL = load from path; else a GGUF image, used in place */
    size_t size;                   /* 0; bytes at data                                        */
} swa_model_params;
SWADEF swa_model_params swa_model_params_default(void);   /* all zero: map path, no progress */
SWADEF swa_status swa_model_load_with(const char *path, const swa_model_params *params, swa_model **out,
                                      swa_error *err);
/* swa_model_load_with(path, NULL, ...): the file mapped. */
SWADEF swa_status swa_model_load(const char *path, swa_model **out, swa_error *err);
/* swa_model_load_with with resident = 1: the file read into memory. */
SWADEF swa_status swa_model_load_resident(const char *path, swa_model **out, swa_error *err);
/* swa_model_load_with(NULL, ...) with data and size: the caller's buffer, used in place. */
SWADEF swa_status swa_model_load_memory(const void *data, size_t size, swa_model **out,
                                        swa_error *err);
SWADEF void       swa_model_free(swa_model *m);

SWADEF const swa_hparams *swa_model_hparams(const swa_model *m);
/* Sliding window of one layer as the file gives it; 0 = full attention (also for a window longer
   than the trained context, which never masks anything the model was trained on); -1 = bad layer. */
SWADEF int32_t    swa_model_layer_window(const swa_model *m, int32_t layer);
/* The underlying GGUF file, for metadata the hyperparameters do not cover. */
SWADEF const swa_gguf *swa_model_gguf(const swa_model *m);

/* How a model's bytes reached memory. */
typedef enum swa_load_path {
    SWA_LOAD_MEMORY = 0,        /* the caller's buffer (params.data, swa_model_load_memory) */
    SWA_LOAD_READ = 1,          /* read into memory (swa_model_load_resident, or SWA_NO_MMAP) */
    SWA_LOAD_MAPPED = 2,        /* the file mapped read-only */
    SWA_LOAD_MAPPED_HUGE = 3    /* mapped, and the system accepted the advice to use 2 MB pages */
} swa_load_path;
SWADEF swa_load_path swa_model_load_path(const swa_model *m);   /* SWA_LOAD_MEMORY for NULL */
SWADEF const char   *swa_load_path_name(swa_load_path p);       /* "mapped, 2 MB pages advised" */

/* ==== context: sequences, their rolling KV caches, and scratch ==== */

typedef struct swa_ctx swa_ctx;       /* opaque: rolling KV cache + scratch */

typedef struct swa_ctx_config {
    int32_t window;    /* 0 = the model's per-layer windows; > 0: this window on every layer  */
    int32_t n_ctx;     /* 0 = min(n_ctx_train, 4096); positions a full-attention layer keeps */
    int32_t n_batch;   /* 0 = 64; prompt tokens per forward pass                             */
    int32_t n_threads; /* 0 = the number of online CPUs; threads the context computes with    */
    int32_t kernels;   /* 0 = the widest SIMD the CPU runs; SWA_KERNELS_REF the scalar loops  */
    int32_t kv_type;   /* 0 = SWA_KV_F16; SWA_KV_F32 full precision; SWA_KV_Q8_0 ~half of F16 */
    int32_t n_seq;     /* 0 = 1; sequences, each with its own rings and position             */
    int32_t n_rewind;  /* 0; extra ring slots per windowed layer: how far a sequence can go back */
    int32_t n_sink;    /* 0 = off; 0 < n_sink < n_ctx: global layers keep the first n_sink      */
                       /* positions and a ring of the last n_ctx - n_sink, so evaluation goes on */
                       /* past n_ctx (attention sinks: an approximation of the model)            */
} swa_ctx_config;

/* Instruction sets for swa_ctx_config.kernels. AVX512 is F/BW/VL with VNNI; AVX_VNNI the
   256-bit VNNI of CPUs without AVX-512; AMX is AVX512 with the Q8_0, Q4_0, Q4_K, Q5_K, Q6_K and
   IQ4_XS matrix products on AMX tiles (Linux). Asking for one the CPU lacks is SWA_ERR_UNSUPPORTED. */
enum {
    SWA_KERNELS_BEST = 0, SWA_KERNELS_REF = 1, SWA_KERNELS_AVX2 = 2, SWA_KERNELS_AVX_VNNI = 3,
    SWA_KERNELS_AVX512 = 4, SWA_KERNELS_NEON = 5, SWA_KERNELS_AMX = 6
};
SWADEF const char *swa_kernels_name(int32_t kernels);   /* "best", "ref", "avx2", "avx-vnni", "avx512", "neon", "amx" */
SWADEF int32_t swa_kernels_from_name(const char *name); /* the inverse; -1 if unknown */
enum { SWA_KV_F16 = 0, SWA_KV_F32 = 1, SWA_KV_Q8_0 = 2 };

/* The defaults with zeros resolved against a model (or left 0 when m is NULL). */
SWADEF swa_ctx_config swa_ctx_config_default(const swa_model *m);
/* Bytes swa_ctx_create would allocate for this model and config (cache + scratch), 0 if the
   config is invalid or the size overflows. */
SWADEF size_t     swa_ctx_memory_size(const swa_model *m, const swa_ctx_config *cfg);
/* The same cache in its two parts: the rings of the windowed layers (W slots each, whatever the
   length) and the caches of the full-attention layers (n_ctx slots each); either may be NULL.
   Returns their sum, 0 if the config is invalid. */
SWADEF size_t     swa_ctx_cache_split(const swa_model *m, const swa_ctx_config *cfg, size_t *windowed,
                                      size_t *global);

/* Create a context at position 0. cfg may be NULL (all defaults). The context borrows the
   model, which must outlive it; free with swa_ctx_free (NULL is fine). SWA_ERR_INVALID_ARG
   (negative config values), SWA_ERR_UNSUPPORTED (kernels the CPU does not run), SWA_ERR_NOMEM. */
SWADEF swa_status swa_ctx_create(const swa_model *m, const swa_ctx_config *cfg, swa_ctx **out,
                                 swa_error *err);
SWADEF void       swa_ctx_free(swa_ctx *c);
SWADEF void       swa_ctx_reset(swa_ctx *c);                /* every sequence back to position 0 */

SWADEF int64_t    swa_ctx_pos(const swa_ctx *c);            /* tokens sequence 0 has evaluated */
SWADEF swa_ctx_config swa_ctx_config_get(const swa_ctx *c); /* the resolved config */
SWADEF int32_t    swa_ctx_window(const swa_ctx *c, int32_t layer);  /* 0 = full attention */
SWADEF size_t     swa_ctx_cache_bytes(const swa_ctx *c);    /* the K and V ring buffers */
SWADEF const char *swa_ctx_kernels(const swa_ctx *c);       /* "ref", "avx2", "avx-vnni", "avx512", "neon", "amx" */
SWADEF const char *swa_kv_type_name(int32_t kv_type);      /* "f16", "f32", "q8_0"; NULL if unknown */
SWADEF int32_t swa_kv_type_from_name(const char *name);    /* the inverse; -1 if unknown */

/* Evaluate tokens on sequence 0 at its position and advance it by n. *logits (may be NULL) gets
   the last token's n_vocab logits, valid until the next call on this context. With n > n_batch
   the run is evaluated in chunks. SWA_ERR_INVALID_ARG (n == 0, token out of range) and
   SWA_ERR_CONTEXT_FULL are found before anything is evaluated: the position is unchanged.
   SWA_ERR_ABORTED (see swa_ctx_set_abort) keeps the chunks completed before it. */
SWADEF swa_status swa_ctx_eval(swa_ctx *c, const int32_t *tokens, size_t n,
                               const float **logits, swa_error *err);
/* Like swa_ctx_eval, but writes the logits of every token to the caller's n * n_vocab array. */
SWADEF swa_status swa_ctx_eval_all(swa_ctx *c, const int32_t *tokens, size_t n,
                                   float *logits, swa_error *err);

/* A batch of tokens drawn from several sequences, evaluated in one forward pass: each weight is
   read once for the whole batch, so decoding B sequences a token each costs about the memory
   traffic of one. Each sequence's tokens take its next positions in batch order. */
typedef struct swa_batch {
    size_t n;                /* tokens */
    const int32_t *token;    /* [n] */
    const int32_t *seq;      /* [n] sequence of each token, 0..n_seq-1; NULL: all sequence 0 */
    const int8_t *logits;    /* [n] nonzero: return this token's logits; NULL: the last token of
                                each sequence the batch holds */
} swa_batch;

/* Evaluate a batch. `logits` (may be NULL) gets one n_vocab row per token that asks for logits,
   in batch order. On error nothing is evaluated: SWA_ERR_INVALID_ARG (bad token or sequence),
   SWA_ERR_CONTEXT_FULL (a sequence would pass n_ctx on a full-attention layer), SWA_ERR_ABORTED
   (the abort callback said stop: the batches of n_batch tokens completed before it stay
   evaluated, swa_seq_pos tells how far each sequence got; the rest left no trace). */
SWADEF swa_status swa_ctx_decode(swa_ctx *c, const swa_batch *batch, float *logits, swa_error *err);

/* Sequences. Positions of sequence s; reset it to position 0; copy src's state (rings and
   position) over dst, so that a shared prompt is evaluated once and continued several ways. */
SWADEF int64_t    swa_seq_pos(const swa_ctx *c, int32_t seq);   /* -1 for a bad sequence */
SWADEF swa_status swa_seq_reset(swa_ctx *c, int32_t seq, swa_error *err);
SWADEF swa_status swa_seq_copy(swa_ctx *c, int32_t src, int32_t dst, swa_error *err);
/* Rewind: drop the last n tokens of a sequence, exactly (its next token is evaluated as if they
   had never been). A windowed layer keeps W + n_rewind slots, so the keys a rewound position
   needs are still there up to swa_seq_max_rewind tokens back (n_rewind + 1 after a run of
   tokens: a new token needs only W - 1 earlier keys); further is SWA_ERR_INVALID_ARG. */
SWADEF int64_t    swa_seq_max_rewind(const swa_ctx *c, int32_t seq);
SWADEF swa_status swa_seq_rewind(swa_ctx *c, int32_t seq, int64_t n, swa_error *err);

/* Snapshots of one sequence (seq >= 0) or of every sequence (seq = -1): a versioned header,
   the model's shape and a checksum of its metadata (and of the first bytes of each tensor), the
   context's ring layout, each sequence's position and its ring contents. A ring holds at most
   W (+ n_rewind) positions, so a snapshot stops growing once the window is full: its size is
   set by the window, not by the length of the conversation. Restoring checks the model and ring layout (another model, cache type,
   window or n_ctx is SWA_ERR_INVALID_ARG, with what differs); a damaged, truncated or lengthened
   snapshot is SWA_ERR_FORMAT (an XXH64 checksum covers every byte). The whole snapshot is
   checked before anything changes: on any error every sequence is exactly as it was. A
   one-sequence snapshot restores into any sequence of the context; one of every sequence resets
   those it does not hold. */
SWADEF size_t     swa_state_size(const swa_ctx *c, int32_t seq);   /* 0 for a bad sequence */
SWADEF swa_status swa_state_save(const swa_ctx *c, int32_t seq, void *buf, size_t size, size_t *written,
                                 swa_error *err);   /* BUFFER_TOO_SMALL with *written = the size */
SWADEF swa_status swa_state_load(swa_ctx *c, int32_t seq, const void *buf, size_t size, swa_error *err);
#ifndef SWA_NO_STDIO   /* the only files the library writes */
/* The same through a file. Saving writes a temporary file beside `path`, flushes it to the
   disk and only then renames it over `path`: on any error `path` is untouched. Loading reads
   the file whole into memory first (its size is set by the window) and checks it as a buffer. */
SWADEF swa_status swa_state_save_file(const swa_ctx *c, int32_t seq, const char *path, swa_error *err);
SWADEF swa_status swa_state_load_file(swa_ctx *c, int32_t seq, const char *path, swa_error *err);
#endif

/* Control. The abort callback is called by the thread that called swa_ctx_eval, _eval_all,
   _decode or _embed (never by a pool worker), before each layer of each chunk of n_batch tokens
   and before its output layer: n_layer + 1 times a chunk, so a stop takes effect within one
   layer. Returning nonzero stops the
   evaluation with SWA_ERR_ABORTED: the chunk in progress leaves no trace, and the chunks
   completed before it stay evaluated (swa_seq_pos tells how far each sequence got). A flag it
   reads that another thread sets must be atomic (C11 atomic_int; volatile sig_atomic_t when a
   signal handler on the evaluating thread sets it). NULL removes the callback. */
typedef int (*swa_abort_fn)(void *data);
SWADEF void       swa_ctx_set_abort(swa_ctx *c, swa_abort_fn fn, void *data);
/* Change the thread count of a live context (0 = the online CPUs); the results do not depend
   on it. SWA_ERR_INVALID_ARG out of 0..256 and SWA_ERR_NOMEM change nothing; when the system
   refuses to start a thread the context goes on with one (swa_ctx_config_get tells). */
SWADEF swa_status swa_ctx_set_threads(swa_ctx *c, int32_t n_threads, swa_error *err);

/* Embeddings: evaluate tokens on sequence seq from position 0, whatever it held, and write the
   final hidden state (after the output norm, n_embd floats) of the last token, or its mean over
   the tokens; scaled to unit length when `normalize` is set. The same text gives the same
   vector every time; the other sequences are untouched, and seq then holds the text (go on
   from it, or reset it). A context with n_seq = 2 embeds on sequence 1 beside a conversation on
   sequence 0. On an error seq is as it was, except SWA_ERR_ABORTED after a first chunk of
   n_batch tokens was through: then seq holds the chunks done (swa_seq_pos). An encoder
   (gemma-embedding, whose attention looks both ways) reads the text in one pass: at most
   n_batch tokens, else SWA_ERR_INVALID_ARG; its file's dense projections, when it has them,
   apply to the pooled state before the scaling; and it is only evaluated from position 0. */
enum { SWA_POOL_LAST = 0, SWA_POOL_MEAN = 1 };
SWADEF swa_status swa_ctx_embed(swa_ctx *c, int32_t seq, const int32_t *tokens, size_t n, int32_t pooling,
                                int32_t normalize, float *out, swa_error *err);

/* ==== tokenizer ====
   Two kinds of vocabulary, as GGUF stores them:
   - SentencePiece BPE (tokenizer.ggml.model "llama": Llama 1-2, Mistral 7B, TinyLlama, Phi-3,
     Gemma): merges by score, byte fallback, "▁" for spaces; tokenizer.ggml.add_space_prefix
     (Gemma's files say false) and add_bos_token / add_eos_token are honoured.
   - Byte-level BPE (tokenizer.ggml.model "gpt2": GPT-2, Llama 3.x, Qwen 2.x, Mistral Nemo and
     other tekken models, SmolLM, DeepSeek, StarCoder, Falcon, MPT, OLMo, DBRX, Command-R,
     StableLM 2, Poro, ...): GPT-2's byte-to-character mapping, tokenizer.ggml.merges applied by
     rank, and the pre-tokenizer named by tokenizer.ggml.pre (every name llama.cpp knows: see
     docs/tokenizer.md), implemented without a regex library over Unicode category tables.
   In both, user-defined tokens written in the text are always matched before anything else,
   control tokens only with SWA_TOKENIZE_SPECIAL. */

typedef struct swa_vocab swa_vocab;   /* opaque, immutable, shareable across threads */

typedef enum swa_token_type {         /* tokenizer.ggml.token_type, as llama.cpp writes it */
    SWA_TOKEN_NORMAL = 1, SWA_TOKEN_UNKNOWN = 2, SWA_TOKEN_CONTROL = 3,
    SWA_TOKEN_USER_DEFINED = 4, SWA_TOKEN_UNUSED = 5, SWA_TOKEN_BYTE = 6
} swa_token_type;

enum {                                /* flags for swa_tokenize */
    SWA_TOKENIZE_ADD_BOS = 1,         /* put BOS first (when the vocabulary has one) */
    SWA_TOKENIZE_SPECIAL = 2,         /* control tokens written in the text ("</s>") become tokens;
                                         user-defined ones always do */
    SWA_TOKENIZE_ADD_EOS = 4          /* put EOS last (when the vocabulary has one) */
};

/* The vocabulary of a GGUF file; it points into g, which must outlive it. SWA_ERR_NOT_FOUND if
   the file has none, SWA_ERR_UNSUPPORTED for other tokenizer types (named), SWA_ERR_FORMAT for
   inconsistent arrays. Free with swa_vocab_free (NULL is fine). */
SWADEF swa_status swa_vocab_load(const swa_gguf *g, swa_vocab **out, swa_error *err);
SWADEF void       swa_vocab_free(swa_vocab *v);
/* The model's vocabulary, loaded with the model and owned by it; the error says why there is
   none (no tokenizer in the file, an unsupported type, a size that differs from the model's). */
SWADEF swa_status swa_model_vocab(const swa_model *m, const swa_vocab **out, swa_error *err);

SWADEF int32_t    swa_vocab_size(const swa_vocab *v);
#ifndef SWA_NO_TOKENIZER   /* without it, swa_vocab_load says so and the model has no vocabulary */
SWADEF int32_t    swa_vocab_bos(const swa_vocab *v);        /* -1 when there is none */
SWADEF int32_t    swa_vocab_eos(const swa_vocab *v);        /* -1 when there is none */
SWADEF int        swa_vocab_add_bos(const swa_vocab *v);    /* tokenizer.ggml.add_bos_token */
SWADEF int        swa_vocab_add_eos(const swa_vocab *v);    /* tokenizer.ggml.add_eos_token */
SWADEF swa_str    swa_vocab_piece(const swa_vocab *v, int32_t id);   /* as stored; empty if out of range */
SWADEF swa_token_type swa_vocab_type(const swa_vocab *v, int32_t id);
SWADEF int32_t    swa_vocab_find(const swa_vocab *v, const char *piece);   /* -1 if absent */

/* Tokenize len bytes of text. Writes up to cap ids to out and the full count to *n_out; when
   cap is too small it returns SWA_ERR_BUFFER_TOO_SMALL, so call again with *n_out. */
SWADEF swa_status swa_tokenize(const swa_vocab *v, const char *text, size_t len, int flags,
                               int32_t *out, size_t cap, size_t *n_out, swa_error *err);
/* The text of one token: "▁" becomes a space, byte tokens their byte (byte-level BPE: each
   character its byte), control tokens nothing. Writes at most cap bytes (no NUL) and returns
   the full length. */
SWADEF size_t     swa_token_to_text(const swa_vocab *v, int32_t id, char *buf, size_t cap);

/* Streaming detokenizer: feed ids one by one; it hands out only whole UTF-8 characters and
   drops the space SentencePiece puts before the first word. Plain struct, no allocation. */
typedef struct swa_decoder {
    const swa_vocab *vocab;
    unsigned char pending[4];         /* an unfinished UTF-8 sequence */
    int n_pending;
    int at_start;
} swa_decoder;

SWADEF void       swa_decoder_init(swa_decoder *d, const swa_vocab *v);
/* Text completed by token id, written to out (no NUL); returns its length. Bytes that begin an
   unfinished UTF-8 character wait for the next call. Text beyond cap is cut at a character
   start; swa_token_to_text(v, id, NULL, 0) + 3 bytes always suffice. */
SWADEF size_t     swa_decoder_push(swa_decoder *d, int32_t id, char *out, size_t cap);
SWADEF size_t     swa_decoder_flush(swa_decoder *d, char *out, size_t cap);   /* what is left */
#endif /* SWA_NO_TOKENIZER */

/* ==== chat templates: the families of tokenizer.chat_template ==== */

/* A GGUF file carries its chat template as Jinja source (tokenizer.chat_template). Without a
   Jinja engine we recognise the families llama.cpp's llama_chat_apply_template knows by the same
   markers, in the same order, and write each family's format ourselves, byte for byte as
   llama.cpp (December 2025) does. The 49 families (swa_chat_template_at lists them; the table
   with examples and end-of-turn texts is docs/architectures.md):
     chatml llama2 llama2-sys llama2-sys-bos llama2-sys-strip mistral-v1 mistral-v3
     mistral-v3-tekken mistral-v7 mistral-v7-tekken llama3 llama4 gemma phi3 phi4 falcon3 zephyr
     monarch orion openchat vicuna vicuna-orca deepseek deepseek2 deepseek3 command-r chatglm3
     chatglm4 glmedge minicpm exaone3 exaone4 rwkv-world granite gigachat megrez yandex bailing
     bailing-think bailing2 smolvlm dots1 hunyuan-moe hunyuan-dense gpt-oss kimi-k2 seed_oss
     grok-2 pangu-embedded
   The formats are llama.cpp's, not a Jinja rendering: no default system prompt (except where
   llama.cpp writes one), no date or tool preamble, no gpt-oss channels. Some formats have no
   assistant prefix: the text that ends a user turn is the cue to answer. Where llama.cpp leaves
   a system, user or assistant message out of a format, so do we. A message of another role
   ("tool", ...) is written where the format has a place for it, and refused where llama.cpp
   would write it as some other role or leave it out. BOS is not written: tokenize the first
   turn with SWA_TOKENIZE_ADD_BOS when swa_vocab_add_bos says so, and with SWA_TOKENIZE_SPECIAL
   so that the markers become their tokens. */

typedef struct swa_chat_message {
    const char *role;                 /* "system", "user", "assistant"; "tool" where the format has
                                         it; any name where it writes the role's name (chatml, ...) */
    const char *content;              /* NUL-terminated */
} swa_chat_message;

typedef struct swa_chat_template swa_chat_template;   /* a built-in family: static, never freed */

SWADEF const swa_chat_template *swa_chat_template_at(int32_t i);      /* the i-th family; NULL past the end */
SWADEF const swa_chat_template *swa_chat_template_by_name(const char *name);   /* NULL if unknown */
SWADEF const char *swa_chat_template_name(const swa_chat_template *t);          /* "chatml", ... */
/* The text that ends the assistant's turn ("<|im_end|>", "</s>", "<|eot_id|>", ...): generation
   stops at this token (and at EOS). */
SWADEF const char *swa_chat_template_eot(const swa_chat_template *t);
/* That text as one token of v (looked up as stored); -1 when v has no such token. */
SWADEF int32_t    swa_chat_template_eot_token(const swa_chat_template *t, const swa_vocab *v);

/* The family of len bytes of Jinja template text (a family's name is accepted too).
   SWA_ERR_UNSUPPORTED, quoting the start of the template, when it is none of them. */
SWADEF swa_status swa_chat_template_detect(const char *tmpl, size_t len, const swa_chat_template **out,
                                           swa_error *err);
/* The family of a file's tokenizer.chat_template: SWA_ERR_NOT_FOUND when the file has none,
   SWA_ERR_FORMAT when it is not a string, else as swa_chat_template_detect. */
SWADEF swa_status swa_chat_template_of(const swa_gguf *g, const swa_chat_template **out, swa_error *err);
SWADEF swa_status swa_model_chat_template(const swa_model *m, const swa_chat_template **out, swa_error *err);

/* Format n messages in t's format, with the assistant's prefix at the end when
   add_generation_prompt is set. Writes the text and a NUL when it fits in cap bytes and the
   length (without the NUL) to *n_out; when cap <= *n_out it returns SWA_ERR_BUFFER_TOO_SMALL,
   so call again with *n_out + 1 (out may be NULL with cap 0 to ask). SWA_ERR_INVALID_ARG for a
   NULL role or content, or a role other than system/user/assistant where t cannot write it. */
SWADEF swa_status swa_chat_format(const swa_chat_template *t, const swa_chat_message *msgs, size_t n,
                                  int add_generation_prompt, char *out, size_t cap, size_t *n_out,
                                  swa_error *err);

/* ==== sampler ==== */

#ifndef SWA_NO_SAMPLER
typedef struct swa_sampler swa_sampler;

typedef struct swa_sampler_config {
    float    temperature;     /* 0 = greedy (argmax after the repetition penalty)           */
    int32_t  top_k;           /* 0 = off; keep the k most likely tokens                     */
    float    top_p;           /* 0 or 1 = off; keep the smallest set with mass >= top_p     */
    float    min_p;           /* 0 = off; drop tokens below min_p x the top probability    */
    float    repeat_penalty;  /* 0 or 1 = off; > 1 discourages the last repeat_last_n ids   */
    int32_t  repeat_last_n;   /* 0 = 64; how many recent tokens the penalty looks at        */
    uint64_t seed;            /* the generator's seed; the same seed gives the same choices */
    float    presence_penalty;  /* 0 = off; subtracted once from each id in the last          */
                                /* repeat_last_n tokens (OpenAI's presence_penalty)          */
    float    frequency_penalty; /* 0 = off; subtracted per occurrence there (OpenAI's)      */
} swa_sampler_config;

/* Settings to start from and change by name: temperature 0.8, top_k 40, top_p 0.95, min_p 0.05,
   repeat_penalty 1 (off), repeat_last_n 64, seed 42. */
SWADEF swa_sampler_config swa_sampler_config_default(void);
/* A sampler for n_vocab logits; it allocates its scratch once. SWA_ERR_INVALID_ARG for negative
   or NaN settings. Free with swa_sampler_free (NULL is fine). */
SWADEF swa_status swa_sampler_create(const swa_sampler_config *cfg, int32_t n_vocab,
                                     swa_sampler **out, swa_error *err);
SWADEF void       swa_sampler_free(swa_sampler *s);
/* Add biases[i] to the logit of ids[i] before every choice, replacing the biases set before
   (n 0 clears them). A bias of -100 or less bans the token (its logit becomes -inf), as OpenAI's
   logit_bias does. SWA_ERR_INVALID_ARG, and nothing changed, for an id outside the vocabulary or
   a NaN bias; SWA_ERR_NOMEM. */
SWADEF swa_status swa_sampler_set_logit_bias(swa_sampler *s, const int32_t *ids, const float *biases, size_t n,
                                             swa_error *err);
/* Choose the next token from logits (not modified) and remember it for the penalties. Order:
   logit bias, penalties (repetition, then presence and frequency, as llama.cpp applies them),
   top-k, top-p, min-p, temperature, then a draw from our own generator (xorshift64*). */
SWADEF int32_t    swa_sampler_sample(swa_sampler *s, const float *logits);
/* Remember a token the sampler did not choose itself (the prompt's, or one chosen elsewhere),
   so that the penalty counts it; ids outside the vocabulary are ignored. */
SWADEF void       swa_sampler_accept(swa_sampler *s, int32_t token);
SWADEF void       swa_sampler_reset(swa_sampler *s);                  /* forget history, reseed */
/* Our generator, exposed for tests: the next uniform float in [0, 1). */
SWADEF float      swa_sampler_uniform(swa_sampler *s);
#endif /* SWA_NO_SAMPLER */

/* Index of the largest value (the first on ties; NaN only when all are NaN); -1 when n <= 0. */
SWADEF int32_t    swa_argmax(const float *x, int64_t n);

#ifdef __cplusplus
}
#endif
#endif /* SWA_H */

/* ==== internal declarations ====
   What the implementation shares between its sections: the includes, the instruction sets the
   compiler can build, and the types of the kernel table. A test or benchmark that checks the
   kernels against their references defines SWA_INTERNALS (a test-only switch, not an API:
   nothing here is promised to stay) both where the implementation is compiled and where it
   includes this header plainly; it then sees these declarations, and the functions below have
   external linkage instead of being static. */
#if (defined(SWA_IMPLEMENTATION) || defined(SWA_INTERNALS)) && !defined(SWA__DECLARED)
#define SWA__DECLARED

#include <stdarg.h>
#include <stdio.h>     /* snprintf, vsnprintf, remove; never a FILE */
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <assert.h>
#include <errno.h>
#include <locale.h>    /* localeconv: JSON numbers read under any locale */
#if defined(_WIN32)
#if !defined(WIN32_LEAN_AND_MEAN)      /* the smaller <windows.h>, and no min/max macros */
#define WIN32_LEAN_AND_MEAN
#define SWA__DEFINED_LEAN
#endif
#if !defined(NOMINMAX)
#define NOMINMAX
#define SWA__DEFINED_NOMINMAX
#endif
#include <windows.h>
#include <io.h>        /* _get_osfhandle, to flush a snapshot file to the disk */
#if defined(SWA__DEFINED_LEAN)
#undef WIN32_LEAN_AND_MEAN
#undef SWA__DEFINED_LEAN
#endif
#if defined(SWA__DEFINED_NOMINMAX)
#undef NOMINMAX
#undef SWA__DEFINED_NOMINMAX
#endif
#else
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#ifndef SWA_NO_MMAP
#include <sys/mman.h>
#endif
#endif
#if !defined(SWA_NO_THREADS) && !defined(_WIN32)
#include <pthread.h>
#endif
#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#endif

/* Every GCC extension below (attributes, __builtin_*, __atomic_*, asm, pragmas) sits behind a
   GCC/clang test, so that a compiler without them (MSVC) sees none and gets the scalar kernels.
   SWA__UNUSED marks a static function some builds leave uncalled. */
#if defined(__GNUC__) || defined(__clang__)
#define SWA__UNUSED __attribute__((unused))
#else
#define SWA__UNUSED
#endif

/* AVX2/FMA/F16C kernels are compiled with target attributes into any x86-64 build by gcc or
   clang and used when the CPU has them; NEON is used whenever the compiler targets AArch64. */
#if !defined(SWA_NO_SIMD) && !defined(SWA_NO_AVX2) && (defined(__x86_64__) || defined(_M_X64)) && \
    (defined(__GNUC__) || defined(__clang__))
#define SWA__HAVE_AVX2
#define SWA__AVX2 __attribute__((target("avx2,fma,f16c")))
#include <immintrin.h>
#include <cpuid.h>
/* The VNNI intrinsics arrived in GCC 11 / clang 12 (AVX-VNNI) and GCC 10 / clang 9 (the
   AVX-512 ones used here); older compilers build the AVX2 kernels only. */
#if !defined(SWA_NO_AVX_VNNI) && ((defined(__clang__) && __clang_major__ >= 12) || (!defined(__clang__) && __GNUC__ >= 11))
#define SWA__HAVE_AVX_VNNI
#define SWA__AVX_VNNI __attribute__((target("avx2,fma,f16c,avxvnni")))
#endif
#if !defined(SWA_NO_AVX512) && ((defined(__clang__) && __clang_major__ >= 9) || (!defined(__clang__) && __GNUC__ >= 10))
#define SWA__HAVE_AVX512
#define SWA__AVX512 __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")))
#endif
/* AMX tiles (GCC 11 / clang 12) on Linux, where a process asks the kernel for the tile state
   before its first tile instruction. */
#if defined(SWA__HAVE_AVX512) && defined(__linux__) && !defined(SWA_NO_AMX) &&                     \
    ((defined(__clang__) && __clang_major__ >= 12) || (!defined(__clang__) && __GNUC__ >= 11))
#define SWA__HAVE_AMX
#define SWA__AMX __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni,amx-tile,amx-int8")))
#endif
#endif
#if !defined(SWA_NO_SIMD) && !defined(SWA_NO_NEON) && defined(__aarch64__)
#define SWA__HAVE_NEON
#include <arm_neon.h>
#endif
#if defined(SWA__HAVE_AVX2) || defined(SWA__HAVE_NEON)
#define SWA__INLINE __attribute__((always_inline)) static inline   /* a kernel's building block */
/* The loop that follows unrolled n times, whole when it has at most n trips, so that a tile's
   arrays stay in registers (GCC unrolls at -O2 only when told). GCC and clang both read GCC's
   pragma. */
#define SWA__PRAGMA(x) _Pragma(#x)
#define SWA__UNROLL(n) SWA__PRAGMA(GCC unroll n)
#endif

#if defined(SWA_MALLOC) != defined(SWA_FREE)
#error "define SWA_MALLOC and SWA_FREE together, or neither"
#endif
#ifndef SWA_MALLOC
#define SWA_MALLOC(n) malloc(n)
#define SWA_FREE(p) free(p)
#endif
#ifndef SWA_ASSERT
#define SWA_ASSERT(x) assert(x)
#endif

#define SWA__MAX_ARRAY_DEPTH 8       /* deeper nesting in metadata is rejected */
#define SWA__MAX_NAME_LEN    255     /* tensor names (ggml allows 63) */
#define SWA__MAX_KEY_LEN     65535   /* the GGUF spec's limit for keys */
#define SWA__DEFAULT_N_CTX   4096
#define SWA__DEFAULT_N_BATCH 64
#define SWA__MAX_THREADS     256

#if defined(SWA_INTERNALS)
#define SWA__INTERNAL
#else
#define SWA__INTERNAL SWA__UNUSED static   /* some serve the tests only */
#endif

/* ---- the kernel table's types ---- */

typedef struct swa__q8 {          /* 32 activations */
    float d;
    int8_t q[32];
} swa__q8;

/* 8 q8 blocks (256 activations), laid out so that the AVX2 kernels take 8 weight blocks at
   once with whole-register loads and one reduction (see there): block b's scale is
   d[b], 8 times the sum of its q is sum8[b] (Q4_0's offset: sum (w - 8) q = sum w q - sum8),
   and its q[0..15] and q[16..31] sit at swa__q8g_half(b, 0) and (b, 1): blocks b and b + 4
   share 64 bytes, first halves then second halves. A row's last group may be partial. */
typedef struct swa__q8g {
    float d[8];
    int32_t sum8[8];
    int8_t q[256];
} swa__q8g;

typedef struct swa__q8k {         /* 256 activations */
    float d;
    int8_t q[256];
    int16_t bsum[16];             /* sum of q[16 g .. 16 g + 15] */
} swa__q8k;

typedef float (*swa__dot_fn)(const void *row, const void *x, int64_t n);
typedef void (*swa__quantize_fn)(const float *x, void *out, int64_t n);
/* y[t * ldy + r] = dot(row r, token t) for r < nr and t < nt, within the type's tile (its
   swa__type_kernels.dots_rows x tile_tokens): row r at byte offset r * w_stride from w, token t
   at t * x_stride from x. A pair's result does not depend on the tile it is computed in, so a
   chunk's logits do not depend on its size. */
typedef void (*swa__dots_fn)(const void *w, size_t w_stride, int nr, const void *x, size_t x_stride,
                             int nt, int64_t n, float *y, int64_t ldy);
#define SWA__TILE_ROWS 3         /* the tile most kernels take, as AVX2's 16 registers allow */
#define SWA__TILE_TOKENS 4
#define SWA__TILE_MAX_ROWS 32    /* the most dots takes: AVX-512's float rows, in tiles of 4 x 6 */
#define SWA__FLOAT_ROWS_AVX2 30  /* the most AVX2's float dots take: whole tiles of 3 rows */
#define SWA__TILE_MAX_TOKENS 12  /* the most dots takes: AVX-512's rows of blocks of 32, in tiles of 16 x 12 */
#define SWA__FLOAT_TILE_ROWS 4
#define SWA__FLOAT_TILE_TOKENS 6 /* AVX-512's float tiles */
/* The attention's weighted sum of values: out[h * ldo + d] += sum over j < nk, in order, of
   p[h * ldp + j] * v_j[d], for nh <= SWA__TILE_TOKENS query heads sharing a value head; v_j at
   byte offset j * v_stride, hd values each. */
typedef void (*swa__wsum_fn)(float *out, int64_t ldo, int nh, const float *p, int64_t ldp, const uint8_t *v,
                             size_t v_stride, int64_t nk, int64_t hd);

enum { SWA__ACT_F32, SWA__ACT_Q8, SWA__ACT_Q8K };

typedef void (*swa__dequant_fn)(const void *row, float *out, int64_t n);
typedef void (*swa__store_fn)(const float *x, void *row, int64_t n);

typedef struct swa__type_info {
    uint32_t id;               /* its ggml type id: its index in swa__types (a test checks) */
    const char *name;
    int64_t block_size, block_bytes;
    int act;                   /* SWA__ACT_*: the form of the activations its rows meet */
    swa__dequant_fn dequant;   /* NULL: a type the library reads past but does not compute with */
    swa__dot_fn dot;
    swa__wsum_fn wsum;         /* cache types only */
    swa__store_fn store;       /* cache types only */
} swa__type_info;

#define SWA__N_TYPES 40

/* y[t * ldy + r] = dot(row r, token t) for nr rows (w_stride bytes apart) and n tokens packed
   by the type's pack; scratch: the thread's, of swa__kernels.gemm_memory. */
typedef void (*swa__gemm_fn)(const uint8_t *w, size_t w_stride, int64_t nr, const void *xpack, int64_t n, int64_t n_in,
                             float *y, int64_t ldy, void *scratch);
/* Q8 or Q8K activations of n tokens (x_stride bytes apart) into the form a gemm kernel reads. */
typedef void (*swa__pack_fn)(const uint8_t *xq, size_t x_stride, int64_t n, int64_t n_in, void *out);

/* What one instruction set does with rows of one type: the 1-token dot, the tile of rows x
   tokens (NULL: dot by dot), the rows widened to f32 for a prompt (NULL: none), the product
   with a whole batch of tokens (NULL: by tiles), the packing of the tokens it reads and the
   batch size from which it beats the tiles, and for cache types the weighted sum and the
   store. */
typedef struct swa__type_kernels {
    swa__dot_fn dot;
    swa__dots_fn dots;
    int tile_rows, tile_tokens;   /* the largest tile dots computes at once */
    int dots_rows;                /* the most rows a call of dots takes, in tiles (0: tile_rows) */
    size_t block_bytes;           /* weight rows per block of a prompt's tiles (swa__block_rows) */
    /* a row as exact f32 values, on which the set's F32 tiles give the bits this type's tiles
       give: a prompt widens each block of rows once instead of once a pass of tokens */
    swa__dequant_fn widen;
    swa__gemm_fn gemm;
    swa__pack_fn pack;
    int gemm_from;
    swa__wsum_fn wsum;
    swa__store_fn store;
} swa__type_kernels;

/* The kernels a context calls, filled by name in swa__kernels_setup. */
typedef struct swa__kernels {
    const char *name;
    swa__type_kernels type[SWA__N_TYPES];   /* by ggml type id */
    swa__quantize_fn quantize_q8, quantize_q8k;
    /* the gemm kernels' memory for n tokens of up to n_in columns: packed tokens, and scratch
       per thread */
    void (*gemm_memory)(int64_t n, int64_t n_in, uint64_t *pack_bytes, uint64_t *scratch_bytes);
    void (*rmsnorm)(float *out, const float *x, const float *w, int64_t n, float eps);
    void (*rope)(float *v, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float *cs);
    void (*softmax)(float *x, int64_t n);
    void (*swiglu)(float *gate, const float *up, int64_t n);
    void (*geglu)(float *gate, const float *up, int64_t n);
} swa__kernels;

#define SWA__KERNELS_LAST SWA_KERNELS_AMX

/* ---- JSON and text buffers (see their section) ---- */

#define SWA__JSON_MAX_DEPTH 256

typedef enum swa__json_kind {
    SWA__JSON_NULL, SWA__JSON_FALSE, SWA__JSON_TRUE, SWA__JSON_INT, SWA__JSON_REAL,
    SWA__JSON_STRING, SWA__JSON_ARRAY, SWA__JSON_OBJECT
} swa__json_kind;

typedef struct swa__json swa__json;
struct swa__json {
    swa__json_kind kind;
    const char *key;                  /* the member's name when this value sits in an object, else NULL */
    size_t key_len;
    const char *str;                  /* STRING: decoded UTF-8, NUL-terminated (len excludes it; may hold NUL) */
    size_t len;
    int64_t i;                        /* INT: the value (a literal without fraction or exponent that fits) */
    double num;                       /* INT and REAL: the value as a double */
    swa__json *items;                 /* ARRAY: elements; OBJECT: members (each with its key), in order */
    size_t n;
};

/* A growing text buffer. Every put is a no-op once failed is set (an allocation failed or the
   text would pass limit, 0 for none), so a writer checks once, at the end. */
typedef struct swa__buf {
    char *p;
    size_t n, cap, limit;
    int failed;
} swa__buf;

/* ---- what tests and benchmarks call (static unless SWA_INTERNALS) ---- */

SWA__INTERNAL float swa__f16_to_f32(uint16_t h);
SWA__INTERNAL float swa__bf16_to_f32(uint16_t h);
SWA__INTERNAL uint16_t swa__load_u16(const uint8_t *p);
SWA__INTERNAL uint16_t swa__f32_to_f16(float f);
SWA__INTERNAL int64_t swa__q8g_offset(int64_t b, int half);
SWA__INTERNAL const int8_t *swa__q8g_half(const swa__q8g *g, int64_t b, int half);
SWA__INTERNAL size_t swa__act_bytes(int kind, int64_t n);
SWA__INTERNAL const swa__type_info *swa__type(uint32_t type);
SWA__INTERNAL const swa__type_info *swa__type_row(uint32_t type);
SWA__INTERNAL int swa__act_kind(uint32_t type);
SWA__INTERNAL void swa__quantize_q8_ref(const float *x, void *out, int64_t n);
SWA__INTERNAL void swa__quantize_q8g(swa__quantize_fn quantize_q8, const float *x, void *out,
                                     int64_t n);
SWA__INTERNAL void swa__quantize_q8k_ref(const float *x, void *out, int64_t n);
SWA__INTERNAL void swa__dequant_row_ref(uint32_t type, const void *row, float *out, int64_t n);
SWA__INTERNAL float swa__dot_f32_ref(const void *row, const void *x, int64_t n);
SWA__INTERNAL float swa__dot_f16_ref(const void *row, const void *x, int64_t n);
SWA__INTERNAL float swa__dot_bf16_ref(const void *row, const void *x, int64_t n);
SWA__INTERNAL void swa__q4k_scales(const uint8_t *s, uint8_t *sc, uint8_t *m);
SWA__INTERNAL void swa__store_f16_ref(const float *x, void *out, int64_t n);
SWA__INTERNAL void swa__store_q8_0_ref(const float *x, void *row, int64_t n);
SWA__INTERNAL void swa__rmsnorm_ref(float *out, const float *x, const float *w, int64_t n,
                                    float eps);
SWA__INTERNAL void swa__rope_ref(float *v, int64_t n_heads, int64_t head_dim, int64_t n_rot,
                                 const float *cs);
SWA__INTERNAL void swa__softmax_ref(float *x, int64_t n);
SWA__INTERNAL void swa__swiglu_ref(float *gate, const float *up, int64_t n);
SWA__INTERNAL void swa__geglu_ref(float *gate, const float *up, int64_t n);
SWA__INTERNAL int32_t swa__kernels_resolve(int32_t asked);
SWA__INTERNAL void swa__kernels_setup(swa__kernels *k, int32_t level);
SWA__INTERNAL void swa__dot_rows(const swa__type_kernels *k, const uint8_t *w, size_t w_stride,
                                 int64_t n_rows, const uint8_t *x, size_t x_stride, int nt,
                                 int64_t n, float *y, int64_t ldy);
SWA__INTERNAL uint64_t swa__widen_bytes(const swa__type_kernels *k, int64_t n_in);
SWA__INTERNAL int64_t swa__block_rows(const swa__type_kernels *k, size_t row_bytes, int64_t n_in, int64_t tile);
SWA__INTERNAL void swa__dot_block(const swa__kernels *ks, uint32_t type, const uint8_t *w, size_t w_stride,
                                  int64_t n_rows, const uint8_t *x, size_t x_stride, int64_t n, int64_t n_in,
                                  float *y, int64_t ldy, void *scratch);
SWA__INTERNAL void swa__seq_jump(swa_ctx *c, int32_t seq, int64_t pos);
SWA__INTERNAL uint64_t swa__xxh64_of(const void *p, size_t n, size_t piece);
SWA__INTERNAL void swa__rope_angles(const double *inv_freq, int64_t half, double factor,
                                    int64_t pos, float *cs);
#if defined(SWA__HAVE_AMX)
SWA__INTERNAL int32_t swa__block_isum_ref(const uint8_t *w, uint32_t type, const swa__q8g *x,
                                          int64_t b);
SWA__INTERNAL void swa__residue_blocks_ref(const uint8_t *row, uint32_t type, const swa__q8g *x,
                                           int64_t b0, int64_t b1, float acc[16]);
SWA__INTERNAL float swa__residue_sum_ref(const float acc[16]);
#endif
SWA__INTERNAL swa_status swa__json_parse(const char *text, size_t len, swa__json **root, swa_error *err);
SWA__INTERNAL const swa__json *swa__json_get(const swa__json *obj, const char *key);
SWA__INTERNAL void swa__buf_json_string(swa__buf *b, const char *s, size_t n, int ensure_ascii);
#ifndef SWA_NO_TOKENIZER
SWA__INTERNAL swa_status swa__pretok_pieces(const char *name, const char *text, size_t len,
                                            size_t *ends, size_t cap, size_t *n_out,
                                            swa_error *err);
#endif
#endif /* SWA__DECLARED */

#ifdef SWA_IMPLEMENTATION
#ifndef SWA__IMPLEMENTED
#define SWA__IMPLEMENTED

/* ==== utilities ==== */

static swa_status swa__fail(swa_error *err, swa_status code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
#if defined(__MINGW32__)   /* MinGW's own C99 formatting: msvcrt's knows no %zu */
        __mingw_vsnprintf(err->msg, sizeof err->msg, fmt, ap);
#else
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
#endif
        va_end(ap);
    }
    return code;
}

/* Name k of n into buf (cap bytes, *len used) as prose, "a, b and c", for the messages that
   list what a table supports; a list too long for buf is cut. */
static void swa__list_add(char *buf, size_t cap, size_t *len, const char *name, int k, int n)
{
    int w = snprintf(buf + *len, cap - *len, "%s%s", k == 0 ? "" : k == n - 1 ? " and " : ", ", name);
    if (w > 0) *len = *len + (size_t)w < cap ? *len + (size_t)w : cap - 1;
}

/* Put "prefix: " in front of the message already in err, cutting at the buffer's end. */
static void swa__prefix_error(swa_error *err, const char *prefix)
{
    char msg[sizeof err->msg];
    size_t used = 0, cap = sizeof err->msg - 1, n;
    if (!err) return;
    memcpy(msg, err->msg, sizeof msg);
    msg[sizeof msg - 1] = '\0';
    n = strlen(prefix) < cap ? strlen(prefix) : cap;
    memcpy(err->msg, prefix, n);
    used = n;
    n = cap - used < 2 ? cap - used : 2;
    memcpy(err->msg + used, ": ", n);
    used += n;
    n = strlen(msg) < cap - used ? strlen(msg) : cap - used;
    memcpy(err->msg + used, msg, n);
    err->msg[used + n] = '\0';
}

static void swa__ok(swa_error *err)
{
    if (err) {
        err->code = SWA_OK;
        err->msg[0] = '\0';
    }
}

/* The first 64-byte line at or after p: a buffer given 63 bytes of slack starts there. */
static void *swa__line_up(void *p) { return (void *)(((uintptr_t)p + 63) & ~(uintptr_t)63); }

/* Overflow-checked size arithmetic: return 0 on overflow, else store the result. */
static int swa__mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    if (a != 0 && b > UINT64_MAX / a) return 0;
    *out = a * b;
    return 1;
}

static int swa__add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    if (b > UINT64_MAX - a) return 0;
    *out = a + b;
    return 1;
}

static void *swa__calloc(uint64_t n, uint64_t size)
{
    uint64_t bytes;
    void *p;
    if (!swa__mul_u64(n, size, &bytes) || bytes > (uint64_t)SIZE_MAX) return NULL;
    if (bytes == 0) bytes = 1;
    p = SWA_MALLOC((size_t)bytes);
    if (p) memset(p, 0, (size_t)bytes);
    return p;
}

static int swa__str_eq(swa_str s, const char *z)
{
    size_t n = strlen(z);
    return s.len == n && memcmp(s.ptr, z, n) == 0;
}

/* UTF-8: the length a lead byte announces (1 for a stray byte), one code point written, and one read.
   The tokenizer, JSON, grammars and templates share them; some builds leave them uncalled. */
SWA__UNUSED static size_t swa__utf8_len(unsigned char c)
{
    return c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
}

SWA__UNUSED static size_t swa__utf8_put(uint32_t c, char *out)
{
    if (c < 0x80) { out[0] = (char)c; return 1; }
    if (c < 0x800) { out[0] = (char)(0xC0 | (c >> 6)); out[1] = (char)(0x80 | (c & 0x3F)); return 2; }
    if (c < 0x10000) {
        out[0] = (char)(0xE0 | (c >> 12)); out[1] = (char)(0x80 | ((c >> 6) & 0x3F)); out[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (c >> 18)); out[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((c >> 6) & 0x3F)); out[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

/* One UTF-8 character of p[0..n): its code point and length. A byte that does not start a
   well-formed character is a character of its own, 0x110000 + the byte. */
SWA__UNUSED static uint32_t swa__utf8_get(const unsigned char *p, size_t n, size_t *len)
{
    size_t k = swa__utf8_len(p[0]), i;
    uint32_t c = p[0];
    *len = 1;
    if (k == 1) return c < 0x80 ? c : 0x110000 + c;
    if (k > n) return 0x110000 + c;
    c &= 0x7Fu >> k;
    for (i = 1; i < k; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0x110000 + p[0];
        c = (c << 6) | (p[i] & 0x3F);
    }
    if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF) || c < (k == 2 ? 0x80u : k == 3 ? 0x800u : 0x10000u))
        return 0x110000 + p[0];
    *len = k;
    return c;
}

static uint64_t swa__hash(const char *p, size_t n)   /* FNV-1a */
{
    uint64_t h = 1469598103934665603ull;
    size_t i;
    for (i = 0; i < n; i++) h = (h ^ (uint8_t)p[i]) * 1099511628211ull;
    return h;
}

/* XXH64 (Yann Collet's xxHash, 64-bit, seed 0), fed in pieces: the snapshots' checksum. It
   reads 8 bytes a step with a few multiplies, so checking a snapshot costs little beside
   copying it, and any change of the payload changes it (unlike a sum); a published, widely
   implemented function, so a snapshot can be checked outside this library. */
typedef struct swa__xxh64 {
    uint64_t v[4], total;
    uint8_t buf[32];
    size_t n_buf;
} swa__xxh64;

#define SWA__P64_1 0x9E3779B185EBCA87ull
#define SWA__P64_2 0xC2B2AE3D27D4EB4Full
#define SWA__P64_3 0x165667B19E3779F9ull
#define SWA__P64_4 0x85EBCA77C2B2AE63ull
#define SWA__P64_5 0x27D4EB2F165667C5ull

static uint64_t swa__rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static uint64_t swa__le64(const uint8_t *p)
{
    uint64_t v = 0;
    int i;
    for (i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static uint64_t swa__xxh64_round(uint64_t acc, uint64_t input)
{
    return swa__rotl64(acc + input * SWA__P64_2, 31) * SWA__P64_1;
}

static void swa__xxh64_init(swa__xxh64 *h)
{
    memset(h, 0, sizeof *h);
    h->v[0] = SWA__P64_1 + SWA__P64_2;
    h->v[1] = SWA__P64_2;
    h->v[3] = (uint64_t)0 - SWA__P64_1;
}

static void swa__xxh64_update(swa__xxh64 *h, const void *data, size_t n)
{
    const uint8_t *p = (const uint8_t *)data;
    int i;
    h->total += n;
    if (h->n_buf) {
        size_t take = 32 - h->n_buf < n ? 32 - h->n_buf : n;
        memcpy(h->buf + h->n_buf, p, take);
        h->n_buf += take;
        p += take;
        n -= take;
        if (h->n_buf < 32) return;
        for (i = 0; i < 4; i++) h->v[i] = swa__xxh64_round(h->v[i], swa__le64(h->buf + 8 * i));
        h->n_buf = 0;
    }
    for (; n >= 32; p += 32, n -= 32)
        for (i = 0; i < 4; i++) h->v[i] = swa__xxh64_round(h->v[i], swa__le64(p + 8 * i));
    memcpy(h->buf, p, n);
    h->n_buf = n;
}

static uint64_t swa__xxh64_final(const swa__xxh64 *h)
{
    const uint8_t *p = h->buf, *end = h->buf + h->n_buf;
    uint64_t x;
    int i;
    if (h->total >= 32) {
        x = swa__rotl64(h->v[0], 1) + swa__rotl64(h->v[1], 7) + swa__rotl64(h->v[2], 12) + swa__rotl64(h->v[3], 18);
        for (i = 0; i < 4; i++) x = (x ^ swa__xxh64_round(0, h->v[i])) * SWA__P64_1 + SWA__P64_4;
    } else {
        x = SWA__P64_5;
    }
    x += h->total;
    for (; end - p >= 8; p += 8) x = swa__rotl64(x ^ swa__xxh64_round(0, swa__le64(p)), 27) * SWA__P64_1 + SWA__P64_4;
    if (end - p >= 4) {
        uint64_t w = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
        x = swa__rotl64(x ^ w * SWA__P64_1, 23) * SWA__P64_2 + SWA__P64_3;
        p += 4;
    }
    for (; p < end; p++) x = swa__rotl64(x ^ (uint64_t)*p * SWA__P64_5, 11) * SWA__P64_1;
    x = (x ^ (x >> 33)) * SWA__P64_2;
    x = (x ^ (x >> 29)) * SWA__P64_3;
    return x ^ (x >> 32);
}

/* For tests: the XXH64 of n bytes, fed in pieces of `piece` bytes (0: at once). */
SWA__INTERNAL uint64_t swa__xxh64_of(const void *p, size_t n, size_t piece)
{
    swa__xxh64 h;
    size_t at = 0;
    swa__xxh64_init(&h);
    if (!piece) piece = n ? n : 1;
    for (; at < n; at += piece) swa__xxh64_update(&h, (const uint8_t *)p + at, n - at < piece ? n - at : piece);
    return swa__xxh64_final(&h);
}

static int swa__host_is_little_endian(void)
{
    const uint16_t one = 1;
    uint8_t first;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* IEEE half to float, with subnormals, infinities and NaNs. */
SWA__INTERNAL float swa__f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ffu;
    uint32_t bits;
    float f;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else if (exp != 0) {
        bits = sign | ((exp + 112) << 23) | (mant << 13);
    } else {
        /* zero or subnormal: mant * 2^-24, exact in float */
        f = (float)mant * (1.0f / 16777216.0f);
        return sign ? -f : f;
    }
    memcpy(&f, &bits, 4);
    return f;
}

SWA__INTERNAL float swa__bf16_to_f32(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

SWA__INTERNAL uint16_t swa__load_u16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }

SWADEF const char *swa_status_str(swa_status s)
{
    switch (s) {
    case SWA_OK: return "SWA_OK";
    case SWA_ERR_INVALID_ARG: return "SWA_ERR_INVALID_ARG";
    case SWA_ERR_IO: return "SWA_ERR_IO";
    case SWA_ERR_FORMAT: return "SWA_ERR_FORMAT";
    case SWA_ERR_UNSUPPORTED: return "SWA_ERR_UNSUPPORTED";
    case SWA_ERR_MODEL: return "SWA_ERR_MODEL";
    case SWA_ERR_NOMEM: return "SWA_ERR_NOMEM";
    case SWA_ERR_CONTEXT_FULL: return "SWA_ERR_CONTEXT_FULL";
    case SWA_ERR_NOT_FOUND: return "SWA_ERR_NOT_FOUND";
    case SWA_ERR_BUFFER_TOO_SMALL: return "SWA_ERR_BUFFER_TOO_SMALL";
    case SWA_ERR_ABORTED: return "SWA_ERR_ABORTED";
    }
    return "SWA_ERR_UNKNOWN";
}

#define SWA__STR(x) #x
#define SWA__VERSION_STR(a, b, c) SWA__STR(a) "." SWA__STR(b) "." SWA__STR(c)
SWADEF const char *swa_version(void) { return SWA__VERSION_STR(SWA_VERSION_MAJOR, SWA_VERSION_MINOR, SWA_VERSION_PATCH); }
#undef SWA__VERSION_STR
#undef SWA__STR

/* ==== platform: mapping a file ====
   One flow for every system (open, size, then map or read, close) over a few primitives each
   system provides: POSIX open/mmap/read, Windows CreateFile/CreateFileMapping/ReadFile. With
   SWA_NO_MMAP every file is read into memory. */

#if defined(__linux__) && !defined(SWA_NO_MMAP)
/* glibc and musl declare madvise and its advice values only when the including file defined
   _DEFAULT_SOURCE or _GNU_SOURCE before its first system header; the kernel takes them
   whatever the headers showed. So where they are hidden the library declares the call itself
   and uses the kernel's numbers (the same on these architectures), and its behaviour does not
   depend on what the host included first. */
#if !defined(MADV_HUGEPAGE) && (defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) || \
                                defined(__arm__) || defined(__riscv))
int madvise(void *addr, size_t len, int advice);
#define MADV_HUGEPAGE 14
#endif
#if !defined(MADV_POPULATE_READ) && defined(MADV_HUGEPAGE)
#define MADV_POPULATE_READ 22       /* Linux 5.14; older kernels refuse it, which changes nothing */
#endif
#endif

typedef struct swa__file {
    const uint8_t *data;
    uint64_t size;
    swa_load_path how;   /* SWA_LOAD_MAPPED*: unmap; SWA_LOAD_READ: SWA_FREE the block */
    void *block;         /* SWA_LOAD_READ: SWA_MALLOC's, data at its first 64-byte line */
} swa__file;

#if defined(_WIN32)
typedef HANDLE swa__fd;
#define SWA__NO_FD INVALID_HANDLE_VALUE

/* The message of Windows error `code`, without its line break; "error N" if it has none. */
static void swa__win_error(DWORD code, char *buf, size_t cap)
{
    DWORD n = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, code, 0, buf,
                             (DWORD)cap, NULL);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == '.')) buf[--n] = '\0';
    if (n == 0) snprintf(buf, cap, "error %lu", (unsigned long)code);
}

static swa_status swa__fd_open(const char *path, swa__fd *fd, uint64_t *size, swa_error *err)
{
    char why[256];
    LARGE_INTEGER n;
    *fd = CreateFileA(path, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
    if (*fd == INVALID_HANDLE_VALUE) {
        swa__win_error(GetLastError(), why, sizeof why);
        return swa__fail(err, SWA_ERR_IO, "%s: cannot open: %s", path, why);
    }
    if (GetFileType(*fd) != FILE_TYPE_DISK || !GetFileSizeEx(*fd, &n) || n.QuadPart < 0) {
        CloseHandle(*fd);
        return swa__fail(err, SWA_ERR_IO, "%s: not a regular file", path);
    }
    *size = (uint64_t)n.QuadPart;
    return SWA_OK;
}

static void swa__fd_close(swa__fd fd) { CloseHandle(fd); }

#ifndef SWA_NO_MMAP
/* NULL on failure, with the reason in why. */
static const uint8_t *swa__fd_map(swa__fd fd, uint64_t size, char *why, size_t cap)
{
    HANDLE m = CreateFileMappingA(fd, NULL, PAGE_READONLY, 0, 0, NULL);
    void *p = m ? MapViewOfFile(m, FILE_MAP_READ, 0, 0, 0) : NULL;
    if (!p) swa__win_error(GetLastError(), why, cap);
    if (m) CloseHandle(m);      /* the view keeps the mapping alive */
    (void)size;
    return (const uint8_t *)p;
}

static void swa__unmap(const uint8_t *p, uint64_t size)
{
    (void)size;
    UnmapViewOfFile(p);
}
#endif

/* Read size bytes; 0, or -1 with *got the bytes read before the failure. */
static int swa__fd_read(swa__fd fd, uint8_t *buf, uint64_t size, uint64_t *got)
{
    for (*got = 0; *got < size;) {
        DWORD want = size - *got > (1u << 30) ? (DWORD)(1u << 30) : (DWORD)(size - *got), r = 0;
        if (!ReadFile(fd, buf + *got, want, &r, NULL) || r == 0) return -1;
        *got += r;
    }
    return 0;
}
#else
typedef int swa__fd;

static swa_status swa__fd_open(const char *path, swa__fd *fd, uint64_t *size, swa_error *err)
{
    struct stat st;
    *fd = open(path, O_RDONLY);
    if (*fd < 0) return swa__fail(err, SWA_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(*fd);
        return swa__fail(err, SWA_ERR_IO, "%s: not a regular file", path);
    }
    *size = (uint64_t)st.st_size;
    return SWA_OK;
}

static void swa__fd_close(swa__fd fd) { close(fd); }

#ifndef SWA_NO_MMAP
static const uint8_t *swa__fd_map(swa__fd fd, uint64_t size, char *why, size_t cap)
{
    void *p = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) return (const uint8_t *)p;
    snprintf(why, cap, "%s", strerror(errno));
    return NULL;
}

static void swa__unmap(const uint8_t *p, uint64_t size) { munmap((void *)(uintptr_t)p, (size_t)size); }
#endif

static int swa__fd_read(swa__fd fd, uint8_t *buf, uint64_t size, uint64_t *got)
{
    for (*got = 0; *got < size;) {
        size_t want = size - *got > ((size_t)1 << 30) ? (size_t)1 << 30 : (size_t)(size - *got);
        ssize_t r = read(fd, buf + *got, want);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        *got += (uint64_t)r;
    }
    return 0;
}
#endif

#ifndef SWA_NO_STDIO
static unsigned long swa__process_id(void)
{
#if defined(_WIN32)
    return (unsigned long)GetCurrentProcessId();
#else
    return (unsigned long)getpid();
#endif
}

/* Writing a file: create it (it must not exist), write, flush to the disk, close; then put it
   in place of another, atomically (rename; MoveFileEx on Windows, whose rename does not
   replace). Each returns 0 on success, else the system's reason in why. */
#if defined(_WIN32)
static int swa__fd_create(const char *path, swa__fd *fd, char *why, size_t cap)
{
    *fd = CreateFileA(path, GENERIC_WRITE, 0, NULL, CREATE_NEW, FILE_ATTRIBUTE_NORMAL, NULL);
    if (*fd != INVALID_HANDLE_VALUE) return 0;
    swa__win_error(GetLastError(), why, cap);
    return -1;
}

static int swa__fd_write(swa__fd fd, const uint8_t *p, size_t n, char *why, size_t cap)
{
    while (n > 0) {
        DWORD want = n > (1u << 30) ? (DWORD)(1u << 30) : (DWORD)n, w = 0;
        if (!WriteFile(fd, p, want, &w, NULL) || w == 0) {
            swa__win_error(GetLastError(), why, cap);
            return -1;
        }
        p += w;
        n -= w;
    }
    return 0;
}

static int swa__fd_finish(swa__fd fd, char *why, size_t cap)
{
    int ok = FlushFileBuffers(fd) != 0;
    if (!ok) swa__win_error(GetLastError(), why, cap);
    return CloseHandle(fd) && ok ? 0 : -1;
}

static int swa__replace_file(const char *from, const char *to, char *why, size_t cap)
{
    if (MoveFileExA(from, to, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) return 0;
    swa__win_error(GetLastError(), why, cap);
    return -1;
}
#else
static int swa__fd_create(const char *path, swa__fd *fd, char *why, size_t cap)
{
    *fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0666);
    if (*fd >= 0) return 0;
    snprintf(why, cap, "%s", strerror(errno));
    return -1;
}

static int swa__fd_write(swa__fd fd, const uint8_t *p, size_t n, char *why, size_t cap)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n > ((size_t)1 << 30) ? (size_t)1 << 30 : n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            snprintf(why, cap, "%s", w < 0 ? strerror(errno) : "nothing written");
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int swa__fd_finish(swa__fd fd, char *why, size_t cap)
{
    int synced = fsync(fd) == 0;
    if (!synced) snprintf(why, cap, "%s", strerror(errno));
    if (close(fd) != 0) {
        if (synced) snprintf(why, cap, "%s", strerror(errno));
        return -1;
    }
    return synced ? 0 : -1;
}

static int swa__replace_file(const char *from, const char *to, char *why, size_t cap)
{
    if (rename(from, to) == 0) return 0;
    snprintf(why, cap, "%s", strerror(errno));
    return -1;
}
#endif
#endif /* SWA_NO_STDIO */

static void swa__file_close(swa__file *f)
{
    if (!f->data) return;
#if !defined(SWA_NO_MMAP)
    if (f->how == SWA_LOAD_MAPPED || f->how == SWA_LOAD_MAPPED_HUGE) swa__unmap(f->data, f->size);
    else
#endif
        SWA_FREE(f->block);
    f->data = NULL;
}

/* Every token reads all the weights, and with 4 KB pages each page is a TLB miss, which in a
   virtual machine costs about as much as reading the page. Advised so, Linux backs anonymous
   memory with 2 MB pages, and a mapped file too where the filesystem keeps large page-cache
   folios, for the parts this mapping reads from disk; pages cached before, by a write or by a
   read without the advice, stay as they are. The advice covers the 2 MB-aligned pages inside
   [p, p + n), an address range (whose bytes need not have been written yet). 1 when the
   system accepted it; advice only, so a refusal is no error. */
static int swa__advise_huge_pages(uintptr_t p, size_t n)
{
#if !defined(SWA_NO_MMAP) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t lo = (p + huge - 1) & ~(huge - 1), hi = (p + n) & ~(huge - 1);
    return hi > lo && madvise((void *)lo, (size_t)(hi - lo), MADV_HUGEPAGE) == 0;
#else
    (void)p; (void)n;
    return 0;
#endif
}

/* A load's progress callback, and whether it asked to stop. */
typedef struct swa__progress {
    swa_progress_fn fn;
    void *data;
    int cancelled;
} swa__progress;

#define SWA__LOAD_STEP ((uint64_t)64 << 20)   /* bytes between progress calls */

/* Report done of total; 0 once the callback has asked to stop. */
static int swa__report(swa__progress *p, uint64_t done, uint64_t total)
{
    if (p && p->fn && !p->cancelled && p->fn(total ? (float)((double)done / (double)total) : 1.0f, p->data)) p->cancelled = 1;
    return !(p && p->cancelled);
}

/* A model's mapping is faulted in whole at load, in file order, as llama.cpp's MAP_POPULATE
   does: the read a first token would do anyway, but sequential, so that the kernel caches the
   whole file in large folios; read in the order the loader and a forward pass take the
   tensors, each jump would start small ones. A file already cached costs only the page
   tables. Advice only, like the other. */
static int swa__populate(const swa__file *f, swa__progress *p)
{
    uint64_t at;
    if (f->how != SWA_LOAD_MAPPED && f->how != SWA_LOAD_MAPPED_HUGE) return 1;   /* read in: reported then */
    for (at = 0; at < f->size; at += SWA__LOAD_STEP) {
#if !defined(SWA_NO_MMAP) && defined(MADV_POPULATE_READ)
        uint64_t n = f->size - at < SWA__LOAD_STEP ? f->size - at : SWA__LOAD_STEP;
        (void)madvise((void *)(uintptr_t)(f->data + at), (size_t)n, MADV_POPULATE_READ);
#endif
        if (!swa__report(p, at + SWA__LOAD_STEP < f->size ? at + SWA__LOAD_STEP : f->size, f->size)) return 0;
    }
    return 1;
}

/* The whole file read into memory from SWA_MALLOC, advised to use 2 MB pages (which anonymous
   memory gets however the file was cached). The file starts on a 64-byte line, as a mapping
   starts on a page: its tensors then lie on lines as far as the file's alignment goes, and the
   kernels' 32- and 64-byte loads of a row cross no more lines than in a mapped file. */
static swa_status swa__file_read(swa__fd fd, const char *path, swa__file *f, swa__progress *p, swa_error *err)
{
    void *block = f->size < (uint64_t)SIZE_MAX - 63 ? SWA_MALLOC((size_t)f->size + 63) : NULL;
    uint8_t *buf;
    uint64_t at, got;
    if (!block) return swa__fail(err, SWA_ERR_NOMEM, "%s: cannot allocate %llu bytes", path, (unsigned long long)f->size);
    buf = (uint8_t *)swa__line_up(block);
    (void)swa__advise_huge_pages((uintptr_t)buf, (size_t)f->size);
    f->data = buf;
    f->block = block;
    f->how = SWA_LOAD_READ;
    for (at = 0; at < f->size; at += got) {
        uint64_t n = f->size - at < SWA__LOAD_STEP ? f->size - at : SWA__LOAD_STEP;
        if (swa__fd_read(fd, buf + at, n, &got) != 0)
            return swa__fail(err, SWA_ERR_IO, "%s: read failed at byte %llu", path, (unsigned long long)(at + got));
        if (!swa__report(p, at + got, f->size)) return swa__fail(err, SWA_ERR_ABORTED, "%s: loading cancelled", path);
    }
    return SWA_OK;
}

/* Map the file, or with `resident` (or SWA_NO_MMAP) read it into memory, reporting to p. */
static swa_status swa__file_open(const char *path, int resident, swa__progress *p, swa__file *f, swa_error *err)
{
    swa_status s;
    swa__fd fd;
    memset(f, 0, sizeof *f);
    if ((s = swa__fd_open(path, &fd, &f->size, err)) != SWA_OK) return s;
    if (f->size == 0 || f->size > (uint64_t)SIZE_MAX) {
        swa__fd_close(fd);
        return swa__fail(err, f->size ? SWA_ERR_NOMEM : SWA_ERR_FORMAT,
                         "%s: file size %llu cannot be used", path, (unsigned long long)f->size);
    }
#ifndef SWA_NO_MMAP
    if (!resident) {
        char why[256];
        f->data = swa__fd_map(fd, f->size, why, sizeof why);
        swa__fd_close(fd);
        if (!f->data) return swa__fail(err, SWA_ERR_IO, "%s: cannot map: %s", path, why);
        f->how = swa__advise_huge_pages((uintptr_t)f->data, (size_t)f->size) ? SWA_LOAD_MAPPED_HUGE : SWA_LOAD_MAPPED;
        return SWA_OK;
    }
#else
    (void)resident;
#endif
    s = swa__file_read(fd, path, f, p, err);
    swa__fd_close(fd);
    if (s != SWA_OK) swa__file_close(f);
    return s;
}

#if defined(__APPLE__)
/* Declared here: <sys/sysctl.h> does not compile when the host defined _POSIX_C_SOURCE. */
int sysctlbyname(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);
#endif

static int32_t swa__online_cpus(void)
{
    long n;
#if defined(_WIN32)
    n = (long)GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
#elif defined(__APPLE__)
    int k = 0;
    size_t len = sizeof k;
    n = sysctlbyname("hw.activecpu", &k, &len, NULL, 0) == 0 ? k : 1;
#else
    n = sysconf(_SC_NPROCESSORS_ONLN);
#endif
    return n < 1 ? 1 : n > SWA__MAX_THREADS ? SWA__MAX_THREADS : (int32_t)n;
}

SWADEF int32_t swa_cpu_count(void) { return swa__online_cpus(); }

/* ---- platform: threads, locks and atomics, and the pool's state (its workers come later) ---- */

typedef void (*swa__task_fn)(void *arg, int share, int n_shares);

#ifndef SWA_NO_THREADS
/* The few threading primitives the pool needs: Win32 threads, slim reader/writer locks and
   condition variables on Windows, pthreads elsewhere; atomics from the compiler (GCC and clang
   builtins, MSVC's _Interlocked functions, whose full barriers are at least as strong). */
#if defined(_WIN32)
typedef HANDLE swa__thread;
typedef SRWLOCK swa__mutex;
typedef CONDITION_VARIABLE swa__cond;
static int swa__mutex_init(swa__mutex *m) { InitializeSRWLock(m); return 0; }
static void swa__mutex_destroy(swa__mutex *m) { (void)m; }
static void swa__mutex_lock(swa__mutex *m) { AcquireSRWLockExclusive(m); }
static void swa__mutex_unlock(swa__mutex *m) { ReleaseSRWLockExclusive(m); }
static int swa__cond_init(swa__cond *c) { InitializeConditionVariable(c); return 0; }
static void swa__cond_destroy(swa__cond *c) { (void)c; }
static void swa__cond_wait(swa__cond *c, swa__mutex *m) { SleepConditionVariableSRW(c, m, INFINITE, 0); }
static void swa__cond_signal(swa__cond *c) { WakeConditionVariable(c); }
static void swa__cond_broadcast(swa__cond *c) { WakeAllConditionVariable(c); }
#else
typedef pthread_t swa__thread;
typedef pthread_mutex_t swa__mutex;
typedef pthread_cond_t swa__cond;
static int swa__mutex_init(swa__mutex *m) { return pthread_mutex_init(m, NULL); }
static void swa__mutex_destroy(swa__mutex *m) { pthread_mutex_destroy(m); }
static void swa__mutex_lock(swa__mutex *m) { pthread_mutex_lock(m); }
static void swa__mutex_unlock(swa__mutex *m) { pthread_mutex_unlock(m); }
static int swa__cond_init(swa__cond *c) { return pthread_cond_init(c, NULL); }
static void swa__cond_destroy(swa__cond *c) { pthread_cond_destroy(c); }
static void swa__cond_wait(swa__cond *c, swa__mutex *m) { pthread_cond_wait(c, m); }
static void swa__cond_signal(swa__cond *c) { pthread_cond_signal(c); }
static void swa__cond_broadcast(swa__cond *c) { pthread_cond_broadcast(c); }
#endif

#if defined(_MSC_VER) && !defined(__clang__)
static uint64_t swa__load_u64(const uint64_t *p) { return (uint64_t)_InterlockedOr64((volatile __int64 *)(uintptr_t)p, 0); }
static void swa__store_u64(uint64_t *p, uint64_t v) { _InterlockedExchange64((volatile __int64 *)p, (__int64)v); }
static int swa__cas_u64(uint64_t *p, uint64_t *expected, uint64_t desired)
{
    __int64 seen = _InterlockedCompareExchange64((volatile __int64 *)p, (__int64)desired, (__int64)*expected);
    if ((uint64_t)seen == *expected) return 1;
    *expected = (uint64_t)seen;
    return 0;
}
static int swa__load_int(const int *p) { return (int)_InterlockedOr((volatile long *)(uintptr_t)p, 0); }
static void swa__store_int(int *p, int v) { _InterlockedExchange((volatile long *)p, (long)v); }
static int swa__sub_int(int *p, int v) { return (int)_InterlockedExchangeAdd((volatile long *)p, -(long)v) - v; }
static void *swa__load_ptr(void *const *p) { return _InterlockedCompareExchangePointer((void *volatile *)(uintptr_t)p, NULL, NULL); }
static void swa__store_ptr(void **p, void *v) { _InterlockedExchangePointer((void *volatile *)p, v); }
#elif defined(__GNUC__) || defined(__clang__)
static uint64_t swa__load_u64(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static void swa__store_u64(uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static int swa__cas_u64(uint64_t *p, uint64_t *expected, uint64_t desired)
{
    return __atomic_compare_exchange_n(p, expected, desired, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
static int swa__load_int(const int *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static void swa__store_int(int *p, int v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static int swa__sub_int(int *p, int v) { return __atomic_sub_fetch(p, v, __ATOMIC_ACQ_REL); }
static void *swa__load_ptr(void *const *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
static void swa__store_ptr(void **p, void *v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
#else
#error "swa.h: the thread pool needs the atomics of GCC, clang or MSVC"
#endif
#endif

/* Take a counter's value and add 1, atomically; relaxed: the pool's barriers
   order the rest, and a counter that only makes names unique needs no order. */
static int64_t swa__fetch_inc_i64(int64_t *p)
{
#if defined(_MSC_VER) && !defined(__clang__)
    return (int64_t)_InterlockedExchangeAdd64((volatile __int64 *)p, 1);
#elif defined(__GNUC__) || defined(__clang__)
    return __atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
#else
#error "swa.h: counters need the atomics of GCC, clang or MSVC"
#endif
}

typedef struct swa__pool {
    int n;                       /* threads, the caller included; a task has n shares */
#ifndef SWA_NO_THREADS
    int started;                 /* workers running */
    swa__thread *threads;        /* [n - 1] */
    swa__mutex mu;
    swa__cond start, done;
    uint64_t claim;              /* atomic: task number << 16 | the next share to claim */
    uint64_t task;               /* the current task's number (the caller's own) */
    int unfinished;              /* atomic: shares of the current task not yet done */
    int quit;                    /* atomic; written under mu */
    void *fn;                    /* atomic swa__task_fn; published by the release store of claim */
    void *arg;                   /* atomic; likewise */
#endif
} swa__pool;

/* ==== GGUF reader ==== */

typedef struct swa__kv {
    swa_str key;
    swa_gguf_value value;
} swa__kv;

typedef struct swa__name_table {    /* open addressing: slot -> index, -1 when empty */
    int64_t *slots;
    uint64_t mask;
} swa__name_table;

struct swa_gguf {
    swa__file file;                 /* owned mapping; file.data == NULL for caller memory */
    const uint8_t *base;
    uint64_t size;
    uint32_t version;
    uint64_t alignment;
    uint64_t data_offset;
    int64_t n_kv;
    swa__kv *kv;                    /* [n_kv] */
    int64_t n_tensors;
    swa_gguf_tensor *tensors;       /* [n_tensors] */
    swa__name_table kv_names, tensor_names;
};

typedef struct swa__cursor {
    const uint8_t *base;
    uint64_t size, pos;
    swa_error *err;
} swa__cursor;

static uint64_t swa__remaining(const swa__cursor *c) { return c->size - c->pos; }

static swa_status swa__need(swa__cursor *c, uint64_t n, const char *what)
{
    if (n > swa__remaining(c))
        return swa__fail(c->err, SWA_ERR_FORMAT,
                         "%s: needs %llu bytes at offset %llu, the file has %llu", what,
                         (unsigned long long)n, (unsigned long long)c->pos,
                         (unsigned long long)c->size);
    return SWA_OK;
}

static swa_status swa__read(swa__cursor *c, void *dst, uint64_t n, const char *what)
{
    swa_status s = swa__need(c, n, what);
    if (s != SWA_OK) return s;
    memcpy(dst, c->base + c->pos, (size_t)n);
    c->pos += n;
    return SWA_OK;
}

static swa_status swa__read_u32(swa__cursor *c, uint32_t *v, const char *what) { return swa__read(c, v, 4, what); }
static swa_status swa__read_u64(swa__cursor *c, uint64_t *v, const char *what) { return swa__read(c, v, 8, what); }

static swa_status swa__read_str(swa__cursor *c, swa_str *s, uint64_t max_len, const char *what)
{
    uint64_t len;
    swa_status st = swa__read_u64(c, &len, what);
    if (st != SWA_OK) return st;
    if (len > max_len)
        return swa__fail(c->err, SWA_ERR_FORMAT, "%s: string length %llu at offset %llu exceeds %llu",
                         what, (unsigned long long)len, (unsigned long long)(c->pos - 8),
                         (unsigned long long)max_len);
    if ((st = swa__need(c, len, what)) != SWA_OK) return st;
    s->ptr = (const char *)(c->base + c->pos);
    s->len = (size_t)len;
    c->pos += len;
    return SWA_OK;
}

static uint64_t swa__gguf_scalar_size(uint32_t type)   /* 0 for strings, arrays, unknown */
{
    static const uint8_t sizes[13] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return type < 13 ? sizes[type] : 0;
}

SWADEF const char *swa_gguf_type_name(swa_gguf_type t)
{
    static const char *names[13] = {"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool",
                                    "string", "array", "u64", "i64", "f64"};
    return (unsigned)t < 13 ? names[t] : "?";
}

/* Validate one value of the given type at the cursor and step over it. `key` names the
   metadata entry for messages. Arrays recurse, at most SWA__MAX_ARRAY_DEPTH deep. */
static swa_status swa__skip_value(swa__cursor *c, uint32_t type, int depth, swa_str key)
{
    uint64_t size = swa__gguf_scalar_size(type);
    swa_status s;
    if (size) {
        if (swa__remaining(c) < size)
            return swa__fail(c->err, SWA_ERR_FORMAT, "key %.*s: value runs past the end of the file",
                             (int)key.len, key.ptr);
        c->pos += size;
        return SWA_OK;
    }
    if (type == SWA_GGUF_STRING) {
        swa_str str;
        s = swa__read_str(c, &str, UINT64_MAX, "string value");
        if (s != SWA_OK)
            return swa__fail(c->err, s, "key %.*s: string runs past the end of the file",
                             (int)key.len, key.ptr);
        return SWA_OK;
    }
    if (type == SWA_GGUF_ARRAY) {
        uint32_t elem_type;
        uint64_t n, i, elem_size, min_elem;
        if (depth >= SWA__MAX_ARRAY_DEPTH)
            return swa__fail(c->err, SWA_ERR_FORMAT, "key %.*s: arrays nested deeper than %d levels",
                             (int)key.len, key.ptr, SWA__MAX_ARRAY_DEPTH);
        if (swa__read_u32(c, &elem_type, "array type") != SWA_OK ||
            swa__read_u64(c, &n, "array length") != SWA_OK)
            return swa__fail(c->err, SWA_ERR_FORMAT, "key %.*s: array header runs past the end of the file",
                             (int)key.len, key.ptr);
        if (elem_type > SWA_GGUF_F64)
            return swa__fail(c->err, SWA_ERR_FORMAT, "key %.*s: unknown array element type %u",
                             (int)key.len, key.ptr, elem_type);
        elem_size = swa__gguf_scalar_size(elem_type);
        /* reject impossible lengths before looping: every element takes at least this much */
        min_elem = elem_size ? elem_size : (elem_type == SWA_GGUF_STRING ? 8 : 12);
        if (n > swa__remaining(c) / min_elem)
            return swa__fail(c->err, SWA_ERR_FORMAT,
                             "key %.*s: array of %llu elements runs past the end of the file",
                             (int)key.len, key.ptr, (unsigned long long)n);
        if (elem_size) {
            c->pos += n * elem_size;
            return SWA_OK;
        }
        for (i = 0; i < n; i++)
            if ((s = swa__skip_value(c, elem_type, depth + 1, key)) != SWA_OK) return s;
        return SWA_OK;
    }
    return swa__fail(c->err, SWA_ERR_FORMAT, "key %.*s: unknown value type %u", (int)key.len,
                     key.ptr, type);
}

/* Byte size of a value already validated by swa__skip_value. */
static uint64_t swa__value_bytes(uint32_t type, const uint8_t *p)
{
    uint64_t size = swa__gguf_scalar_size(type), n, i, total;
    uint32_t elem_type;
    if (size) return size;
    memcpy(&n, type == SWA_GGUF_STRING ? p : p + 4, 8);
    if (type == SWA_GGUF_STRING) return 8 + n;
    memcpy(&elem_type, p, 4);
    size = swa__gguf_scalar_size(elem_type);
    if (size) return 12 + n * size;
    for (total = 12, i = 0; i < n; i++) total += swa__value_bytes(elem_type, p + total);
    return total;
}

/* The value whose encoding starts at p (for strings and arrays, at the length/header). */
static swa_gguf_value swa__value_at_ptr(uint32_t type, const uint8_t *p)
{
    swa_gguf_value v;
    memset(&v, 0, sizeof v);
    v.type = (swa_gguf_type)type;
    if (type == SWA_GGUF_STRING) {
        memcpy(&v.n, p, 8);
        v.data = p + 8;
    } else if (type == SWA_GGUF_ARRAY) {
        uint32_t elem_type;
        memcpy(&elem_type, p, 4);
        memcpy(&v.n, p + 4, 8);
        v.elem_type = (swa_gguf_type)elem_type;
        v.data = p + 12;
    } else {
        v.data = p;
    }
    return v;
}

static swa_status swa__names_init(swa__name_table *t, int64_t n)
{
    uint64_t cap = 16, i;
    while (cap < (uint64_t)n * 2) cap *= 2;
    t->slots = (int64_t *)swa__calloc(cap, sizeof(int64_t));
    if (!t->slots) return SWA_ERR_NOMEM;
    for (i = 0; i < cap; i++) t->slots[i] = -1;
    t->mask = cap - 1;
    return SWA_OK;
}

/* Find `name`; if absent and index >= 0, insert it. Returns the index found, or -1. */
static int64_t swa__names_find(const swa__name_table *t, const swa_str *all, size_t stride,
                               const char *name, size_t len, int64_t index)
{
    uint64_t h;
    if (!t->slots) return -1;
    for (h = swa__hash(name, len) & t->mask;; h = (h + 1) & t->mask) {
        int64_t j = t->slots[h];
        if (j < 0) {
            if (index >= 0) t->slots[h] = index;
            return -1;
        } else {
            const swa_str *s = (const swa_str *)((const char *)all + (size_t)j * stride);
            if (s->len == len && memcmp(s->ptr, name, len) == 0) return j;
        }
    }
}

static swa_status swa__gguf_read_kvs(swa_gguf *g, swa__cursor *c, uint64_t n_kv)
{
    uint64_t i;
    swa_status s;
    g->kv = (swa__kv *)swa__calloc(n_kv, sizeof(swa__kv));
    if (!g->kv || swa__names_init(&g->kv_names, (int64_t)n_kv) != SWA_OK)
        return swa__fail(c->err, SWA_ERR_NOMEM, "cannot allocate %llu metadata entries", (unsigned long long)n_kv);
    for (i = 0; i < n_kv; i++) {
        swa__kv *kv = &g->kv[i];
        uint32_t type;
        uint64_t start;
        if ((s = swa__read_str(c, &kv->key, SWA__MAX_KEY_LEN, "metadata key")) != SWA_OK) return s;
        if ((s = swa__read_u32(c, &type, "metadata value type")) != SWA_OK) return s;
        start = c->pos;
        if ((s = swa__skip_value(c, type, 0, kv->key)) != SWA_OK) return s;
        kv->value = swa__value_at_ptr(type, c->base + start);
        g->n_kv = (int64_t)i + 1;
        if (swa__names_find(&g->kv_names, &g->kv[0].key, sizeof(swa__kv), kv->key.ptr, kv->key.len,
                            (int64_t)i) >= 0)
            return swa__fail(c->err, SWA_ERR_FORMAT, "key %.*s appears twice", (int)kv->key.len, kv->key.ptr);
    }
    return SWA_OK;
}

/* Give every top-level string array an offset index, so element j is found in O(1). */
static swa_status swa__gguf_index_strings(swa_gguf *g, swa_error *err)
{
    int64_t i;
    uint64_t j, off;
    for (i = 0; i < g->n_kv; i++) {
        swa_gguf_value *v = &g->kv[i].value;
        uint64_t *index;
        if (v->type != SWA_GGUF_ARRAY || v->elem_type != SWA_GGUF_STRING) continue;
        index = (uint64_t *)swa__calloc(v->n, sizeof(uint64_t));
        if (!index) return swa__fail(err, SWA_ERR_NOMEM, "key %.*s: cannot index %llu strings",
                                     (int)g->kv[i].key.len, g->kv[i].key.ptr, (unsigned long long)v->n);
        for (off = 0, j = 0; j < v->n; j++) {
            uint64_t len;
            index[j] = off;
            memcpy(&len, v->data + off, 8);
            off += 8 + len;
        }
        v->index = index;
    }
    return SWA_OK;
}

static swa_status swa__gguf_read_alignment(swa_gguf *g, swa_error *err)
{
    int64_t i = swa_gguf_kv_find(g, "general.alignment"), a;
    swa_gguf_value v;
    g->alignment = 32;
    if (i < 0) return SWA_OK;
    v = swa_gguf_kv_value(g, i);
    if (v.type == SWA_GGUF_BOOL || (v.type != SWA_GGUF_U64 && swa_gguf_value_int(&v, &a) != SWA_OK))
        return swa__fail(err, SWA_ERR_FORMAT, "key general.alignment: type %s, want an integer",
                         swa_gguf_type_name(v.type));
    if (swa_gguf_value_int(&v, &a) != SWA_OK) a = -1;    /* a u64 beyond INT64_MAX */
    if (a <= 0 || (a & (a - 1)) != 0 || a > (1 << 30))
        return swa__fail(err, SWA_ERR_FORMAT, "key general.alignment: %lld is not a power of two",
                         (long long)a);
    g->alignment = (uint64_t)a;
    return SWA_OK;
}

static swa_status swa__gguf_read_tensor_info(swa__cursor *c, swa_gguf_tensor *t)
{
    uint32_t d;
    uint64_t ne, nelem = 1, nblocks;
    int64_t block_size, block_bytes;
    swa_status s;
    if ((s = swa__read_str(c, &t->name, SWA__MAX_NAME_LEN, "tensor name")) != SWA_OK) return s;
    if ((s = swa__read_u32(c, &t->n_dims, "tensor dimension count")) != SWA_OK) return s;
    if (t->n_dims < 1 || t->n_dims > 4)
        return swa__fail(c->err, SWA_ERR_FORMAT, "tensor %.*s: %u dimensions, want 1 to 4",
                         (int)t->name.len, t->name.ptr, t->n_dims);
    for (d = 0; d < 4; d++) t->ne[d] = 1;
    for (d = 0; d < t->n_dims; d++) {
        if ((s = swa__read_u64(c, &ne, "tensor dimension")) != SWA_OK) return s;
        if (ne == 0 || ne > (uint64_t)INT64_MAX || !swa__mul_u64(nelem, ne, &nelem) ||
            nelem > (uint64_t)INT64_MAX)
            return swa__fail(c->err, SWA_ERR_FORMAT, "tensor %.*s: dimension %u is %llu (zero, or the element count overflows)",
                             (int)t->name.len, t->name.ptr, d, (unsigned long long)ne);
        t->ne[d] = (int64_t)ne;
    }
    if ((s = swa__read_u32(c, &t->type, "tensor type")) != SWA_OK) return s;
    if ((s = swa__read_u64(c, &t->offset, "tensor offset")) != SWA_OK) return s;
    block_size = swa_type_block_size(t->type);
    block_bytes = swa_type_block_bytes(t->type);
    if (block_size == 0)
        return swa__fail(c->err, SWA_ERR_FORMAT, "tensor %.*s: unknown type id %u",
                         (int)t->name.len, t->name.ptr, t->type);
    if (t->ne[0] % block_size != 0)
        return swa__fail(c->err, SWA_ERR_FORMAT, "tensor %.*s: row length %lld is not a multiple of the %s block size %lld",
                         (int)t->name.len, t->name.ptr, (long long)t->ne[0], swa_type_name(t->type),
                         (long long)block_size);
    nblocks = nelem / (uint64_t)block_size;
    if (!swa__mul_u64(nblocks, (uint64_t)block_bytes, &t->nbytes))
        return swa__fail(c->err, SWA_ERR_FORMAT, "tensor %.*s: byte size overflows", (int)t->name.len, t->name.ptr);
    return SWA_OK;
}

static int swa__cmp_tensor_offset(const void *a, const void *b)
{
    const swa_gguf_tensor *x = *(const swa_gguf_tensor *const *)a, *y = *(const swa_gguf_tensor *const *)b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Every tensor must lie inside the data section, aligned, and not overlap another. */
static swa_status swa__gguf_place_tensors(swa_gguf *g, swa_error *err)
{
    uint64_t data_size = g->size - g->data_offset, end;
    const swa_gguf_tensor **order;
    int64_t i;
    for (i = 0; i < g->n_tensors; i++) {
        swa_gguf_tensor *t = &g->tensors[i];
        if (t->offset % g->alignment != 0)
            return swa__fail(err, SWA_ERR_FORMAT, "tensor %.*s: offset %llu is not a multiple of the alignment %llu",
                             (int)t->name.len, t->name.ptr, (unsigned long long)t->offset,
                             (unsigned long long)g->alignment);
        if (!swa__add_u64(t->offset, t->nbytes, &end) || end > data_size)
            return swa__fail(err, SWA_ERR_FORMAT, "tensor %.*s: bytes %llu..%llu run past the end of the data (%llu bytes)",
                             (int)t->name.len, t->name.ptr, (unsigned long long)t->offset,
                             (unsigned long long)(t->offset + t->nbytes), (unsigned long long)data_size);
        t->data = g->base + g->data_offset + t->offset;
    }
    order = (const swa_gguf_tensor **)swa__calloc((uint64_t)g->n_tensors, sizeof *order);
    if (!order) return swa__fail(err, SWA_ERR_NOMEM, "cannot sort %lld tensors", (long long)g->n_tensors);
    for (i = 0; i < g->n_tensors; i++) order[i] = &g->tensors[i];
    qsort(order, (size_t)g->n_tensors, sizeof *order, swa__cmp_tensor_offset);
    for (i = 1; i < g->n_tensors; i++) {
        const swa_gguf_tensor *a = order[i - 1], *b = order[i];
        if (a->offset + a->nbytes > b->offset) {
            swa_status s = swa__fail(err, SWA_ERR_FORMAT, "tensors %.*s and %.*s overlap at data offset %llu",
                                     (int)a->name.len, a->name.ptr, (int)b->name.len, b->name.ptr,
                                     (unsigned long long)b->offset);
            SWA_FREE(order);
            return s;
        }
    }
    SWA_FREE(order);
    return SWA_OK;
}

static swa_status swa__gguf_parse(swa_gguf *g, swa_error *err)
{
    swa__cursor c;
    uint8_t magic[4];
    uint64_t n_tensors, n_kv, i;
    swa_status s;
    c.base = g->base;
    c.size = g->size;
    c.pos = 0;
    c.err = err;
    if (!swa__host_is_little_endian())
        return swa__fail(err, SWA_ERR_UNSUPPORTED, "big-endian hosts are not supported");
    if ((s = swa__read(&c, magic, 4, "magic")) != SWA_OK) return s;
    if (memcmp(magic, "GGUF", 4) != 0)
        return swa__fail(err, SWA_ERR_FORMAT, "bad magic %02x %02x %02x %02x, want \"GGUF\"",
                         magic[0], magic[1], magic[2], magic[3]);
    if ((s = swa__read_u32(&c, &g->version, "version")) != SWA_OK) return s;
    if (g->version != 2 && g->version != 3)
        return swa__fail(err, SWA_ERR_UNSUPPORTED, "GGUF version %u is not supported (2 and 3 are)", g->version);
    if ((s = swa__read_u64(&c, &n_tensors, "tensor count")) != SWA_OK) return s;
    if ((s = swa__read_u64(&c, &n_kv, "metadata count")) != SWA_OK) return s;
    /* a metadata entry takes at least 13 bytes and a tensor info at least 32 */
    if (n_kv > swa__remaining(&c) / 13)
        return swa__fail(err, SWA_ERR_FORMAT, "metadata count %llu does not fit in the file", (unsigned long long)n_kv);
    if (n_tensors > swa__remaining(&c) / 32)
        return swa__fail(err, SWA_ERR_FORMAT, "tensor count %llu does not fit in the file", (unsigned long long)n_tensors);
    if ((s = swa__gguf_read_kvs(g, &c, n_kv)) != SWA_OK) return s;
    if ((s = swa__gguf_index_strings(g, err)) != SWA_OK) return s;
    if ((s = swa__gguf_read_alignment(g, err)) != SWA_OK) return s;
    if (n_tensors > swa__remaining(&c) / 32)
        return swa__fail(err, SWA_ERR_FORMAT, "tensor count %llu does not fit in the file", (unsigned long long)n_tensors);
    g->tensors = (swa_gguf_tensor *)swa__calloc(n_tensors, sizeof(swa_gguf_tensor));
    if (!g->tensors || swa__names_init(&g->tensor_names, (int64_t)n_tensors) != SWA_OK)
        return swa__fail(err, SWA_ERR_NOMEM, "cannot allocate %llu tensor infos", (unsigned long long)n_tensors);
    for (i = 0; i < n_tensors; i++) {
        swa_gguf_tensor *t = &g->tensors[i];
        if ((s = swa__gguf_read_tensor_info(&c, t)) != SWA_OK) return s;
        g->n_tensors = (int64_t)i + 1;
        if (swa__names_find(&g->tensor_names, &g->tensors[0].name, sizeof(swa_gguf_tensor),
                            t->name.ptr, t->name.len, (int64_t)i) >= 0)
            return swa__fail(err, SWA_ERR_FORMAT, "tensor %.*s appears twice", (int)t->name.len, t->name.ptr);
    }
    /* the data section starts at the next multiple of the alignment */
    g->data_offset = c.pos + (g->alignment - c.pos % g->alignment) % g->alignment;
    if (g->data_offset > g->size) {
        if (n_tensors > 0)
            return swa__fail(err, SWA_ERR_FORMAT, "data section at offset %llu starts past the end of the file (%llu bytes)",
                             (unsigned long long)g->data_offset, (unsigned long long)g->size);
        g->data_offset = g->size;
    }
    return swa__gguf_place_tensors(g, err);
}

static swa_status swa__gguf_finish_open(swa_gguf *g, swa_gguf **out, swa_error *err)
{
    swa_status s = swa__gguf_parse(g, err);
    if (s != SWA_OK) {
        swa_gguf_close(g);
        return s;
    }
    *out = g;
    swa__ok(err);
    return SWA_OK;
}

SWADEF swa_status swa_gguf_open_memory(const void *data, size_t size, swa_gguf **out, swa_error *err)
{
    swa_gguf *g;
    if (!out) return swa__fail(err, SWA_ERR_INVALID_ARG, "swa_gguf_open_memory: out is NULL");
    *out = NULL;
    if (!data) return swa__fail(err, SWA_ERR_INVALID_ARG, "swa_gguf_open_memory: data is NULL");
    g = (swa_gguf *)swa__calloc(1, sizeof *g);
    if (!g) return swa__fail(err, SWA_ERR_NOMEM, "cannot allocate a GGUF handle");
    g->base = (const uint8_t *)data;
    g->size = size;
    return swa__gguf_finish_open(g, out, err);
}

static swa_status swa__gguf_open_file(const char *path, int resident, swa__progress *p, swa_gguf **out, swa_error *err)
{
    swa_gguf *g;
    swa_status s;
    if (!out) return swa__fail(err, SWA_ERR_INVALID_ARG, "swa_gguf_open: out is NULL");
    *out = NULL;
    if (!path) return swa__fail(err, SWA_ERR_INVALID_ARG, "swa_gguf_open: path is NULL");
    g = (swa_gguf *)swa__calloc(1, sizeof *g);
    if (!g) return swa__fail(err, SWA_ERR_NOMEM, "cannot allocate a GGUF handle");
    if ((s = swa__file_open(path, resident, p, &g->file, err)) != SWA_OK) {
        SWA_FREE(g);
        return s;
    }
    g->base = g->file.data;
    g->size = g->file.size;
    s = swa__gguf_finish_open(g, out, err);
    if (s != SWA_OK) swa__prefix_error(err, path);   /* say which file */
    return s;
}

SWADEF swa_status swa_gguf_open(const char *path, swa_gguf **out, swa_error *err)
{
    return swa__gguf_open_file(path, 0, NULL, out, err);
}

SWADEF swa_load_path swa_model_load_path(const swa_model *m)
{
    const swa_gguf *g = m ? swa_model_gguf(m) : NULL;
    return g && g->file.data ? g->file.how : SWA_LOAD_MEMORY;
}

SWADEF const char *swa_load_path_name(swa_load_path p)
{
    switch (p) {
    case SWA_LOAD_MEMORY: return "caller's memory";
    case SWA_LOAD_READ: return "read into memory";
    case SWA_LOAD_MAPPED: return "mapped";
    case SWA_LOAD_MAPPED_HUGE: return "mapped, 2 MB pages advised";
    }
    return "unknown";
}

SWADEF void swa_gguf_close(swa_gguf *g)
{
    int64_t i;
    if (!g) return;
    for (i = 0; i < g->n_kv; i++) SWA_FREE((void *)(uintptr_t)g->kv[i].value.index);
    SWA_FREE(g->kv);
    SWA_FREE(g->tensors);
    SWA_FREE(g->kv_names.slots);
    SWA_FREE(g->tensor_names.slots);
    swa__file_close(&g->file);
    SWA_FREE(g);
}

SWADEF uint32_t swa_gguf_version(const swa_gguf *g) { return g->version; }
SWADEF uint64_t swa_gguf_alignment(const swa_gguf *g) { return g->alignment; }
SWADEF uint64_t swa_gguf_data_offset(const swa_gguf *g) { return g->data_offset; }
SWADEF uint64_t swa_gguf_file_size(const swa_gguf *g) { return g->size; }
SWADEF int64_t swa_gguf_kv_count(const swa_gguf *g) { return g->n_kv; }
SWADEF int64_t swa_gguf_tensor_count(const swa_gguf *g) { return g->n_tensors; }

SWADEF int64_t swa_gguf_kv_find(const swa_gguf *g, const char *key)
{
    if (!g->kv) return -1;
    return swa__names_find(&g->kv_names, &g->kv[0].key, sizeof(swa__kv), key, strlen(key), -1);
}

SWADEF int64_t swa_gguf_tensor_find(const swa_gguf *g, const char *name)
{
    if (!g->tensors) return -1;
    return swa__names_find(&g->tensor_names, &g->tensors[0].name, sizeof(swa_gguf_tensor), name,
                           strlen(name), -1);
}

SWADEF swa_str swa_gguf_kv_key(const swa_gguf *g, int64_t i)
{
    swa_str none = {"", 0};
    return i >= 0 && i < g->n_kv ? g->kv[i].key : none;
}

SWADEF swa_gguf_value swa_gguf_kv_value(const swa_gguf *g, int64_t i)
{
    swa_gguf_value none;
    if (i >= 0 && i < g->n_kv) return g->kv[i].value;
    memset(&none, 0, sizeof none);
    none.type = SWA_GGUF_ARRAY;     /* an empty array: safe to walk, holds nothing */
    none.elem_type = SWA_GGUF_U8;
    return none;
}

SWADEF const swa_gguf_tensor *swa_gguf_tensor_at(const swa_gguf *g, int64_t i)
{
    return i >= 0 && i < g->n_tensors ? &g->tensors[i] : NULL;
}

SWADEF swa_status swa_gguf_value_at(const swa_gguf_value *arr, uint64_t j, swa_gguf_value *elem)
{
    uint64_t size, off, k;
    uint32_t type;   /* an enum is signed under the MSVC ABI */
    if (!arr || !elem || arr->type != SWA_GGUF_ARRAY) return SWA_ERR_INVALID_ARG;
    if (j >= arr->n) return SWA_ERR_NOT_FOUND;
    type = (uint32_t)arr->elem_type;
    size = swa__gguf_scalar_size(type);
    if (size) {
        off = j * size;
    } else if (arr->index) {
        off = arr->index[j];
    } else {
        for (off = 0, k = 0; k < j; k++) off += swa__value_bytes(type, arr->data + off);
    }
    *elem = swa__value_at_ptr(type, arr->data + off);
    return SWA_OK;
}

SWADEF swa_status swa_gguf_value_int(const swa_gguf_value *v, int64_t *out)
{
    const uint8_t *p = v->data;
    switch (v->type) {
    case SWA_GGUF_U8: case SWA_GGUF_BOOL: *out = p[0]; return SWA_OK;
    case SWA_GGUF_I8: *out = (int8_t)p[0]; return SWA_OK;
    case SWA_GGUF_U16: { uint16_t x; memcpy(&x, p, 2); *out = x; return SWA_OK; }
    case SWA_GGUF_I16: { int16_t x; memcpy(&x, p, 2); *out = x; return SWA_OK; }
    case SWA_GGUF_U32: { uint32_t x; memcpy(&x, p, 4); *out = x; return SWA_OK; }
    case SWA_GGUF_I32: { int32_t x; memcpy(&x, p, 4); *out = x; return SWA_OK; }
    case SWA_GGUF_I64: { int64_t x; memcpy(&x, p, 8); *out = x; return SWA_OK; }
    case SWA_GGUF_U64: {
        uint64_t x;
        memcpy(&x, p, 8);
        if (x > (uint64_t)INT64_MAX) return SWA_ERR_INVALID_ARG;
        *out = (int64_t)x;
        return SWA_OK;
    }
    default: return SWA_ERR_INVALID_ARG;
    }
}

SWADEF swa_status swa_gguf_value_float(const swa_gguf_value *v, double *out)
{
    int64_t i;
    if (v->type == SWA_GGUF_F32) { float x; memcpy(&x, v->data, 4); *out = x; return SWA_OK; }
    if (v->type == SWA_GGUF_F64) { memcpy(out, v->data, 8); return SWA_OK; }
    if (v->type == SWA_GGUF_U64) { uint64_t x; memcpy(&x, v->data, 8); *out = (double)x; return SWA_OK; }
    if (v->type == SWA_GGUF_BOOL || swa_gguf_value_int(v, &i) != SWA_OK) return SWA_ERR_INVALID_ARG;
    *out = (double)i;
    return SWA_OK;
}

SWADEF swa_status swa_gguf_value_str(const swa_gguf_value *v, swa_str *out)
{
    if (v->type != SWA_GGUF_STRING) return SWA_ERR_INVALID_ARG;
    out->ptr = (const char *)v->data;
    out->len = (size_t)v->n;
    return SWA_OK;
}

/* ==== weight types: blocks and scalar reference kernels ====
   Plain loops that read like the maths; every SIMD twin below is checked against them.

   Weight rows meet activations in one of three forms, chosen by the weight type:
     F32, F16, BF16      x as float
     Q8_0, Q4_0, Q4_1,   x quantized to blocks of 32 (swa__q8: x ~ d * q, q in -127..127),
     Q5_0, Q5_1, IQ4_NL, placed in groups of 8 blocks (swa__q8g)
     MXFP4
     Q2_K, Q3_K, Q4_K,   x quantized to swa__q8k blocks of 256, with the sums of each 16 q
     Q5_K, Q6_K, IQ4_XS
   so that a quantized dot product is an exact integer sum per block, scaled once (as ggml
   does). Weight layouts are ggml's: Q8_0 {f16 d; i8 q[32]}; Q4_0 {f16 d; u8 q[16]}, element j
   the low nibble of q[j] and element j+16 the high one, minus 8; the K-quants as described at
   their kernels. */

SWA__INTERNAL int64_t swa__q8g_offset(int64_t b, int half)   /* in its group's q */
{
    return 64 * (b % 4) + 32 * half + 16 * (b % 8 / 4);
}

SWA__INTERNAL const int8_t *swa__q8g_half(const swa__q8g *g, int64_t b, int half)
{
    return g[b / 8].q + swa__q8g_offset(b, half);
}

SWA__INTERNAL size_t swa__act_bytes(int kind, int64_t n)   /* one row of n activations */
{
    return kind == SWA__ACT_Q8 ? (size_t)((n / 32 + 7) / 8) * sizeof(swa__q8g)
         : kind == SWA__ACT_Q8K ? (size_t)(n / 256) * sizeof(swa__q8k) : (size_t)n * sizeof(float);
}

/* Float to half, rounding to nearest even, with subnormals, infinities and NaN (as F16C). */
SWA__INTERNAL uint16_t swa__f32_to_f16(float f)
{
    uint32_t x, sign, mant, e;
    memcpy(&x, &f, 4);
    sign = (x >> 16) & 0x8000u;
    e = (x >> 23) & 0xff;
    mant = x & 0x7fffffu;
    if (e == 0xff) return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u | (mant >> 13) : 0));
    if (e > 142) return (uint16_t)(sign | 0x7c00u);                     /* too big: infinity */
    if (e < 113) {                                                      /* half subnormal or 0 */
        uint32_t shift, q, rem, half;
        if (e < 102) return (uint16_t)sign;
        mant |= 0x800000u;
        shift = 126 - e;
        q = mant >> shift;
        rem = mant & ((1u << shift) - 1);
        half = 1u << (shift - 1);
        if (rem > half || (rem == half && (q & 1))) q++;
        return (uint16_t)(sign | q);
    }
    {
        uint32_t h = sign | ((e - 112) << 10) | (mant >> 13), rem = mant & 0x1fffu;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++;           /* a carry may reach inf */
        return (uint16_t)h;
    }
}

static float swa__amax_ref(const float *x, int64_t n)
{
    float amax = 0.0f;
    int64_t j;
    for (j = 0; j < n; j++) amax = fabsf(x[j]) > amax ? fabsf(x[j]) : amax;
    return amax;
}

/* Activations to q8 blocks: d = max|x| / 127, q = x * (127 / max|x|) rounded to nearest even
   (lrintf in the default rounding mode, which is what the SIMD conversions do too). */
SWA__INTERNAL void swa__quantize_q8_ref(const float *x, void *out, int64_t n)
{
    swa__q8 *b = (swa__q8 *)out;
    int64_t i, j;
    for (i = 0; i < n; i += 32, b++, x += 32) {
        float amax = swa__amax_ref(x, 32), id;
        b->d = amax / 127.0f;
        id = amax > 0.0f ? 127.0f / amax : 0.0f;
        for (j = 0; j < 32; j++) b->q[j] = (int8_t)lrintf(x[j] * id);
    }
}

/* q8 blocks from the instruction set's quantizer, placed into groups: a copy per block, small
   beside the rows they meet. */
SWA__INTERNAL void swa__quantize_q8g(swa__quantize_fn quantize_q8, const float *x, void *out, int64_t n)
{
    swa__q8g *g = (swa__q8g *)out;
    int64_t b;
    int j;
    for (b = 0; b < n / 32; b++) {
        swa__q8 block;
        int32_t sum = 0;
        quantize_q8(x + 32 * b, &block, 32);
        for (j = 0; j < 32; j++) sum += block.q[j];
        g[b / 8].d[b % 8] = block.d;
        g[b / 8].sum8[b % 8] = 8 * sum;
        memcpy(g[b / 8].q + swa__q8g_offset(b, 0), block.q, 16);
        memcpy(g[b / 8].q + swa__q8g_offset(b, 1), block.q + 16, 16);
    }
}

SWA__INTERNAL void swa__quantize_q8k_ref(const float *x, void *out, int64_t n)
{
    swa__q8k *b = (swa__q8k *)out;
    int64_t i, j;
    for (i = 0; i < n; i += 256, b++, x += 256) {
        float amax = swa__amax_ref(x, 256), id;
        b->d = amax / 127.0f;
        id = amax > 0.0f ? 127.0f / amax : 0.0f;
        for (j = 0; j < 256; j++) b->q[j] = (int8_t)lrintf(x[j] * id);
        for (j = 0; j < 16; j++) {
            int k, s = 0;
            for (k = 0; k < 16; k++) s += b->q[16 * j + k];
            b->bsum[j] = (int16_t)s;
        }
    }
}

SWA__INTERNAL float swa__dot_f32_ref(const void *row, const void *x, int64_t n)
{
    const float *w = (const float *)row, *v = (const float *)x;
    float sum = 0.0f;
    int64_t i;
    for (i = 0; i < n; i++) sum += w[i] * v[i];
    return sum;
}

/* Rows of each type to float: the meaning of its blocks (the token embedding lookup,
   swa_dequantize_row, and the tests' exact answers). */
static void swa__dequant_f32_ref(const void *row, float *out, int64_t n) { memcpy(out, row, (size_t)n * sizeof(float)); }

/* F16 and BF16: 16-bit floats, each element converted by its type's function. */
static float swa__dot_16_ref(float (*to_f32)(uint16_t), const void *row, const void *x, int64_t n)
{
    const uint16_t *w = (const uint16_t *)row;
    const float *v = (const float *)x;
    float sum = 0.0f;
    int64_t i;
    for (i = 0; i < n; i++) sum += to_f32(w[i]) * v[i];
    return sum;
}

static void swa__dequant_16_ref(float (*to_f32)(uint16_t), const void *row, float *out, int64_t n)
{
    const uint8_t *b = (const uint8_t *)row;
    int64_t i;
    for (i = 0; i < n; i++) out[i] = to_f32(swa__load_u16(b + 2 * i));
}

SWA__INTERNAL float swa__dot_f16_ref(const void *row, const void *x, int64_t n)
{
    return swa__dot_16_ref(swa__f16_to_f32, row, x, n);
}

static void swa__dequant_f16_ref(const void *row, float *out, int64_t n) { swa__dequant_16_ref(swa__f16_to_f32, row, out, n); }

SWA__INTERNAL float swa__dot_bf16_ref(const void *row, const void *x, int64_t n)
{
    return swa__dot_16_ref(swa__bf16_to_f32, row, x, n);
}

static void swa__dequant_bf16_ref(const void *row, float *out, int64_t n) { swa__dequant_16_ref(swa__bf16_to_f32, row, out, n); }

static float swa__dot_q8_0_ref(const void *row, const void *x, int64_t n)
{
    const uint8_t *w = (const uint8_t *)row;
    const swa__q8g *g = (const swa__q8g *)x;
    float sum = 0.0f;
    int64_t b, j;
    for (b = 0; b < n / 32; b++, w += 34) {
        const int8_t *lo = swa__q8g_half(g, b, 0), *hi = swa__q8g_half(g, b, 1);
        int32_t s = 0;
        for (j = 0; j < 16; j++) s += (int8_t)w[2 + j] * lo[j] + (int8_t)w[18 + j] * hi[j];
        sum += swa__f16_to_f32(swa__load_u16(w)) * g[b / 8].d[b % 8] * (float)s;
    }
    return sum;
}

static void swa__dequant_q8_0_ref(const void *row, float *out, int64_t n)
{
    const uint8_t *b = (const uint8_t *)row;
    int64_t i, j;
    for (i = 0; i < n; i += 32, b += 34) {
        float d = swa__f16_to_f32(swa__load_u16(b));
        for (j = 0; j < 32; j++) out[i + j] = d * (float)(int8_t)b[2 + j];
    }
}

static float swa__dot_q4_0_ref(const void *row, const void *x, int64_t n)
{
    const uint8_t *w = (const uint8_t *)row;
    const swa__q8g *g = (const swa__q8g *)x;
    float sum = 0.0f;
    int64_t b, j;
    for (b = 0; b < n / 32; b++, w += 18) {
        const int8_t *lo = swa__q8g_half(g, b, 0), *hi = swa__q8g_half(g, b, 1);
        int32_t s = 0;
        for (j = 0; j < 16; j++) s += ((w[2 + j] & 15) - 8) * lo[j] + ((w[2 + j] >> 4) - 8) * hi[j];
        sum += swa__f16_to_f32(swa__load_u16(w)) * g[b / 8].d[b % 8] * (float)s;
    }
    return sum;
}

static void swa__dequant_q4_0_ref(const void *row, float *out, int64_t n)
{
    const uint8_t *b = (const uint8_t *)row;
    int64_t i, j;
    for (i = 0; i < n; i += 32, b += 18) {
        float d = swa__f16_to_f32(swa__load_u16(b));
        for (j = 0; j < 16; j++) {
            out[i + j] = d * (float)((b[2 + j] & 0x0f) - 8);
            out[i + j + 16] = d * (float)((b[2 + j] >> 4) - 8);
        }
    }
}

/* Q4_K super-block (144 bytes): f16 d, f16 dmin, 12 bytes of eight 6-bit scales and eight 6-bit
   mins, 128 bytes of nibbles. Sub-block j (32 elements) is d*sc[j]*q - dmin*m[j]; the 64-element
   group g holds sub-block 2g in the low nibbles of qs[32g..32g+31] and 2g+1 in the high ones. */
SWA__INTERNAL void swa__q4k_scales(const uint8_t *s, uint8_t *sc, uint8_t *m)
{
    int j;
    for (j = 0; j < 4; j++) {
        sc[j] = s[j] & 63;
        m[j] = s[j + 4] & 63;
        sc[j + 4] = (uint8_t)((s[j + 8] & 15) | ((s[j] >> 6) << 4));
        m[j + 4] = (uint8_t)((s[j + 8] >> 4) | ((s[j + 4] >> 6) << 4));
    }
}

static float swa__dot_q4_k_ref(const void *row, const void *x, int64_t n)
{
    const uint8_t *w = (const uint8_t *)row;
    const swa__q8k *a = (const swa__q8k *)x;
    float sum = 0.0f;
    int64_t i;
    for (i = 0; i < n; i += 256, w += 144, a++) {
        uint8_t sc[8], m[8];
        int32_t sumi = 0, summ = 0;
        int j, l;
        swa__q4k_scales(w + 4, sc, m);
        for (j = 0; j < 8; j++) {
            const uint8_t *q = w + 16 + 32 * (j / 2);
            int32_t s = 0;
            for (l = 0; l < 32; l++) s += ((j & 1) ? q[l] >> 4 : q[l] & 15) * a->q[32 * j + l];
            sumi += sc[j] * s;
            summ += m[j] * (a->bsum[2 * j] + a->bsum[2 * j + 1]);
        }
        sum += a->d * (swa__f16_to_f32(swa__load_u16(w)) * (float)sumi -
                       swa__f16_to_f32(swa__load_u16(w + 2)) * (float)summ);
    }
    return sum;
}

static void swa__dequant_q4_k_ref(const void *row, float *out, int64_t n)
{
    const uint8_t *b = (const uint8_t *)row;
    int64_t i, j;
    for (i = 0; i < n; i += 256, b += 144) {
        float d = swa__f16_to_f32(swa__load_u16(b)), dmin = swa__f16_to_f32(swa__load_u16(b + 2));
        uint8_t sc[8], m[8];
        swa__q4k_scales(b + 4, sc, m);
        for (j = 0; j < 256; j++) {
            uint8_t q = b[16 + 32 * (j / 64) + j % 32];
            int sub = (int)(j / 32);
            out[i + j] = d * sc[sub] * (float)((sub & 1) ? q >> 4 : q & 15) - dmin * m[sub];
        }
    }
}

/* Q5_K super-block (176 bytes): Q4_K's d, dmin and 12 bytes of scales and mins, then qh[32],
   then Q4_K's 128 bytes of nibbles. Each quant gains a fifth bit: element l of sub-block j takes
   bit j of qh[l], so q = nibble + 16 * bit is 0..31 and sub-block j is d*sc[j]*q - dmin*m[j]. */
static int swa__q5k_quant(const uint8_t *w, int j, int l)   /* element l of sub-block j */
{
    uint8_t q = w[48 + 32 * (j / 2) + l];
    return ((j & 1) ? q >> 4 : q & 15) | ((w[16 + l] >> j) & 1) << 4;
}

static float swa__dot_q5_k_ref(const void *row, const void *x, int64_t n)
{
    const uint8_t *w = (const uint8_t *)row;
    const swa__q8k *a = (const swa__q8k *)x;
    float sum = 0.0f;
    int64_t i;
    for (i = 0; i < n; i += 256, w += 176, a++) {
        uint8_t sc[8], m[8];
        int32_t sumi = 0, summ = 0;
        int j, l;
        swa__q4k_scales(w + 4, sc, m);
        for (j = 0; j < 8; j++) {
            int32_t s = 0;
            for (l = 0; l < 32; l++) s += swa__q5k_quant(w, j, l) * a->q[32 * j + l];
            sumi += sc[j] * s;
            summ += m[j] * (a->bsum[2 * j] + a->bsum[2 * j + 1]);
        }
        sum += a->d * (swa__f16_to_f32(swa__load_u16(w)) * (float)sumi -
                       swa__f16_to_f32(swa__load_u16(w + 2)) * (float)summ);
    }
    return sum;
}

static void swa__dequant_q5_k_ref(const void *row, float *out, int64_t n)
{
    const uint8_t *b = (const uint8_t *)row;
    int64_t i;
    int j, l;
    for (i = 0; i < n; i += 256, b += 176) {
        float d = swa__f16_to_f32(swa__load_u16(b)), dmin = swa__f16_to_f32(swa__load_u16(b + 2));
        uint8_t sc[8], m[8];
        swa__q4k_scales(b + 4, sc, m);
        for (j = 0; j < 8; j++)
            for (l = 0; l < 32; l++) out[i + 32 * j + l] = d * sc[j] * (float)swa__q5k_quant(b, j, l) - dmin * m[j];
    }
}

/* Q6_K super-block (210 bytes): ql[128] low 4 bits, qh[64] high 2 bits, int8 scales[16], f16 d.
   In each half of 128 elements, element l of quarter k (l < 32) takes its low bits from
   ql[l + 32 (k & 1)] (low nibble for k < 2, high for k >= 2) and its high bits from bits
   2k..2k+1 of qh[l]; value = d * scales[e / 16] * (q - 32). */
static void swa__q6k_unpack(const uint8_t *w, int8_t *q)
{
    const uint8_t *ql = w, *qh = w + 128;
    int h, l, k;
    for (h = 0; h < 2; h++, ql += 64, qh += 32, q += 128)
        for (k = 0; k < 4; k++)
            for (l = 0; l < 32; l++) {
                int lo = k < 2 ? ql[l + 32 * (k & 1)] & 15 : ql[l + 32 * (k & 1)] >> 4;
                q[32 * k + l] = (int8_t)((lo | (((qh[l] >> (2 * k)) & 3) << 4)) - 32);
            }
}

static float swa__dot_q6_k_ref(const void *row, const void *x, int64_t n)
{
    const uint8_t *w = (const uint8_t *)row;
    const swa__q8k *a = (const swa__q8k *)x;
    float sum = 0.0f;
    int64_t i;
    for (i = 0; i < n; i += 256, w += 210, a++) {
        int8_t q[256];
        int32_t sumi = 0;
        int g, l;
        swa__q6k_unpack(w, q);
        for (g = 0; g < 16; g++) {
            int32_t s = 0;
            for (l = 0; l < 16; l++) s += q[16 * g + l] * a->q[16 * g + l];
            sumi += (int8_t)w[192 + g] * s;
        }
        sum += swa__f16_to_f32(swa__load_u16(w + 208)) * a->d * (float)sumi;
    }
    return sum;
}

static void swa__dequant_q6_k_ref(const void *row, float *out, int64_t n)
{
    const uint8_t *b = (const uint8_t *)row;
    int64_t i, j;
    for (i = 0; i < n; i += 256, b += 210) {
        int8_t q[256];
        float d = swa__f16_to_f32(swa__load_u16(b + 208));
        swa__q6k_unpack(b, q);
        for (j = 0; j < 256; j++) out[i + j] = d * (float)(int8_t)b[192 + j / 16] * (float)q[j];
    }
}

/* The 32-blocks beside Q4_0 and Q8_0, ggml's layouts: an f16 scale d; for Q4_1 and Q5_1 an f16
   offset m after it; for Q5_0 and Q5_1 a little-endian 32-bit word qh of fifth bits; then 16
   bytes of nibbles, element j < 16 the low nibble of byte j and element j + 16 its high one, with
   bit e of qh the fifth bit of element e. Value = d * q (+ m), with q: Q4_1 the nibble (0..15),
   Q5_1 nibble + 16 * bit (0..31), Q5_0 that minus 16, IQ4_NL the nibble's entry in ggml's
   non-linear table. They meet swa__q8g activations as Q4_0 does; the offset meets the sum of
   the block's activations (sum8 / 8), which is what ggml's Q8_1 blocks carry.
   MXFP4 (17 bytes, OCP microscaling FP4) is IQ4_NL with another table and scale: one E8M0 byte
   e in place of d, then the same 16 bytes of nibbles, each an E2M1 code looked up in ggml's
   kvalues_mxfp4, which holds the FP4 values doubled (0, 0.5, 1, 1.5, 2, 3, 4, 6 as 0..12,
   codes 8..15 their negatives) so that they are integers; the scale halves 2^(e - 127) to
   make up for it, as ggml's GGML_E8M0_TO_FP32_HALF does: 2^(e - 128), e = 0 and 1 the float
   subnormals 2^-128 and 2^-127, e = 255 (NaN in the OCP format) 2^127 (ggml does not
   special-case it either). MXFP4 goes wherever IQ4_NL goes, its table and scale in the
   helpers below; on x86 its small codes (+-12) also let it take Q4_0's unsigned products. */
static const int8_t swa__iq4nl_values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
static const int8_t swa__mxfp4_values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

static float swa__e8m0_half(uint8_t e)   /* 2^(e - 128), exactly */
{
    uint32_t bits = e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static int swa__b32_has_min(uint32_t type) { return type == SWA_TYPE_Q4_1 || type == SWA_TYPE_Q5_1; }
static int swa__b32_has_qh(uint32_t type) { return type == SWA_TYPE_Q5_0 || type == SWA_TYPE_Q5_1; }
static int swa__b32_qs_at(uint32_t type)
{
    return type == SWA_TYPE_MXFP4 ? 1 : 2 + 2 * swa__b32_has_min(type) + 4 * swa__b32_has_qh(type);
}
static int swa__b32_bytes(uint32_t type) { return swa__b32_qs_at(type) + 16; }
/* The table a type's nibbles index, or NULL where the nibble is the value. */
static const int8_t *swa__b32_table(uint32_t type)
{
    return type == SWA_TYPE_IQ4_NL ? swa__iq4nl_values : type == SWA_TYPE_MXFP4 ? swa__mxfp4_values : NULL;
}

static uint32_t swa__load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static float swa__b32_scale(uint32_t type, const uint8_t *b)   /* d */
{
    return type == SWA_TYPE_MXFP4 ? swa__e8m0_half(b[0]) : swa__f16_to_f32(swa__load_u16(b));
}

static void swa__b32_unpack(uint32_t type, const uint8_t *b, int8_t *q)
{
    const uint8_t *qs = b + swa__b32_qs_at(type);
    uint32_t qh = swa__b32_has_qh(type) ? swa__load_le32(b + 2 + 2 * swa__b32_has_min(type)) : 0;
    int e;
    for (e = 0; e < 32; e++) {
        int nibble = e < 16 ? qs[e] & 15 : qs[e - 16] >> 4;
        int v = swa__b32_table(type) ? swa__b32_table(type)[nibble] : nibble | (int)((qh >> e) & 1) << 4;
        q[e] = (int8_t)(type == SWA_TYPE_Q5_0 ? v - 16 : v);
    }
}

static float swa__dot_b32_ref(uint32_t type, const void *row, const void *x, int64_t n)
{
    const uint8_t *w = (const uint8_t *)row;
    const swa__q8g *g = (const swa__q8g *)x;
    const int bytes = swa__b32_bytes(type);
    float sum = 0.0f;
    int64_t b;
    int j;
    for (b = 0; b < n / 32; b++, w += bytes) {
        const int8_t *lo = swa__q8g_half(g, b, 0), *hi = swa__q8g_half(g, b, 1);
        const float dx = g[b / 8].d[b % 8];
        int8_t q[32];
        int32_t s = 0;
        swa__b32_unpack(type, w, q);
        for (j = 0; j < 16; j++) s += q[j] * lo[j] + q[j + 16] * hi[j];
        sum += swa__b32_scale(type, w) * dx * (float)s;
        if (swa__b32_has_min(type)) sum += swa__f16_to_f32(swa__load_u16(w + 2)) * dx * (float)(g[b / 8].sum8[b % 8] / 8);
    }
    return sum;
}

static void swa__dequant_b32_ref(uint32_t type, const void *row, float *out, int64_t n)
{
    const uint8_t *w = (const uint8_t *)row;
    const int bytes = swa__b32_bytes(type);
    int64_t i;
    int j;
    for (i = 0; i < n; i += 32, w += bytes) {
        float d = swa__b32_scale(type, w), m = swa__b32_has_min(type) ? swa__f16_to_f32(swa__load_u16(w + 2)) : 0.0f;
        int8_t q[32];
        swa__b32_unpack(type, w, q);
        for (j = 0; j < 32; j++) out[i + j] = swa__b32_has_min(type) ? (float)q[j] * d + m : (float)q[j] * d;
    }
}

static float swa__dot_q4_1_ref(const void *r, const void *x, int64_t n) { return swa__dot_b32_ref(SWA_TYPE_Q4_1, r, x, n); }
static float swa__dot_q5_0_ref(const void *r, const void *x, int64_t n) { return swa__dot_b32_ref(SWA_TYPE_Q5_0, r, x, n); }
static float swa__dot_q5_1_ref(const void *r, const void *x, int64_t n) { return swa__dot_b32_ref(SWA_TYPE_Q5_1, r, x, n); }
static float swa__dot_iq4_nl_ref(const void *r, const void *x, int64_t n) { return swa__dot_b32_ref(SWA_TYPE_IQ4_NL, r, x, n); }
static void swa__dequant_q4_1_ref(const void *r, float *o, int64_t n) { swa__dequant_b32_ref(SWA_TYPE_Q4_1, r, o, n); }
static void swa__dequant_q5_0_ref(const void *r, float *o, int64_t n) { swa__dequant_b32_ref(SWA_TYPE_Q5_0, r, o, n); }
static void swa__dequant_q5_1_ref(const void *r, float *o, int64_t n) { swa__dequant_b32_ref(SWA_TYPE_Q5_1, r, o, n); }
static void swa__dequant_iq4_nl_ref(const void *r, float *o, int64_t n) { swa__dequant_b32_ref(SWA_TYPE_IQ4_NL, r, o, n); }
static float swa__dot_mxfp4_ref(const void *r, const void *x, int64_t n) { return swa__dot_b32_ref(SWA_TYPE_MXFP4, r, x, n); }
static void swa__dequant_mxfp4_ref(const void *r, float *o, int64_t n) { swa__dequant_b32_ref(SWA_TYPE_MXFP4, r, o, n); }

/* Q2_K, Q3_K and IQ4_XS super-blocks (256 elements) read into one form: value e is
   d * sc[e / 16] * q[e] - dmin * mn[e / 16], each product rounded in that order as ggml's
   dequantization does (dmin = 0 where a type has no mins). ggml's layouts:
   Q2_K (84 bytes): scales[16] (scale in the low nibble, min in the high one), qs[64], f16 d,
     f16 dmin. Element e lies in half h = e / 128 at k = e % 128: bits 2 (k / 32) .. +1 of
     qs[32 h + k % 32].
   Q3_K (110 bytes): hmask[32], qs[64], scales[12], f16 d. The low 2 bits as Q2_K's; bit
     4 h + k / 32 of hmask[k % 32] clear subtracts 4 (q in -4..3). Sixteen 6-bit scales, minus
     32: the low 4 bits of scale i from byte i % 8 (low nibble for i < 8, high for i >= 8), the
     high 2 from bits 2 (i / 4) .. +1 of byte 8 + i % 4.
   IQ4_XS (136 bytes): f16 d, u16 scales_h, scales_l[4], qs[128]. Sub-block j (32 elements)
     has the 6-bit scale (nibble j % 2 of scales_l[j / 2]) | (bits 2j..2j+1 of scales_h) << 4,
     minus 32, and IQ4_NL's nibbles and table over qs[16 j .. 16 j + 15]. */
typedef struct swa__kunpacked {
    float d, dmin;
    int16_t sc[16], mn[16];
    int8_t q[256];
} swa__kunpacked;

typedef void (*swa__kunpack_fn)(const uint8_t *b, swa__kunpacked *u);

static int swa__q2k_bits(const uint8_t *qs, int e) { return qs[32 * (e / 128) + e % 32] >> (2 * (e % 128 / 32)) & 3; }

static void swa__q2k_scales(const uint8_t *b, swa__kunpacked *u)
{
    int i;
    u->d = swa__f16_to_f32(swa__load_u16(b + 80));
    u->dmin = swa__f16_to_f32(swa__load_u16(b + 82));
    for (i = 0; i < 16; i++) {
        u->sc[i] = (int16_t)(b[i] & 15);
        u->mn[i] = (int16_t)(b[i] >> 4);
    }
}

static void swa__q2k_unpack(const uint8_t *b, swa__kunpacked *u)
{
    int e;
    swa__q2k_scales(b, u);
    for (e = 0; e < 256; e++) u->q[e] = (int8_t)swa__q2k_bits(b + 16, e);
}

static void swa__q3k_scales(const uint8_t *b, swa__kunpacked *u)
{
    const uint8_t *s = b + 96;
    int i;
    u->d = swa__f16_to_f32(swa__load_u16(b + 108));
    u->dmin = 0.0f;
    for (i = 0; i < 16; i++) {
        int low = i < 8 ? s[i] & 15 : s[i - 8] >> 4, high = s[8 + i % 4] >> (2 * (i / 4)) & 3;
        u->sc[i] = (int16_t)((low | high << 4) - 32);
        u->mn[i] = 0;
    }
}

static void swa__q3k_unpack(const uint8_t *b, swa__kunpacked *u)
{
    int e;
    swa__q3k_scales(b, u);
    for (e = 0; e < 256; e++) {
        int set = b[e % 32] >> (4 * (e / 128) + e % 128 / 32) & 1;
        u->q[e] = (int8_t)(swa__q2k_bits(b + 32, e) - (set ? 0 : 4));
    }
}

static void swa__iq4xs_scales(const uint8_t *b, swa__kunpacked *u)
{
    const uint16_t high = swa__load_u16(b + 2);
    int j;
    u->d = swa__f16_to_f32(swa__load_u16(b));
    u->dmin = 0.0f;
    for (j = 0; j < 8; j++) {
        int ls = (b[4 + j / 2] >> (4 * (j % 2)) & 15) | (high >> (2 * j) & 3) << 4;
        u->sc[2 * j] = u->sc[2 * j + 1] = (int16_t)(ls - 32);
        u->mn[2 * j] = u->mn[2 * j + 1] = 0;
    }
}

static void swa__iq4xs_unpack(const uint8_t *b, swa__kunpacked *u)
{
    int e;
    swa__iq4xs_scales(b, u);
    for (e = 0; e < 256; e++) {
        uint8_t byte = b[8 + 16 * (e / 32) + e % 16];
        u->q[e] = swa__iq4nl_values[e % 32 < 16 ? byte & 15 : byte >> 4];
    }
}

static float swa__dot_kunpacked_ref(swa__kunpack_fn unpack, int bytes, const void *row, const void *x, int64_t n)
{
    const uint8_t *w = (const uint8_t *)row;
    const swa__q8k *a = (const swa__q8k *)x;
    float sum = 0.0f;
    int64_t i;
    for (i = 0; i < n; i += 256, w += bytes, a++) {
        swa__kunpacked u;
        int32_t sumi = 0, summ = 0;
        int g, l;
        unpack(w, &u);
        for (g = 0; g < 16; g++) {
            int32_t s = 0;
            for (l = 0; l < 16; l++) s += u.q[16 * g + l] * a->q[16 * g + l];
            sumi += u.sc[g] * s;
            summ += u.mn[g] * a->bsum[g];
        }
        sum += a->d * (u.d * (float)sumi - u.dmin * (float)summ);
    }
    return sum;
}

static void swa__dequant_kunpacked_ref(swa__kunpack_fn unpack, int bytes, const void *row, float *out, int64_t n)
{
    const uint8_t *w = (const uint8_t *)row;
    int64_t i;
    int e;
    for (i = 0; i < n; i += 256, w += bytes) {
        swa__kunpacked u;
        unpack(w, &u);
        for (e = 0; e < 256; e++) out[i + e] = u.d * (float)u.sc[e / 16] * (float)u.q[e] - u.dmin * (float)u.mn[e / 16];
    }
}

static float swa__dot_q2_k_ref(const void *r, const void *x, int64_t n)
{
    return swa__dot_kunpacked_ref(swa__q2k_unpack, (int)swa_type_block_bytes(SWA_TYPE_Q2_K), r, x, n);
}
static float swa__dot_q3_k_ref(const void *r, const void *x, int64_t n)
{
    return swa__dot_kunpacked_ref(swa__q3k_unpack, (int)swa_type_block_bytes(SWA_TYPE_Q3_K), r, x, n);
}
static float swa__dot_iq4_xs_ref(const void *r, const void *x, int64_t n)
{
    return swa__dot_kunpacked_ref(swa__iq4xs_unpack, (int)swa_type_block_bytes(SWA_TYPE_IQ4_XS), r, x, n);
}
static void swa__dequant_q2_k_ref(const void *r, float *o, int64_t n)
{
    swa__dequant_kunpacked_ref(swa__q2k_unpack, (int)swa_type_block_bytes(SWA_TYPE_Q2_K), r, o, n);
}
static void swa__dequant_q3_k_ref(const void *r, float *o, int64_t n)
{
    swa__dequant_kunpacked_ref(swa__q3k_unpack, (int)swa_type_block_bytes(SWA_TYPE_Q3_K), r, o, n);
}
static void swa__dequant_iq4_xs_ref(const void *r, float *o, int64_t n)
{
    swa__dequant_kunpacked_ref(swa__iq4xs_unpack, (int)swa_type_block_bytes(SWA_TYPE_IQ4_XS), r, o, n);
}

/* ---- attention and element-wise kernels; keys and values are stored as F32, F16 or Q8_0 ---- */

/* Floats to a cache row: F32 as they are, F16 rounded to nearest even, Q8_0 below. */
static void swa__store_f32_ref(const float *x, void *out, int64_t n) { memcpy(out, x, (size_t)n * sizeof(float)); }

SWA__INTERNAL void swa__store_f16_ref(const float *x, void *out, int64_t n)
{
    uint16_t *h = (uint16_t *)out;
    int64_t i;
    for (i = 0; i < n; i++) h[i] = swa__f32_to_f16(x[i]);
}

static void swa__axpy_f32_ref(float *y, float a, const void *x, int64_t n)   /* y += a*x */
{
    const float *v = (const float *)x;
    int64_t i;
    for (i = 0; i < n; i++) y[i] += a * v[i];
}

static void swa__axpy_f16_ref(float *y, float a, const void *x, int64_t n)
{
    const uint16_t *v = (const uint16_t *)x;
    int64_t i;
    for (i = 0; i < n; i++) y[i] += a * swa__f16_to_f32(v[i]);
}

/* y += a * x for a row of Q8_0 blocks: values in a Q8_0 cache. */
static void swa__axpy_q8_0_ref(float *y, float a, const void *x, int64_t n)
{
    const uint8_t *b = (const uint8_t *)x;
    int64_t i;
    int j;
    for (i = 0; i < n; i += 32, b += 34) {
        float s = a * swa__f16_to_f32(swa__load_u16(b));
        for (j = 0; j < 32; j++) y[i + j] += s * (float)(int8_t)b[2 + j];
    }
}

/* The weighted sum of values as one axpy per head and key: the reference, and the NEON kernel
   over its own axpy. */
#define SWA__WSUM_FROM_AXPY(wsum, axpy)                                                             \
    static void wsum(float *out, int64_t ldo, int nh, const float *p, int64_t ldp, const uint8_t *v, \
                     size_t v_stride, int64_t nk, int64_t hd)                                        \
    {                                                                                               \
        int64_t j;                                                                                  \
        int h;                                                                                      \
        for (h = 0; h < nh; h++)                                                                    \
            for (j = 0; j < nk; j++) axpy(out + h * ldo, p[h * ldp + j], v + (size_t)j * v_stride, hd); \
    }
SWA__WSUM_FROM_AXPY(swa__wsum_f32_ref, swa__axpy_f32_ref)
SWA__WSUM_FROM_AXPY(swa__wsum_f16_ref, swa__axpy_f16_ref)
SWA__WSUM_FROM_AXPY(swa__wsum_q8_0_ref, swa__axpy_q8_0_ref)

/* Keys and values to Q8_0 blocks, ggml's layout and rounding (the format of Q8_0 weights, so
   the Q8_0 dot kernels read them): d = max|x| / 127 stored as F16, q = x / d rounded half away
   from zero. Not a hot path: one row of keys and one of values per token and layer. */
SWA__INTERNAL void swa__store_q8_0_ref(const float *x, void *row, int64_t n)
{
    uint8_t *out = (uint8_t *)row;
    int64_t i;
    int j;
    for (i = 0; i < n; i += 32, x += 32, out += 34) {
        float d = swa__amax_ref(x, 32) / 127.0f, id;
        uint16_t h;
        id = d > 0.0f ? 1.0f / d : 0.0f;
        h = swa__f32_to_f16(d);
        memcpy(out, &h, 2);
        for (j = 0; j < 32; j++) out[2 + j] = (uint8_t)(int8_t)roundf(x[j] * id);
    }
}

SWA__INTERNAL void swa__rmsnorm_ref(float *out, const float *x, const float *w, int64_t n, float eps)
{
    float ss = 0.0f, scale;
    int64_t i;
    for (i = 0; i < n; i++) ss += x[i] * x[i];
    scale = 1.0f / sqrtf(ss / (float)n + eps);
    for (i = 0; i < n; i++) out[i] = x[i] * scale * w[i];
}

/* Rotate adjacent pairs (v[2i], v[2i+1]) of each head by the angles in cs = {cos, sin} pairs,
   the GGUF "llama" layout (llama.cpp's converter permutes Q/K into it; llama2.c uses it too).
   Dimensions past n_rot pass through. */
SWA__INTERNAL void swa__rope_ref(float *v, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float *cs)
{
    int64_t h, i;
    for (h = 0; h < n_heads; h++, v += head_dim) {
        for (i = 0; i < n_rot / 2; i++) {
            float c = cs[2 * i], s = cs[2 * i + 1], x0 = v[2 * i], x1 = v[2 * i + 1];
            v[2 * i] = x0 * c - x1 * s;
            v[2 * i + 1] = x0 * s + x1 * c;
        }
    }
}

SWA__INTERNAL void swa__softmax_ref(float *x, int64_t n)
{
    float max = x[0], sum = 0.0f;
    int64_t i;
    for (i = 1; i < n; i++) if (x[i] > max) max = x[i];
    for (i = 0; i < n; i++) sum += (x[i] = expf(x[i] - max));
    for (i = 0; i < n; i++) x[i] /= sum;
}

/* SwiGLU: gate = silu(gate) * up. */
SWA__INTERNAL void swa__swiglu_ref(float *gate, const float *up, int64_t n)
{
    int64_t i;
    for (i = 0; i < n; i++) gate[i] = gate[i] / (1.0f + expf(-gate[i])) * up[i];
}

/* GEGLU: gate = gelu(gate) * up, GELU in its tanh form (Gemma's gelu_pytorch_tanh). Its
   0.5 x (1 + tanh u), u = sqrt(2/pi) (x + 0.044715 x^3), is written x / (1 + exp(-2u)): the same
   function, without the cancellation in 1 + tanh u where x is negative, and through the exp that
   the SIMD kernels have. */
#define SWA__GELU_EXPONENT(x) (-1.5957691216057308f * (x) * (1.0f + 0.044715f * (x) * (x)))
SWA__INTERNAL void swa__geglu_ref(float *gate, const float *up, int64_t n)
{
    int64_t i;
    for (i = 0; i < n; i++) gate[i] = gate[i] / (1.0f + expf(SWA__GELU_EXPONENT(gate[i]))) * up[i];
}

static void swa__add_ref(float *y, const float *x, int64_t n)
{
    int64_t i;
    for (i = 0; i < n; i++) y[i] += x[i];
}

SWADEF int32_t swa_argmax(const float *x, int64_t n)
{
    int64_t i, best = 0;
    if (!x || n <= 0) return -1;
    for (i = 1; i < n; i++) if (x[i] > x[best] || x[best] != x[best]) best = i;   /* NaN never wins */
    return (int32_t)best;
}

#define SWA__SCALAR_F32(x) (x)   /* for the SIMD kernels' scalar tails */
/* The 1-token dot of a SIMD table is its tile kernel's 1 x 1 tile: the same code, so the same
   bits as a matrix product's. */
#define SWA__DOT_FROM_DOTS(ATTR, dot, dots)                                                         \
    ATTR static float dot(const void *row, const void *x, int64_t n)                               \
    {                                                                                               \
        float out;                                                                                  \
        dots(row, 0, 1, x, 0, 1, n, &out, 1);                                                       \
        return out;                                                                                 \
    }

/* A tile kernel from one that takes one row at a time against up to 4 tokens, row_dots(row, x,
   x_stride, nt, n, out) with out[t] = dot(row, x_t): rows one after another. */
#define SWA__DOTS_FROM_ROW_DOTS(ATTR, dots, row_dots)                                               \
    ATTR static void dots(const void *w, size_t w_stride, int nr, const void *x, size_t x_stride,  \
                          int nt, int64_t n, float *y, int64_t ldy)                                 \
    {                                                                                               \
        float out[SWA__TILE_TOKENS];                                                                \
        int r, t;                                                                                   \
        for (r = 0; r < nr; r++) {                                                                  \
            row_dots((const uint8_t *)w + (size_t)r * w_stride, x, x_stride, nt, n, out);           \
            for (t = 0; t < nt; t++) y[t * ldy + r] = out[t];                                       \
        }                                                                                           \
    }

/* A type's kernels in one instruction set (ATTR: its target attribute) from the driver its
   unpacking shares with other types, driver(row, x, x_stride, nt, n, out, type): the row
   kernel, its tile and its 1-token dot. */
#define SWA__NEW_TYPE(ATTR, row_dots, dots, dot, driver, type)                                       \
    ATTR SWA__INLINE void row_dots(const void *row, const void *x, size_t stride, int nt, int64_t n, float *out) \
    {                                                                                               \
        driver(row, x, stride, nt, n, out, type);                                                   \
    }                                                                                               \
    SWA__DOTS_FROM_ROW_DOTS(ATTR, dots, row_dots)                                                   \
    SWA__DOT_FROM_DOTS(ATTR, dot, dots)

/* ==== tensor types: one descriptor per type ====
   Every type id ggml has defined, with its block size and block bytes, so that the reader can
   size and skip tensors it does not run (ids 31-33 and 36-38 were removed from ggml). The types
   the library computes with also give the activation form their rows meet and their scalar
   reference: rows to float, the dot product, and for the types a cache can hold, the
   attention's weighted sum of values and the conversion of floats into a row. */

/* One row per ggml type id, in id order (C++11 has no designated initializers, so the index is
   the position; each row states its id and tests/test_kernels.c checks both against ggml's
   list). A row says what the library does with the type:
     SWA__TYPE_GONE    an id ggml has removed: no name, nothing to read
     SWA__TYPE_READ    sizes only: the reader skips its tensors, the loader refuses them
     SWA__TYPE_WEIGHT  a weight type: the activation form its rows meet (F32, Q8 or Q8K) and
                       the stem of its reference kernels, swa__dequant_<stem>_ref and
                       swa__dot_<stem>_ref
     SWA__TYPE_CACHE   a weight type a KV cache can also hold: with swa__wsum_<stem>_ref and
                       swa__store_<stem>_ref
   Adding a type: a weight type with AVX2 and NEON kernels touches five places in this file:
     1. its SWA_TYPE_* in the public enum (ggml's id);
     2. its row here (sizes, activation form, reference stem);
     3. its reference kernels, swa__dequant_<stem>_ref and swa__dot_<stem>_ref (with the
        kernels, the only code that knows its layout);
     4. AVX2: its unpacking in the driver it shares (swa__row_dots_grouped_avx2 for blocks of 32,
        swa__row_dots_kblock_avx2 for super-blocks, or a driver of its own) and one line in
        SWA__AVX2_TYPES, which makes its kernels and enters them in the AVX2 table;
     5. NEON: the same in the NEON drivers and SWA__NEON_TYPES.
   Sizes, the names in messages, the activation form, the scalar defaults and the tiles all come
   from the row (the top comment's list of types is documentation to update too). */
#define SWA__TYPE_GONE(id, name) {id, NULL, 0, 0, 0, NULL, NULL, NULL, NULL}
#define SWA__TYPE_READ(id, name, block_size, block_bytes) {id, #name, block_size, block_bytes, 0, NULL, NULL, NULL, NULL}
#define SWA__TYPE_WEIGHT(id, name, block_size, block_bytes, act, stem) \
    {id, #name, block_size, block_bytes, SWA__ACT_##act, swa__dequant_##stem##_ref, swa__dot_##stem##_ref, NULL, NULL}
#define SWA__TYPE_CACHE(id, name, block_size, block_bytes, act, stem)                                      \
    {id, #name, block_size, block_bytes, SWA__ACT_##act, swa__dequant_##stem##_ref, swa__dot_##stem##_ref, \
     swa__wsum_##stem##_ref, swa__store_##stem##_ref}

static const swa__type_info swa__types[SWA__N_TYPES] = {
    /* row             id   name        block elements, bytes, activations, stem */
    SWA__TYPE_CACHE (0,  F32,        1,   4,   F32, f32),
    SWA__TYPE_CACHE (1,  F16,        1,   2,   F32, f16),
    SWA__TYPE_WEIGHT(2,  Q4_0,       32,  18,  Q8,  q4_0),
    SWA__TYPE_WEIGHT(3,  Q4_1,       32,  20,  Q8,  q4_1),
    SWA__TYPE_GONE  (4,  Q4_2),
    SWA__TYPE_GONE  (5,  Q4_3),
    SWA__TYPE_WEIGHT(6,  Q5_0,       32,  22,  Q8,  q5_0),
    SWA__TYPE_WEIGHT(7,  Q5_1,       32,  24,  Q8,  q5_1),
    SWA__TYPE_CACHE (8,  Q8_0,       32,  34,  Q8,  q8_0),
    SWA__TYPE_READ  (9,  Q8_1,       32,  36),
    SWA__TYPE_WEIGHT(10, Q2_K,       256, 84,  Q8K, q2_k),
    SWA__TYPE_WEIGHT(11, Q3_K,       256, 110, Q8K, q3_k),
    SWA__TYPE_WEIGHT(12, Q4_K,       256, 144, Q8K, q4_k),
    SWA__TYPE_WEIGHT(13, Q5_K,       256, 176, Q8K, q5_k),
    SWA__TYPE_WEIGHT(14, Q6_K,       256, 210, Q8K, q6_k),
    SWA__TYPE_READ  (15, Q8_K,       256, 292),
    SWA__TYPE_READ  (16, IQ2_XXS,    256, 66),
    SWA__TYPE_READ  (17, IQ2_XS,     256, 74),
    SWA__TYPE_READ  (18, IQ3_XXS,    256, 98),
    SWA__TYPE_READ  (19, IQ1_S,      256, 50),
    SWA__TYPE_WEIGHT(20, IQ4_NL,     32,  18,  Q8,  iq4_nl),
    SWA__TYPE_READ  (21, IQ3_S,      256, 110),
    SWA__TYPE_READ  (22, IQ2_S,      256, 82),
    SWA__TYPE_WEIGHT(23, IQ4_XS,     256, 136, Q8K, iq4_xs),
    SWA__TYPE_READ  (24, I8,         1,   1),
    SWA__TYPE_READ  (25, I16,        1,   2),
    SWA__TYPE_READ  (26, I32,        1,   4),
    SWA__TYPE_READ  (27, I64,        1,   8),
    SWA__TYPE_READ  (28, F64,        1,   8),
    SWA__TYPE_READ  (29, IQ1_M,      256, 56),
    SWA__TYPE_WEIGHT(30, BF16,       1,   2,   F32, bf16),
    SWA__TYPE_GONE  (31, Q4_0_4_4),
    SWA__TYPE_GONE  (32, Q4_0_4_8),
    SWA__TYPE_GONE  (33, Q4_0_8_8),
    SWA__TYPE_READ  (34, TQ1_0,      256, 54),
    SWA__TYPE_READ  (35, TQ2_0,      256, 66),
    SWA__TYPE_GONE  (36, IQ4_NL_4_4),
    SWA__TYPE_GONE  (37, IQ4_NL_4_8),
    SWA__TYPE_GONE  (38, IQ4_NL_8_8),
    SWA__TYPE_WEIGHT(39, MXFP4,      32,  17,  Q8,  mxfp4),
};
#undef SWA__TYPE_GONE
#undef SWA__TYPE_READ
#undef SWA__TYPE_WEIGHT
#undef SWA__TYPE_CACHE

/* Row `type` of the table as it stands, removed ids too (for the test of the table). */
SWA__INTERNAL const swa__type_info *swa__type_row(uint32_t type)
{
    return type < SWA__N_TYPES ? &swa__types[type] : NULL;
}

SWA__INTERNAL const swa__type_info *swa__type(uint32_t type)
{
    if (type >= SWA__N_TYPES || !swa__types[type].name) return NULL;
    return &swa__types[type];
}

SWADEF const char *swa_type_name(uint32_t type)
{
    const swa__type_info *t = swa__type(type);
    return t ? t->name : NULL;
}

SWADEF int64_t swa_type_block_size(uint32_t type)
{
    const swa__type_info *t = swa__type(type);
    return t ? t->block_size : 0;
}

SWADEF int64_t swa_type_block_bytes(uint32_t type)
{
    const swa__type_info *t = swa__type(type);
    return t ? t->block_bytes : 0;
}

static int swa__type_supported(uint32_t type)
{
    const swa__type_info *t = swa__type(type);
    return t && t->dequant;
}

/* The names of the types the library computes with, as a list for messages. */
static void swa__type_list(char *buf, size_t cap)
{
    uint32_t t;
    size_t len = 0;
    int n = 0, k = 0;
    buf[0] = '\0';
    for (t = 0; t < SWA__N_TYPES; t++) n += swa__type_supported(t);
    for (t = 0; t < SWA__N_TYPES; t++)
        if (swa__type_supported(t)) swa__list_add(buf, cap, &len, swa__types[t].name, k++, n);
}

SWA__INTERNAL int swa__act_kind(uint32_t type) { return swa__types[type].act; }

/* The alignment the kernels need of a row: a float type's element, else 2 (a block's f16s; the
   kernels read them unaligned, and rows of MXFP4's 17-byte blocks, whose scale is a byte, need
   none). */
static uintptr_t swa__type_align(uint32_t type)
{
    const swa__type_info *t = &swa__types[type];
    return t->block_size == 1 ? (uintptr_t)t->block_bytes : t->block_bytes % 2 ? 1 : 2;
}

SWA__INTERNAL void swa__dequant_row_ref(uint32_t type, const void *row, float *out, int64_t n)
{
    SWA_ASSERT(swa__type_supported(type));
    swa__types[type].dequant(row, out, n);
}

SWADEF swa_status swa_dequantize_row(uint32_t type, const void *src, float *dst, int64_t n)
{
    if (!swa__type_supported(type)) return SWA_ERR_UNSUPPORTED;
    if (!src || !dst || n < 0 || n % swa_type_block_size(type) != 0) return SWA_ERR_INVALID_ARG;
    swa__dequant_row_ref(type, src, dst, n);
    return SWA_OK;
}

/* The cache types, by SWA_KV_*: the ggml type of their rows, whose descriptor gives the block
   layout and the kernels (dot, tile, weighted sum, store). */
#define SWA__N_KV_TYPES 3
static const struct { const char *name; uint32_t type; } swa__kv_types[SWA__N_KV_TYPES] = {
    {"f16", SWA_TYPE_F16}, {"f32", SWA_TYPE_F32}, {"q8_0", SWA_TYPE_Q8_0}
};

/* ==== model ==== */

typedef struct swa__matrix {
    const void *data;          /* [n_out] rows of row_bytes, in the file */
    uint32_t type;
    int64_t n_in, n_out;
    size_t row_bytes;
} swa__matrix;

typedef struct swa__layer {
    const float *attn_norm;    /* [n_embd]; NULL without (OLMo 2) */
    const float *ffn_norm;     /* [n_embd]; NULL without (OLMo 2, Command R7B) */
    swa__matrix wq;            /* [n_head*head_dim][n_embd] */
    swa__matrix wk, wv;        /* [n_kv_head*head_dim][n_embd] */
    swa__matrix wo;            /* [n_embd][n_head*head_dim] */
    swa__matrix w_gate, w_up;  /* [n_ff][n_embd] */
    swa__matrix w_down;        /* [n_embd][n_ff] */
    /* optional, as the architecture has them (NULL otherwise) */
    const float *bq, *bk, *bv; /* [n_head*head_dim], [n_kv_head*head_dim] x2 biases */
    const float *bo;           /* [n_embd] attn_output.bias */
    const float *attn_sinks;   /* [n_head] a logit per head that joins each softmax's denominator */
    const float *q_norm;       /* [head_dim] RMSNorm weights of each query head (QK_NORM_ALL: [n_head*head_dim]) */
    const float *k_norm;       /* [head_dim] and of each key head (QK_NORM_ALL: [n_kv_head*head_dim]) */
    const float *attn_post_norm, *ffn_post_norm;   /* [n_embd] on each block's output */
    /* a mixture of experts (n_expert > 0) in place of w_gate, w_up and w_down: the 3-D tensors
       read as 2-D ones whose rows are expert 0's, then expert 1's... (swa__rows_of takes one) */
    swa__matrix router;        /* [n_expert][n_embd] ffn_gate_inp */
    const float *router_bias;  /* [n_expert] ffn_gate_inp.bias, or NULL */
    swa__matrix gate_exps, up_exps;   /* [n_expert][n_ff_exp][n_embd] */
    swa__matrix down_exps;     /* [n_expert][n_embd][n_ff_exp] */
    const float *gate_exps_b, *up_exps_b;   /* [n_expert][n_ff_exp] the experts' biases (gpt-oss) */
    const float *down_exps_b;  /* [n_expert][n_embd] */
    swa__matrix gate_shexp, up_shexp;   /* [n_ff_shexp][n_embd] a shared expert every token goes through */
    swa__matrix down_shexp;    /* [n_embd][n_ff_shexp] (SHARED_EXPERT; NULL data otherwise) */
    swa__matrix attn_gate;     /* [n_head*head_dim][n_embd] (ATTN_GATE) */
    const float *select_bias;  /* [n_expert] exp_probs_b: added to the probabilities to pick (DEEPSEEK_MOE) */
} swa__layer;

/* What an architecture's layers have beyond llama's: one row per architecture, read by the
   loader and by the one forward pass. */
enum {
    SWA__ARCH_EMBD_SCALE = 1 << 0,   /* embeddings times sqrt(n_embd) */
    SWA__ARCH_POST_NORMS = 1 << 1,   /* post_attention_norm, post_ffw_norm on each block's output */
    SWA__ARCH_GELU       = 1 << 2,   /* feed-forward gate through GELU (tanh form), not SiLU */
    SWA__ARCH_QK_NORM    = 1 << 3,   /* attn_q_norm, attn_k_norm: RMSNorm on each head of Q and K */
    SWA__ARCH_BIASES     = 1 << 4,   /* attn_q/k/v.bias when the file has them */
    SWA__ARCH_NEOX       = 1 << 5,   /* RoPE turns dimensions i and i + n_rot/2, not 2i and 2i+1 */
    SWA__ARCH_FUSED      = 1 << 6,   /* attn_qkv holds Q, K and V; ffn_up holds gate and up */
    SWA__ARCH_ROPE_FACTORS = 1 << 7, /* rope_factors_long/short divide the frequencies */
    SWA__ARCH_GEMMA_SCALE = 1 << 8,  /* queries scaled as Gemma's checkpoints say (see below) */
    SWA__ARCH_EXPERTS    = 1 << 9,   /* every layer a mixture of experts: expert_count required */
    SWA__ARCH_EXPERT_FF  = 1 << 10,  /* experts expert_feed_forward_length wide (default n_ff /
                                        n_expert_used), not feed_forward_length */
    SWA__ARCH_EXPERT_KEYS = 1 << 11, /* expert_gating_func, expert_weights_norm and _scale from the
                                        file, the row's router rule by default */
    SWA__ARCH_SINKS      = 1 << 12,  /* attn_sinks: one logit per head in every softmax's denominator */
    SWA__ARCH_OAI_FFN    = 1 << 13,  /* gpt-oss's feed-forward: post_attention_norm before it (no
                                        ffn_norm), expert biases, swiglu_oai (see swa__swiglu_oai) */
    SWA__ARCH_YARN_KEYS  = 1 << 14,  /* rope.scaling.yarn_beta_fast/_slow and yarn_log_multiplier read */
    SWA__ARCH_ATTN_TEMP  = 1 << 15,  /* attention.temperature_scale: queries grow with the position */
    SWA__ARCH_LAYERNORM  = 1 << 16,  /* every norm a LayerNorm without bias (the mean taken out), its
                                        epsilon attention.layer_norm_epsilon (required, as llama.cpp) */
    SWA__ARCH_PARALLEL   = 1 << 17,  /* attention and feed-forward both read attn_norm's output and
                                        both add to the residual (no ffn_norm) */
    SWA__ARCH_POST_ONLY  = 1 << 18,  /* no attn_norm or ffn_norm: attention and feed-forward read the
                                        residual itself (with POST_NORMS: OLMo 2) */
    SWA__ARCH_QK_NORM_ALL = 1 << 19, /* with QK_NORM: one RMSNorm over all of Q's heads, and over all
                                        of K's, not one per head */
    SWA__ARCH_CHUNKED    = 1 << 20,  /* the windowed layers attend within chunks of C positions (Llama 4:
                                        attention.chunk_size, default 8192; a sliding_window of 0 turns
                                        chunking off, and RoPE on every layer) */
    SWA__ARCH_QK_L2      = 1 << 21,  /* Q and K heads RMS-normed without weights after RoPE, on the layers
                                        that turn it ({arch}.use_qk_norm; default: unless 128 experts) */
    SWA__ARCH_SHARED_EXPERT = 1 << 22, /* ffn_{gate,up,down}_shexp beside the routed experts, added to them */
    SWA__ARCH_WEIGHT_INPUT = 1 << 23, /* the router's weight scales each expert's input, not its output */
    SWA__ARCH_MOE_STEP   = 1 << 24,  /* experts only on layers l with (l + 1) % interleave_moe_layer_step
                                        == 0 (the key required; 0: none), dense ones between */
    SWA__ARCH_TEMP_NOPE  = 1 << 25,  /* Llama 4's attention temperature on the layers without RoPE:
                                        queries times 1 + s ln(1 + floor((pos + 1) / L)) */
    SWA__ARCH_ROPE_UNWINDOWED = 1 << 26, /* with ROPE_LOCAL_ONLY: a file without windowed layers turns
                                        RoPE on every layer (llama.cpp's exaone4 and llama4) */
    SWA__ARCH_BIDIRECTIONAL = 1 << 27, /* an encoder (EmbeddingGemma): a query sees keys on both sides,
                                        |i - j| <= W/2 in windowed layers, the whole text in global
                                        ones, so a text is evaluated at once from position 0; the
                                        optional dense_2 and dense_3 project the pooled embedding */
    SWA__ARCH_ROUTER_INPUT = 1 << 28, /* the router reads the layer's input, before the attention's norm */
    SWA__ARCH_RELU       = 1 << 29,  /* feed-forward gate through ReLU, not SiLU */
    SWA__ARCH_GLOBAL_FIRST = 1 << 30 /* the period's global layer comes first: l windowed iff l % p != 0 */
};

/* More of what an architecture's layers have (the row's `more`; `has` is full). */
enum {
    SWA__ARCH2_ATTN_GATE = 1 << 0,   /* attn_gate: the attention's output times sigmoid(attn_gate x) before
                                        attn_output, x the attention's normed input (AFMoE) */
    SWA__ARCH2_DEEPSEEK_MOE = 1 << 1 /* DeepSeek-style experts: leading_dense_block_count dense layers first,
                                        expert_shared_count shared experts (n_ff_exp wide each, as one
                                        MLP), and exp_probs_b: a bias on the probabilities that picks the
                                        experts but leaves their weights unbiased */
};

/* Which layers turn RoPE, and with what: every layer alike (the windowed ones at the row's
   local_rope_base, if it has one); windowed layers without the file's scaling and attention
   factor (OLMo 3, as llama.cpp's olmo2 code); only the windowed layers, global ones taking no
   position (Command R7B); every layer but each fourth, l with (l + 1) % 4 == 0, whatever the
   windows (AFMoE). */
enum { SWA__ROPE_ALL = 0, SWA__ROPE_LOCAL_PLAIN = 1, SWA__ROPE_LOCAL_ONLY = 2, SWA__ROPE_NOT_FOURTH = 3 };

/* How the router turns a token's logits over the experts into the weights of the ones it
   picks (llama.cpp's expert_gating_func numbers): softmax over all experts, or a sigmoid of
   each, then the top n_expert_used; or the top n_expert_used logits, then a softmax over
   those. The weights may then be divided by their sum (expert_weights_norm). */
enum { SWA__GATING_SOFTMAX = 1, SWA__GATING_SIGMOID = 2, SWA__GATING_SOFTMAX_WEIGHT = 3 };

typedef struct swa__arch {
    const char *name;              /* general.architecture, the keys' prefix */
    unsigned has;                  /* SWA__ARCH_* */
    int32_t swa_period;            /* no pattern key: layer l has the window iff l % p < p - 1 */
    int32_t min_window;            /* the smallest window number the key may hold (0 = none) */
    int32_t default_window;        /* without a sliding_window key; 0: full attention, -1: required */
    float attn_softcap;            /* defaults of {arch}.attn_logit_softcapping, 0 = none */
    float final_softcap;           /* and of {arch}.final_logit_softcapping */
    float local_rope_base;         /* RoPE base of windowed layers, 0 = the file's */
    int32_t wide_query_layers;     /* GEMMA_SCALE: with this many layers (the 27B models) */
    int32_t gating;                /* a mixture of experts' router: SWA__GATING_* */
    int32_t norm_weights;          /* and whether its weights are divided by their sum */
    int32_t rope_layers;           /* SWA__ROPE_* */
    int32_t logit_scale;           /* 1: logits times {arch}.logit_scale (required, as llama.cpp) */
    unsigned more;                 /* SWA__ARCH2_* */
} swa__arch;

/* The window patterns are llama.cpp's built-in ones (set_swa_pattern): Gemma 2 alternates
   windowed and global layers starting windowed, Gemma 3 has five windowed layers, then a
   global one; OLMo 3 and Command R7B have three windowed layers, then a global one. Gemma 2
   without a window key has 4096; Gemma 3 and OLMo 2 without one are all global; Command R7B
   needs one. Phi-3's window, when the file has one, is on every layer (as in transformers;
   llama.cpp ignores it). Llama 4 (llama.cpp's llama4 with its iswa graph) has three chunked
   layers, then a global one without RoPE; its chunk is attention.chunk_size (the key ollama's
   converter writes; llama.cpp fixes 8192, the default here), its router a sigmoid of each
   expert's logit whose top n_expert_used scale the picked experts' inputs. EXAONE 4 is OLMo 2's
   layer (norms after each block only) with per-head Q/K norms, three windowed layers of four
   (or the file's pattern) and global layers without RoPE; llama.cpp windows only its 64-layer
   model, here the file's keys decide. EmbeddingGemma (gemma-embedding) is Gemma 3's layer as an
   encoder: llama.cpp's symmetric window (a query sees |i - j| <= W/2; the key is required) on
   five layers of six, the sixth sees the whole text, queries scaled by 1/sqrt(head_dim).
   SmallThinker: every layer a mixture of ReLU-gated experts whose router reads the layer's
   input before the attention's norm (the file's gating rule, weights normalized); with a
   window, the first layer of every four is global and turns no RoPE (the window is the file's,
   where llama.cpp fixes 4096). AFMoE (Arcee's Trinity): Gemma's norms on both sides of each
   block, embeddings times sqrt(n_embd), per-head Q/K norms, a sigmoid gate on the attention's
   output, leading dense layers, then experts with a shared MLP, a sigmoid router with a
   selection bias, its weights normalized and scaled as the file says; three windowed layers of
   four, and the fourth turns no RoPE even without a window. */
/* A row names its groups of fields (C++11 has no designated initializers): the window's
   (swa_period, min_window, default_window), the soft-capping defaults (attention, final), the
   windowed layers' RoPE base, wide_query_layers and the router's rule (SWA__ROUTER: gating,
   normalized), which is llama.cpp's build_moe_ffn arguments of the architecture: Mixtral (llama
   with experts) and Qwen3-MoE both take a softmax over all experts, then the top k, then divide
   their weights by their sum. gpt-oss (llama.cpp's openai-moe-iswa) windows the even layers
   (set_swa_pattern(2), as Gemma 2) and takes a softmax over the k largest logits, not
   renormalized. mistral3 is llama's layout (RoPE on adjacent pairs) with YaRN and Llama 4's
   attention temperature. Last, which layers turn RoPE and whether the logits are scaled
   (SWA__ROPE_LOGITS). */
#define SWA__ARCH(name, has, window, softcap, local_rope_base, wide_query, router, layers) \
    {name, has, window, softcap, local_rope_base, wide_query, router, layers, 0}
#define SWA__ARCH_MORE(name, has, more, window, softcap, local_rope_base, wide_query, router, layers) \
    {name, has, window, softcap, local_rope_base, wide_query, router, layers, more}
#define SWA__WINDOW(period, min, by_default) period, min, by_default
#define SWA__SOFTCAP(attn, final) attn, final
#define SWA__LOCAL_ROPE_BASE(base) base
#define SWA__WIDE_QUERY_LAYERS(n) n
#define SWA__ROUTER(gating, norm) gating, norm
#define SWA__ROPE_LOGITS(rope_layers, logit_scale) rope_layers, logit_scale
static const swa__arch swa__archs[] = {
    SWA__ARCH("llama", 0, SWA__WINDOW(0, 1, 0), SWA__SOFTCAP(0.0f, 0.0f), SWA__LOCAL_ROPE_BASE(0.0f),
              SWA__WIDE_QUERY_LAYERS(0), SWA__ROUTER(SWA__GATING_SOFTMAX, 1),
              SWA__ROPE_LOGITS(SWA__ROPE_ALL, 0)),
    SWA__ARCH("gemma2", SWA__ARCH_EMBD_SCALE | SWA__ARCH_POST_NORMS | SWA__ARCH_GELU | SWA__ARCH_NEOX | SWA__ARCH_GEMMA_SCALE,
              SWA__WINDOW(2, 0, 4096), SWA__SOFTCAP(50.0f, 30.0f), SWA__LOCAL_ROPE_BASE(0.0f),
              SWA__WIDE_QUERY_LAYERS(46), SWA__ROUTER(SWA__GATING_SOFTMAX, 1),
              SWA__ROPE_LOGITS(SWA__ROPE_ALL, 0)),
    SWA__ARCH("gemma3", SWA__ARCH_EMBD_SCALE | SWA__ARCH_POST_NORMS | SWA__ARCH_GELU | SWA__ARCH_QK_NORM | SWA__ARCH_NEOX |
              SWA__ARCH_GEMMA_SCALE,
              SWA__WINDOW(6, 0, 0), SWA__SOFTCAP(0.0f, 0.0f), SWA__LOCAL_ROPE_BASE(10000.0f),
              SWA__WIDE_QUERY_LAYERS(62), SWA__ROUTER(SWA__GATING_SOFTMAX, 1),
              SWA__ROPE_LOGITS(SWA__ROPE_ALL, 0)),
    SWA__ARCH("phi3", SWA__ARCH_NEOX | SWA__ARCH_FUSED | SWA__ARCH_BIASES | SWA__ARCH_ROPE_FACTORS,
              SWA__WINDOW(0, 0, 0), SWA__SOFTCAP(0.0f, 0.0f), SWA__LOCAL_ROPE_BASE(0.0f),
              SWA__WIDE_QUERY_LAYERS(0), SWA__ROUTER(SWA__GATING_SOFTMAX, 1),
              SWA__ROPE_LOGITS(SWA__ROPE_ALL, 0)),
    SWA__ARCH("qwen2", SWA__ARCH_NEOX | SWA__ARCH_BIASES,
              SWA__WINDOW(0, 0, 0), SWA__SOFTCAP(0.0f, 0.0f), SWA__LOCAL_ROPE_BASE(0.0f),
              SWA__WIDE_QUERY_LAYERS(0), SWA__ROUTER(SWA__GATING_SOFTMAX, 1),
              SWA__ROPE_LOGITS(SWA__ROPE_ALL, 0)),
    SWA__ARCH("qwen3", SWA__ARCH_NEOX | SWA__ARCH_QK_NORM,
              SWA__WINDOW(0, 0, 0), SWA__SOFTCAP(0.0f, 0.0f), SWA__LOCAL_ROPE_BASE(0.0f),
              SWA__WIDE_QUERY_LAYERS(0), SWA__ROUTER(SWA__GATING_SOFTMAX, 1),
              SWA__ROPE_LOGITS(SWA__ROPE_ALL, 0)),
    SWA__ARCH("qwen3moe", SWA__ARCH_NEOX | SWA__ARCH_QK_NORM | SWA__ARCH_EXPERTS | SWA__ARCH_EXPERT_FF,
              SWA__WINDOW(0, 0, 0), SWA__SOFTCAP(0.0f, 0.0f), SWA__LOCAL_ROPE_BASE(0.0f),
              SWA__WIDE_QUERY_LAYERS(0), SWA__ROUTER(SWA__GATING_SOFTMAX, 1),
              SWA__ROPE_LOGITS(SWA__ROPE_ALL, 0)),
    SWA__ARCH("gpt-oss", SWA__ARCH_NEOX | SWA__ARCH_BIASES | SWA__ARCH_SINKS | SWA__ARCH_OAI_FFN | SWA__ARCH_EXPERTS |
              SWA__ARCH_EXPERT_FF,
              SWA__WINDOW(2, 0, 0), SWA__SOFTCAP(0.0f, 0.0f), SWA__LOCAL_ROPE_BASE(0.0f),
              SWA__WIDE_QUERY_LAYERS(0), SWA__ROUTER(SWA__GATING_SOFTMAX_WEIGHT, 0),
              SWA__ROPE_LOGITS(SWA__ROPE_ALL, 0)),
    SWA__ARCH("mistral3", SWA__ARCH_BIASES | SWA__ARCH_YARN_KEYS | SWA__ARCH_ATTN_TEMP,
              SWA__WINDOW(0, 0, 0), SWA__SOFTCAP(0.0f, 0.0f), SWA__LOCAL_ROPE_BASE(0.0f),
              SWA__WIDE_QUERY_LAYERS(0), SWA__ROUTER(SWA__GATING_SOFTMAX, 1),
              SWA__ROPE_LOGITS(SWA__ROPE_ALL, 0)),
    SWA__ARCH("olmo2", SWA__ARCH_NEOX | SWA__ARCH_POST_NORMS | SWA__ARCH_POST_ONLY | SWA__ARCH_QK_NORM | SWA__ARCH_QK_NORM_ALL,
              SWA__WINDOW(4, 0, 0), SWA__SOFTCAP(0.0f, 0.0f), SWA__LOCAL_ROPE_BASE(0.0f),
              SWA__WIDE_QUERY_LAYERS(0), SWA__ROUTER(SWA__GATING_SOFTMAX, 1),
              SWA__ROPE_LOGITS(SWA__ROPE_LOCAL_PLAIN, 0)),
    SWA__ARCH("cohere2", SWA__ARCH_LAYERNORM | SWA__ARCH_PARALLEL,
              SWA__WINDOW(4, 1, -1), SWA__SOFTCAP(0.0f, 0.0f), SWA__LOCAL_ROPE_BASE(0.0f),
              SWA__WIDE_QUERY_LAYERS(0), SWA__ROUTER(SWA__GATING_SOFTMAX, 1),
              SWA__ROPE_LOGITS(SWA__ROPE_LOCAL_ONLY, 1)),
    SWA__ARCH("llama4", SWA__ARCH_CHUNKED | SWA__ARCH_QK_L2 | SWA__ARCH_SHARED_EXPERT | SWA__ARCH_WEIGHT_INPUT |
              SWA__ARCH_MOE_STEP | SWA__ARCH_TEMP_NOPE | SWA__ARCH_EXPERT_FF | SWA__ARCH_ROPE_UNWINDOWED,
              SWA__WINDOW(4, 1, 8192), SWA__SOFTCAP(0.0f, 0.0f), SWA__LOCAL_ROPE_BASE(0.0f),
              SWA__WIDE_QUERY_LAYERS(0), SWA__ROUTER(SWA__GATING_SIGMOID, 0),
              SWA__ROPE_LOGITS(SWA__ROPE_LOCAL_ONLY, 0)),
    SWA__ARCH("gemma-embedding", SWA__ARCH_EMBD_SCALE | SWA__ARCH_POST_NORMS | SWA__ARCH_GELU | SWA__ARCH_QK_NORM |
              SWA__ARCH_NEOX | SWA__ARCH_BIDIRECTIONAL,
              SWA__WINDOW(6, 0, -1), SWA__SOFTCAP(0.0f, 0.0f), SWA__LOCAL_ROPE_BASE(10000.0f),
              SWA__WIDE_QUERY_LAYERS(0), SWA__ROUTER(SWA__GATING_SOFTMAX, 1),
              SWA__ROPE_LOGITS(SWA__ROPE_ALL, 0)),
    SWA__ARCH("smallthinker", SWA__ARCH_NEOX | SWA__ARCH_EXPERTS | SWA__ARCH_EXPERT_FF | SWA__ARCH_EXPERT_KEYS |
              SWA__ARCH_ROUTER_INPUT | SWA__ARCH_RELU | SWA__ARCH_GLOBAL_FIRST | SWA__ARCH_ROPE_UNWINDOWED,
              SWA__WINDOW(4, 0, 0), SWA__SOFTCAP(0.0f, 0.0f), SWA__LOCAL_ROPE_BASE(0.0f),
              SWA__WIDE_QUERY_LAYERS(0), SWA__ROUTER(SWA__GATING_SOFTMAX, 1),
              SWA__ROPE_LOGITS(SWA__ROPE_LOCAL_ONLY, 0)),
    SWA__ARCH_MORE("afmoe", SWA__ARCH_EMBD_SCALE | SWA__ARCH_POST_NORMS | SWA__ARCH_QK_NORM | SWA__ARCH_NEOX |
                   SWA__ARCH_EXPERTS | SWA__ARCH_EXPERT_FF | SWA__ARCH_EXPERT_KEYS,
                   SWA__ARCH2_ATTN_GATE | SWA__ARCH2_DEEPSEEK_MOE,
                   SWA__WINDOW(4, 0, 0), SWA__SOFTCAP(0.0f, 0.0f), SWA__LOCAL_ROPE_BASE(0.0f),
                   SWA__WIDE_QUERY_LAYERS(0), SWA__ROUTER(SWA__GATING_SIGMOID, 0),
                   SWA__ROPE_LOGITS(SWA__ROPE_NOT_FOURTH, 0)),
    SWA__ARCH("exaone4", SWA__ARCH_NEOX | SWA__ARCH_POST_NORMS | SWA__ARCH_POST_ONLY | SWA__ARCH_QK_NORM |
              SWA__ARCH_ROPE_UNWINDOWED,
              SWA__WINDOW(4, 0, 0), SWA__SOFTCAP(0.0f, 0.0f), SWA__LOCAL_ROPE_BASE(0.0f),
              SWA__WIDE_QUERY_LAYERS(0), SWA__ROUTER(SWA__GATING_SOFTMAX, 1),
              SWA__ROPE_LOGITS(SWA__ROPE_LOCAL_ONLY, 0)),
};
#undef SWA__ARCH
#undef SWA__ARCH_MORE
#undef SWA__WINDOW
#undef SWA__SOFTCAP
#undef SWA__LOCAL_ROPE_BASE
#undef SWA__WIDE_QUERY_LAYERS
#undef SWA__ROUTER
#undef SWA__ROPE_LOGITS

struct swa_model {
    swa_gguf *gguf;
    swa_hparams hp;
    const swa__arch *arch;
    char key[96];              /* scratch for "{arch}.<suffix>" key names */
    int32_t *window;           /* [n_layer] sliding window per layer, 0 = full attention */
    swa__matrix tok_embd;      /* [n_vocab][n_embd] */
    swa__matrix output;        /* [n_vocab][n_embd], tok_embd when tied */
    const float *output_norm;  /* [n_embd] */
    swa__layer *layers;        /* [n_layer] */
    float *norms;              /* the small vectors (norms, biases, RoPE factors), as float */
    int64_t n_norms, cap_norms;   /* floats used and allocated */
    float q_scale;             /* queries are multiplied by this before the scores */
    float attn_softcap;        /* scores become c tanh(s / c); 0 = not */
    float final_softcap;       /* logits likewise */
    float logit_scale;         /* logits times this ({arch}.logit_scale; 1: not) */
    float rope_scale;          /* global layers: positions times this (linear RoPE scaling) */
    float rope_attn_factor;    /* cos and sin times this ({arch}.rope.scaling.attn_factor; YaRN's) */
    int32_t yarn;              /* rope.scaling.type yarn: frequencies blended (swa__yarn_scale) */
    float yarn_beta_fast, yarn_beta_slow;   /* the blend's ramp, in rotations over n_ctx_orig */
    float attn_temp;           /* queries times 1 + attn_temp ln(1 + floor(pos / n_ctx_orig)); 0 = not */
    float local_rope_base;     /* windowed layers' RoPE base */
    int64_t n_ctx_orig;        /* rope_factors_long beyond this context, short up to it */
    const float *rope_long, *rope_short;   /* [n_rot/2] or NULL */
    int32_t gating;            /* the router's rule (SWA__GATING_*), */
    int32_t norm_weights;      /* whether its weights are divided by their sum, */
    float expert_scale;        /* and what they are then multiplied by (1: not) */
    int32_t chunked;           /* the windowed layers attend within chunks (CHUNKED; 0: a sliding window) */
    int32_t rope_layers;       /* SWA__ROPE_*: the row's, or ALL in a file without windows (ROPE_UNWINDOWED) */
    int32_t qk_l2;             /* Q and K heads RMS-normed without weights after RoPE (QK_L2) */
    int32_t moe_step;          /* experts on layers l with (l + 1) % moe_step == 0; 1: every layer, 0: none */
    float attn_temp_len, attn_temp_offset;   /* the temperature's floor((pos + offset) / len) */
    const float *ones;         /* [head_dim] of 1: the weights of the QK_L2 norms */
    swa__matrix dense_2, dense_3;   /* BIDIRECTIONAL: [n_dense][n_embd] and [n_embd][n_dense] on the
                                       pooled embedding, when the file has them (n_dense 0: not) */
    int64_t n_dense;
    int64_t dense_lead;        /* DEEPSEEK_MOE: the first layers, dense */
    int64_t n_ff_shexp;        /* rows of the shared expert's gate and up (0: none) */
    swa_vocab *vocab;          /* NULL when the file has none we can use; vocab_err says why */
    swa_error vocab_err;
};

/* llama files are read with the keys they always were: no soft-caps, no RoPE scaling keys, heads
   n_embd / n_head wide. */
static int swa__is_llama(const swa_model *m) { return m->arch == &swa__archs[0]; }

/* The architectures' names, as a list for messages. */
static void swa__arch_list(char *buf, size_t cap)
{
    const int n = (int)(sizeof swa__archs / sizeof swa__archs[0]);
    size_t len = 0;
    int k;
    buf[0] = '\0';
    for (k = 0; k < n; k++) swa__list_add(buf, cap, &len, swa__archs[k].name, k, n);
}

/* "{arch}.suffix" in the model's scratch: valid until the next call. */
static const char *swa__key(swa_model *m, const char *suffix)
{
    snprintf(m->key, sizeof m->key, "%s.%s", m->arch->name, suffix);
    return m->key;
}

/* An integer key in lo..hi; `def` when absent and not required. */
static swa_status swa__get_int(const swa_gguf *g, const char *key, int required, int64_t def,
                               int64_t lo, int64_t hi, int64_t *out, swa_error *err)
{
    int64_t i = swa_gguf_kv_find(g, key);
    swa_gguf_value v;
    if (i < 0) {
        if (required) return swa__fail(err, SWA_ERR_MODEL, "key %s is missing", key);
        *out = def;
        return SWA_OK;
    }
    v = swa_gguf_kv_value(g, i);
    if (v.type == SWA_GGUF_BOOL || swa_gguf_value_int(&v, out) != SWA_OK)
        return swa__fail(err, SWA_ERR_MODEL, "key %s: type %s, want an integer", key, swa_gguf_type_name(v.type));
    if (*out < lo || *out > hi)
        return swa__fail(err, SWA_ERR_MODEL, "key %s: %lld is out of range %lld..%lld", key,
                         (long long)*out, (long long)lo, (long long)hi);
    return SWA_OK;
}

static swa_status swa__get_float(const swa_gguf *g, const char *key, double def, double lo,
                                 double hi, float *out, swa_error *err)
{
    int64_t i = swa_gguf_kv_find(g, key);
    swa_gguf_value v;
    double x = def;
    if (i >= 0) {
        v = swa_gguf_kv_value(g, i);
        if (v.type == SWA_GGUF_BOOL || swa_gguf_value_float(&v, &x) != SWA_OK)
            return swa__fail(err, SWA_ERR_MODEL, "key %s: type %s, want a number", key, swa_gguf_type_name(v.type));
        if (!(x >= lo && x <= hi))
            return swa__fail(err, SWA_ERR_MODEL, "key %s: %g is out of range %g..%g", key, x, lo, hi);
    }
    *out = (float)x;
    return SWA_OK;
}

static swa_status swa__get_bool(const swa_gguf *g, const char *key, int def, int *out, swa_error *err)
{
    int64_t i = swa_gguf_kv_find(g, key), b = def;
    swa_gguf_value v;
    if (i >= 0) {
        v = swa_gguf_kv_value(g, i);
        if (swa_gguf_value_int(&v, &b) != SWA_OK || b < 0 || b > 1)
            return swa__fail(err, SWA_ERR_FORMAT, "key %s: type %s, want a bool", key, swa_gguf_type_name(v.type));
    }
    *out = (int)b;
    return SWA_OK;
}

static swa_status swa__check_arch(swa_model *m, swa_error *err)
{
    int64_t i = swa_gguf_kv_find(m->gguf, "general.architecture");
    swa_gguf_value v;
    swa_str arch;
    size_t k;
    char archs[256];
    if (i < 0) return swa__fail(err, SWA_ERR_MODEL, "key general.architecture is missing");
    v = swa_gguf_kv_value(m->gguf, i);
    if (swa_gguf_value_str(&v, &arch) != SWA_OK)
        return swa__fail(err, SWA_ERR_MODEL, "key general.architecture: type %s, want a string", swa_gguf_type_name(v.type));
    for (k = 0; k < sizeof swa__archs / sizeof swa__archs[0]; k++)
        if (swa__str_eq(arch, swa__archs[k].name)) {
            m->arch = &swa__archs[k];
            m->hp.arch = m->arch->name;
            return SWA_OK;
        }
    swa__arch_list(archs, sizeof archs);
    return swa__fail(err, SWA_ERR_UNSUPPORTED, "architecture \"%.*s\" is not supported (%s are)",
                     arch.len > 64 ? 64 : (int)arch.len, arch.ptr, archs);
}

/* Head size: {arch}.attention.key_length (Gemma's and Qwen 3's heads are not n_embd / n_head
   wide), which value_length must equal; llama files keep to n_embd / n_head. */
static swa_status swa__read_head_dim(swa_model *m, swa_error *err)
{
    swa_hparams *hp = &m->hp;
    int is_llama = swa__is_llama(m);
    int64_t v, def = hp->n_embd % hp->n_head == 0 ? hp->n_embd / hp->n_head : 0;
    swa_status s;
    if ((s = swa__get_int(m->gguf, swa__key(m, "attention.key_length"), 0, def, 0, 1 << 16, &v, err)) != SWA_OK) return s;
    if (v == 0 || (is_llama && v != def)) {
        if (def == 0)
            return swa__fail(err, SWA_ERR_MODEL, "head count %d does not divide the embedding size %d", hp->n_head, hp->n_embd);
        return swa__fail(err, SWA_ERR_UNSUPPORTED, "key %s: %lld, only embedding/heads = %d is supported", m->key,
                         (long long)v, (int)def);
    }
    hp->head_dim = (int32_t)v;
    if ((s = swa__get_int(m->gguf, swa__key(m, "attention.value_length"), 0, v, 1, 1 << 16, &v, err)) != SWA_OK) return s;
    if (v != hp->head_dim)
        return swa__fail(err, SWA_ERR_UNSUPPORTED, "key %s: %lld, only the key length %d is supported", m->key,
                         (long long)v, hp->head_dim);
    return SWA_OK;
}

/* YaRN as llama.cpp reads it (llama_context's constructor; ggml's rope_yarn): the ramp's betas
   default to 32 and 1 (read from the file where the architecture's llama.cpp code reads them),
   the extrapolation mix ext_factor is 1, and cos and sin are multiplied by
   yarn_attn_factor (1 + 0.1 ln factor), where yarn_attn_factor is rope.scaling.attn_factor
   times mscale(factor, 1) / mscale(factor, log_mul) / (1 + 0.1 ln factor) (the two
   1 + 0.1 ln factor cancel, and are left out here), with log_mul =
   rope.scaling.yarn_log_multiplier (0, not read: mscale(factor, 1) alone), mscale(f, m) = 1 +
   0.1 m ln f for f > 1 and 1 otherwise. So with log_mul 0 the product is 1 + 0.1 ln factor
   (transformers' default attention_factor), with log_mul = 1 it is 1 (Ministral 3's mscale =
   mscale_all_dim = 1). */
static swa_status swa__read_yarn(swa_model *m, float factor, swa_error *err)
{
    float log_mul = 0.0f;
    double f = factor > 0.0f ? (double)factor : 1.0, attn;
    swa_status s;
    m->yarn = 1;
    m->yarn_beta_fast = 32.0f;
    m->yarn_beta_slow = 1.0f;
    if ((m->arch->has & SWA__ARCH_YARN_KEYS) &&
        ((s = swa__get_float(m->gguf, swa__key(m, "rope.scaling.yarn_beta_fast"), 32.0, 1e-6, 1e6, &m->yarn_beta_fast, err)) != SWA_OK ||
         (s = swa__get_float(m->gguf, swa__key(m, "rope.scaling.yarn_beta_slow"), 1.0, 1e-6, 1e6, &m->yarn_beta_slow, err)) != SWA_OK ||
         (s = swa__get_float(m->gguf, swa__key(m, "rope.scaling.yarn_log_multiplier"), 0.0, 0.0, 1e3, &log_mul, err)) != SWA_OK))
        return s;
    attn = f <= 1.0 ? 1.0 : 1.0 + 0.1 * log(f);                     /* mscale(factor, 1) */
    if (log_mul != 0.0f) attn /= f <= 1.0 ? 1.0 : 1.0 + 0.1 * log_mul * log(f);
    m->rope_attn_factor = (float)(attn * (double)m->rope_attn_factor);
    return SWA_OK;
}

/* Llama 4's temperature on the layers without RoPE, as llama.cpp computes it: 1 + s ln(1 +
   floor((pos + 1) / L)), s = 0.1 and L = 8192, which llama.cpp fixes for llama4; here
   attention.temperature_scale and attention.temperature_length (llama.cpp's keys for the same
   numbers in other architectures) may say otherwise. */
static swa_status swa__read_temp_nope(swa_model *m, swa_error *err)
{
    swa_status s;
    if (!(m->arch->has & SWA__ARCH_TEMP_NOPE)) return SWA_OK;
    m->attn_temp_offset = 1.0f;
    if ((s = swa__get_float(m->gguf, swa__key(m, "attention.temperature_scale"), 0.1, -1e3, 1e3, &m->attn_temp, err)) != SWA_OK ||
        (s = swa__get_float(m->gguf, swa__key(m, "attention.temperature_length"), 8192.0, 1.0, 2147483647.0, &m->attn_temp_len,
                            err)) != SWA_OK)
        return s;
    return SWA_OK;
}

/* What the architecture row and its optional keys add: soft-caps, the query scale, RoPE
   scaling (linear on global layers, or YaRN; Phi-3's attention factor and original context),
   the attention temperature. */
static swa_status swa__read_arch_params(swa_model *m, swa_error *err)
{
    const swa__arch *a = m->arch;
    swa_hparams *hp = &m->hp;
    int64_t v, i;
    float factor;
    swa_status s;
    if ((s = swa__get_float(m->gguf, swa__key(m, "attn_logit_softcapping"), a->attn_softcap, 0.0, 1e9, &m->attn_softcap, err)) != SWA_OK ||
        (s = swa__get_float(m->gguf, swa__key(m, "final_logit_softcapping"), a->final_softcap, 0.0, 1e9, &m->final_softcap, err)) != SWA_OK)
        return s;
    if (swa__is_llama(m)) m->attn_softcap = m->final_softcap = 0.0f;
    m->logit_scale = 1.0f;
    if (a->logit_scale) {   /* required, as llama.cpp reads it; 0 is "none" there */
        if (swa_gguf_kv_find(m->gguf, swa__key(m, "logit_scale")) < 0)
            return swa__fail(err, SWA_ERR_MODEL, "key %s is missing", m->key);
        if ((s = swa__get_float(m->gguf, m->key, 1.0, -1e9, 1e9, &m->logit_scale, err)) != SWA_OK) return s;
        if (m->logit_scale == 0.0f) m->logit_scale = 1.0f;
    }
    m->q_scale = 1.0f / sqrtf((float)hp->head_dim);
    if ((a->has & SWA__ARCH_GEMMA_SCALE) && hp->n_layer == a->wide_query_layers)
        m->q_scale = 1.0f / sqrtf((float)(hp->n_embd / hp->n_head));
    m->rope_scale = 1.0f;
    m->rope_attn_factor = 1.0f;
    m->local_rope_base = a->local_rope_base > 0.0f ? a->local_rope_base : hp->rope_base;
    if (swa__is_llama(m)) return SWA_OK;
    i = swa_gguf_kv_find(m->gguf, swa__key(m, "rope.scaling.type"));   /* absent: linear, as llama.cpp reads it */
    if (i >= 0) {
        swa_gguf_value t = swa_gguf_kv_value(m->gguf, i);
        swa_str type;
        if (swa_gguf_value_str(&t, &type) != SWA_OK)
            return swa__fail(err, SWA_ERR_MODEL, "key %s: type %s, want a string", m->key, swa_gguf_type_name(t.type));
        if (!swa__str_eq(type, "linear") && !swa__str_eq(type, "none") && !swa__str_eq(type, "yarn"))
            return swa__fail(err, SWA_ERR_UNSUPPORTED, "key %s: RoPE scaling \"%.*s\" is not supported (linear and yarn are)",
                             m->key, type.len > 32 ? 32 : (int)type.len, type.ptr);
        if (swa__str_eq(type, "none")) i = -2;
        if (swa__str_eq(type, "yarn")) i = -3;
    }
    factor = 0.0f;
    if (i != -2) {
        if ((s = swa__get_float(m->gguf, swa__key(m, "rope.scaling.factor"), 0.0, 0.0, 1e6, &factor, err)) != SWA_OK) return s;
        if (factor > 0.0f) m->rope_scale = 1.0f / factor;
    }
    if ((s = swa__get_float(m->gguf, swa__key(m, "rope.scaling.attn_factor"), 1.0, 1e-3, 1e3, &m->rope_attn_factor, err)) != SWA_OK)
        return s;
    if ((s = swa__get_int(m->gguf, swa__key(m, "rope.scaling.original_context_length"), 0, hp->n_ctx_train, 0, INT32_MAX, &v, err)) != SWA_OK)
        return s;
    m->n_ctx_orig = v;
    if (i == -3 && (s = swa__read_yarn(m, factor, err)) != SWA_OK) return s;
    /* Llama 4's temperature as llama.cpp's mistral3 reads it: its length is n_ctx_orig */
    if ((a->has & SWA__ARCH_ATTN_TEMP) &&
        (s = swa__get_float(m->gguf, swa__key(m, "attention.temperature_scale"), 0.0, -1e3, 1e3, &m->attn_temp, err)) != SWA_OK)
        return s;
    if (m->attn_temp != 0.0f && m->n_ctx_orig <= 0)
        return swa__fail(err, SWA_ERR_MODEL, "key %s: a temperature scale needs rope.scaling.original_context_length or "
                         "context_length", swa__key(m, "attention.temperature_scale"));
    m->attn_temp_len = (float)m->n_ctx_orig;
    return swa__read_temp_nope(m, err);
}

/* A mixture of experts, as llama.cpp reads one: {arch}.expert_count experts (at most its 512),
   expert_used_count of them per token. A llama file with experts is Mixtral, its experts
   feed_forward_length wide; Qwen3-MoE's are expert_feed_forward_length wide. Without experts,
   feed_forward_length is required (llama.cpp reads 0 and fails on the shapes). */
static swa_status swa__read_experts(swa_model *m, swa_error *err)
{
    swa_hparams *hp = &m->hp;
    const swa__arch *a = m->arch;
    int64_t e, k, ff;
    double lo = -1e9;
    swa_status s;
    if ((s = swa__get_int(m->gguf, swa__key(m, "expert_count"), (a->has & SWA__ARCH_EXPERTS) != 0, 0,
                          (a->has & SWA__ARCH_EXPERTS) ? 1 : 0, 512, &e, err)) != SWA_OK ||
        (s = swa__get_int(m->gguf, swa__key(m, "expert_used_count"), e > 0, 0, e > 0 ? 1 : 0, e, &k, err)) != SWA_OK)
        return s;
    m->gating = a->gating;
    m->norm_weights = a->norm_weights;
    m->expert_scale = 1.0f;
    m->moe_step = 1;
    if ((a->has & SWA__ARCH_MOE_STEP) &&
        (s = swa__get_int(m->gguf, swa__key(m, "interleave_moe_layer_step"), 1, 1, 0, 65536, &ff, err)) != SWA_OK)
        return s;
    if (a->has & SWA__ARCH_MOE_STEP) m->moe_step = (int32_t)ff;
    hp->n_expert = (int32_t)e;
    hp->n_expert_used = (int32_t)k;
    hp->n_ff_exp = hp->n_ff;
    if (e == 0) {
        if (hp->n_ff == 0) return swa__fail(err, SWA_ERR_MODEL, "key %s is missing", swa__key(m, "feed_forward_length"));
        return SWA_OK;
    }
    if (a->has & SWA__ARCH_EXPERT_FF) {
        if ((s = swa__get_int(m->gguf, swa__key(m, "expert_feed_forward_length"), hp->n_ff == 0, hp->n_ff / k, 1, 1 << 24,
                              &ff, err)) != SWA_OK)
            return s;
        hp->n_ff_exp = (int32_t)ff;
    }
    if (hp->n_ff_exp == 0) return swa__fail(err, SWA_ERR_MODEL, "key %s is missing", swa__key(m, "feed_forward_length"));
    if (a->has & SWA__ARCH_SHARED_EXPERT) m->n_ff_shexp = hp->n_ff_exp;
    if ((a->more & SWA__ARCH2_DEEPSEEK_MOE) &&
        ((s = swa__get_int(m->gguf, swa__key(m, "leading_dense_block_count"), 1, 0, 0, hp->n_layer, &m->dense_lead, err)) != SWA_OK ||
         (s = swa__get_int(m->gguf, swa__key(m, "expert_shared_count"), 1, 0, 0, 64, &ff, err)) != SWA_OK))
        return s;
    if (a->more & SWA__ARCH2_DEEPSEEK_MOE) m->n_ff_shexp = ff * hp->n_ff_exp;
    if (!(a->has & SWA__ARCH_EXPERT_KEYS)) return SWA_OK;
    if ((s = swa__get_int(m->gguf, swa__key(m, "expert_gating_func"), 0, a->gating, 0, 3, &e, err)) != SWA_OK ||
        (s = swa__get_bool(m->gguf, swa__key(m, "expert_weights_norm"), a->norm_weights, &m->norm_weights, err)) != SWA_OK ||
        (s = swa__get_float(m->gguf, swa__key(m, "expert_weights_scale"), 0.0, lo, -lo, &m->expert_scale, err)) != SWA_OK)
        return s;
    m->gating = e == 0 ? a->gating : (int32_t)e;   /* 0: llama.cpp's "none", the architecture's own */
    if (m->expert_scale == 0.0f) m->expert_scale = 1.0f;
    return SWA_OK;
}

static swa_status swa__read_hparams(swa_model *m, swa_error *err)
{
    const swa_gguf *g = m->gguf;
    swa_hparams *hp = &m->hp;
    int64_t v;
    swa_status s;
    /* the integer keys, in this order (head_count_kv defaults to head_count): the field,
       whether the key is required, its range */
    static const struct {
        const char *suffix;
        size_t field;
        int required, default_heads;
        int64_t lo, hi;
    } keys[] = {
        {"block_count", offsetof(swa_hparams, n_layer), 1, 0, 1, 65536},
        {"embedding_length", offsetof(swa_hparams, n_embd), 1, 0, 1, 1 << 20},
        {"feed_forward_length", offsetof(swa_hparams, n_ff), 0, 0, 0, 1 << 24},   /* see swa__read_experts */
        {"attention.head_count", offsetof(swa_hparams, n_head), 1, 0, 1, 1 << 16},
        {"attention.head_count_kv", offsetof(swa_hparams, n_kv_head), 0, 1, 1, 1 << 16},
        {"context_length", offsetof(swa_hparams, n_ctx_train), 0, 0, 1, INT32_MAX},
    };
    size_t k;
    for (k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        int64_t def = keys[k].default_heads ? hp->n_head : 0;
        if ((s = swa__get_int(g, swa__key(m, keys[k].suffix), keys[k].required, def, keys[k].lo, keys[k].hi, &v, err)) !=
            SWA_OK)
            return s;
        *(int32_t *)(void *)((char *)hp + keys[k].field) = (int32_t)v;
    }
    if ((s = swa__read_experts(m, err)) != SWA_OK) return s;
    if ((s = swa__read_head_dim(m, err)) != SWA_OK) return s;
    if (hp->n_head % hp->n_kv_head != 0)
        return swa__fail(err, SWA_ERR_MODEL, "KV head count %d does not divide the head count %d", hp->n_kv_head, hp->n_head);
    if ((s = swa__get_int(g, swa__key(m, "rope.dimension_count"), 0, hp->head_dim, 2, hp->head_dim, &v, err)) != SWA_OK) return s;
    if (v % 2 != 0)
        return swa__fail(err, SWA_ERR_MODEL, "key %s: %lld is odd, RoPE rotates pairs", m->key, (long long)v);
    hp->n_rot = (int32_t)v;
    if ((s = swa__get_float(g, swa__key(m, "rope.freq_base"), 10000.0, 1e-3, 1e12, &hp->rope_base, err)) != SWA_OK) return s;
    /* a LayerNorm's epsilon is another key, which llama.cpp requires */
    if ((m->arch->has & SWA__ARCH_LAYERNORM) && swa_gguf_kv_find(g, swa__key(m, "attention.layer_norm_epsilon")) < 0)
        return swa__fail(err, SWA_ERR_MODEL, "key %s is missing", m->key);
    if ((s = swa__get_float(g, swa__key(m, (m->arch->has & SWA__ARCH_LAYERNORM) ? "attention.layer_norm_epsilon"
                                                                              : "attention.layer_norm_rms_epsilon"),
                            1e-5, 0.0, 1.0, &hp->rms_eps, err)) != SWA_OK)
        return s;
    return swa__read_arch_params(m, err);
}

/* Which layers have a window, without a per-layer window array: {arch}.attention.
   sliding_window_pattern as a period p (layer l windowed iff l % p < p - 1, llama.cpp's rule) or
   one bool per layer (true = windowed); without it the architecture's built-in period, or every
   layer. */
static swa_status swa__window_layers(swa_model *m, uint8_t *windowed, swa_error *err)
{
    const char *key = swa__key(m, "attention.sliding_window_pattern");
    int64_t i = swa_gguf_kv_find(m->gguf, key), p = m->arch->swa_period, l, b;
    swa_gguf_value v, e;
    if (i >= 0) {
        v = swa_gguf_kv_value(m->gguf, i);
        if (v.type == SWA_GGUF_ARRAY) {
            if (v.n != (uint64_t)m->hp.n_layer)
                return swa__fail(err, SWA_ERR_MODEL, "key %s: %llu entries, want one per layer (%d)", key,
                                 (unsigned long long)v.n, m->hp.n_layer);
            for (l = 0; l < m->hp.n_layer; l++) {
                swa_gguf_value_at(&v, (uint64_t)l, &e);
                if (swa_gguf_value_int(&e, &b) != SWA_OK || b < 0 || b > 1)
                    return swa__fail(err, SWA_ERR_MODEL, "key %s: entry %lld is not a bool", key, (long long)l);
                windowed[l] = (uint8_t)b;
            }
            return SWA_OK;
        }
        if (v.type == SWA_GGUF_BOOL || swa_gguf_value_int(&v, &p) != SWA_OK || p < 0 || p > 65536)
            return swa__fail(err, SWA_ERR_MODEL, "key %s: want a period (0..65536) or one bool per layer", key);
    }
    for (l = 0; l < m->hp.n_layer; l++)
        windowed[l] = (uint8_t)(p <= 1 || ((m->arch->has & SWA__ARCH_GLOBAL_FIRST) ? l % p != 0 : l % p < p - 1));
    return SWA_OK;
}

/* A chunked architecture (Llama 4) as llama.cpp reads it: attention.sliding_window 0 turns
   chunking off (every layer global and turning RoPE: MobileLLM's files); otherwise its layers of
   the pattern attend within chunks of attention.chunk_size. *chunks says which. */
static swa_status swa__read_chunking(swa_model *m, int *chunks, swa_error *err)
{
    int64_t w = 1;
    swa_status s;
    int q;
    *chunks = (m->arch->has & SWA__ARCH_CHUNKED) != 0;
    m->rope_layers = m->arch->rope_layers;
    if (!*chunks) return SWA_OK;
    if ((s = swa__get_int(m->gguf, swa__key(m, "attention.sliding_window"), 0, 1, 0, INT32_MAX, &w, err)) != SWA_OK) return s;
    *chunks = m->chunked = w != 0;
    if ((s = swa__get_bool(m->gguf, swa__key(m, "use_qk_norm"), m->hp.n_expert != 128, &q, err)) != SWA_OK) return s;
    m->qk_l2 = q && (m->arch->has & SWA__ARCH_QK_L2);
    return SWA_OK;
}

/* {arch}.attention.sliding_window: one number for the windowed layers (every layer, or those
   of the pattern above), or one entry per layer where 0 marks a full-attention layer; a
   chunked architecture's chunk size likewise from attention.chunk_size. No key: the
   architecture's default (full attention everywhere but for Gemma 2; Llama 4's 8192). */
static swa_status swa__read_windows(swa_model *m, swa_error *err)
{
    int chunks;
    swa_status s = swa__read_chunking(m, &chunks, err);
    const char *key = swa__key(m, chunks ? "attention.chunk_size" : "attention.sliding_window");
    int64_t i = swa_gguf_kv_find(m->gguf, key), w = m->arch->default_window, l;
    swa_gguf_value v, e;
    if (s != SWA_OK) return s;
    m->window = (int32_t *)swa__calloc((uint64_t)m->hp.n_layer, sizeof(int32_t));
    if (!m->window) return swa__fail(err, SWA_ERR_NOMEM, "cannot allocate the window table");
    if ((m->arch->has & SWA__ARCH_CHUNKED) && !chunks) w = 0, i = -1;   /* all global */
    if (i < 0 && w < 0) return swa__fail(err, SWA_ERR_MODEL, "key %s is missing", key);
    v.type = SWA_GGUF_U32;
    if (i >= 0) v = swa_gguf_kv_value(m->gguf, i);
    if (v.type != SWA_GGUF_ARRAY) {
        uint8_t *windowed;
        if (i >= 0 && (s = swa__get_int(m->gguf, key, 1, 0, m->arch->min_window, INT32_MAX, &w, err)) != SWA_OK) return s;
        if (w > 0) {
            if (!(windowed = (uint8_t *)swa__calloc((uint64_t)m->hp.n_layer, 1)))
                return swa__fail(err, SWA_ERR_NOMEM, "cannot allocate the window table");
            s = swa__window_layers(m, windowed, err);
            for (l = 0; s == SWA_OK && l < m->hp.n_layer; l++) m->window[l] = windowed[l] ? (int32_t)w : 0;
            SWA_FREE(windowed);
            if (s != SWA_OK) return s;
        }
    } else {
        if (v.n != (uint64_t)m->hp.n_layer)
            return swa__fail(err, SWA_ERR_MODEL, "key %s: %llu entries, want one per layer (%d)", key,
                             (unsigned long long)v.n, m->hp.n_layer);
        for (l = 0; l < m->hp.n_layer; l++) {
            swa_gguf_value_at(&v, (uint64_t)l, &e);
            if (e.type == SWA_GGUF_BOOL || swa_gguf_value_int(&e, &w) != SWA_OK || w < 0 || w > INT32_MAX)
                return swa__fail(err, SWA_ERR_MODEL, "key %s: entry %lld is not a window size (a count >= 0)", key, (long long)l);
            m->window[l] = (int32_t)w;
        }
    }
    for (l = 0; l < m->hp.n_layer; l++) {
        /* a window longer than the trained context never masks a position the model was
           trained on (Phi-3.5-mini: 262144 over 131072): full attention, n_ctx slots, not W;
           but where windowed layers turn RoPE otherwise, they stay windowed layers */
        if (m->hp.n_ctx_train > 0 && m->window[l] > m->hp.n_ctx_train && m->rope_layers == SWA__ROPE_ALL)
            m->window[l] = 0;
        if (m->window[l] > m->hp.window) m->hp.window = m->window[l];
        if (m->window[l] > 0) m->hp.n_windowed++;
    }
    if ((m->arch->has & SWA__ARCH_ROPE_UNWINDOWED) && m->hp.n_windowed == 0) m->rope_layers = SWA__ROPE_ALL;
    return SWA_OK;
}

/* Tensor `name` of shape ne0 x ne1 (x ne2: the experts of a 3-D one). */
static const swa_gguf_tensor *swa__find_tensor(const swa_model *m, const char *name, int required,
                                               int64_t ne0, int64_t ne1, int64_t ne2, swa_status *s, swa_error *err)
{
    int64_t i = swa_gguf_tensor_find(m->gguf, name);
    const swa_gguf_tensor *t;
    *s = SWA_OK;
    if (i < 0) {
        if (required) *s = swa__fail(err, SWA_ERR_MODEL, "tensor %s is missing", name);
        return NULL;
    }
    t = swa_gguf_tensor_at(m->gguf, i);
    if (t->ne[0] != ne0 || t->ne[1] != ne1 || t->ne[2] != ne2 || t->ne[3] != 1) {
        char want[64];
        snprintf(want, sizeof want, ne2 > 1 ? "%lldx%lldx%lld" : "%lldx%lld", (long long)ne0, (long long)ne1, (long long)ne2);
        *s = swa__fail(err, SWA_ERR_MODEL, "tensor %s: shape %lldx%lldx%lldx%lld, want %s", name,
                       (long long)t->ne[0], (long long)t->ne[1], (long long)t->ne[2], (long long)t->ne[3], want);
        return NULL;
    }
    return t;
}

/* Norm weights, biases and RoPE factors are tiny: they are converted to float into the model's
   own array, so a file may store them in any supported type (llama.cpp writes F32; other
   writers do not always). An absent optional one leaves *out NULL. */
static swa_status swa__get_vectors(swa_model *m, const char *name, int64_t n, int64_t rows, int required,
                                   const float **out, swa_error *err)
{
    swa_status s;
    const swa_gguf_tensor *t = swa__find_tensor(m, name, required, n, rows, 1, &s, err);
    float *dst = m->norms + m->n_norms;
    *out = NULL;
    if (!t) return s;
    if (!swa__type_supported(t->type))
        return swa__fail(err, SWA_ERR_UNSUPPORTED, "tensor %s: type %s is not supported", name, swa_type_name(t->type));
    if (swa_type_block_size(t->type) == 1 && (uintptr_t)t->data % swa__type_align(t->type) != 0)
        return swa__fail(err, SWA_ERR_FORMAT, "tensor %s: data is not aligned for %s", name, swa_type_name(t->type));
    n *= rows;   /* a 2-D one (the experts' biases) is rows vectors, one after another */
    SWA_ASSERT(m->n_norms + n <= m->cap_norms);
    swa__dequant_row_ref(t->type, t->data, dst, n);
    m->n_norms += n;
    *out = dst;
    return SWA_OK;
}

static swa_status swa__get_vector(swa_model *m, const char *name, int64_t n, int required, const float **out,
                                  swa_error *err)
{
    return swa__get_vectors(m, name, n, 1, required, out, err);
}

/* A matrix of n_out rows of n_in; or n_experts of them in a 3-D tensor, read as one matrix of
   n_experts * n_out rows. */
static swa_status swa__get_matrices(const swa_model *m, const char *name, int required, int64_t n_in,
                                    int64_t n_out, int64_t n_experts, swa__matrix *out, swa_error *err)
{
    swa_status s;
    const swa_gguf_tensor *t = swa__find_tensor(m, name, required, n_in, n_out, n_experts, &s, err);
    char types[160];
    if (!t) return s;
    if (!swa__type_supported(t->type)) {
        swa__type_list(types, sizeof types);
        return swa__fail(err, SWA_ERR_UNSUPPORTED, "tensor %s: type %s is not supported (%s are)", name,
                         swa_type_name(t->type), types);
    }
    if ((uintptr_t)t->data % swa__type_align(t->type) != 0)
        return swa__fail(err, SWA_ERR_FORMAT, "tensor %s: data is not aligned for %s", name, swa_type_name(t->type));
    out->data = t->data;
    out->type = t->type;
    out->n_in = n_in;
    out->n_out = n_out * n_experts;
    out->row_bytes = (size_t)(t->nbytes / (uint64_t)out->n_out);
    return SWA_OK;
}

static swa_status swa__get_matrix(const swa_model *m, const char *name, int required, int64_t n_in,
                                  int64_t n_out, swa__matrix *out, swa_error *err)
{
    return swa__get_matrices(m, name, required, n_in, n_out, 1, out, err);
}

/* Rows [first, first + n_out) of a matrix: fused tensors (Phi-3's attn_qkv, its gate and up in
   ffn_up) are read as consecutive row ranges, in place. */
static swa__matrix swa__rows_of(const swa__matrix *w, int64_t first, int64_t n_out)
{
    swa__matrix r = *w;
    r.data = (const uint8_t *)w->data + (size_t)first * w->row_bytes;
    r.n_out = n_out;
    return r;
}

/* Q, K and V: three matrices, or one attn_qkv whose rows are Q's, then K's, then V's. */
/* "blk.<l>.<part>.<kind>" (kind "weight" or "bias") into name, for a layer's tensor lookups. */
static const char *swa__blk_name(char name[64], int32_t l, const char *part, const char *kind)
{
    snprintf(name, 64, "blk.%d.%s.%s", (int)l, part, kind);
    return name;
}

static swa_status swa__load_qkv(swa_model *m, int32_t l, swa__layer *L, swa_error *err)
{
    const swa_hparams *hp = &m->hp;
    int64_t d = hp->n_embd, qd = (int64_t)hp->n_head * hp->head_dim, kvd = (int64_t)hp->n_kv_head * hp->head_dim;
    char name[64];
    swa__matrix qkv;
    swa_status s;
    if (m->arch->has & SWA__ARCH_FUSED) {
        snprintf(name, sizeof name, "blk.%d.attn_qkv.weight", (int)l);
        memset(&qkv, 0, sizeof qkv);
        if ((s = swa__get_matrix(m, name, 0, d, qd + 2 * kvd, &qkv, err)) != SWA_OK) return s;
        if (qkv.data) {
            L->wq = swa__rows_of(&qkv, 0, qd);
            L->wk = swa__rows_of(&qkv, qd, kvd);
            L->wv = swa__rows_of(&qkv, qd + kvd, kvd);
            return SWA_OK;
        }
    }
    if ((s = swa__get_matrix(m, swa__blk_name(name, l, "attn_q", "weight"), 1, d, qd, &L->wq, err)) != SWA_OK ||
        (s = swa__get_matrix(m, swa__blk_name(name, l, "attn_k", "weight"), 1, d, kvd, &L->wk, err)) != SWA_OK ||
        (s = swa__get_matrix(m, swa__blk_name(name, l, "attn_v", "weight"), 1, d, kvd, &L->wv, err)) != SWA_OK)
        return s;
    if (!(m->arch->has & SWA__ARCH_BIASES)) return SWA_OK;
    if ((s = swa__get_vector(m, swa__blk_name(name, l, "attn_q", "bias"), qd, 0, &L->bq, err)) != SWA_OK ||
        (s = swa__get_vector(m, swa__blk_name(name, l, "attn_k", "bias"), kvd, 0, &L->bk, err)) != SWA_OK ||
        (s = swa__get_vector(m, swa__blk_name(name, l, "attn_v", "bias"), kvd, 0, &L->bv, err)) != SWA_OK ||
        (s = swa__get_vector(m, swa__blk_name(name, l, "attn_output", "bias"), d, 0, &L->bo, err)) != SWA_OK)
        return s;
    return SWA_OK;
}

/* Whether layer l is a mixture of experts: every layer when the model has experts, or (Llama 4)
   those interleave_moe_layer_step says, or (AFMoE) those after the leading dense ones. */
static int swa__layer_has_experts(const swa_model *m, int64_t l)
{
    return m->hp.n_expert > 0 && m->moe_step > 0 && (l + 1) % m->moe_step == 0 && l >= m->dense_lead;
}

/* Gate and up: two matrices, or (Phi-3) one ffn_up of 2 n_ff rows, the gate's first. */
static swa_status swa__load_gate_up(swa_model *m, int32_t l, swa__layer *L, swa_error *err)
{
    int64_t d = m->hp.n_embd, ff = m->hp.n_ff;
    char name[64];
    swa__matrix up2;
    swa_status s;
    if (m->arch->has & SWA__ARCH_FUSED) {
        snprintf(name, sizeof name, "blk.%d.ffn_gate.weight", (int)l);
        if (swa_gguf_tensor_find(m->gguf, name) < 0) {
            snprintf(name, sizeof name, "blk.%d.ffn_up.weight", (int)l);
            if ((s = swa__get_matrix(m, name, 1, d, 2 * ff, &up2, err)) != SWA_OK) return s;
            L->w_gate = swa__rows_of(&up2, 0, ff);
            L->w_up = swa__rows_of(&up2, ff, ff);
            return SWA_OK;
        }
    }
    if ((s = swa__get_matrix(m, swa__blk_name(name, l, "ffn_gate", "weight"), 1, d, ff, &L->w_gate, err)) != SWA_OK ||
        (s = swa__get_matrix(m, swa__blk_name(name, l, "ffn_up", "weight"), 1, d, ff, &L->w_up, err)) != SWA_OK)
        return s;
    return SWA_OK;
}

/* The feed-forward part of a layer: gate, up and down; or the router and the experts' 3-D
   tensors (llama.cpp's names, with Mixtral's gate required), and the router's bias where the
   file has one. */
static swa_status swa__load_ffn(swa_model *m, int32_t l, swa__layer *L, swa_error *err)
{
    const swa_hparams *hp = &m->hp;
    int64_t d = hp->n_embd, ff = hp->n_ff_exp, E = hp->n_expert;
    char name[64];
    swa_status s;
    if (!swa__layer_has_experts(m, l)) {
        if ((s = swa__load_gate_up(m, l, L, err)) != SWA_OK ||
            (s = swa__get_matrix(m, swa__blk_name(name, l, "ffn_down", "weight"), 1, hp->n_ff, d, &L->w_down, err)) != SWA_OK)
            return s;
        return SWA_OK;
    }
    if ((s = swa__get_matrix(m, swa__blk_name(name, l, "ffn_gate_inp", "weight"), 1, d, E, &L->router, err)) != SWA_OK ||
        (s = swa__get_vector(m, swa__blk_name(name, l, "ffn_gate_inp", "bias"), E, 0, &L->router_bias, err)) != SWA_OK ||
        (s = swa__get_matrices(m, swa__blk_name(name, l, "ffn_gate_exps", "weight"), 1, d, ff, E, &L->gate_exps, err)) != SWA_OK ||
        (s = swa__get_matrices(m, swa__blk_name(name, l, "ffn_up_exps", "weight"), 1, d, ff, E, &L->up_exps, err)) != SWA_OK ||
        (s = swa__get_matrices(m, swa__blk_name(name, l, "ffn_down_exps", "weight"), 1, ff, d, E, &L->down_exps, err)) != SWA_OK)
        return s;
    if ((m->arch->has & SWA__ARCH_OAI_FFN) &&
        ((s = swa__get_vectors(m, swa__blk_name(name, l, "ffn_gate_exps", "bias"), ff, E, 1, &L->gate_exps_b, err)) != SWA_OK ||
         (s = swa__get_vectors(m, swa__blk_name(name, l, "ffn_up_exps", "bias"), ff, E, 1, &L->up_exps_b, err)) != SWA_OK ||
         (s = swa__get_vectors(m, swa__blk_name(name, l, "ffn_down_exps", "bias"), d, E, 1, &L->down_exps_b, err)) != SWA_OK))
        return s;
    ff = m->n_ff_shexp;
    if (ff > 0 &&
        ((s = swa__get_matrix(m, swa__blk_name(name, l, "ffn_gate_shexp", "weight"), 1, d, ff, &L->gate_shexp, err)) != SWA_OK ||
         (s = swa__get_matrix(m, swa__blk_name(name, l, "ffn_up_shexp", "weight"), 1, d, ff, &L->up_shexp, err)) != SWA_OK ||
         (s = swa__get_matrix(m, swa__blk_name(name, l, "ffn_down_shexp", "weight"), 1, ff, d, &L->down_shexp, err)) != SWA_OK))
        return s;
    if ((m->arch->more & SWA__ARCH2_DEEPSEEK_MOE) &&
        (s = swa__get_vector(m, swa__blk_name(name, l, "exp_probs_b", "bias"), E, 1, &L->select_bias, err)) != SWA_OK)
        return s;
    return SWA_OK;
}

static swa_status swa__load_layer(swa_model *m, int32_t l, swa_error *err)
{
    const swa_hparams *hp = &m->hp;
    swa__layer *L = &m->layers[l];
    int64_t d = hp->n_embd, qd = (int64_t)hp->n_head * hp->head_dim;
    unsigned has = m->arch->has;
    int64_t qk = (has & SWA__ARCH_QK_NORM_ALL) ? qd : hp->head_dim;
    int64_t kk = (has & SWA__ARCH_QK_NORM_ALL) ? (int64_t)hp->n_kv_head * hp->head_dim : hp->head_dim;
    char name[64];
    swa_status s;
    /* gpt-oss's norm before the feed-forward is stored as post_attention_norm */
    const char *ffn_norm = (has & SWA__ARCH_OAI_FFN) ? "post_attention_norm" : "ffn_norm";
    if (!(has & SWA__ARCH_POST_ONLY) &&
        (s = swa__get_vector(m, swa__blk_name(name, l, "attn_norm", "weight"), d, 1, &L->attn_norm, err)) != SWA_OK)
        return s;
    if (!(has & (SWA__ARCH_POST_ONLY | SWA__ARCH_PARALLEL)) &&
        (s = swa__get_vector(m, swa__blk_name(name, l, ffn_norm, "weight"), d, 1, &L->ffn_norm, err)) != SWA_OK)
        return s;
    if ((s = swa__load_qkv(m, l, L, err)) != SWA_OK ||
        (s = swa__get_matrix(m, swa__blk_name(name, l, "attn_output", "weight"), 1, qd, d, &L->wo, err)) != SWA_OK ||
        (s = swa__load_ffn(m, l, L, err)) != SWA_OK)
        return s;
    if ((has & SWA__ARCH_SINKS) &&
        (s = swa__get_vector(m, swa__blk_name(name, l, "attn_sinks", "weight"), hp->n_head, 1, &L->attn_sinks, err)) != SWA_OK)
        return s;
    if ((m->arch->more & SWA__ARCH2_ATTN_GATE) &&
        (s = swa__get_matrix(m, swa__blk_name(name, l, "attn_gate", "weight"), 1, d, qd, &L->attn_gate, err)) != SWA_OK)
        return s;
    if ((has & SWA__ARCH_QK_NORM) &&
        ((s = swa__get_vector(m, swa__blk_name(name, l, "attn_q_norm", "weight"), qk, 1, &L->q_norm, err)) != SWA_OK ||
         (s = swa__get_vector(m, swa__blk_name(name, l, "attn_k_norm", "weight"), kk, 1, &L->k_norm, err)) != SWA_OK))
        return s;
    if ((has & SWA__ARCH_POST_NORMS) &&
        ((s = swa__get_vector(m, swa__blk_name(name, l, "post_attention_norm", "weight"), d, 1, &L->attn_post_norm,
                              err)) != SWA_OK ||
         (s = swa__get_vector(m, swa__blk_name(name, l, "post_ffw_norm", "weight"), d, 1, &L->ffn_post_norm,
                              err)) != SWA_OK))
        return s;
    return SWA_OK;
}

/* Floats the small vectors of a model may take: every optional one counted (the experts'
   biases only where the architecture has them). */
static uint64_t swa__vector_floats(const swa_hparams *hp, unsigned has)
{
    uint64_t qd = (uint64_t)hp->n_head * (uint64_t)hp->head_dim, kvd = (uint64_t)hp->n_kv_head * (uint64_t)hp->head_dim;
    uint64_t per_layer = 5 * (uint64_t)hp->n_embd + 2 * (qd + kvd) + kvd + 2 * (uint64_t)hp->n_expert +   /* Q/K norms: at most qd + kvd */
                         (uint64_t)hp->n_head +
                         ((has & SWA__ARCH_OAI_FFN) ? (uint64_t)hp->n_expert * (2 * (uint64_t)hp->n_ff_exp + (uint64_t)hp->n_embd) : 0);
    return (uint64_t)hp->n_layer * per_layer + (uint64_t)hp->n_embd + (uint64_t)hp->n_rot + (uint64_t)hp->head_dim;
}

/* The type most layer matrices have, for summaries. */
static uint32_t swa__main_weight_type(const swa_model *m)
{
    int64_t count[64], l, k, best = 0;
    memset(count, 0, sizeof count);
    for (l = 0; l < m->hp.n_layer; l++) {
        const swa__layer *L = &m->layers[l];
        const swa__matrix *mats[10];
        mats[0] = &L->wq; mats[1] = &L->wk; mats[2] = &L->wv; mats[3] = &L->wo;
        mats[4] = &L->w_gate; mats[5] = &L->w_up; mats[6] = &L->w_down;
        mats[7] = &L->gate_exps; mats[8] = &L->up_exps; mats[9] = &L->down_exps;
        for (k = 0; k < 10; k++)
            if (mats[k]->data) count[mats[k]->type & 63]++;
    }
    for (k = 1; k < 64; k++) if (count[k] > count[best]) best = k;
    return (uint32_t)best;
}

/* A model without a usable vocabulary still runs on token ids, so this only records why. */
static void swa__model_vocab_load(swa_model *m)
{
    if (swa_vocab_load(m->gguf, &m->vocab, &m->vocab_err) != SWA_OK) return;
    if (swa_vocab_size(m->vocab) != m->hp.n_vocab) {
        swa__fail(&m->vocab_err, SWA_ERR_MODEL, "the vocabulary has %d tokens, the model %d",
                  swa_vocab_size(m->vocab), m->hp.n_vocab);
        swa_vocab_free(m->vocab);
        m->vocab = NULL;
    }
}

SWADEF swa_status swa_model_vocab(const swa_model *m, const swa_vocab **out, swa_error *err)
{
    *out = m->vocab;
    if (m->vocab) {
        swa__ok(err);
        return SWA_OK;
    }
    if (err) *err = m->vocab_err;
    return m->vocab_err.code;
}

/* EmbeddingGemma's projections of the pooled embedding (sentence-transformers' Dense modules,
   which llama.cpp's converter writes on request): dense_2 from n_embd to n_dense, dense_3 back;
   both or neither. */
static swa_status swa__load_dense(swa_model *m, swa_error *err)
{
    int64_t i = swa_gguf_tensor_find(m->gguf, "dense_2.weight"), d = m->hp.n_embd;
    swa_status s;
    if (i < 0) {
        if (swa_gguf_tensor_find(m->gguf, "dense_3.weight") >= 0)
            return swa__fail(err, SWA_ERR_MODEL, "tensor dense_2.weight is missing (dense_3.weight needs it)");
        return SWA_OK;
    }
    m->n_dense = swa_gguf_tensor_at(m->gguf, i)->ne[1];
    if (m->n_dense < 1 || m->n_dense > (1 << 24))
        return swa__fail(err, SWA_ERR_MODEL, "tensor dense_2.weight: %lld outputs is out of range", (long long)m->n_dense);
    if ((s = swa__get_matrix(m, "dense_2.weight", 1, d, m->n_dense, &m->dense_2, err)) != SWA_OK ||
        (s = swa__get_matrix(m, "dense_3.weight", 1, m->n_dense, d, &m->dense_3, err)) != SWA_OK)
        return s;
    return SWA_OK;
}

static swa_status swa__model_build(swa_model *m, swa_error *err)
{
    const swa_gguf_tensor *embd;
    swa_status s;
    int64_t l, ti;
    if ((s = swa__check_arch(m, err)) != SWA_OK) return s;
    if ((s = swa__read_hparams(m, err)) != SWA_OK) return s;
    if ((s = swa__read_windows(m, err)) != SWA_OK) return s;
    ti = swa_gguf_tensor_find(m->gguf, "token_embd.weight");
    if (ti < 0) return swa__fail(err, SWA_ERR_MODEL, "tensor token_embd.weight is missing");
    embd = swa_gguf_tensor_at(m->gguf, ti);
    if (embd->ne[1] > INT32_MAX)
        return swa__fail(err, SWA_ERR_MODEL, "tensor token_embd.weight: %lld tokens is too many", (long long)embd->ne[1]);
    m->hp.n_vocab = (int32_t)embd->ne[1];
    if ((s = swa__get_int(m->gguf, swa__key(m, "vocab_size"), 0, m->hp.n_vocab, m->hp.n_vocab, m->hp.n_vocab, &l, err)) != SWA_OK)
        return s;
    if ((s = swa__get_matrix(m, "token_embd.weight", 1, m->hp.n_embd, m->hp.n_vocab, &m->tok_embd, err)) != SWA_OK)
        return s;
    if ((s = swa__get_matrix(m, "output.weight", 0, m->hp.n_embd, m->hp.n_vocab, &m->output, err)) != SWA_OK)
        return s;
    if (!m->output.data) m->output = m->tok_embd;   /* tied embeddings */
    if ((m->arch->has & SWA__ARCH_BIDIRECTIONAL) && (s = swa__load_dense(m, err)) != SWA_OK) return s;
    m->cap_norms = (int64_t)swa__vector_floats(&m->hp, m->arch->has);
    m->norms = (float *)swa__calloc((uint64_t)m->cap_norms, sizeof(float));
    if (!m->norms) return swa__fail(err, SWA_ERR_NOMEM, "cannot allocate the norm weights");
    if ((s = swa__get_vector(m, "output_norm.weight", m->hp.n_embd, 1, &m->output_norm, err)) != SWA_OK) return s;
    m->ones = m->norms + m->n_norms;   /* the weightless norms' */
    for (l = 0; l < m->hp.head_dim; l++) m->norms[m->n_norms++] = 1.0f;
    if ((m->arch->has & SWA__ARCH_ROPE_FACTORS) &&
        ((s = swa__get_vector(m, "rope_factors_long.weight", m->hp.n_rot / 2, 0, &m->rope_long, err)) != SWA_OK ||
         (s = swa__get_vector(m, "rope_factors_short.weight", m->hp.n_rot / 2, 0, &m->rope_short, err)) != SWA_OK))
        return s;
    m->layers = (swa__layer *)swa__calloc((uint64_t)m->hp.n_layer, sizeof(swa__layer));
    if (!m->layers) return swa__fail(err, SWA_ERR_NOMEM, "cannot allocate %d layers", m->hp.n_layer);
    for (l = 0; l < m->hp.n_layer; l++)
        if ((s = swa__load_layer(m, (int32_t)l, err)) != SWA_OK) return s;
    for (l = 0; l < m->hp.n_rot / 2; l++)
        if ((m->rope_long && !(m->rope_long[l] > 0.0f)) || (m->rope_short && !(m->rope_short[l] > 0.0f)))
            return swa__fail(err, SWA_ERR_MODEL, "tensor rope_factors_%s.weight: entry %lld is not a positive number",
                             m->rope_long && !(m->rope_long[l] > 0.0f) ? "long" : "short", (long long)l);
    m->hp.weight_type = swa__main_weight_type(m);
    swa__model_vocab_load(m);
    return SWA_OK;
}

/* Build a model around an open GGUF handle, which it then owns (freed here on failure). */
static swa_status swa__model_from_gguf(swa_gguf *g, swa_model **out, swa_error *err)
{
    swa_status s;
    swa_model *m = (swa_model *)swa__calloc(1, sizeof *m);
    if (!m) {
        swa_gguf_close(g);
        return swa__fail(err, SWA_ERR_NOMEM, "cannot allocate a model");
    }
    m->gguf = g;
    if ((s = swa__model_build(m, err)) != SWA_OK) {
        swa_model_free(m);
        return s;
    }
    *out = m;
    swa__ok(err);
    return SWA_OK;
}

SWADEF swa_model_params swa_model_params_default(void)
{
    swa_model_params params;
    memset(&params, 0, sizeof params);
    return params;
}

/* The combinations of path and params swa_model_load_with refuses; NULL when it can go on. */
static const char *swa__load_args_error(const char *path, const swa_model_params *params)
{
    if (path && params->data) return "both a path and params->data: give one";
    if (!path && !params->data) return "no path and no params->data: give one";
    if (params->data && params->resident) return "params->resident reads a file; params->data is used in place";
    if (!params->data && params->size) return "params->size without params->data";
    if ((uintptr_t)params->data % 4 != 0)
        return "params->data must be 4-byte aligned, as malloc's is: weights are read in place as floats";
    return NULL;
}

SWADEF swa_status swa_model_load_with(const char *path, const swa_model_params *params, swa_model **out, swa_error *err)
{
    swa_model_params none = swa_model_params_default();
    swa__progress p = {NULL, NULL, 0};
    const char *what = path ? path : "the caller's memory", *why;
    swa_gguf *g;
    swa_status s;
    if (!out) return swa__fail(err, SWA_ERR_INVALID_ARG, "swa_model_load: out is NULL");
    *out = NULL;
    if (!params) params = &none;
    why = swa__load_args_error(path, params);
    if (why) return swa__fail(err, SWA_ERR_INVALID_ARG, "swa_model_load: %s", why);
    p.fn = params->progress;
    p.data = params->progress_data;
    if (!path) {
        if ((s = swa_gguf_open_memory(params->data, params->size, &g, err)) != SWA_OK) return s;
    } else {
        if ((s = swa__gguf_open_file(path, params->resident, &p, &g, err)) != SWA_OK) return s;   /* the message names the path */
        if (!params->resident && !swa__populate(&g->file, &p)) {   /* before the tensors are looked at */
            swa_gguf_close(g);
            return swa__fail(err, SWA_ERR_ABORTED, "%s: loading cancelled", path);
        }
    }
    if ((s = swa__model_from_gguf(g, out, err)) != SWA_OK) {
        if (path) swa__prefix_error(err, path);
        return s;
    }
    if (!swa__report(&p, 1, 1)) {
        swa_model_free(*out);
        *out = NULL;
        return swa__fail(err, SWA_ERR_ABORTED, "%s: loading cancelled", what);
    }
    return SWA_OK;
}

SWADEF swa_status swa_model_load(const char *path, swa_model **out, swa_error *err)
{
    return swa_model_load_with(path, NULL, out, err);
}

SWADEF swa_status swa_model_load_resident(const char *path, swa_model **out, swa_error *err)
{
    swa_model_params params = swa_model_params_default();
    params.resident = 1;
    return swa_model_load_with(path, &params, out, err);
}

SWADEF swa_status swa_model_load_memory(const void *data, size_t size, swa_model **out, swa_error *err)
{
    swa_model_params params = swa_model_params_default();
    params.data = data;
    params.size = size;
    return swa_model_load_with(NULL, &params, out, err);
}

SWADEF void swa_model_free(swa_model *m)
{
    if (!m) return;
    SWA_FREE(m->window);
    SWA_FREE(m->layers);
    SWA_FREE(m->norms);
    swa_vocab_free(m->vocab);
    swa_gguf_close(m->gguf);
    SWA_FREE(m);
}

SWADEF const swa_hparams *swa_model_hparams(const swa_model *m) { return &m->hp; }
SWADEF const swa_gguf *swa_model_gguf(const swa_model *m) { return m->gguf; }

SWADEF int32_t swa_model_layer_window(const swa_model *m, int32_t layer)
{
    return layer >= 0 && layer < m->hp.n_layer ? m->window[layer] : -1;
}

/* ==== context: sequences and their rings ==== */

/* The pool's calls, defined in its section after the sequences'. */
static swa_status swa__pool_start(swa__pool *p, int n, void *threads, swa_error *err);
static void swa__pool_stop(swa__pool *p);
static void swa__pool_run(swa__pool *p, swa__task_fn fn, void *arg);
static int64_t swa__fetch_inc_i64(int64_t *p);
static void swa__split(int64_t n, int k, int n_shares, int64_t *begin, int64_t *end);

/* A sequence: its position, and how far its rings have been written. A ring of S slots holds
   positions written - S .. written - 1 intact; after a rewind, pos < written. */
typedef struct swa__seq {
    int64_t pos;               /* tokens evaluated */
    int64_t written;           /* one past the last position whose keys went into the rings */
} swa__seq;

struct swa_ctx {
    const swa_model *model;
    swa_ctx_config cfg;        /* resolved: no zeros */
    swa__seq *seq;             /* [n_seq] */
    int64_t max_pos;           /* n_ctx if a layer attends to everything, else INT64_MAX */
    size_t cache_bytes;
    uint64_t model_sum;        /* checksum of the model's metadata, for snapshots */
    int32_t *window;           /* [n_layer] effective window, 0 = full attention */
    int32_t chunked;           /* the windows are chunks: i sees j >= i - i mod W (the model's, unless overridden) */
    int64_t *n_slots;          /* [n_layer] ring size: window + n_rewind, or n_ctx for full layers */
    uint8_t **k_cache;         /* [n_layer] -> [n_seq][n_slots][n_kv_head*head_dim] in the cache type */
    uint8_t **v_cache;         /* [n_layer] -> the same for values */
    size_t kv_row;             /* bytes of one position's keys (or values) of one layer */
    int32_t kv_type;           /* SWA_KV_F16, SWA_KV_F32 or SWA_KV_Q8_0 */
    uint32_t cache_type;       /* its ggml type */
    swa__kernels kern;         /* filled for the instruction set asked for */
    double *inv_freq;          /* [2][n_rot/2] RoPE frequencies of global, then windowed layers */
    swa_abort_fn abort;
    void *abort_data;
    int64_t *seq_count;        /* [n_seq] tokens of each sequence in the batch in evaluation */
    int64_t *seq_last;         /* [n_seq] batch index of each sequence's last token there */
    /* the chunk of up to n_batch tokens in evaluation, grouped by sequence */
    size_t *tok_index;         /* [n_batch] index of each token in the batch */
    int32_t *tok_seq;          /* [n_batch] its sequence */
    int64_t *tok_pos;          /* [n_batch] its position */
    int64_t *tok_first;        /* [n_batch] index of its sequence's first token in the chunk */
    float **tok_out;           /* [n_batch] where its logits go; NULL: nowhere */
    unsigned char *tok_keep;   /* [n_batch] whether its state leaves the last layer (logits,
                                  embedding); the last layer moves those rows first */
    float *x;                  /* [n_batch][n_embd] residual stream */
    float *xb;                 /* [n_batch][n_embd] normed input, projection output */
    float *q;                  /* [n_batch][n_head*head_dim] */
    float *k, *v;              /* [n_batch][n_kv_head*head_dim] this chunk's keys and values */
    uint8_t *kc, *vc;          /* [n_layer][n_batch][kv_row] the same in the cache's type, every
                                  layer's: they go into the rings once the chunk is through, so
                                  that an aborted chunk leaves the rings as they were */
    uint8_t *xq;               /* [n_batch][activation row] x quantized for the matrix products */
    void *xpack;               /* xq packed for the gemm kernels, if the kernel set has them */
    uint8_t *gemm_scratch;     /* per thread, gemm_scratch_stride bytes each: the gemm kernels', widened rows */
    size_t gemm_scratch_stride;
    float *att;                /* [n_batch][n_head*head_dim] attention output */
    float *gate, *up;          /* [n_batch][n_ff], or [n_batch][n_ff_exp] with experts */
    /* a mixture of experts (nothing without): the router's picks, then one expert at a time */
    float *router;             /* [n_batch][n_expert] the router's logits, then probabilities */
    int32_t *pick;             /* [n_batch][n_expert_used] the experts each token goes through */
    float *pick_w;             /* [n_batch][n_expert_used] and their weights */
    int32_t *exp_tok;          /* [n_batch] the chunk's tokens that picked the current expert */
    float *exp_w;              /* [n_batch] with their weights for it */
    float *exp_x, *exp_y;      /* [n_batch][n_embd] their normed inputs; the expert's outputs */
    float *moe_out;            /* [n_batch][n_embd] the weighted sums over the experts */
    int64_t max_slots;
    float *rope;               /* [2][n_batch][n_rot/2][cos, sin] global, then windowed layers */
    float *logits;             /* [n_vocab] */
    /* per thread, in an allocation of its own that swa_ctx_set_threads replaces */
    void *thread_mem;
    float *scores;             /* [n_threads][max n_slots] attention weights, one row per share */
    uint8_t *q8;               /* [n_threads][head] a query as Q8 blocks, for a Q8_0 cache, per share */
    swa__pool pool;
};

/* Matrix products per wake-up of the pool: q, k and v; or the gates and ups of SWA__MOE_GROUP of
   a generated token's experts, whose scratch rows the context keeps even with n_batch smaller. */
#define SWA__MAX_PRODUCTS 16
#define SWA__MOE_GROUP (SWA__MAX_PRODUCTS / 2)

/* Carves one allocation into pieces that start on a 64-byte line in memory, where a zmm load
   does not straddle two lines (a 64-byte load across a line boundary costs two, and the
   allocator's pointer may be aligned to 16 bytes only). With base == NULL it only measures, as
   if from an aligned base: the pieces then lie as measured once the first is aligned, so an
   allocation needs at most SWA__ARENA_SLACK bytes more than measured. */
#define SWA__ARENA_SLACK 63
typedef struct swa__arena {
    uint8_t *base;
    uint64_t used;
    int overflow;
} swa__arena;

/* Bytes from the end of the last piece to the next line. */
static uint64_t swa__arena_pad(const swa__arena *a)
{
    const uint64_t at = (uint64_t)((uintptr_t)a->base % 64) + a->used % 64;
    return (64 - at % 64) % 64;
}

static void *swa__arena_take(swa__arena *a, uint64_t n, uint64_t size)
{
    uint64_t bytes, off;
    if (!swa__add_u64(a->used, swa__arena_pad(a), &off) || !swa__mul_u64(n, size, &bytes) ||
        !swa__add_u64(off, bytes, &a->used)) {
        a->overflow = 1;
        return NULL;
    }
    return a->base ? a->base + off : NULL;
}

static swa_status swa__resolve_config(const swa_model *m, const swa_ctx_config *in,
                                      swa_ctx_config *out, swa_error *err)
{
    swa_ctx_config zero;
    memset(&zero, 0, sizeof zero);
    if (!in) in = &zero;
    if (in->window < 0 || in->n_ctx < 0 || in->n_batch < 0 || in->n_threads < 0 || in->n_threads > SWA__MAX_THREADS ||
        in->kernels < SWA_KERNELS_BEST || in->kernels > SWA__KERNELS_LAST || in->kv_type < 0 ||
        in->kv_type >= SWA__N_KV_TYPES || in->n_seq < 0 || in->n_rewind < 0)
        return swa__fail(err, SWA_ERR_INVALID_ARG,
                         "context config: window %d, n_ctx %d, n_batch %d, n_threads %d, kernels %d, kv_type %d, n_seq %d, "
                         "n_rewind %d: sizes may not be negative, n_threads is at most %d, kernels and kv_type take their enums",
                         in->window, in->n_ctx, in->n_batch, in->n_threads, in->kernels, in->kv_type, in->n_seq,
                         in->n_rewind, SWA__MAX_THREADS);
    if (swa__kernels_resolve(in->kernels) < 0)
        return swa__fail(err, SWA_ERR_UNSUPPORTED, "context config: this CPU (or build) does not run the %s kernels",
                         swa_kernels_name(in->kernels));
    if (in->n_sink < 0)
        return swa__fail(err, SWA_ERR_INVALID_ARG, "context config: n_sink %d may not be negative", in->n_sink);
    if (in->kv_type == SWA_KV_Q8_0 && m->hp.head_dim % 32 != 0)
        return swa__fail(err, SWA_ERR_INVALID_ARG, "a Q8_0 key/value cache needs a head size that is a multiple of 32, not %d",
                         (int)m->hp.head_dim);
    *out = *in;
    if (!out->n_ctx)
        out->n_ctx = m->hp.n_ctx_train > 0 && m->hp.n_ctx_train < SWA__DEFAULT_N_CTX ? m->hp.n_ctx_train
                                                                                    : SWA__DEFAULT_N_CTX;
    if (!out->n_batch) out->n_batch = SWA__DEFAULT_N_BATCH;
    if (out->n_sink >= out->n_ctx)
        return swa__fail(err, SWA_ERR_INVALID_ARG, "context config: n_sink %d must be below n_ctx %d", out->n_sink, out->n_ctx);
    if (!out->n_threads) out->n_threads = swa__online_cpus();
    if (!out->n_seq) out->n_seq = 1;
    return SWA_OK;
}

SWADEF swa_ctx_config swa_ctx_config_default(const swa_model *m)
{
    swa_ctx_config c;
    memset(&c, 0, sizeof c);
    if (m) swa__resolve_config(m, NULL, &c, NULL);
    else {
        c.n_batch = SWA__DEFAULT_N_BATCH;
        c.n_seq = 1;
    }
    return c;
}

static int32_t swa__effective_window(const swa_model *m, const swa_ctx_config *cfg, int64_t l)
{
    return cfg->window > 0 ? cfg->window : m->window[l];
}

/* Bytes of n cached values (a whole number of blocks: heads are, for Q8_0). */
static uint64_t swa__kv_bytes(int32_t kv_type, int64_t n)
{
    const swa__type_info *t = &swa__types[swa__kv_types[kv_type].type];
    return (uint64_t)(n / t->block_size) * (uint64_t)t->block_bytes;
}

/* Ring slots of a layer with window w (0: full attention). */
static int64_t swa__ring_slots(const swa_ctx_config *cfg, int32_t w)
{
    return w > 0 ? (int64_t)w + cfg->n_rewind : cfg->n_ctx;
}

/* Rows of the feed-forward's gate and up: the experts' when there are experts, the wider of
   theirs and the dense layers' when some layers have none (Llama 4, AFMoE); at least the shared
   experts' and EmbeddingGemma's projection's. */
static int64_t swa__ffn_width(const swa_model *m)
{
    const swa_hparams *hp = &m->hp;
    int64_t w = hp->n_expert == 0 ? hp->n_ff : (m->moe_step == 1 && m->dense_lead == 0) || hp->n_ff_exp > hp->n_ff ? hp->n_ff_exp : hp->n_ff;
    if (m->n_ff_shexp > w) w = m->n_ff_shexp;
    return m->n_dense > w ? m->n_dense : w;   /* the embedding's projection goes through c->gate too */
}

/* The gemm kernels' memory for this model and config: the packed tokens and one thread's
   scratch (which also holds a block of the rows a prompt widens), both 0 when the kernel set
   needs none. */
static void swa__gemm_memory(const swa_model *m, const swa_ctx_config *cfg, uint64_t *pack, uint64_t *scratch)
{
    const swa_hparams *hp = &m->hp;
    int64_t n_in = swa__ffn_width(m) > hp->n_embd ? swa__ffn_width(m) : hp->n_embd;
    swa__kernels k;
    int64_t i;
    if (hp->n_head * hp->head_dim > n_in) n_in = hp->n_head * hp->head_dim;
    *pack = *scratch = 0;
    swa__kernels_setup(&k, swa__kernels_resolve(cfg->kernels));
    if (k.gemm_memory) k.gemm_memory(cfg->n_batch, n_in, pack, scratch);
    for (i = 0; i < swa_gguf_tensor_count(m->gguf); i++) {   /* the types the model has that widen */
        uint32_t t = swa_gguf_tensor_at(m->gguf, i)->type;
        if (t < SWA__N_TYPES && swa__widen_bytes(&k.type[t], n_in) > *scratch) *scratch = swa__widen_bytes(&k.type[t], n_in);
    }
}

/* Lay the context out in an arena: measure with c->... pointers left NULL, or place them. */
static void swa__ctx_layout(const swa_model *m, const swa_ctx_config *cfg, swa_ctx *c, swa__arena *a)
{
    const swa_hparams *hp = &m->hp;
    uint64_t nb = (uint64_t)cfg->n_batch, kvd = (uint64_t)hp->n_kv_head * (uint64_t)hp->head_dim;
    uint64_t qd = (uint64_t)hp->n_head * (uint64_t)hp->head_dim, max_slots = 1, cache_start, n_layer = (uint64_t)hp->n_layer;
    uint64_t kv_row = swa__kv_bytes(cfg->kv_type, (int64_t)kvd), ff = (uint64_t)swa__ffn_width(m);
    uint64_t widest = ff > (uint64_t)hp->n_embd ? ff : (uint64_t)hp->n_embd, E = (uint64_t)hp->n_expert;
    uint64_t act_row = 0, seq_rows, pack, scratch;
    int kind;
    int64_t l;
    c->seq = (swa__seq *)swa__arena_take(a, (uint64_t)cfg->n_seq, sizeof(swa__seq));
    c->seq_count = (int64_t *)swa__arena_take(a, (uint64_t)cfg->n_seq, sizeof(int64_t));
    c->seq_last = (int64_t *)swa__arena_take(a, (uint64_t)cfg->n_seq, sizeof(int64_t));
    c->window = (int32_t *)swa__arena_take(a, n_layer, sizeof(int32_t));
    c->n_slots = (int64_t *)swa__arena_take(a, n_layer, sizeof(int64_t));
    c->k_cache = (uint8_t **)swa__arena_take(a, n_layer, sizeof(uint8_t *));
    c->v_cache = (uint8_t **)swa__arena_take(a, n_layer, sizeof(uint8_t *));
    cache_start = a->used + swa__arena_pad(a);   /* where the first ring will start */
    for (l = 0; l < hp->n_layer; l++) {
        int32_t w = swa__effective_window(m, cfg, l);
        uint64_t slots = (uint64_t)swa__ring_slots(cfg, w);
        uint8_t *k, *v;
        if (!swa__mul_u64(slots, (uint64_t)cfg->n_seq, &seq_rows)) {
            a->overflow = 1;
            return;
        }
        k = (uint8_t *)swa__arena_take(a, seq_rows, kv_row);
        v = (uint8_t *)swa__arena_take(a, seq_rows, kv_row);
        if (slots > max_slots) max_slots = slots;
        if (a->base) {
            c->window[l] = w;
            c->n_slots[l] = (int64_t)slots;
            c->k_cache[l] = k;
            c->v_cache[l] = v;
        }
    }
    c->cache_bytes = (size_t)(a->used - cache_start);
    c->kv_row = (size_t)kv_row;
    c->inv_freq = (double *)swa__arena_take(a, (uint64_t)hp->n_rot, sizeof(double));
    c->tok_index = (size_t *)swa__arena_take(a, nb, sizeof(size_t));
    c->tok_seq = (int32_t *)swa__arena_take(a, nb, sizeof(int32_t));
    c->tok_pos = (int64_t *)swa__arena_take(a, nb, sizeof(int64_t));
    c->tok_first = (int64_t *)swa__arena_take(a, nb, sizeof(int64_t));
    c->tok_out = (float **)swa__arena_take(a, nb, sizeof(float *));
    c->tok_keep = (unsigned char *)swa__arena_take(a, nb, 1);
    c->x = (float *)swa__arena_take(a, nb * (uint64_t)hp->n_embd, sizeof(float));
    c->xb = (float *)swa__arena_take(a, nb * (uint64_t)hp->n_embd, sizeof(float));
    c->q = (float *)swa__arena_take(a, nb * qd, sizeof(float));
    c->k = (float *)swa__arena_take(a, nb * kvd, sizeof(float));
    c->kc = (uint8_t *)swa__arena_take(a, n_layer * nb, kv_row);
    c->vc = (uint8_t *)swa__arena_take(a, n_layer * nb, kv_row);
    for (kind = SWA__ACT_Q8; kind <= SWA__ACT_Q8K; kind++) {
        uint64_t bytes = swa__act_bytes(kind, (int64_t)widest + 255);
        act_row = bytes > act_row ? bytes : act_row;
    }
    c->xq = (uint8_t *)swa__arena_take(a, E > 0 && nb < 2 * SWA__MOE_GROUP ? 2 * SWA__MOE_GROUP : nb, act_row);
    swa__gemm_memory(m, cfg, &pack, &scratch);
    c->xpack = pack ? swa__arena_take(a, 1, pack) : NULL;
    c->v = (float *)swa__arena_take(a, nb * kvd, sizeof(float));
    c->att = (float *)swa__arena_take(a, nb * qd, sizeof(float));
    c->gate = (float *)swa__arena_take(a, (E > 0 && nb < SWA__MOE_GROUP ? SWA__MOE_GROUP : nb) * ff, sizeof(float));
    c->up = (float *)swa__arena_take(a, (E > 0 && nb < SWA__MOE_GROUP ? SWA__MOE_GROUP : nb) * ff, sizeof(float));
    if (E > 0) {
        uint64_t K = (uint64_t)hp->n_expert_used;
        c->router = (float *)swa__arena_take(a, nb * E, sizeof(float));
        c->pick = (int32_t *)swa__arena_take(a, nb * K, sizeof(int32_t));
        c->pick_w = (float *)swa__arena_take(a, nb * K, sizeof(float));
        c->exp_tok = (int32_t *)swa__arena_take(a, nb, sizeof(int32_t));
        c->exp_w = (float *)swa__arena_take(a, nb, sizeof(float));
        c->exp_x = (float *)swa__arena_take(a, (nb < 2 * SWA__MOE_GROUP ? 2 * SWA__MOE_GROUP : nb) * (uint64_t)hp->n_embd,
                                            sizeof(float));
        c->exp_y = (float *)swa__arena_take(a, (nb < SWA__MOE_GROUP ? SWA__MOE_GROUP : nb) * (uint64_t)hp->n_embd, sizeof(float));
        c->moe_out = (float *)swa__arena_take(a, nb * (uint64_t)hp->n_embd, sizeof(float));
    }
    if ((m->arch->has & SWA__ARCH_BIDIRECTIONAL) && nb > max_slots) max_slots = nb;   /* a query's keys: the text */
    c->max_slots = (int64_t)max_slots;
    c->rope = (float *)swa__arena_take(a, 2 * nb * (uint64_t)hp->n_rot, sizeof(float));
    c->logits = (float *)swa__arena_take(a, (uint64_t)hp->n_vocab, sizeof(float));
}

/* The per-thread scratch, in an arena of its own: attention weights and a quantized query per
   share, the gemm kernels' scratch, and the pool's thread handles. */
static void swa__thread_layout(const swa_model *m, const swa_ctx_config *cfg, int64_t max_slots, int32_t n_threads,
                               swa_ctx *c, swa__arena *a)
{
    uint64_t pack, scratch;
    swa__gemm_memory(m, cfg, &pack, &scratch);
    c->gemm_scratch_stride = (size_t)((scratch + 63) & ~(uint64_t)63);
    c->gemm_scratch = scratch ? (uint8_t *)swa__arena_take(a, (uint64_t)n_threads, c->gemm_scratch_stride) : NULL;
    c->scores = (float *)swa__arena_take(a, (uint64_t)max_slots * SWA__TILE_TOKENS * (uint64_t)n_threads, sizeof(float));
    c->q8 = (uint8_t *)swa__arena_take(a, SWA__TILE_TOKENS * (uint64_t)n_threads,
                                       swa__act_bytes(SWA__ACT_Q8, m->hp.head_dim + 31));
#ifndef SWA_NO_THREADS
    c->pool.threads = (swa__thread *)swa__arena_take(a, (uint64_t)n_threads, sizeof(swa__thread));
#endif
}

/* Bytes of the context's own allocation, and of its per-thread scratch; 0 on overflow. */
static uint64_t swa__ctx_bytes(const swa_model *m, const swa_ctx_config *cfg, uint64_t *thread_bytes)
{
    swa_ctx probe;
    swa__arena a, t;
    memset(&a, 0, sizeof a);
    memset(&t, 0, sizeof t);
    a.used = sizeof(swa_ctx);
    swa__ctx_layout(m, cfg, &probe, &a);
    swa__thread_layout(m, cfg, probe.max_slots, cfg->n_threads, &probe, &t);
    *thread_bytes = t.used + SWA__ARENA_SLACK;
    return a.overflow || t.overflow || a.used > (uint64_t)SIZE_MAX / 2 || t.used > (uint64_t)SIZE_MAX / 2 ? 0
                                                                                                    : a.used + SWA__ARENA_SLACK;
}

static void swa__threads_stop(swa_ctx *c)
{
    swa__pool_stop(&c->pool);
    if (c->thread_mem) SWA_FREE(c->thread_mem);
    c->thread_mem = NULL;
}

/* Replace the per-thread scratch with one for n threads and start the pool on it. If the
   allocation fails nothing changes; if threads cannot be started the context runs on one. */
static swa_status swa__threads_start(swa_ctx *c, int32_t n, swa_error *err)
{
    swa_ctx probe;
    swa__arena a;
    void *mem;
    swa_status s;
    memset(&a, 0, sizeof a);
    swa__thread_layout(c->model, &c->cfg, c->max_slots, n, &probe, &a);
    if (a.overflow || a.used > (uint64_t)SIZE_MAX - SWA__ARENA_SLACK || !(mem = SWA_MALLOC((size_t)(a.used + SWA__ARENA_SLACK))))
        return swa__fail(err, SWA_ERR_NOMEM, "cannot allocate the scratch of %d threads", (int)n);
    swa__threads_stop(c);
    a.base = (uint8_t *)mem;
    a.used = 0;
    swa__thread_layout(c->model, &c->cfg, c->max_slots, n, c, &a);
    /* written once, so that a tile's prefetch past a block of widened rows (swa__wide_slack)
       finds its pages there */
    if (c->gemm_scratch) memset(c->gemm_scratch, 0, (size_t)n * c->gemm_scratch_stride);
    c->thread_mem = mem;
#ifndef SWA_NO_THREADS
    s = swa__pool_start(&c->pool, n, c->pool.threads, err);
#else
    s = swa__pool_start(&c->pool, 1, NULL, err);
#endif
    c->cfg.n_threads = s == SWA_OK ? n : 1;
    return s;
}

/* What a snapshot must match: FNV-1a over the file's header, metadata and tensor descriptions,
   and the first bytes of every tensor (two fine-tunes of one base have the same metadata). */
static uint64_t swa__model_checksum(const swa_model *m)
{
    const swa_gguf *g = m->gguf;
    uint64_t h = swa__hash((const char *)g->base, (size_t)(g->data_offset < g->size ? g->data_offset : g->size));
    int64_t i;
    for (i = 0; i < g->n_tensors; i++) {
        const swa_gguf_tensor *t = &g->tensors[i];
        h ^= swa__hash((const char *)t->data, (size_t)(t->nbytes < 64 ? t->nbytes : 64)) + (h << 6) + (h >> 2);
    }
    return h;
}

/* YaRN, the one place for any architecture whose file says rope.scaling.type yarn: what pair i's
   frequency is multiplied by. ggml's rope_yarn turns by theta = theta_interp (1 - mix) +
   theta_extrap mix, theta_interp = theta_extrap / factor, which for every position is the
   unscaled angle times (1 - mix) / factor + mix, so the blend is a factor of the frequency.
   mix is 1 below the correction dimension `low` (pairs that turn more than beta_fast times over
   the original context: extrapolated, unscaled), 0 above `high` (fewer than beta_slow turns:
   interpolated, divided by factor), a linear ramp between, with ggml_rope_yarn_corr_dims's
   floor and ceil (transformers' truncate = true). The magnitude factor is in rope_attn_factor
   (swa__read_yarn). */
static double swa__yarn_scale(const swa_model *m, int64_t i, double base)
{
    double n = (double)m->hp.n_rot, orig = m->n_ctx_orig > 0 ? (double)m->n_ctx_orig : 1.0, pi = 3.14159265358979323846;
    double low = floor(n * log(orig / ((double)m->yarn_beta_fast * 2.0 * pi)) / (2.0 * log(base)));
    double high = ceil(n * log(orig / ((double)m->yarn_beta_slow * 2.0 * pi)) / (2.0 * log(base)));
    double y, mix;
    if (low < 0.0) low = 0.0;
    if (high > n - 1.0) high = n - 1.0;
    y = ((double)i - low) / (high - low > 0.001 ? high - low : 0.001);
    mix = 1.0 - (y < 0.0 ? 0.0 : y > 1.0 ? 1.0 : y);
    return (double)m->rope_scale * (1.0 - mix) + mix;
}

/* RoPE frequencies base^(-2i/n_rot), times the linear scale (or YaRN's blend) and divided by
   Phi-3's factors (the long ones when the context is longer than the original, as llama.cpp
   chooses), for global layers and for windowed ones, which Gemma 3 turns at base 10000 without
   scaling, and OLMo 3 at the file's base without scaling. */
static void swa__rope_frequencies(swa_ctx *c)
{
    const swa_model *m = c->model;
    int64_t half = m->hp.n_rot / 2, i;
    const float *factors = m->rope_long && c->cfg.n_ctx > m->n_ctx_orig ? m->rope_long : m->rope_short;
    int local_unscaled = m->arch->local_rope_base > 0.0f || m->rope_layers == SWA__ROPE_LOCAL_PLAIN;
    for (i = 0; i < half; i++) {
        double e = -2.0 * (double)i / (double)m->hp.n_rot, f = factors ? (double)factors[i] : 1.0;
        double scale = m->yarn ? swa__yarn_scale(m, i, (double)m->hp.rope_base) : (double)m->rope_scale;
        double local_scale = local_unscaled ? 1.0 : m->yarn ? swa__yarn_scale(m, i, (double)m->local_rope_base) : scale;
        c->inv_freq[i] = pow((double)m->hp.rope_base, e) * scale / f;
        c->inv_freq[half + i] = pow((double)m->local_rope_base, e) * local_scale / f;
    }
}

SWADEF size_t swa_ctx_cache_split(const swa_model *m, const swa_ctx_config *cfg, size_t *windowed, size_t *global)
{
    swa_ctx_config r;
    uint64_t row, part[2] = {0, 0}, bytes;
    int64_t l;
    if (windowed) *windowed = 0;
    if (global) *global = 0;
    if (!m || swa__resolve_config(m, cfg, &r, NULL) != SWA_OK) return 0;
    row = swa__kv_bytes(r.kv_type, (int64_t)m->hp.n_kv_head * m->hp.head_dim);
    for (l = 0; l < m->hp.n_layer; l++) {
        int32_t w = swa__effective_window(m, &r, l);
        if (!swa__mul_u64(2 * row, (uint64_t)(w > 0 ? w : r.n_ctx), &bytes) || !swa__add_u64(part[w == 0], bytes, &part[w == 0]))
            return 0;
    }
    if (part[0] + part[1] < part[0] || part[0] + part[1] > (uint64_t)SIZE_MAX) return 0;
    if (windowed) *windowed = (size_t)part[0];
    if (global) *global = (size_t)part[1];
    return (size_t)(part[0] + part[1]);
}

SWADEF size_t swa_ctx_memory_size(const swa_model *m, const swa_ctx_config *cfg)
{
    swa_ctx_config r;
    uint64_t main_bytes, thread_bytes;
    if (!m || swa__resolve_config(m, cfg, &r, NULL) != SWA_OK) return 0;
    main_bytes = swa__ctx_bytes(m, &r, &thread_bytes);
    return main_bytes ? (size_t)(main_bytes + thread_bytes) : 0;
}

SWADEF swa_status swa_ctx_create(const swa_model *m, const swa_ctx_config *cfg, swa_ctx **out, swa_error *err)
{
    swa_ctx_config r;
    swa__arena a;
    uint64_t bytes, thread_bytes;
    swa_ctx *c;
    int64_t l;
    swa_status s;
    if (!out) return swa__fail(err, SWA_ERR_INVALID_ARG, "swa_ctx_create: out is NULL");
    *out = NULL;
    if (!m) return swa__fail(err, SWA_ERR_INVALID_ARG, "swa_ctx_create: model is NULL");
    if ((s = swa__resolve_config(m, cfg, &r, err)) != SWA_OK) return s;
    bytes = swa__ctx_bytes(m, &r, &thread_bytes);
    c = bytes ? (swa_ctx *)SWA_MALLOC((size_t)bytes) : NULL;
    if (!c)
        return swa__fail(err, SWA_ERR_NOMEM, "cannot allocate a context of %llu bytes (window %d, n_ctx %d, n_batch %d)",
                         (unsigned long long)bytes, r.window, r.n_ctx, r.n_batch);
    memset(c, 0, sizeof *c);
    memset(&a, 0, sizeof a);
    a.base = (uint8_t *)c;
    a.used = sizeof(swa_ctx);
    swa__ctx_layout(m, &r, c, &a);
    SWA_ASSERT(!a.overflow && a.used <= bytes);
    c->model = m;
    c->cfg = r;
    swa__kernels_setup(&c->kern, swa__kernels_resolve(r.kernels));
    c->kv_type = r.kv_type;
    c->cache_type = swa__kv_types[r.kv_type].type;
    c->max_pos = INT64_MAX;
    c->chunked = m->chunked && r.window == 0;
    for (l = 0; l < m->hp.n_layer; l++)
        if (c->window[l] == 0 && r.n_sink == 0) c->max_pos = r.n_ctx;
    swa__rope_frequencies(c);
    c->model_sum = swa__model_checksum(m);
    swa_ctx_reset(c);
    if ((s = swa__threads_start(c, r.n_threads, err)) != SWA_OK) {
        swa__threads_stop(c);
        SWA_FREE(c);
        return s;
    }
    *out = c;
    swa__ok(err);
    return SWA_OK;
}

SWADEF void swa_ctx_free(swa_ctx *c)
{
    if (!c) return;
    swa__threads_stop(c);
    SWA_FREE(c);
}

SWADEF void swa_ctx_reset(swa_ctx *c)
{
    memset(c->seq, 0, (size_t)c->cfg.n_seq * sizeof *c->seq);
}

SWADEF int64_t swa_ctx_pos(const swa_ctx *c) { return c->seq[0].pos; }
SWADEF swa_ctx_config swa_ctx_config_get(const swa_ctx *c) { return c->cfg; }
SWADEF size_t swa_ctx_cache_bytes(const swa_ctx *c) { return c->cache_bytes; }
SWADEF const char *swa_ctx_kernels(const swa_ctx *c) { return c->kern.name; }

SWADEF const char *swa_kv_type_name(int32_t kv_type)
{
    return kv_type >= 0 && kv_type < SWA__N_KV_TYPES ? swa__kv_types[kv_type].name : NULL;
}

SWADEF int32_t swa_kv_type_from_name(const char *name)
{
    int32_t t;
    for (t = 0; name && t < SWA__N_KV_TYPES; t++)
        if (!strcmp(name, swa__kv_types[t].name)) return t;
    return -1;
}

SWADEF int32_t swa_ctx_window(const swa_ctx *c, int32_t layer)
{
    return layer >= 0 && layer < c->model->hp.n_layer ? c->window[layer] : -1;
}

/* Where position j of layer l lives in a sequence's ring: slot j mod S, or, in a global layer
   with attention sinks, the sinks in slots 0..n_sink-1 and the other positions in a ring over
   the rest. */
static int64_t swa__slot(const swa_ctx *c, int64_t l, int64_t j)
{
    int64_t S = c->n_slots[l], sinks = c->window[l] == 0 ? c->cfg.n_sink : 0;
    return j < sinks ? j : sinks + (j - sinks) % (S - sinks);
}

/* Positions a query keeps in layer l besides the sinks: the window, n_ctx - n_sink with sinks,
   or 0 for all of them. A chunked layer's query at i keeps i mod W + 1 <= W of them. */
static int64_t swa__recent(const swa_ctx *c, int64_t l)
{
    return c->window[l] > 0 ? c->window[l] : c->cfg.n_sink > 0 ? c->n_slots[l] - c->cfg.n_sink : 0;
}

/* ==== the forward pass ====
   A chunk of tokens through every layer: norm, q/k/v, RoPE, the chunk's keys beside the
   rings' in attention, the output projection, the MLP, and the logits of the tokens that want
   them; the chunk's keys enter the rings only when every layer is through. */

/* y[t][r] = dot(row r of w, x[t]) for n tokens, for up to 3 matrices that read the same input
   (q, k and v; gate and up): one quantization and one wake-up of the pool for all of them, the
   rows taken as one list and split over the threads. x is already in the weights' activation
   form (a row every x_stride bytes). Weight rows go in blocks (the type's block_bytes): a block is
   read from memory once and stays in L2 while the tokens pass it in tiles of the set's shape
   (through the dots kernel, when the type has one; rows the kernel set widens, through the F32
   tiles over the block widened in the thread's scratch). A type with a gemm kernel takes a batch of
   its gemm_from or more in one call per chunk of rows instead, the tokens packed once for all
   the threads. */
typedef struct swa__product {
    const swa__matrix *w;
    float *y;
    int64_t ldy;
} swa__product;

typedef struct swa__matmul_task {
    const swa__product *p;
    int count;
    const swa__kernels *ks;
    const swa__type_kernels *kern[SWA__MAX_PRODUCTS];
    swa__gemm_fn gemm[SWA__MAX_PRODUCTS];   /* used when xpack is set */
    const uint8_t *x;
    size_t x_stride;
    size_t x_off[SWA__MAX_PRODUCTS];   /* bytes from x to each product's input (0: all the same) */
    const void *xpack;         /* the tokens packed for the gemm kernels, or NULL */
    uint8_t *scratch;          /* the gemm kernels' and widened rows': scratch_stride bytes per share */
    size_t scratch_stride;
    int64_t n, rows;           /* tokens (of this pass); rows of all the matrices */
    int64_t t0;                /* the pass's first token: x is already there, y is t0 rows on */
    int64_t next;              /* prompts: the next chunk of rows to take (atomic) */
} swa__matmul_task;

/* y[t * ldy + r] = dot(row r, x_t) for n_rows rows (w_stride bytes apart) and nt tokens
   (x_stride bytes apart, at most the type's tile_tokens): calls of the type's dots_rows rows
   through its tile kernel, or dot by dot where the kernel table has none. Shared by the matrix
   products and the attention's scores. */
SWA__INTERNAL void swa__dot_rows(const swa__type_kernels *k, const uint8_t *w, size_t w_stride, int64_t n_rows,
                          const uint8_t *x, size_t x_stride, int nt, int64_t n, float *y, int64_t ldy)
{
    const int call = k->dots && k->dots_rows ? k->dots_rows : k->tile_rows;
    int64_t r;
    int i, t;
    for (r = 0; r < n_rows; r += call) {
        int nr = n_rows - r < call ? (int)(n_rows - r) : call;
        if (k->dots) {
            k->dots(w + (size_t)r * w_stride, w_stride, nr, x, x_stride, nt, n, y + r, ldy);
            continue;
        }
        for (i = 0; i < nr; i++)
            for (t = 0; t < nt; t++)
                y[t * ldy + r + i] = k->dot(w + (size_t)(r + i) * w_stride, x + (size_t)t * x_stride, n);
    }
}

/* Bytes from one widened row to the next: a line more than the row, so that the rows of a tile
   and of the next one (which the tile prefetches) fall in different sets of L1 even when the row
   is a multiple of 4 KB; in one set with the tokens' lines they would evict each other. */
static size_t swa__wide_stride(int64_t n_in) { return (size_t)n_in * sizeof(float) + 64; }

/* Rows of a type's matrix per block: about the type's block_bytes as the tiles read them
   (widened to f32 where the type widens), whole tiles of tile rows. */
SWA__INTERNAL int64_t swa__block_rows(const swa__type_kernels *k, size_t row_bytes, int64_t n_in, int64_t tile)
{
    size_t row = k->widen ? swa__wide_stride(n_in) : row_bytes;
    int64_t block = (int64_t)(k->block_bytes / row) / tile * tile;
    return block < tile ? tile : block;
}

/* Rows after a block of widened rows that a tile may prefetch: two tiles' (the last tile's next
   tile, whose rows follow a tile of fewer rows). Their contents are never read, but their pages
   must have been written once (the context does it when it makes the scratch): a prefetch into a
   page never written walks the page tables each time and finds nothing. */
static int64_t swa__wide_slack(const swa__type_kernels *k) { return 2 * (int64_t)k->tile_rows; }

/* A thread's scratch for a block of a type's rows widened to f32, rows of up to n_in columns (0:
   the type does not widen): a block, at least a tile, and the slack. */
SWA__INTERNAL uint64_t swa__widen_bytes(const swa__type_kernels *k, int64_t n_in)
{
    uint64_t row = swa__wide_stride(n_in), tile = (uint64_t)k->tile_rows * row;
    if (!k->widen) return 0;
    return (tile > k->block_bytes ? tile : k->block_bytes) + (uint64_t)swa__wide_slack(k) * row;
}

/* y[t * ldy + r] = dot(row r, x_t) for a block of n_rows rows of type `type` and all n tokens,
   a pass of the type's tile_tokens tokens at a time. When more than one pass reads the block
   and the type widens, its rows are widened to f32 in scratch (swa__widen_bytes) first and the
   passes go through the F32 tiles, which give the same bits: each weight is converted once
   instead of once a pass. */
SWA__INTERNAL void swa__dot_block(const swa__kernels *ks, uint32_t type, const uint8_t *w, size_t w_stride,
                                  int64_t n_rows, const uint8_t *x, size_t x_stride, int64_t n, int64_t n_in,
                                  float *y, int64_t ldy, void *scratch)
{
    const swa__type_kernels *k = &ks->type[type];
    int64_t r, t;
    if (k->widen && scratch && n > k->tile_tokens) {
        uint8_t *wide = (uint8_t *)scratch;
        SWA_ASSERT(n_rows <= swa__block_rows(k, w_stride, n_in, k->tile_rows) &&
                   ks->type[SWA_TYPE_F32].tile_rows == k->tile_rows);   /* what swa__widen_bytes holds */
        for (r = 0; r < n_rows; r++) k->widen(w + (size_t)r * w_stride, (float *)(wide + (size_t)r * swa__wide_stride(n_in)), n_in);
        k = &ks->type[SWA_TYPE_F32];
        w = wide;
        w_stride = swa__wide_stride(n_in);
    }
    for (t = 0; t < n; t += k->tile_tokens) {
        int nt = n - t < k->tile_tokens ? (int)(n - t) : k->tile_tokens;
        swa__dot_rows(k, w, w_stride, n_rows, x + (size_t)t * x_stride, x_stride, nt, n_in, y + t * ldy, ldy);
    }
}

static void swa__matmul_rows(const swa__matmul_task *t, int i, int64_t r0, int64_t r1, int share)
{
    const swa__matrix *w = t->p[i].w;
    const uint8_t *rows = (const uint8_t *)w->data + (size_t)r0 * w->row_bytes;
    uint8_t *scratch = t->scratch ? t->scratch + (size_t)share * t->scratch_stride : NULL;
    if (t->xpack && t->gemm[i]) {
        t->gemm[i](rows, w->row_bytes, r1 - r0, t->xpack, t->n, w->n_in, t->p[i].y + r0, t->p[i].ldy, scratch);
        return;
    }
    swa__dot_block(t->ks, w->type, rows, w->row_bytes, r1 - r0, t->x + t->x_off[i], t->x_stride, t->n, w->n_in,
                   t->p[i].y + t->t0 * t->p[i].ldy + r0, t->p[i].ldy, scratch);
}

/* Rows of matrix i per block. */
static int64_t swa__matrix_block_rows(const swa__matmul_task *t, int i, int64_t tile)
{
    const swa__matrix *w = t->p[i].w;
    return swa__block_rows(t->kern[i], w->row_bytes, w->n_in, tile);
}

/* Rows per chunk a prompt's threads take in turn: small enough that each thread takes about 4
   of every matrix (a small model's matrices are a few blocks long), and through the tiles at
   most a block. A gemm kernel unpacks its rows in sets of 16 (or 8) for all the tokens, so its
   chunks are whole 16s and need no block. */
static int64_t swa__chunk_rows(const swa__matmul_task *t, int i, int nth)
{
    const swa__matrix *w = t->p[i].w;
    int64_t unit = t->xpack && t->gemm[i] ? 16 : t->kern[i]->tile_rows, block = swa__matrix_block_rows(t, i, unit);
    int64_t share = w->n_out / (4 * nth) / unit * unit;
    if (share < unit) share = unit;
    return unit == 16 || share < block ? share : block;
}

/* Chunk k of the products' rows, counted matrix after matrix: rows [r0, r1) of matrix i, or 0
   past the last. */
static int swa__chunk_at(const swa__matmul_task *t, int64_t k, int nth, int *i, int64_t *r0, int64_t *r1)
{
    for (*i = 0; *i < t->count; (*i)++) {
        const swa__matrix *w = t->p[*i].w;
        int64_t rows = swa__chunk_rows(t, *i, nth), chunks = (w->n_out + rows - 1) / rows;
        if (k < chunks) {
            *r0 = k * rows;
            *r1 = *r0 + rows < w->n_out ? *r0 + rows : w->n_out;
            return 1;
        }
        k -= chunks;
    }
    return 0;
}

/* Generation splits the rows in equal shares: each thread streams its own part of every matrix,
   which the memory system serves best (taking blocks in turn would interleave the threads'
   streams). A prompt is compute-bound and runs long enough for a thread to be held up by the
   machine, so its threads take chunks in turn until none is left: a thread delayed by another
   process then takes fewer chunks instead of holding the others up, at no cost on a quiet
   machine. Either way a block's results come from the same code, whichever thread computes
   them. */
static void swa__matmul_run(void *arg, int share, int n_shares)
{
    swa__matmul_task *t = (swa__matmul_task *)arg;
    int64_t r0, r1, first = 0;   /* first: matrix i's first row in the list */
    int i;
    if (t->n > 1 && n_shares > 1) {
        while (swa__chunk_at(t, swa__fetch_inc_i64(&t->next), n_shares, &i, &r0, &r1))
            swa__matmul_rows(t, i, r0, r1, share);
        return;
    }
    swa__split(t->rows, share, n_shares, &r0, &r1);
    for (i = 0; i < t->count; first += t->p[i].w->n_out, i++) {
        const swa__matrix *w = t->p[i].w;
        int64_t lo = r0 > first ? r0 - first : 0, hi = r1 - first < w->n_out ? r1 - first : w->n_out, r;
        int64_t block = t->xpack && t->gemm[i] ? hi - lo : swa__matrix_block_rows(t, i, t->kern[i]->tile_rows);   /* gemm: tiles its own */
        for (r = lo; r < hi; r += block) swa__matmul_rows(t, i, r, r + block < hi ? r + block : hi, share);
    }
}

/* ---- a chunk's element-wise steps on the pool ----
   Norms, the residual, the gate's activation and the activations' quantization are functions
   of a range of tokens (or values), which the threads take in shares rather than leave the
   calling thread to do alone. Every share starts at a multiple of `align`: a vector kernel
   given values from such a start meets them in the same vectors as given them all, and only
   the last share has the scalar tail the whole would have, so the bits do not depend on the
   thread count. */
typedef void (*swa__range_fn)(swa_ctx *c, const void *arg, int64_t begin, int64_t end);

typedef struct swa__range_task {
    swa_ctx *c;
    swa__range_fn fn;
    const void *arg;
    int64_t n, align;
} swa__range_task;

/* Floats a step touches below which a wake-up of the pool costs more than it saves (one
   token's steps stay on the calling thread). */
#define SWA__RANGE_ALONE 65536.0

static void swa__range_run(void *arg, int share, int n_shares)
{
    const swa__range_task *t = (const swa__range_task *)arg;
    int64_t b, e;
    swa__split(t->n / t->align, share, n_shares, &b, &e);
    b *= t->align;
    e = share == n_shares - 1 ? t->n : e * t->align;
    if (b < e) t->fn(t->c, t->arg, b, e);
}

/* fn over [0, n) in shares of whole multiples of align; work: the floats it touches. */
static void swa__over(swa_ctx *c, swa__range_fn fn, const void *arg, int64_t n, int64_t align, double work)
{
    swa__range_task t;
    if (work < SWA__RANGE_ALONE || n < 2 * align) {
        fn(c, arg, 0, n);
        return;
    }
    t.c = c;
    t.fn = fn;
    t.arg = arg;
    t.n = n;
    t.align = align;
    swa__pool_run(&c->pool, swa__range_run, &t);
}

/* Products of matrices that read the same n_in inputs in the same activation form: quantize
   the inputs once, then split the rows over the threads. Small products cost less than waking
   the workers, so they stay on the calling thread. */
/* Bytes of activations per pass of the rows over the tokens: a pass's tokens stay in the
   last-level cache while every block of rows goes by; thousands of tokens at once would come from
   memory again for each block. */
#define SWA__PASS_BYTES (2u << 20)

/* A chunk's activations into the weights' form (kind), tokens [t0, t1). */
typedef struct swa__quantize_args {
    const float *x;
    int64_t ldx, n_in;
    uint8_t *out;
    size_t stride;
    int kind;
} swa__quantize_args;

static void swa__quantize_range(swa_ctx *c, const void *arg, int64_t t0, int64_t t1)
{
    const swa__quantize_args *q = (const swa__quantize_args *)arg;
    int64_t t;
    for (t = t0; t < t1; t++) {
        uint8_t *out = q->out + (size_t)t * q->stride;
        if (q->kind == SWA__ACT_Q8) swa__quantize_q8g(c->kern.quantize_q8, q->x + t * q->ldx, out, q->n_in);
        else c->kern.quantize_q8k(q->x + t * q->ldx, out, q->n_in);
    }
}

static void swa__matmul_same_input(swa_ctx *c, const swa__product *p, int count, const float *x, int64_t ldx, int64_t n)
{
    swa__matmul_task t;
    int64_t n_in = p[0].w->n_in, per;
    const uint8_t *x0;
    swa__pack_fn pack = NULL;
    int kind = swa__act_kind(p[0].w->type), i;
    t.p = p;
    t.count = count;
    t.n = n;
    t.rows = 0;
    t.next = 0;
    t.xpack = NULL;
    t.ks = &c->kern;
    t.scratch = c->gemm_scratch;
    t.scratch_stride = c->gemm_scratch_stride;
    for (i = 0; i < count; i++) {
        t.kern[i] = &c->kern.type[p[i].w->type];
        t.x_off[i] = 0;
        t.gemm[i] = n >= t.kern[i]->gemm_from && c->xpack ? t.kern[i]->gemm : NULL;
        if (t.gemm[i] && !pack) pack = t.kern[i]->pack;
        if (t.gemm[i] && t.kern[i]->pack != pack) t.gemm[i] = NULL;   /* one packing a task: the others tile */
        t.rows += p[i].w->n_out;
    }
    if (pack) t.xpack = c->xpack;
    if (kind == SWA__ACT_F32) {
        t.x = (const uint8_t *)x;
        t.x_stride = (size_t)ldx * sizeof(float);
    } else {
        swa__quantize_args q;
        t.x = c->xq;
        t.x_stride = swa__act_bytes(kind, n_in);
        q.x = x;
        q.ldx = ldx;
        q.n_in = n_in;
        q.out = c->xq;
        q.stride = t.x_stride;
        q.kind = kind;
        swa__over(c, swa__quantize_range, &q, n, 1, (double)n * (double)n_in);
        if (pack) pack(c->xq, t.x_stride, n, n_in, c->xpack);
    }
    /* the gemm kernels take the packed tokens whole; the tiles go in passes (a result does not
       depend on the tokens it is computed with) */
    per = t.xpack ? n : (int64_t)(SWA__PASS_BYTES / t.x_stride);
    if (per < 64) per = 64;
    for (t.t0 = 0, x0 = t.x; t.t0 < n; t.t0 += per) {
        t.x = x0 + (size_t)t.t0 * t.x_stride;
        t.n = n - t.t0 < per ? n - t.t0 : per;
        t.next = 0;
        if ((double)t.rows * (double)n_in * (double)t.n < 32768.0) swa__matmul_run(&t, 0, 1);
        else swa__pool_run(&c->pool, swa__matmul_run, &t);
    }
}

/* One token through `count` matrices of one type, product i reading row i of x (ldx floats
   apart): a generated token's experts' down projections, each from its own expert's gate, in
   one wake-up of the pool. The rows are quantized as swa__matmul_same_input quantizes a token. */
static void swa__matmul_each_row(swa_ctx *c, const swa__product *p, int count, const float *x, int64_t ldx)
{
    swa__matmul_task t;
    int64_t n_in = p[0].w->n_in;
    int kind = swa__act_kind(p[0].w->type), i;
    memset(&t, 0, sizeof t);
    t.p = p;
    t.count = count;
    t.n = 1;
    t.ks = &c->kern;
    t.scratch = c->gemm_scratch;
    t.scratch_stride = c->gemm_scratch_stride;
    t.x = kind == SWA__ACT_F32 ? (const uint8_t *)x : c->xq;
    t.x_stride = kind == SWA__ACT_F32 ? (size_t)n_in * sizeof(float) : swa__act_bytes(kind, n_in);
    for (i = 0; i < count; i++) {
        uint8_t *out = c->xq + (size_t)i * t.x_stride;
        SWA_ASSERT(p[i].w->type == p[0].w->type && p[i].w->n_in == n_in);
        t.kern[i] = &c->kern.type[p[i].w->type];
        t.x_off[i] = kind == SWA__ACT_F32 ? (size_t)(i * ldx) * sizeof(float) : (size_t)i * t.x_stride;
        t.rows += p[i].w->n_out;
        if (kind == SWA__ACT_Q8) swa__quantize_q8g(c->kern.quantize_q8, x + i * ldx, out, n_in);
        else if (kind == SWA__ACT_Q8K) c->kern.quantize_q8k(x + i * ldx, out, n_in);
    }
    if ((double)t.rows * (double)n_in < 32768.0) swa__matmul_run(&t, 0, 1);
    else swa__pool_run(&c->pool, swa__matmul_run, &t);
}

/* Runs of the products whose weights take the same activation form (a file may mix types,
   Q4_K_M does) go together. */
static void swa__matmuls(swa_ctx *c, const swa__product *p, int count, const float *x, int64_t ldx, int64_t n)
{
    int i, j;
    for (i = 0; i < count; i = j) {
        for (j = i + 1; j < count && swa__act_kind(p[j].w->type) == swa__act_kind(p[i].w->type); j++) {}
        swa__matmul_same_input(c, p + i, j - i, x, ldx, n);
    }
}

static void swa__matmul(swa_ctx *c, const swa__matrix *w, const float *x, int64_t ldx, float *y, int64_t ldy, int64_t n)
{
    swa__product p;
    p.w = w;
    p.y = y;
    p.ldy = ldy;
    swa__matmuls(c, &p, 1, x, ldx, n);
}

/* cos/sin of pos * inv_freq[i] for each token of the chunk, times the attention factor (not on
   OLMo 3's windowed layers), for global layers and then for windowed ones. The product is taken
   in double so that angles stay accurate at positions in the millions. */
SWA__INTERNAL void swa__rope_angles(const double *inv_freq, int64_t half, double factor, int64_t pos, float *cs)
{
    int64_t i;
    for (i = 0; i < half; i++) {
        double angle = (double)pos * inv_freq[i];
        cs[2 * i] = (float)(factor * cos(angle));
        cs[2 * i + 1] = (float)(factor * sin(angle));
    }
}

static void swa__rope_table(swa_ctx *c, int64_t n)
{
    int64_t half = c->model->hp.n_rot / 2, t, k;
    for (k = 0; k < 2; k++) {
        int plain = k == 1 && c->model->rope_layers == SWA__ROPE_LOCAL_PLAIN;
        for (t = 0; t < n; t++)
            swa__rope_angles(c->inv_freq + k * half, half, plain ? 1.0 : (double)c->model->rope_attn_factor, c->tok_pos[t],
                             c->rope + (k * c->cfg.n_batch + t) * 2 * half);
    }
}

/* The NeoX layout of RoPE (every architecture here but llama): dimension i turns with
   i + n_rot/2 by the angles in cs = {cos, sin} pairs. */
static void swa__rope_neox(float *v, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float *cs)
{
    int64_t h, i, half = n_rot / 2;
    for (h = 0; h < n_heads; h++, v += head_dim)
        for (i = 0; i < half; i++) {
            float c = cs[2 * i], s = cs[2 * i + 1], x0 = v[i], x1 = v[i + half];
            v[i] = x0 * c - x1 * s;
            v[i + half] = x0 * s + x1 * c;
        }
}

/* Softmax of n scores with an attention sink: the sink's logit joins the denominator but has
   no value (gpt-oss; ggml's soft_max with sinks, transformers' extra column). The kernels'
   softmax runs as without it; its largest output, at the largest score m, is 1/S (S the sum of
   exp(x - m)), so each output times 1 / (1 + exp(sink - m) / S) is exp(x - m) / (S +
   exp(sink - m)). */
static void swa__softmax_sink(const swa_ctx *c, float *x, int64_t n, float sink)
{
    int64_t i, top = 0;
    float max, f;
    for (i = 1; i < n; i++) if (x[i] > x[top]) top = i;
    max = x[top];
    c->kern.softmax(x, n);
    f = 1.0f / (1.0f + expf(sink - max) * x[top]);
    for (i = 0; i < n; i++) x[i] *= f;
}

/* x = cap tanh(x / cap): Gemma 2's soft-capping of attention scores and logits. */
static void swa__softcap(float *x, int64_t n, float cap)
{
    int64_t i;
    for (i = 0; i < n; i++) x[i] = cap * tanhf(x[i] / cap);
}

/* Attention of the chunk's n queries in layer l. A query at position i sees keys j with
   i - W < j <= i of its own sequence; in a chunked layer (Llama 4) i - i mod W <= j <= i, the
   keys of its own chunk of W, never more than the window's; in an encoder's (EmbeddingGemma)
   |i - j| <= W/2, later keys too (swa__both_sides). Keys before the chunk come from the sequence's ring, which
   still holds them because the chunk is written only when it is through; keys inside the chunk
   come from c->kc/c->vc. So a chunk longer than the ring loses nothing. Both hold keys and
   values in the cache's type, so a token sees the same numbers whether its keys were cached
   or computed in its own chunk: the logits do not depend on the chunk size. Threads split the
   (token, head) pairs. */
typedef struct swa__attention_task {
    swa_ctx *c;
    int64_t l, n;
} swa__attention_task;

/* The keys and values of positions lo..i (chunk token t's sequence) of layer l as runs of
   consecutive cache rows: the positions before the chunk sit in the sequence's ring, in at most
   two runs (it may wrap; sinks are one more), the chunk's own in c->kc and c->vc, where a
   sequence's tokens are consecutive. Runs go in position order; `at` is where a run's scores
   start, after those of the runs before it (from *at on). */
typedef struct swa__kv_run { const uint8_t *k, *v; int64_t first, n, at; } swa__kv_run;

static int swa__kv_runs(const swa_ctx *c, int64_t l, int64_t t, int64_t lo, int64_t i, swa__kv_run *run, int64_t *at)
{
    size_t row = c->kv_row;
    int64_t S = c->n_slots[l], sinks = c->window[l] == 0 ? c->cfg.n_sink : 0;
    int64_t first = c->tok_first[t], start = c->tok_pos[first], j = lo;
    int64_t last_in_ring = i < start ? i : start - 1;
    size_t ring = (size_t)(c->tok_seq[t] * S) * row, chunk = (size_t)(l * c->cfg.n_batch + first) * row;
    int n = 0;
    while (j <= last_in_ring) {
        int64_t slot = swa__slot(c, l, j), end = j < sinks ? sinks : S;
        int64_t len = last_in_ring - j + 1 < end - slot ? last_in_ring - j + 1 : end - slot;
        swa__kv_run r = {c->k_cache[l] + ring + (size_t)slot * row, c->v_cache[l] + ring + (size_t)slot * row, j, len, *at};
        run[n++] = r;
        j += len;
        *at += len;
    }
    if (j <= i) {
        swa__kv_run r = {c->kc + chunk + (size_t)(j - start) * row, c->vc + chunk + (size_t)(j - start) * row, j, i - j + 1, *at};
        run[n++] = r;
        *at += i - j + 1;
    }
    return n;
}

/* The keys of an encoder's query (BIDIRECTIONAL) at chunk token t: |i - j| <= W/2 in a windowed
   layer, else the whole text of its sequence, which is all in the chunk from position 0
   (swa__run_job sees to it). */
static void swa__both_sides(const swa_ctx *c, int64_t t, int64_t W, int64_t *lo, int64_t *hi)
{
    int64_t i = c->tok_pos[t], last = c->tok_pos[c->tok_first[t]] + c->seq_count[c->tok_seq[t]] - 1;
    *lo = W > 0 && i - W / 2 > 0 ? i - W / 2 : 0;
    *hi = W > 0 && i + W / 2 < last ? i + W / 2 : last;
}

/* Work items are (token, key head, block of up to 4 of the query heads sharing that key head),
   so that grouped-query attention reads each key and value once per block, not once per head:
   the scores go through the tile kernel (keys as rows, heads as tokens), the weighted sum of
   values through the wsum kernel. Every output still has one fixed order of operations. The
   threads take the items in turn rather than in contiguous halves: in a chunk on a global layer
   the later tokens see more keys, and halves gave the second thread about three times the first
   one's work. */
static void swa__attention_run(void *arg, int share, int n_shares)
{
    const swa__attention_task *task = (const swa__attention_task *)arg;
    swa_ctx *c = task->c;
    const swa_hparams *hp = &c->model->hp;
    int64_t hd = hp->head_dim, qd = (int64_t)hp->n_head * hd, group = hp->n_head / hp->n_kv_head;
    int64_t blocks = (group + SWA__TILE_TOKENS - 1) / SWA__TILE_TOKENS, items = hp->n_kv_head * blocks;
    int64_t W = swa__recent(c, task->l), ls = c->max_slots, p, j;
    size_t row = c->kv_row, head_bytes = (size_t)swa__kv_bytes(c->kv_type, hd);
    /* a Q8_0 cache meets the queries quantized to Q8 blocks, as Q8_0 weights meet activations */
    uint32_t type = c->cache_type;
    const int q_quantized = swa__act_kind(type) == SWA__ACT_Q8;
    size_t q_stride = q_quantized ? swa__act_bytes(SWA__ACT_Q8, hd + 31) : (size_t)hd * sizeof(float);
    uint8_t *q8 = c->q8 + (size_t)share * SWA__TILE_TOKENS * swa__act_bytes(SWA__ACT_Q8, hd + 31);
    const swa__type_kernels *kern = &c->kern.type[type];
    float *scores = c->scores + (int64_t)share * SWA__TILE_TOKENS * ls, scale = c->model->q_scale;
    float cap = c->model->attn_softcap;
    const float *sink = c->model->layers[task->l].attn_sinks;
    for (p = share; p < task->n * items; p += n_shares) {   /* in turn: a causal chunk's later tokens see more keys */
        int64_t t = p / items, g = p % items / blocks, h0 = g * group + p % blocks * SWA__TILE_TOKENS;
        int64_t i = c->tok_pos[t], lo = W > 0 && i - W + 1 > 0 ? (c->chunked ? i - i % W : i - W + 1) : 0, hi = i;
        int64_t heads_left = (g + 1) * group - h0;
        int nh = heads_left < SWA__TILE_TOKENS ? (int)heads_left : SWA__TILE_TOKENS, h, r;
        size_t head = (size_t)g * head_bytes;
        const uint8_t *q = (const uint8_t *)(c->q + t * qd + h0 * hd);
        float *out = c->att + t * qd + h0 * hd;
        swa__kv_run run[6];
        int64_t count = 0, sinks = lo > 0 && c->window[task->l] == 0 ? c->cfg.n_sink : 0;
        int n_runs;
        if (c->model->arch->has & SWA__ARCH_BIDIRECTIONAL) swa__both_sides(c, t, W, &lo, &hi);
        n_runs = swa__kv_runs(c, task->l, t, 0, (sinks < lo ? sinks : lo) - 1, run, &count);
        n_runs += swa__kv_runs(c, task->l, t, lo, hi, run + n_runs, &count);
        if (q_quantized) {
            for (h = 0; h < nh; h++) swa__quantize_q8g(c->kern.quantize_q8, (const float *)q + h * hd, q8 + (size_t)h * q_stride, hd);
            q = q8;
        }
        for (r = 0; r < n_runs; r++)
            swa__dot_rows(kern, run[r].k + head, row, run[r].n, q, q_stride, nh, hd, scores + run[r].at, ls);
        for (h = 0; h < nh; h++) {
            for (j = 0; j < count; j++) scores[h * ls + j] *= scale;
            if (cap > 0.0f) swa__softcap(scores + h * ls, count, cap);
            if (sink) swa__softmax_sink(c, scores + h * ls, count, sink[h0 + h]);
            else c->kern.softmax(scores + h * ls, count);
        }
        memset(out, 0, (size_t)(nh * hd) * sizeof(float));
        for (r = 0; r < n_runs; r++)
            kern->wsum(out, hd, nh, scores + run[r].at, ls, run[r].v + head, row, run[r].n, hd);
    }
}

static void swa__attention(swa_ctx *c, int64_t l, int64_t n)
{
    swa__attention_task t;
    int64_t keys = c->tok_pos[n - 1] + 1, W = c->window[l];
    t.c = c;
    t.l = l;
    t.n = n;
    if (W > 0 && keys > W) keys = W;
    if ((double)n * c->model->hp.n_head * (double)keys * c->model->hp.head_dim < 32768.0) swa__attention_run(&t, 0, 1);
    else swa__pool_run(&c->pool, swa__attention_run, &t);
}

/* The chunk's keys and values of layer l in the cache's type. */
static void swa__chunk_to_cache_type(swa_ctx *c, int64_t l, int64_t n)
{
    int64_t count = n * c->model->hp.n_kv_head * c->model->hp.head_dim;
    size_t chunk = (size_t)(l * c->cfg.n_batch) * c->kv_row;
    swa__store_fn store = c->kern.type[c->cache_type].store;
    store(c->k, c->kc + chunk, count);
    store(c->v, c->vc + chunk, count);
}

/* The chunk's keys and values go into their sequences' rings, every layer's, each position to
   its slot (swa__slot). Tokens go in position order, so a later one wins a slot. */
static void swa__cache_write(swa_ctx *c, int64_t n)
{
    size_t row = c->kv_row;
    int64_t l, t;
    for (l = 0; l < c->model->hp.n_layer; l++) {
        int64_t S = c->n_slots[l];
        const uint8_t *kc = c->kc + (size_t)(l * c->cfg.n_batch) * row, *vc = c->vc + (size_t)(l * c->cfg.n_batch) * row;
        for (t = 0; t < n; t++) {
            size_t slot = (size_t)(c->tok_seq[t] * S + swa__slot(c, l, c->tok_pos[t]));
            memcpy(c->k_cache[l] + slot * row, kc + (size_t)t * row, row);
            memcpy(c->v_cache[l] + slot * row, vc + (size_t)t * row, row);
        }
    }
}

/* LayerNorm without bias (Command R7B's): the mean taken out, then divided by the root of the
   variance plus eps, times w; sums in double, as ggml's norm takes them. x may be y. */
static void swa__layernorm(float *y, const float *x, const float *w, int64_t n, float eps)
{
    double mean = 0.0, var = 0.0;
    float scale;
    int64_t i;
    for (i = 0; i < n; i++) mean += x[i];
    mean /= (double)n;
    for (i = 0; i < n; i++) var += ((double)x[i] - mean) * ((double)x[i] - mean);
    scale = 1.0f / sqrtf((float)(var / (double)n) + eps);
    for (i = 0; i < n; i++) y[i] = (float)((double)x[i] - mean) * scale * w[i];
}

typedef struct swa__norm_args {
    float *y;
    const float *x, *w;
    int64_t width;
} swa__norm_args;

static void swa__norm_range(swa_ctx *c, const void *arg, int64_t t0, int64_t t1)
{
    const swa__norm_args *a = (const swa__norm_args *)arg;
    float eps = c->model->hp.rms_eps;
    int64_t t;
    for (t = t0; t < t1; t++) {
        if (c->model->arch->has & SWA__ARCH_LAYERNORM) swa__layernorm(a->y + t * a->width, a->x + t * a->width, a->w, a->width, eps);
        else c->kern.rmsnorm(a->y + t * a->width, a->x + t * a->width, a->w, a->width, eps);
    }
}

/* y = norm(x) for n rows of `width` (`width` floats apart): RMSNorm or, where the architecture
   says, LayerNorm; without weights (OLMo 2 has no norm before attention) y = x. */
static void swa__norm_rows(swa_ctx *c, float *y, const float *x, const float *w, int64_t width, int64_t n)
{
    swa__norm_args a;
    if (!w) {
        if (y != x) memcpy(y, x, (size_t)(n * width) * sizeof(float));
        return;
    }
    a.y = y;
    a.x = x;
    a.w = w;
    a.width = width;
    swa__over(c, swa__norm_range, &a, n, 1, (double)n * (double)width);
}

/* Per token of the chunk: add a bias, or RMSNorm each head (Q/K norms); NULL does nothing.
   The norms here and in swa__residual run in place: every rmsnorm kernel reads its input whole
   (the sum of squares) before it writes. */
static void swa__add_bias(float *y, const float *bias, int64_t width, int64_t n)
{
    int64_t t;
    for (t = 0; bias && t < n; t++) swa__add_ref(y + t * width, bias, width);
}

static void swa__norm_heads(swa_ctx *c, float *y, const float *w, int64_t n_heads, int64_t n)
{
    int64_t hd = c->model->hp.head_dim, i;
    int all = (c->model->arch->has & SWA__ARCH_QK_NORM_ALL) != 0;   /* one norm over the token's heads */
    int64_t width = all ? n_heads * hd : hd, rows = all ? n : n * n_heads;
    for (i = 0; w && i < rows; i++) c->kern.rmsnorm(y + i * width, y + i * width, w, width, c->model->hp.rms_eps);
}

/* Q, K and V of the chunk, ready for attention: projections, biases, Q/K norms, RoPE (none on
   Command R7B's and Llama 4's global layers), Llama 4's weightless norms after RoPE, the
   attention temperature (Llama 4: on the layers without RoPE). */
static void swa__qkv(swa_ctx *c, int64_t l, int64_t n)
{
    const swa_model *m = c->model;
    const swa_hparams *hp = &m->hp;
    const swa__layer *L = &m->layers[l];
    int64_t d = hp->n_embd, hd = hp->head_dim, kvd = (int64_t)hp->n_kv_head * hd, qd = (int64_t)hp->n_head * hd, t;
    const float *rope = c->rope + (m->window[l] > 0 ? c->cfg.n_batch * hp->n_rot : 0);
    int turns = m->rope_layers == SWA__ROPE_NOT_FOURTH ? (l + 1) % 4 != 0 : m->window[l] > 0 || m->rope_layers != SWA__ROPE_LOCAL_ONLY;
    swa__product qkv[3] = {{&L->wq, c->q, qd}, {&L->wk, c->k, kvd}, {&L->wv, c->v, kvd}};
    swa__matmuls(c, qkv, 3, c->xb, d, n);
    swa__add_bias(c->q, L->bq, qd, n);
    swa__add_bias(c->k, L->bk, kvd, n);
    swa__add_bias(c->v, L->bv, kvd, n);
    swa__norm_heads(c, c->q, L->q_norm, hp->n_head, n);
    swa__norm_heads(c, c->k, L->k_norm, hp->n_kv_head, n);
    for (t = 0; t < n && turns; t++) {
        if (m->arch->has & SWA__ARCH_NEOX) {
            swa__rope_neox(c->q + t * qd, hp->n_head, hd, hp->n_rot, rope + t * hp->n_rot);
            swa__rope_neox(c->k + t * kvd, hp->n_kv_head, hd, hp->n_rot, rope + t * hp->n_rot);
        } else {
            c->kern.rope(c->q + t * qd, hp->n_head, hd, hp->n_rot, rope + t * hp->n_rot);
            c->kern.rope(c->k + t * kvd, hp->n_kv_head, hd, hp->n_rot, rope + t * hp->n_rot);
        }
    }
    if (m->qk_l2 && turns) {
        for (t = 0; t < n * hp->n_head; t++) c->kern.rmsnorm(c->q + t * hd, c->q + t * hd, m->ones, hd, hp->rms_eps);
        for (t = 0; t < n * hp->n_kv_head; t++) c->kern.rmsnorm(c->k + t * hd, c->k + t * hd, m->ones, hd, hp->rms_eps);
    }
    if ((m->arch->has & SWA__ARCH_TEMP_NOPE) && turns) return;
    for (t = 0; m->attn_temp != 0.0f && t < n; t++) {   /* llama.cpp's llm_graph_input_attn_temp */
        float f = logf(floorf(((float)c->tok_pos[t] + m->attn_temp_offset) / m->attn_temp_len) + 1.0f) * m->attn_temp + 1.0f;
        int64_t i;
        for (i = 0; i < qd; i++) c->q[t * qd + i] *= f;
    }
}

static void swa__add_range(swa_ctx *c, const void *arg, int64_t i0, int64_t i1)
{
    swa__add_ref(c->x + i0, (const float *)arg + i0, i1 - i0);
}

/* x += norm(y) for each token, or x += y without a (post-)norm. */
static void swa__residual(swa_ctx *c, float *y, const float *post_norm, int64_t n)
{
    int64_t d = c->model->hp.n_embd;
    swa__norm_rows(c, y, y, post_norm, d, n);
    swa__over(c, swa__add_range, y, n * d, 64, (double)(n * d));
}

/* gpt-oss's SwiGLU (ggml's swiglu_oai): the gate clamped above at 7, up to [-7, 7], then
   gate sigmoid(1.702 gate) (up + 1). */
static void swa__swiglu_oai(float *gate, const float *up, int64_t n)
{
    const float alpha = 1.702f, limit = 7.0f;
    int64_t i;
    for (i = 0; i < n; i++) {
        float x = gate[i] < limit ? gate[i] : limit, y = up[i] < -limit ? -limit : up[i] > limit ? limit : up[i];
        gate[i] = x / (1.0f + expf(alpha * -x)) * (y + 1.0f);
    }
}

static void swa__gate_act_range(swa_ctx *c, const void *arg, int64_t i0, int64_t i1)
{
    float *gate = c->gate + i0;
    const float *up = c->up + i0;
    int64_t i;
    (void)arg;
    if (c->model->arch->has & SWA__ARCH_GELU) c->kern.geglu(gate, up, i1 - i0);
    else if (c->model->arch->has & SWA__ARCH_OAI_FFN) swa__swiglu_oai(gate, up, i1 - i0);
    else if (c->model->arch->has & SWA__ARCH_RELU)
        for (i = 0; i < i1 - i0; i++) gate[i] = (gate[i] > 0.0f ? gate[i] : 0.0f) * up[i];
    else c->kern.swiglu(gate, up, i1 - i0);
}

/* c->gate = act(c->gate) * c->up over n values: SwiGLU, or GEGLU or gpt-oss's where the
   architecture says. */
static void swa__gate_act(swa_ctx *c, int64_t n)
{
    swa__over(c, swa__gate_act_range, NULL, n, 64, (double)n);
}

/* The gated feed-forward of n tokens (n_in wide, x_stride floats apart) through gate, up and
   down into y: the dense layers' MLP and each expert's, with the biases of gate, up and down
   where bias[k] is not NULL (gpt-oss's experts). */
static void swa__ffn(swa_ctx *c, const swa__matrix *gate, const swa__matrix *up, const swa__matrix *down,
                     const float *const bias[3], const float *x, float *y, int64_t n)
{
    int64_t d = c->model->hp.n_embd, ff = gate->n_out;
    swa__product gate_up[2];
    gate_up[0].w = gate, gate_up[0].y = c->gate, gate_up[0].ldy = ff;
    gate_up[1].w = up, gate_up[1].y = c->up, gate_up[1].ldy = ff;
    swa__matmuls(c, gate_up, 2, x, d, n);
    swa__add_bias(c->gate, bias[0], ff, n);
    swa__add_bias(c->up, bias[1], ff, n);
    swa__gate_act(c, n * ff);
    swa__matmul(c, down, c->gate, ff, y, d, n);
    swa__add_bias(y, bias[2], d, n);
}

/* Expert e's biases of gate, up and down, or NULLs. */
static void swa__expert_biases(const swa__layer *L, int64_t e, int64_t ff, int64_t d, const float *bias[3])
{
    bias[0] = L->gate_exps_b ? L->gate_exps_b + e * ff : NULL;
    bias[1] = L->up_exps_b ? L->up_exps_b + e * ff : NULL;
    bias[2] = L->down_exps_b ? L->down_exps_b + e * d : NULL;
}

/* An expert's input row: the token's normed state, or (WEIGHT_INPUT, Llama 4) that times the
   router's weight, which then counts as 1 in the sum. */
static void swa__expert_input(const swa_ctx *c, float *x, const float *xb, float *w)
{
    int64_t d = c->model->hp.n_embd, j;
    if (!(c->model->arch->has & SWA__ARCH_WEIGHT_INPUT)) {
        memcpy(x, xb, (size_t)d * sizeof(float));
        return;
    }
    for (j = 0; j < d; j++) x[j] = xb[j] * *w;
    *w = 1.0f;
}

/* The router's picks for one token: its logits (plus the router's bias) become probabilities
   by the model's gating rule, the n_expert_used most probable experts are picked, most probable
   first (a tie to the lower number, as a stable sort), and their weights are the probabilities,
   divided by their sum (at least 2^-14, llama.cpp's clamp) when the rule says so. A selection
   bias (sel, AFMoE's exp_probs_b) is added to the probabilities for the picking only. */
static void swa__route(const swa_model *m, float *logit, const float *bias, const float *sel, int32_t *pick, float *w)
{
    int64_t E = m->hp.n_expert, K = m->hp.n_expert_used, e, k, j;
    float max = -INFINITY, sum = 0.0f;
    for (e = 0; bias && e < E; e++) logit[e] += bias[e];
    if (m->gating == SWA__GATING_SOFTMAX) {
        for (e = 0; e < E; e++) max = logit[e] > max ? logit[e] : max;
        for (e = 0; e < E; e++) sum += logit[e] = expf(logit[e] - max);
        for (e = 0; e < E; e++) logit[e] /= sum;
    } else if (m->gating == SWA__GATING_SIGMOID) {
        for (e = 0; e < E; e++) logit[e] = 1.0f / (1.0f + expf(-logit[e]));
    }
    for (k = 0; k < K; k++) {
        int32_t best = -1;
        for (e = 0; e < E; e++) {
            for (j = 0; j < k && pick[j] != e; j++) {}
            if (j == k && (best < 0 || logit[e] + (sel ? sel[e] : 0.0f) > logit[best] + (sel ? sel[best] : 0.0f))) best = (int32_t)e;
        }
        pick[k] = best;
        w[k] = logit[best];
    }
    if (m->gating == SWA__GATING_SOFTMAX_WEIGHT) {   /* the picks are sorted: w[0] is the largest */
        for (max = w[0], sum = 0.0f, k = 0; k < K; k++) sum += w[k] = expf(w[k] - max);
        for (k = 0; k < K; k++) w[k] /= sum;
    }
    if (m->norm_weights) {
        for (sum = 0.0f, k = 0; k < K; k++) sum += w[k];
        if (sum < 6.103515625e-5f) sum = 6.103515625e-5f;
        for (k = 0; k < K; k++) w[k] /= sum;
    }
    for (k = 0; m->expert_scale != 1.0f && k < K; k++) w[k] *= m->expert_scale;
}

/* A mixture of experts on the chunk's normed tokens in c->xb, into c->moe_out. The router
   picks each token's experts; then each expert, in the order of their numbers, takes the
   chunk's tokens that picked it at once, through the same matrix products as a dense layer,
   so a prompt reads each picked expert's rows once and a token only its own experts'. Each
   token's output is the weighted sum of its experts' in the order of their numbers: the same
   additions whichever tokens share the chunk, so the logits do not depend on chunking or
   batching. */
/* One token's experts (a generated token's), with swa__moe's sum: taken in the order of their
   numbers, SWA__MOE_GROUP at a time, the group's gates and ups in one wake-up of the pool and
   its downs in another, rather than two wake-ups and two quantizations of the input for each
   expert. Each output row comes from the same kernel on the same input as in swa__moe. */
static void swa__moe_token(swa_ctx *c, const swa__layer *L)
{
    const swa_model *m = c->model;
    int64_t d = m->hp.n_embd, K = m->hp.n_expert_used, ff = m->hp.n_ff_exp, k0, i, j;
    int32_t *pick = c->pick;
    float *w = c->pick_w;
    for (i = 1; i < K; i++)   /* the picks in the order of the experts' numbers */
        for (j = i; j > 0 && pick[j - 1] > pick[j]; j--) {
            int32_t e = pick[j];
            float x = w[j];
            pick[j] = pick[j - 1], w[j] = w[j - 1];
            pick[j - 1] = e, w[j - 1] = x;
        }
    memset(c->moe_out, 0, (size_t)d * sizeof(float));
    for (k0 = 0; k0 < K; k0 += SWA__MOE_GROUP) {
        int g = K - k0 < SWA__MOE_GROUP ? (int)(K - k0) : SWA__MOE_GROUP, q;
        swa__matrix mats[3 * SWA__MOE_GROUP];
        swa__product gate_up[2 * SWA__MOE_GROUP], down[SWA__MOE_GROUP];
        for (q = 0; q < g; q++) {
            int64_t e = pick[k0 + q];
            mats[3 * q] = swa__rows_of(&L->gate_exps, e * ff, ff);
            mats[3 * q + 1] = swa__rows_of(&L->up_exps, e * ff, ff);
            mats[3 * q + 2] = swa__rows_of(&L->down_exps, e * d, d);
            gate_up[2 * q].w = &mats[3 * q], gate_up[2 * q].y = c->gate + q * ff, gate_up[2 * q].ldy = ff;
            gate_up[2 * q + 1].w = &mats[3 * q + 1], gate_up[2 * q + 1].y = c->up + q * ff, gate_up[2 * q + 1].ldy = ff;
            down[q].w = &mats[3 * q + 2], down[q].y = c->exp_y + q * d, down[q].ldy = d;
        }
        if (m->arch->has & SWA__ARCH_WEIGHT_INPUT) {   /* each expert its own input, gate and up alike */
            for (q = 0; q < 2 * g; q++) {
                float wq = w[k0 + q / 2];
                swa__expert_input(c, c->exp_x + q * d, c->xb, &wq);
            }
            for (q = 0; q < g; q++) w[k0 + q] = 1.0f;
            swa__matmul_each_row(c, gate_up, 2 * g, c->exp_x, d);
        } else {
            swa__matmuls(c, gate_up, 2 * g, c->xb, d, 1);
        }
        for (q = 0; q < g; q++) {
            const float *bias[3];
            swa__expert_biases(L, pick[k0 + q], ff, d, bias);
            swa__add_bias(c->gate + q * ff, bias[0], ff, 1);
            swa__add_bias(c->up + q * ff, bias[1], ff, 1);
        }
        swa__gate_act(c, g * ff);
        swa__matmul_each_row(c, down, g, c->gate, ff);
        for (q = 0; q < g; q++) {
            const float *bias[3];
            swa__expert_biases(L, pick[k0 + q], ff, d, bias);
            swa__add_bias(c->exp_y + q * d, bias[2], d, 1);
        }
        for (q = 0; q < g; q++)
            for (j = 0; j < d; j++) c->moe_out[j] += w[k0 + q] * c->exp_y[q * d + j];
    }
}

static void swa__moe(swa_ctx *c, const swa__layer *L, int64_t n)
{
    const swa_model *m = c->model;
    int64_t d = m->hp.n_embd, E = m->hp.n_expert, K = m->hp.n_expert_used, ff = m->hp.n_ff_exp, t, e, k, i, j;
    const float *bias[3];
    if (!(m->arch->has & SWA__ARCH_ROUTER_INPUT)) swa__matmul(c, &L->router, c->xb, d, c->router, E, n);
    for (t = 0; t < n; t++) swa__route(m, c->router + t * E, L->router_bias, L->select_bias, c->pick + t * K, c->pick_w + t * K);
    if (n == 1) {
        swa__moe_token(c, L);
        return;
    }
    memset(c->moe_out, 0, (size_t)(n * d) * sizeof(float));
    for (e = 0; e < E; e++) {
        swa__matrix gate = swa__rows_of(&L->gate_exps, e * ff, ff), up = swa__rows_of(&L->up_exps, e * ff, ff);
        swa__matrix down = swa__rows_of(&L->down_exps, e * d, d);
        int64_t count = 0;
        for (t = 0; t < n; t++)
            for (k = 0; k < K; k++)
                if (c->pick[t * K + k] == e) {
                    c->exp_tok[count] = (int32_t)t;
                    c->exp_w[count] = c->pick_w[t * K + k];
                    swa__expert_input(c, c->exp_x + count * d, c->xb + t * d, &c->exp_w[count]);
                    count++;
                }
        if (count == 0) continue;
        swa__expert_biases(L, e, ff, d, bias);
        swa__ffn(c, &gate, &up, &down, bias, c->exp_x, c->exp_y, count);
        for (i = 0; i < count; i++) {
            float *y = c->moe_out + c->exp_tok[i] * d, w = c->exp_w[i];
            const float *ye = c->exp_y + i * d;
            for (j = 0; j < d; j++) y[j] += w * ye[j];
        }
    }
}

/* The shared expert (Llama 4's; AFMoE's shared experts as one MLP), which every token of a
   mixture-of-experts layer goes through beside its routed ones: its output added to theirs in
   c->moe_out. */
static void swa__shared_expert(swa_ctx *c, const swa__layer *L, int64_t n)
{
    const float *none[3] = {NULL, NULL, NULL};
    if (!L->gate_shexp.data) return;
    swa__ffn(c, &L->gate_shexp, &L->up_shexp, &L->down_shexp, none, c->xb, c->exp_y, n);
    swa__add_ref(c->moe_out, c->exp_y, n * c->model->hp.n_embd);
}

/* The tokens whose state leaves the last layer (keep[t] nonzero) moved, in order, to the first
   rows of what the rest of the layer reads: the residual stream, the normed input (a parallel
   block's feed-forward reads it), the attention's output and (ROUTER_INPUT) the router's logits
   made from the layer's input. Returns how many. Every token's keys
   and values are made before this, so the cache and the other tokens' attention miss nothing. */
static int64_t swa__keep_rows(swa_ctx *c, const unsigned char *keep, int64_t n)
{
    int64_t d = c->model->hp.n_embd, qd = (int64_t)c->model->hp.n_head * c->model->hp.head_dim, t, k = 0;
    int64_t E = (c->model->arch->has & SWA__ARCH_ROUTER_INPUT) ? c->model->hp.n_expert : 0;   /* the router's logits too */
    for (t = 0; t < n; t++) {
        if (!keep[t]) continue;
        if (k < t) {
            if (E) memcpy(c->router + k * E, c->router + t * E, (size_t)E * sizeof(float));
            memcpy(c->x + k * d, c->x + t * d, (size_t)d * sizeof(float));
            memcpy(c->xb + k * d, c->xb + t * d, (size_t)d * sizeof(float));
            memcpy(c->att + k * qd, c->att + t * qd, (size_t)qd * sizeof(float));
        }
        k++;
    }
    return k;
}

/* AFMoE's gate: each of the attention's outputs times the sigmoid of attn_gate on the normed
   input (still in c->xb; the queries' c->q is free once attention is through). */
static void swa__attention_gate(swa_ctx *c, const swa__layer *L, int64_t n)
{
    int64_t qd = (int64_t)c->model->hp.n_head * c->model->hp.head_dim, i;
    swa__matmul(c, &L->attn_gate, c->xb, c->model->hp.n_embd, c->q, qd, n);
    for (i = 0; i < n * qd; i++) c->att[i] *= 1.0f / (1.0f + expf(-c->q[i]));
}

/* One layer, as its architecture's row describes it. A parallel block (Command R7B) feeds
   attention's input to the feed-forward too and adds the attention's output last, as llama.cpp
   sums them: (x + ffn) + attention. In the last layer (keep not NULL) only the tokens whose
   state leaves it go on past the attention (swa__keep_rows): with a prompt that asks for one
   token's logits, the last layer's feed-forward runs for that token alone, as llama.cpp's does. */
static void swa__layer_forward(swa_ctx *c, int64_t l, int64_t n, const unsigned char *keep)
{
    const swa_hparams *hp = &c->model->hp;
    const swa__layer *L = &c->model->layers[l];
    int64_t d = hp->n_embd, qd = (int64_t)hp->n_head * hp->head_dim;
    int parallel = (c->model->arch->has & SWA__ARCH_PARALLEL) != 0;
    const float *none[3] = {NULL, NULL, NULL};
    if (L->router.data && (c->model->arch->has & SWA__ARCH_ROUTER_INPUT)) swa__matmul(c, &L->router, c->x, d, c->router, hp->n_expert, n);
    swa__norm_rows(c, c->xb, c->x, L->attn_norm, d, n);
    swa__qkv(c, l, n);
    swa__chunk_to_cache_type(c, l, n);
    swa__attention(c, l, n);
    if (keep && (n = swa__keep_rows(c, keep, n)) == 0) return;
    if (L->attn_gate.data) swa__attention_gate(c, L, n);
    if (!parallel) {
        swa__matmul(c, &L->wo, c->att, qd, c->xb, d, n);
        swa__add_bias(c->xb, L->bo, d, n);
        swa__residual(c, c->xb, L->attn_post_norm, n);
        swa__norm_rows(c, c->xb, c->x, L->ffn_norm, d, n);
    }
    if (L->router.data) {
        swa__moe(c, L, n);
        swa__shared_expert(c, L, n);
        swa__residual(c, c->moe_out, L->ffn_post_norm, n);
    } else {
        swa__ffn(c, &L->w_gate, &L->w_up, &L->w_down, none, c->xb, c->xb, n);
        swa__residual(c, c->xb, L->ffn_post_norm, n);
    }
    if (parallel) {
        swa__matmul(c, &L->wo, c->att, qd, c->xb, d, n);
        swa__add_bias(c->xb, L->bo, d, n);
        swa__residual(c, c->xb, L->attn_post_norm, n);
    }
}

/* One evaluation: tokens of one or more sequences, what to return for them. */
static swa_status swa__check_seq(const swa_ctx *c, int32_t seq, const char *what, swa_error *err)
{
    if (!c) return swa__fail(err, SWA_ERR_INVALID_ARG, "%s: context is NULL", what);
    if (seq < 0 || seq >= c->cfg.n_seq)
        return swa__fail(err, SWA_ERR_INVALID_ARG, "%s: sequence %d is out of range 0..%d", what, seq, c->cfg.n_seq - 1);
    return SWA_OK;
}

typedef struct swa__job {
    const int32_t *token;      /* [n] */
    const int32_t *seq;        /* [n]; NULL: all sequence seq0 */
    int32_t seq0;
    const int8_t *want;        /* [n] nonzero: the token wants logits; NULL: each sequence's last */
    int want_all;              /* every token wants logits */
    size_t n;
    float *logits;             /* one row per token that wants logits, in batch order; or NULL */
    float *embed;              /* [n_embd] the pooled final hidden state, when asked for */
    int32_t pooling;           /* SWA_POOL_LAST or SWA_POOL_MEAN */
} swa__job;

static int32_t swa__job_seq(const swa__job *job, size_t i) { return job->seq ? job->seq[i] : job->seq0; }

static int swa__job_wants(const swa_ctx *c, const swa__job *job, size_t i)
{
    return job->want_all || (job->want ? job->want[i] != 0 : c->seq_last[swa__job_seq(job, i)] == (int64_t)i);
}

/* The chunk of batch tokens k0 .. k0+n-1, grouped by sequence (a stable insertion sort: a chunk
   is short, and in generation already in order), each token with its position and where its
   logits go. *rank counts the logits rows taken so far. */
static void swa__chunk_tokens(swa_ctx *c, const swa__job *job, size_t k0, int64_t n, size_t *rank)
{
    int64_t t, u;
    for (t = 0; t < n; t++) {
        size_t i = k0 + (size_t)t;
        int wants = swa__job_wants(c, job, i);
        float *out = wants && job->logits ? job->logits + *rank * (size_t)c->model->hp.n_vocab : NULL;
        int32_t s = swa__job_seq(job, i);
        *rank += (size_t)wants;
        for (u = t; u > 0 && c->tok_seq[u - 1] > s; u--) {
            c->tok_index[u] = c->tok_index[u - 1];
            c->tok_seq[u] = c->tok_seq[u - 1];
            c->tok_out[u] = c->tok_out[u - 1];
        }
        c->tok_index[u] = i;
        c->tok_seq[u] = s;
        c->tok_out[u] = out;
    }
    for (t = 0; t < n; t++) {
        c->tok_first[t] = t > 0 && c->tok_seq[t - 1] == c->tok_seq[t] ? c->tok_first[t - 1] : t;
        c->tok_pos[t] = c->seq[c->tok_seq[t]].pos + (t - c->tok_first[t]);
    }
}

/* The final norm of the chunk's tokens that ask for logits, then the output matrix (and the
   logit scale and final soft-cap), over each run of them whose logits rows follow one another
   in the caller's array at once. The kept tokens' states are c->x's first rows, in order. */
static void swa__chunk_logits(swa_ctx *c, int64_t n)
{
    const swa_model *m = c->model;
    int64_t d = m->hp.n_embd, V = m->hp.n_vocab, t, i, run = 0, row = 0;
    float *first = NULL;
    for (t = 0; t <= n; t++) {
        float *out = t < n ? c->tok_out[t] : NULL;
        row += t > 0 && c->tok_keep[t - 1];
        if (run > 0 && (!out || out != first + run * V)) {
            swa__matmul(c, &m->output, c->xb, d, first, V, run);
            for (i = 0; m->logit_scale != 1.0f && i < run * V; i++) first[i] *= m->logit_scale;
            if (m->final_softcap > 0.0f) swa__softcap(first, run * V, m->final_softcap);
            run = 0;
        }
        if (!out) continue;
        if (run == 0) first = out;
        swa__norm_rows(c, c->xb + run * d, c->x + row * d, m->output_norm, d, 1);
        run++;
    }
}

/* Embeddings: the final hidden state, normed, of the job's last token or summed over all. */
static void swa__chunk_embed(swa_ctx *c, const swa__job *job, int64_t n)
{
    const swa_model *m = c->model;
    int64_t d = m->hp.n_embd, t, i, row = 0;
    for (t = 0; t < n; t++) {
        if (!c->tok_keep[t]) continue;
        swa__norm_rows(c, c->xb, c->x + row++ * d, m->output_norm, d, 1);
        for (i = 0; i < d; i++) job->embed[i] = job->pooling == SWA_POOL_MEAN ? job->embed[i] + c->xb[i] : c->xb[i];
    }
}

/* One chunk of n <= n_batch tokens, set up by swa__chunk_tokens. The abort callback is asked
   before each layer and before the output layer (with a large vocabulary the longest step); an
   aborted chunk has written nothing into the rings and moved no sequence. */
static swa_status swa__forward_chunk(swa_ctx *c, const swa__job *job, int64_t n, swa_error *err)
{
    const swa_model *m = c->model;
    int64_t d = m->hp.n_embd, t, l;
    for (t = 0; t < n; t++) {
        int32_t token = job->token[c->tok_index[t]];
        swa__dequant_row_ref(m->tok_embd.type, (const uint8_t *)m->tok_embd.data + (size_t)token * m->tok_embd.row_bytes,
                             c->x + t * d, d);
    }
    if (m->arch->has & SWA__ARCH_EMBD_SCALE) {
        float scale = sqrtf((float)d);
        for (t = 0; t < n * d; t++) c->x[t] *= scale;
    }
    for (t = 0; t < n; t++)
        c->tok_keep[t] = c->tok_out[t] || (job->embed && (job->pooling == SWA_POOL_MEAN || c->tok_index[t] + 1 == job->n));
    swa__rope_table(c, n);
    for (l = 0; l <= m->hp.n_layer; l++) {   /* asked once more before the output layer */
        if (c->abort && c->abort(c->abort_data))
            return swa__fail(err, SWA_ERR_ABORTED, "evaluation aborted by the callback before %s %lld",
                             l < m->hp.n_layer ? "layer" : "the output, after layer", (long long)(l < m->hp.n_layer ? l : l - 1));
        if (l < m->hp.n_layer) swa__layer_forward(c, l, n, l + 1 == m->hp.n_layer ? c->tok_keep : NULL);
    }
    swa__cache_write(c, n);
    for (t = 0; t < n; t++) {
        swa__seq *q = &c->seq[c->tok_seq[t]];
        q->pos = c->tok_pos[t] + 1;
        if (q->written < q->pos) q->written = q->pos;
    }
    if (job->embed) swa__chunk_embed(c, job, n);
    swa__chunk_logits(c, n);
    return SWA_OK;
}

/* Check the job, then run it in chunks of n_batch tokens in batch order. Nothing is allocated:
   evaluation after swa_ctx_create never calls SWA_MALLOC. */
static swa_status swa__run_job(swa_ctx *c, const swa__job *job, swa_error *err)
{
    int64_t V = c->model->hp.n_vocab, nb = c->cfg.n_batch;
    int32_t n_seq = c->cfg.n_seq, s;
    size_t i, k0, rank = 0;
    swa_status st = SWA_OK;
    if (!job->n) return swa__fail(err, SWA_ERR_INVALID_ARG, "eval: no tokens");
    memset(c->seq_count, 0, (size_t)n_seq * sizeof(int64_t));
    for (i = 0; i < job->n; i++) {
        s = swa__job_seq(job, i);
        if (job->token[i] < 0 || job->token[i] >= V)
            return swa__fail(err, SWA_ERR_INVALID_ARG, "token %d (at index %llu) is out of range 0..%lld",
                             job->token[i], (unsigned long long)i, (long long)(V - 1));
        if (s < 0 || s >= n_seq)
            return swa__fail(err, SWA_ERR_INVALID_ARG, "sequence %d (at index %llu) is out of range 0..%d",
                             s, (unsigned long long)i, n_seq - 1);
        c->seq_count[s]++;
        c->seq_last[s] = (int64_t)i;
    }
    for (s = 0; (c->model->arch->has & SWA__ARCH_BIDIRECTIONAL) && s < n_seq; s++)
        if (c->seq_count[s] > 0 && (c->seq[s].pos > 0 || job->n > (size_t)nb))
            return swa__fail(err, SWA_ERR_INVALID_ARG,
                             "a %s model reads a text whole (its keys on both sides): evaluate it at once from position 0 "
                             "(sequence %d is at %lld; %llu tokens, n_batch %lld), as swa_ctx_embed does", c->model->arch->name,
                             s, (long long)c->seq[s].pos, (unsigned long long)job->n, (long long)nb);
    for (s = 0; s < n_seq; s++)
        if ((uint64_t)c->seq_count[s] > (uint64_t)(c->max_pos - c->seq[s].pos))
            return swa__fail(err, SWA_ERR_CONTEXT_FULL,
                             "%lld tokens at position %lld exceed the %lld positions a full-attention layer keeps "
                             "(raise n_ctx or set a window)", (long long)c->seq_count[s], (long long)c->seq[s].pos,
                             (long long)c->max_pos);
    if (job->embed) memset(job->embed, 0, (size_t)c->model->hp.n_embd * sizeof(float));
    for (k0 = 0; k0 < job->n && st == SWA_OK; k0 += (size_t)nb) {
        int64_t len = (int64_t)(job->n - k0) < nb ? (int64_t)(job->n - k0) : nb;
        swa__chunk_tokens(c, job, k0, len, &rank);
        st = swa__forward_chunk(c, job, len, err);
    }
    if (st == SWA_OK) swa__ok(err);
    return st;
}

/* Tokens of one sequence: logits of the last into c->logits, or of all into all_logits; or an
   embedding. */
static swa_status swa__eval(swa_ctx *c, int32_t seq, const int32_t *tokens, size_t n, float *all_logits, float *embed,
                            int32_t pooling, swa_error *err)
{
    swa__job job;
    if (!c || !tokens || n == 0)
        return swa__fail(err, SWA_ERR_INVALID_ARG, "eval: %s", !c ? "context is NULL" : !tokens ? "tokens is NULL" : "no tokens");
    memset(&job, 0, sizeof job);
    job.token = tokens;
    job.seq0 = seq;
    job.n = n;
    job.want_all = all_logits != NULL;
    job.logits = all_logits ? all_logits : embed ? NULL : c->logits;
    job.embed = embed;
    job.pooling = pooling;
    return swa__run_job(c, &job, err);
}

SWADEF swa_status swa_ctx_eval(swa_ctx *c, const int32_t *tokens, size_t n, const float **logits, swa_error *err)
{
    swa_status s = swa__eval(c, 0, tokens, n, NULL, NULL, 0, err);
    if (logits) *logits = s == SWA_OK ? c->logits : NULL;
    return s;
}

SWADEF swa_status swa_ctx_eval_all(swa_ctx *c, const int32_t *tokens, size_t n, float *logits, swa_error *err)
{
    if (!logits) return swa__fail(err, SWA_ERR_INVALID_ARG, "swa_ctx_eval_all: logits is NULL");
    return swa__eval(c, 0, tokens, n, logits, NULL, 0, err);
}

SWADEF swa_status swa_ctx_embed(swa_ctx *c, int32_t seq, const int32_t *tokens, size_t n, int32_t pooling,
                                int32_t normalize, float *out, swa_error *err)
{
    int64_t d, i, pos, written;
    double sum = 0.0;
    swa_status s;
    if ((s = swa__check_seq(c, seq, "swa_ctx_embed", err)) != SWA_OK) return s;
    if (!out || (pooling != SWA_POOL_LAST && pooling != SWA_POOL_MEAN))
        return swa__fail(err, SWA_ERR_INVALID_ARG, "swa_ctx_embed: %s", !out ? "out is NULL" : "pooling is not SWA_POOL_*");
    pos = c->seq[seq].pos;   /* the text from position 0; the sequence's old tokens stay until a */
    written = c->seq[seq].written;   /* chunk of the new ones is through */
    c->seq[seq].pos = c->seq[seq].written = 0;
    if ((s = swa__eval(c, seq, tokens, n, NULL, out, pooling, err)) != SWA_OK) {
        if (c->seq[seq].pos == 0) {
            c->seq[seq].pos = pos;
            c->seq[seq].written = written;
        }
        return s;
    }
    d = c->model->hp.n_embd;
    for (i = 0; pooling == SWA_POOL_MEAN && i < d; i++) out[i] /= (float)n;
    if (c->model->n_dense) {   /* EmbeddingGemma's projections of the pooled state, as llama.cpp's build_dense_out */
        swa__matmul(c, &c->model->dense_2, out, d, c->gate, c->model->n_dense, 1);
        swa__matmul(c, &c->model->dense_3, c->gate, c->model->n_dense, out, d, 1);
    }
    for (i = 0; i < d; i++) sum += (double)out[i] * out[i];
    for (i = 0; normalize && sum > 0.0 && i < d; i++) out[i] = (float)(out[i] / sqrt(sum));
    return SWA_OK;
}

SWADEF swa_status swa_ctx_decode(swa_ctx *c, const swa_batch *b, float *logits, swa_error *err)
{
    swa__job job;
    if (!c || !b || !b->token || b->n == 0)
        return swa__fail(err, SWA_ERR_INVALID_ARG, "swa_ctx_decode: %s",
                         !c ? "context is NULL" : !b ? "batch is NULL" : !b->token ? "batch.token is NULL" : "no tokens");
    memset(&job, 0, sizeof job);
    job.token = b->token;
    job.seq = b->seq;
    job.want = b->logits;
    job.n = b->n;
    job.logits = logits;
    return swa__run_job(c, &job, err);
}

/* ==== sequences, snapshots and control ==== */

/* Rows [seq * S, (seq + 1) * S) of layer l's keys or values. */
static uint8_t *swa__ring(const swa_ctx *c, uint8_t *const *cache, int64_t l, int32_t seq)
{
    return cache[l] + (size_t)(seq * c->n_slots[l]) * c->kv_row;
}

/* For tests: sequence seq at position pos, as if pos tokens had been evaluated whose keys its
   rings have since dropped, so that far positions are reached without evaluating up to them. */
SWA__INTERNAL void swa__seq_jump(swa_ctx *c, int32_t seq, int64_t pos)
{
    c->seq[seq].pos = c->seq[seq].written = pos;
}

SWADEF int64_t swa_seq_pos(const swa_ctx *c, int32_t seq)
{
    return swa__check_seq(c, seq, "swa_seq_pos", NULL) == SWA_OK ? c->seq[seq].pos : -1;
}

SWADEF swa_status swa_seq_reset(swa_ctx *c, int32_t seq, swa_error *err)
{
    swa_status s = swa__check_seq(c, seq, "swa_seq_reset", err);
    if (s != SWA_OK) return s;
    c->seq[seq].pos = c->seq[seq].written = 0;
    swa__ok(err);
    return SWA_OK;
}

SWADEF swa_status swa_seq_copy(swa_ctx *c, int32_t src, int32_t dst, swa_error *err)
{
    swa_status s;
    int64_t l;
    if ((s = swa__check_seq(c, src, "swa_seq_copy", err)) != SWA_OK || (s = swa__check_seq(c, dst, "swa_seq_copy", err)) != SWA_OK)
        return s;
    if (src != dst)
        for (l = 0; l < c->model->hp.n_layer; l++) {
            size_t bytes = (size_t)c->n_slots[l] * c->kv_row;
            memcpy(swa__ring(c, c->k_cache, l, dst), swa__ring(c, c->k_cache, l, src), bytes);
            memcpy(swa__ring(c, c->v_cache, l, dst), swa__ring(c, c->v_cache, l, src), bytes);
        }
    c->seq[dst] = c->seq[src];
    swa__ok(err);
    return SWA_OK;
}

/* The earliest position a sequence can go back to: a token at position p needs the keys of
   p - W + 1 .. p - 1 in a windowed layer (W: swa__recent), and a ring of S slots holds
   written - S .. written - 1 (with attention sinks, the ring is what the sinks leave). A
   full-attention layer holds every position below n_ctx. */
static int64_t swa__rewind_floor(const swa_ctx *c, int32_t seq)
{
    int64_t floor = 0, written = c->seq[seq].written, l;
    for (l = 0; l < c->model->hp.n_layer; l++) {
        int64_t W = swa__recent(c, l), sinks = c->window[l] == 0 ? c->cfg.n_sink : 0;
        int64_t oldest = written - (c->n_slots[l] - sinks);
        if (W > 0 && oldest > sinks && oldest + W - 1 > floor) floor = oldest + W - 1;
    }
    return floor;
}

SWADEF int64_t swa_seq_max_rewind(const swa_ctx *c, int32_t seq)
{
    int64_t floor;
    if (swa__check_seq(c, seq, "swa_seq_max_rewind", NULL) != SWA_OK) return -1;
    floor = swa__rewind_floor(c, seq);
    return c->seq[seq].pos > floor ? c->seq[seq].pos - floor : 0;
}

SWADEF swa_status swa_seq_rewind(swa_ctx *c, int32_t seq, int64_t n, swa_error *err)
{
    int64_t most;
    swa_status s = swa__check_seq(c, seq, "swa_seq_rewind", err);
    if (s != SWA_OK) return s;
    most = swa_seq_max_rewind(c, seq);
    if (n < 0 || n > most)
        return swa__fail(err, SWA_ERR_INVALID_ARG,
                         "cannot rewind sequence %d by %lld tokens: at position %lld it can go back %lld "
                         "(the rings keep n_rewind = %d slots beyond the window)",
                         seq, (long long)n, (long long)c->seq[seq].pos, (long long)most, c->cfg.n_rewind);
    c->seq[seq].pos -= n;
    swa__ok(err);
    return SWA_OK;
}

/* ---- snapshots ----
   Layout, in the machine's byte order: "SWAS", u32 version, u64 model checksum, u32 n_layer,
   u32 kv_type, u64 bytes per cached row, u32 sequences; i64 slots per layer; then per sequence
   (in increasing order) i32 id, i64 pos, i64 written and per layer its first min(written, slots)
   rows of keys, then of values (a ring not yet full holds position p in slot p); last, the
   XXH64 of every byte before it. Loading checks all of it before it changes anything. */
#define SWA__STATE_MAGIC "SWAS"
#define SWA__STATE_VERSION 2u

typedef struct swa__sink {      /* a caller's buffer, a file, or neither: then it only counts */
    uint8_t *buf;
    size_t cap, used;
    int failed, hashing;
    swa__xxh64 sum;             /* of what was put, when hashing */
#ifndef SWA_NO_STDIO
    int to_file;
    swa__fd fd;
    size_t n_pend;              /* small pieces gathered into one write */
    uint8_t pend[4096];
    char why[256];              /* the system's reason when a write failed */
#endif
} swa__sink;

#ifndef SWA_NO_STDIO
static void swa__sink_flush(swa__sink *o)
{
    if (!o->failed && o->n_pend && swa__fd_write(o->fd, o->pend, o->n_pend, o->why, sizeof o->why) != 0) o->failed = 1;
    o->n_pend = 0;
}
#endif

static void swa__put(swa__sink *o, const void *p, size_t n)
{
    if (o->hashing) swa__xxh64_update(&o->sum, p, n);
#ifndef SWA_NO_STDIO
    if (o->to_file) {
        if (o->n_pend + n > sizeof o->pend) swa__sink_flush(o);
        if (n >= sizeof o->pend) {
            if (!o->failed && swa__fd_write(o->fd, (const uint8_t *)p, n, o->why, sizeof o->why) != 0) o->failed = 1;
        } else {
            memcpy(o->pend + o->n_pend, p, n);
            o->n_pend += n;
        }
    } else
#endif
    if (o->buf && n <= o->cap - o->used) {
        memcpy(o->buf + o->used, p, n);
    } else if (o->buf) {
        o->failed = 1;
    }
    o->used += n;
}

static void swa__put_u32(swa__sink *o, uint32_t v) { swa__put(o, &v, sizeof v); }
static void swa__put_u64(swa__sink *o, uint64_t v) { swa__put(o, &v, sizeof v); }

static int64_t swa__ring_rows(const swa_ctx *c, int64_t l, int32_t seq)
{
    return c->seq[seq].written < c->n_slots[l] ? c->seq[seq].written : c->n_slots[l];
}

/* Sequence seq, or all of them (-1). Counting only, it skips the checksum's work. */
static void swa__state_write(const swa_ctx *c, int32_t seq, swa__sink *o)
{
    int32_t first = seq < 0 ? 0 : seq, last = seq < 0 ? c->cfg.n_seq - 1 : seq, s;
    int64_t l;
    o->hashing = o->buf != NULL;
#ifndef SWA_NO_STDIO
    o->hashing |= o->to_file;
#endif
    swa__xxh64_init(&o->sum);
    swa__put(o, SWA__STATE_MAGIC, 4);
    swa__put_u32(o, SWA__STATE_VERSION);
    swa__put_u64(o, c->model_sum);
    swa__put_u32(o, (uint32_t)c->model->hp.n_layer);
    swa__put_u32(o, (uint32_t)c->kv_type);
    swa__put_u64(o, (uint64_t)c->kv_row);
    swa__put_u32(o, (uint32_t)(last - first + 1));
    for (l = 0; l < c->model->hp.n_layer; l++) swa__put_u64(o, (uint64_t)c->n_slots[l]);
    for (s = first; s <= last; s++) {
        swa__put_u32(o, (uint32_t)s);
        swa__put_u64(o, (uint64_t)c->seq[s].pos);
        swa__put_u64(o, (uint64_t)c->seq[s].written);
        for (l = 0; l < c->model->hp.n_layer; l++) {
            size_t bytes = (size_t)swa__ring_rows(c, l, s) * c->kv_row;
            swa__put(o, swa__ring(c, c->k_cache, l, s), bytes);
            swa__put(o, swa__ring(c, c->v_cache, l, s), bytes);
        }
    }
    swa__put_u64(o, o->hashing ? swa__xxh64_final(&o->sum) : 0);
}

SWADEF size_t swa_state_size(const swa_ctx *c, int32_t seq)
{
    swa__sink o;
    if (!c || seq < -1 || seq >= c->cfg.n_seq) return 0;
    memset(&o, 0, sizeof o);
    swa__state_write(c, seq, &o);
    return o.used;
}

SWADEF swa_status swa_state_save(const swa_ctx *c, int32_t seq, void *buf, size_t size, size_t *written, swa_error *err)
{
    swa__sink o;
    size_t need = swa_state_size(c, seq);
    if (written) *written = need;
    if (!c || !need) return swa__fail(err, SWA_ERR_INVALID_ARG, "swa_state_save: %s", !c ? "context is NULL" : "bad sequence");
    if (!buf || size < need)
        return swa__fail(err, SWA_ERR_BUFFER_TOO_SMALL, "a snapshot needs %llu bytes, the buffer has %llu",
                         (unsigned long long)need, (unsigned long long)(buf ? size : 0));
    memset(&o, 0, sizeof o);
    o.buf = (uint8_t *)buf;
    o.cap = size;
    swa__state_write(c, seq, &o);
    swa__ok(err);
    return SWA_OK;
}

typedef struct swa__source {    /* the snapshot's bytes, read in order */
    const uint8_t *buf;
    size_t size, pos;
} swa__source;

/* The next n bytes into p, or past them when p is NULL; 0 when fewer are left. */
static int swa__get(swa__source *in, void *p, size_t n)
{
    if (n > in->size - in->pos) return 0;
    if (p) memcpy(p, in->buf + in->pos, n);
    in->pos += n;
    return 1;
}

static swa_status swa__truncated(swa_error *err)
{
    return swa__fail(err, SWA_ERR_FORMAT, "the snapshot is truncated");
}

/* The sequences of a snapshot, after its header: checked (apply = 0, nothing changes), or
   restored into `seq`, or into those they name when seq = -1 (apply = 1, after a check). */
static swa_status swa__state_seqs(swa_ctx *c, int32_t seq, uint32_t count, swa__source *in, int apply, swa_error *err)
{
    uint32_t id, i;
    uint64_t pos, written;
    int64_t l, prev = -1;
    for (i = 0; i < count; i++) {
        int32_t s;
        if (!swa__get(in, &id, 4) || !swa__get(in, &pos, 8) || !swa__get(in, &written, 8)) return swa__truncated(err);
        if (seq < 0 && id >= (uint32_t)c->cfg.n_seq)
            return swa__fail(err, SWA_ERR_INVALID_ARG, "the snapshot holds sequence %u; this context has %d", id, c->cfg.n_seq);
        if ((int64_t)id <= prev) return swa__fail(err, SWA_ERR_FORMAT, "the snapshot's sequences are out of order at %u", id);
        if (pos > written || written > (uint64_t)c->max_pos)
            return swa__fail(err, SWA_ERR_FORMAT, "the snapshot's sequence %u is at position %llu of %llu written", id,
                             (unsigned long long)pos, (unsigned long long)written);
        prev = (int64_t)id;
        s = seq >= 0 ? seq : (int32_t)id;
        for (l = 0; l < c->model->hp.n_layer; l++) {
            size_t bytes = (size_t)((int64_t)written < c->n_slots[l] ? (int64_t)written : c->n_slots[l]) * c->kv_row;
            if (!swa__get(in, apply ? swa__ring(c, c->k_cache, l, s) : NULL, bytes) ||
                !swa__get(in, apply ? swa__ring(c, c->v_cache, l, s) : NULL, bytes))
                return swa__truncated(err);
        }
        if (apply) {
            c->seq[s].pos = (int64_t)pos;
            c->seq[s].written = (int64_t)written;
        }
    }
    if (in->pos != in->size)
        return swa__fail(err, SWA_ERR_FORMAT, "%llu bytes follow the snapshot", (unsigned long long)(in->size - in->pos));
    return SWA_OK;
}

/* Check a snapshot whole, checksum first, then restore it: into sequence seq (a one-sequence
   snapshot), or into the sequences it names (seq = -1, the others reset). The restoring pass
   repeats the checked one and cannot fail, so an error leaves every sequence as it was. */
static swa_status swa__state_read(swa_ctx *c, int32_t seq, const uint8_t *buf, size_t size, swa_error *err)
{
    swa__source in;
    char magic[4];
    uint32_t version, n_layer, kv_type, count;
    uint64_t sum, kv_row, v, stored;
    int64_t l;
    int apply;
    swa_status s;
    if (size < 4 || memcmp(buf, SWA__STATE_MAGIC, 4) != 0) return swa__fail(err, SWA_ERR_FORMAT, "not a swa.h snapshot");
    if (size < 8) return swa__truncated(err);
    memcpy(&version, buf + 4, 4);
    if (version != SWA__STATE_VERSION)
        return swa__fail(err, SWA_ERR_FORMAT, "snapshot version %u; this build reads version %u", version, SWA__STATE_VERSION);
    if (size < 16) return swa__truncated(err);
    memcpy(&stored, buf + size - 8, 8);
    if (swa__xxh64_of(buf, size - 8, 0) != stored)
        return swa__fail(err, SWA_ERR_FORMAT, "the snapshot is damaged or truncated: its %llu bytes do not match their "
                         "checksum", (unsigned long long)size);
    for (apply = 0; apply < 2; apply++) {
        memset(&in, 0, sizeof in);
        in.buf = buf;
        in.size = size - 8;
        if (!swa__get(&in, magic, 4) || !swa__get(&in, &version, 4) || !swa__get(&in, &sum, 8) ||
            !swa__get(&in, &n_layer, 4) || !swa__get(&in, &kv_type, 4) || !swa__get(&in, &kv_row, 8) ||
            !swa__get(&in, &count, 4))
            return swa__truncated(err);
        if (sum != c->model_sum || n_layer != (uint32_t)c->model->hp.n_layer)
            return swa__fail(err, SWA_ERR_INVALID_ARG, "the snapshot is of another model (metadata checksum %016llx, this "
                             "model %016llx)", (unsigned long long)sum, (unsigned long long)c->model_sum);
        if (kv_type != (uint32_t)c->kv_type || kv_row != (uint64_t)c->kv_row)
            return swa__fail(err, SWA_ERR_INVALID_ARG, "the snapshot's cache type is %s, this context's %s",
                             swa_kv_type_name((int32_t)(kv_type < SWA__N_KV_TYPES ? kv_type : 0)), swa_kv_type_name(c->kv_type));
        for (l = 0; l < c->model->hp.n_layer; l++) {
            if (!swa__get(&in, &v, 8)) return swa__truncated(err);
            if (v != (uint64_t)c->n_slots[l])
                return swa__fail(err, SWA_ERR_INVALID_ARG, "layer %lld keeps %llu positions in the snapshot and %lld in this "
                                 "context (the window, n_rewind or n_ctx differ)", (long long)l, (unsigned long long)v,
                                 (long long)c->n_slots[l]);
        }
        if (count == 0 || (seq >= 0 && count != 1) || count > (uint32_t)c->cfg.n_seq)
            return swa__fail(err, SWA_ERR_INVALID_ARG, "the snapshot holds %u sequences: too many for %s", count,
                             seq >= 0 ? "one sequence" : "this context");
        if (apply && seq < 0) swa_ctx_reset(c);
        if ((s = swa__state_seqs(c, seq, count, &in, apply, err)) != SWA_OK) return s;
    }
    swa__ok(err);
    return SWA_OK;
}

SWADEF swa_status swa_state_load(swa_ctx *c, int32_t seq, const void *buf, size_t size, swa_error *err)
{
    if (!c || !buf || seq < -1 || seq >= c->cfg.n_seq)
        return swa__fail(err, SWA_ERR_INVALID_ARG, "swa_state_load: %s", !c ? "context is NULL" : !buf ? "buf is NULL" : "bad sequence");
    return swa__state_read(c, seq, (const uint8_t *)buf, size, err);
}

#ifndef SWA_NO_STDIO
/* Write `path`'s new contents to path.PID-N.tmp (unique, so that concurrent saves do not
   meet), flush it to the disk and only then put it in place of `path`. */
SWADEF swa_status swa_state_save_file(const swa_ctx *c, int32_t seq, const char *path, swa_error *err)
{
    static int64_t serial;
    swa__sink *o;
    char *tmp;
    size_t len;
    swa_status s = SWA_OK;
    if (!c || !path || !swa_state_size(c, seq))
        return swa__fail(err, SWA_ERR_INVALID_ARG, "swa_state_save_file: %s", !c ? "context is NULL" : !path ? "path is NULL" : "bad sequence");
    len = strlen(path) + 48;
    o = (swa__sink *)SWA_MALLOC(sizeof *o);
    tmp = (char *)SWA_MALLOC(len);
    if (!o || !tmp) {
        SWA_FREE(o);
        SWA_FREE(tmp);
        return swa__fail(err, SWA_ERR_NOMEM, "%s: cannot allocate %llu bytes", path, (unsigned long long)(sizeof *o + len));
    }
    snprintf(tmp, len, "%s.%lu-%lld.tmp", path, swa__process_id(), (long long)swa__fetch_inc_i64(&serial));
    memset(o, 0, sizeof *o);
    o->to_file = 1;
    if (swa__fd_create(tmp, &o->fd, o->why, sizeof o->why) != 0) {
        s = swa__fail(err, SWA_ERR_IO, "%s: cannot create: %s", tmp, o->why);
    } else {
        swa__state_write(c, seq, o);
        swa__sink_flush(o);
        if (swa__fd_finish(o->fd, o->why, sizeof o->why) != 0) o->failed = 1;
        if (o->failed || swa__replace_file(tmp, path, o->why, sizeof o->why) != 0) {
            s = swa__fail(err, SWA_ERR_IO, "%s: cannot write the snapshot: %s", path, o->why);
            remove(tmp);
        }
    }
    SWA_FREE(o);
    SWA_FREE(tmp);
    if (s == SWA_OK) swa__ok(err);
    return s;
}

/* The file is read whole (a snapshot's size is set by the window) and checked as a buffer. */
SWADEF swa_status swa_state_load_file(swa_ctx *c, int32_t seq, const char *path, swa_error *err)
{
    swa__fd fd;
    uint64_t size, got;
    uint8_t *buf;
    swa_status s;
    if (!c || !path || seq < -1 || seq >= c->cfg.n_seq)
        return swa__fail(err, SWA_ERR_INVALID_ARG, "swa_state_load_file: %s", !c ? "context is NULL" : !path ? "path is NULL" : "bad sequence");
    if ((s = swa__fd_open(path, &fd, &size, err)) != SWA_OK) return s;
    if (size > (uint64_t)SIZE_MAX - 1 || !(buf = (uint8_t *)SWA_MALLOC((size_t)size + 1))) {
        swa__fd_close(fd);
        return swa__fail(err, SWA_ERR_NOMEM, "%s: cannot allocate %llu bytes to read it", path, (unsigned long long)size);
    }
    if (swa__fd_read(fd, buf, size, &got) != 0) s = swa__fail(err, SWA_ERR_IO, "%s: read %llu of %llu bytes", path,
                                                                (unsigned long long)got, (unsigned long long)size);
    swa__fd_close(fd);
    if (s == SWA_OK) s = swa__state_read(c, seq, buf, (size_t)size, err);
    SWA_FREE(buf);
    if (s != SWA_OK) swa__prefix_error(err, path);
    return s;
}
#endif /* SWA_NO_STDIO */

SWADEF void swa_ctx_set_abort(swa_ctx *c, swa_abort_fn fn, void *data)
{
    c->abort = fn;
    c->abort_data = data;
}

SWADEF swa_status swa_ctx_set_threads(swa_ctx *c, int32_t n_threads, swa_error *err)
{
    swa_status s;
    if (!c || n_threads < 0 || n_threads > SWA__MAX_THREADS)
        return swa__fail(err, SWA_ERR_INVALID_ARG, "swa_ctx_set_threads: %s", !c ? "context is NULL" : "threads out of 0..256");
    if (!n_threads) n_threads = swa__online_cpus();
    if (n_threads != c->cfg.n_threads && (s = swa__threads_start(c, n_threads, err)) != SWA_OK) return s;
    swa__ok(err);
    return SWA_OK;
}

/* ==== thread pool ====
   Each context owns a persistent pool: workers start in swa_ctx_create. swa__pool_run splits a
   task into n shares, fn(arg, share, n), and returns when all of them are done. The threads
   claim shares from a counter, the caller too, so a share goes to whichever thread is free:
   when another process holds one of the cores, the caller takes the shares of a worker that
   has not woken up instead of waiting for it. A share is computed by the same code whoever
   claims it, so results are bit-identical for any thread count. A forward pass runs a dozen
   tasks per layer, each a few microseconds on a small model, so both sides spin briefly
   before they sleep on a condition variable: a wake-up through the kernel costs more than
   such a task. */

#ifndef SWA_NO_THREADS
/* Polling rounds, a pause each, before a thread sleeps: the brief spin of the section's comment. */
#define SWA__SPINS 4096
#define SWA__SHARE_BITS 16       /* n <= SWA__MAX_THREADS fits */

static void swa__cpu_relax(void)
{
#if defined(_MSC_VER) && !defined(__clang__)
    YieldProcessor();
#elif (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
    __builtin_ia32_pause();
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Claim and compute shares of task number `task` until none is left. A thread that reads fn and
   arg late may see the next task's, but then its claim fails: the counter has moved on, which
   it only does once every share of `task` is done. */
static void swa__pool_work(swa__pool *p, uint64_t task)
{
    swa__task_fn fn;
    void *arg = swa__load_ptr(&p->arg);
    uint64_t word = swa__load_u64(&p->claim);
    const uint64_t mask = ((uint64_t)1 << SWA__SHARE_BITS) - 1;
    void *f = swa__load_ptr(&p->fn);
    memcpy(&fn, &f, sizeof fn);   /* a function pointer kept as void *, as the atomics take */
    while (word >> SWA__SHARE_BITS == task && (word & mask) < (uint64_t)p->n) {
        if (!swa__cas_u64(&p->claim, &word, word + 1)) continue;
        fn(arg, (int)(word & mask), p->n);
        if (swa__sub_int(&p->unfinished, 1) == 0) {
            swa__mutex_lock(&p->mu);          /* the caller may be about to sleep */
            swa__cond_signal(&p->done);
            swa__mutex_unlock(&p->mu);
        }
        word++;
    }
}

static uint64_t swa__pool_task(swa__pool *p)
{
    return swa__load_u64(&p->claim) >> SWA__SHARE_BITS;
}

static void swa__worker_loop(swa__pool *p)
{
    uint64_t seen = 0;
    for (;;) {
        int spins;
        for (spins = 0; spins < SWA__SPINS && swa__pool_task(p) == seen && !swa__load_int(&p->quit); spins++)
            swa__cpu_relax();
        if (spins == SWA__SPINS) {
            swa__mutex_lock(&p->mu);
            while (!p->quit && swa__pool_task(p) == seen) swa__cond_wait(&p->start, &p->mu);
            swa__mutex_unlock(&p->mu);
        }
        if (swa__load_int(&p->quit)) break;
        seen = swa__pool_task(p);
        swa__pool_work(p, seen);
    }
}

#if defined(_WIN32)
static DWORD WINAPI swa__worker_main(LPVOID arg)
{
    swa__worker_loop((swa__pool *)arg);
    return 0;
}

static int swa__thread_start(swa__thread *t, swa__pool *p)
{
    *t = CreateThread(NULL, 0, swa__worker_main, p, 0, NULL);
    return *t ? 0 : -1;
}

static void swa__thread_join(swa__thread t)
{
    WaitForSingleObject(t, INFINITE);
    CloseHandle(t);
}
#else
static void *swa__worker_main(void *arg)
{
    swa__worker_loop((swa__pool *)arg);
    return NULL;
}

static int swa__thread_start(swa__thread *t, swa__pool *p) { return pthread_create(t, NULL, swa__worker_main, p); }
static void swa__thread_join(swa__thread t) { pthread_join(t, NULL); }
#endif
#endif

static void swa__pool_stop(swa__pool *p)
{
#ifndef SWA_NO_THREADS
    int i;
    if (p->n <= 1) return;
    swa__mutex_lock(&p->mu);
    swa__store_int(&p->quit, 1);
    swa__cond_broadcast(&p->start);
    swa__mutex_unlock(&p->mu);
    for (i = 0; i < p->started; i++) swa__thread_join(p->threads[i]);
    swa__cond_destroy(&p->start);
    swa__cond_destroy(&p->done);
    swa__mutex_destroy(&p->mu);
    p->n = 1;
#else
    (void)p;
#endif
}

/* Start n - 1 workers; threads is an array of n - 1 swa__thread the caller provides. */
static swa_status swa__pool_start(swa__pool *p, int n, void *threads, swa_error *err)
{
    p->n = 1;
#ifndef SWA_NO_THREADS
    if (n <= 1) return SWA_OK;
    p->threads = (swa__thread *)threads;
    p->claim = p->task = 0;
    if (swa__mutex_init(&p->mu) != 0 || swa__cond_init(&p->start) != 0 || swa__cond_init(&p->done) != 0)
        return swa__fail(err, SWA_ERR_NOMEM, "cannot create the thread pool's locks");
    p->n = n;
    for (p->started = 0; p->started < n - 1; p->started++)
        if (swa__thread_start(&p->threads[p->started], p) != 0) {
            swa__pool_stop(p);
            return swa__fail(err, SWA_ERR_NOMEM, "cannot start thread %d of %d", p->started + 1, n);
        }
#else
    (void)n; (void)threads; (void)err;
#endif
    return SWA_OK;
}

/* Run the n shares of fn over the pool and wait until all are done. */
static void swa__pool_run(swa__pool *p, swa__task_fn fn, void *arg)
{
    (void)p;
#ifndef SWA_NO_THREADS
    if (p->n > 1) {
        int spins;
        void *f;
        memcpy(&f, &fn, sizeof f);
        p->task++;
        swa__store_ptr(&p->fn, f);
        swa__store_ptr(&p->arg, arg);
        swa__store_int(&p->unfinished, p->n);
        swa__mutex_lock(&p->mu);
        swa__store_u64(&p->claim, p->task << SWA__SHARE_BITS);
        swa__cond_broadcast(&p->start);
        swa__mutex_unlock(&p->mu);
        swa__pool_work(p, p->task);
        for (spins = 0; spins < SWA__SPINS && swa__load_int(&p->unfinished) > 0; spins++) swa__cpu_relax();
        swa__mutex_lock(&p->mu);
        while (swa__load_int(&p->unfinished) > 0) swa__cond_wait(&p->done, &p->mu);
        swa__mutex_unlock(&p->mu);
        return;
    }
#endif
    fn(arg, 0, 1);
}

/* Share k of n_shares of n items: [begin, end). */
static void swa__split(int64_t n, int k, int n_shares, int64_t *begin, int64_t *end)
{
    *begin = n * k / n_shares;
    *end = n * (k + 1) / n_shares;
}

#ifndef SWA_NO_TOKENIZER   /* the Unicode tables serve the tokenizer only */

/* ==== unicode tables ==== */

/* General categories as the pre-tokenizers ask for them: letters by case, and the other
   classes whole. SWA__UCF_* are one bit per category plus White_Space, so a character class
   is a mask. The values match tools/reference/gen_unicode_tables.py. */
enum {
    SWA__UC_CN, SWA__UC_LU, SWA__UC_LL, SWA__UC_LT, SWA__UC_LM, SWA__UC_LO,
    SWA__UC_M, SWA__UC_N, SWA__UC_P, SWA__UC_S, SWA__UC_Z, SWA__UC_C
};
#define SWA__UCF_SPACE (1u << 12)
#define SWA__UCF_L ((1u << SWA__UC_LU) | (1u << SWA__UC_LL) | (1u << SWA__UC_LT) | (1u << SWA__UC_LM) | (1u << SWA__UC_LO))

/* unicode tables: generated by tools/reference/gen_unicode_tables.py, do not edit */
#define SWA__UNICODE_VERSION "18.0.0"
static const uint32_t swa__uc_ranges[3683] = {   /* (first code point << 4) | category */
    0xb,0x20a,0x218,0x249,0x258,0x2b9,0x2c8,0x307,0x3a8,0x3c9,
    0x3f8,0x411,0x5b8,0x5e9,0x5f8,0x609,0x612,0x7b8,0x7c9,0x7d8,
    0x7e9,0x7fb,0xa0a,0xa18,0xa29,0xa78,0xa89,0xaa5,0xab8,0xac9,
    0xadb,0xae9,0xb27,0xb49,0xb52,0xb68,0xb89,0xb97,0xba5,0xbb8,
    0xbc7,0xbf8,0xc01,0xd79,0xd81,0xdf2,0xf79,0xf82,0x1001,0x1012,
    0x1021,0x1032,0x1041,0x1052,0x1061,0x1072,0x1081,0x1092,0x10a1,0x10b2,
    0x10c1,0x10d2,0x10e1,0x10f2,0x1101,0x1112,0x1121,0x1132,0x1141,0x1152,
    0x1161,0x1172,0x1181,0x1192,0x11a1,0x11b2,0x11c1,0x11d2,0x11e1,0x11f2,
    0x1201,0x1212,0x1221,0x1232,0x1241,0x1252,0x1261,0x1272,0x1281,0x1292,
    0x12a1,0x12b2,0x12c1,0x12d2,0x12e1,0x12f2,0x1301,0x1312,0x1321,0x1332,
    0x1341,0x1352,0x1361,0x1372,0x1391,0x13a2,0x13b1,0x13c2,0x13d1,0x13e2,
    0x13f1,0x1402,0x1411,0x1422,0x1431,0x1442,0x1451,0x1462,0x1471,0x1482,
    0x14a1,0x14b2,0x14c1,0x14d2,0x14e1,0x14f2,0x1501,0x1512,0x1521,0x1532,
    0x1541,0x1552,0x1561,0x1572,0x1581,0x1592,0x15a1,0x15b2,0x15c1,0x15d2,
    0x15e1,0x15f2,0x1601,0x1612,0x1621,0x1632,0x1641,0x1652,0x1661,0x1672,
    0x1681,0x1692,0x16a1,0x16b2,0x16c1,0x16d2,0x16e1,0x16f2,0x1701,0x1712,
    0x1721,0x1732,0x1741,0x1752,0x1761,0x1772,0x1781,0x17a2,0x17b1,0x17c2,
    0x17d1,0x17e2,0x1811,0x1832,0x1841,0x1852,0x1861,0x1882,0x1891,0x18c2,
    0x18e1,0x1922,0x1931,0x1952,0x1961,0x1992,0x19c1,0x19e2,0x19f1,0x1a12,
    0x1a21,0x1a32,0x1a41,0x1a52,0x1a61,0x1a82,0x1a91,0x1aa2,0x1ac1,0x1ad2,
    0x1ae1,0x1b02,0x1b11,0x1b42,0x1b51,0x1b62,0x1b71,0x1b92,0x1bb5,0x1bc1,
    0x1bd2,0x1c05,0x1c41,0x1c53,0x1c62,0x1c71,0x1c83,0x1c92,0x1ca1,0x1cb3,
    0x1cc2,0x1cd1,0x1ce2,0x1cf1,0x1d02,0x1d11,0x1d22,0x1d31,0x1d42,0x1d51,
    0x1d62,0x1d71,0x1d82,0x1d91,0x1da2,0x1db1,0x1dc2,0x1de1,0x1df2,0x1e01,
    0x1e12,0x1e21,0x1e32,0x1e41,0x1e52,0x1e61,0x1e72,0x1e81,0x1e92,0x1ea1,
    0x1eb2,0x1ec1,0x1ed2,0x1ee1,0x1ef2,0x1f11,0x1f23,0x1f32,0x1f41,0x1f52,
    0x1f61,0x1f92,0x1fa1,0x1fb2,0x1fc1,0x1fd2,0x1fe1,0x1ff2,0x2001,0x2012,
    0x2021,0x2032,0x2041,0x2052,0x2061,0x2072,0x2081,0x2092,0x20a1,0x20b2,
    0x20c1,0x20d2,0x20e1,0x20f2,0x2101,0x2112,0x2121,0x2132,0x2141,0x2152,
    0x2161,0x2172,0x2181,0x2192,0x21a1,0x21b2,0x21c1,0x21d2,0x21e1,0x21f2,
    0x2201,0x2212,0x2221,0x2232,0x2241,0x2252,0x2261,0x2272,0x2281,0x2292,
    0x22a1,0x22b2,0x22c1,0x22d2,0x22e1,0x22f2,0x2301,0x2312,0x2321,0x2332,
    0x23a1,0x23c2,0x23d1,0x23f2,0x2411,0x2422,0x2431,0x2472,0x2481,0x2492,
    0x24a1,0x24b2,0x24c1,0x24d2,0x24e1,0x24f2,0x2945,0x2962,0x2b04,0x2c29,
    0x2c64,0x2d29,0x2e04,0x2e59,0x2ec4,0x2ed9,0x2ee4,0x2ef9,0x3006,0x3701,
    0x3712,0x3721,0x3732,0x3744,0x3759,0x3761,0x3772,0x3780,0x37a4,0x37b2,
    0x37e8,0x37f1,0x3800,0x3849,0x3861,0x3878,0x3881,0x38b0,0x38c1,0x38d0,
    0x38e1,0x3902,0x3911,0x3a20,0x3a31,0x3ac2,0x3cf1,0x3d02,0x3d21,0x3d52,
    0x3d81,0x3d92,0x3da1,0x3db2,0x3dc1,0x3dd2,0x3de1,0x3df2,0x3e01,0x3e12,
    0x3e21,0x3e32,0x3e41,0x3e52,0x3e61,0x3e72,0x3e81,0x3e92,0x3ea1,0x3eb2,
    0x3ec1,0x3ed2,0x3ee1,0x3ef2,0x3f41,0x3f52,0x3f69,0x3f71,0x3f82,0x3f91,
    0x3fb2,0x3fd1,0x4302,0x4601,0x4612,0x4621,0x4632,0x4641,0x4652,0x4661,
    0x4672,0x4681,0x4692,0x46a1,0x46b2,0x46c1,0x46d2,0x46e1,0x46f2,0x4701,
    0x4712,0x4721,0x4732,0x4741,0x4752,0x4761,0x4772,0x4781,0x4792,0x47a1,
    0x47b2,0x47c1,0x47d2,0x47e1,0x47f2,0x4801,0x4812,0x4829,0x4836,0x48a1,
    0x48b2,0x48c1,0x48d2,0x48e1,0x48f2,0x4901,0x4912,0x4921,0x4932,0x4941,
    0x4952,0x4961,0x4972,0x4981,0x4992,0x49a1,0x49b2,0x49c1,0x49d2,0x49e1,
    0x49f2,0x4a01,0x4a12,0x4a21,0x4a32,0x4a41,0x4a52,0x4a61,0x4a72,0x4a81,
    0x4a92,0x4aa1,0x4ab2,0x4ac1,0x4ad2,0x4ae1,0x4af2,0x4b01,0x4b12,0x4b21,
    0x4b32,0x4b41,0x4b52,0x4b61,0x4b72,0x4b81,0x4b92,0x4ba1,0x4bb2,0x4bc1,
    0x4bd2,0x4be1,0x4bf2,0x4c01,0x4c22,0x4c31,0x4c42,0x4c51,0x4c62,0x4c71,
    0x4c82,0x4c91,0x4ca2,0x4cb1,0x4cc2,0x4cd1,0x4ce2,0x4d01,0x4d12,0x4d21,
    0x4d32,0x4d41,0x4d52,0x4d61,0x4d72,0x4d81,0x4d92,0x4da1,0x4db2,0x4dc1,
    0x4dd2,0x4de1,0x4df2,0x4e01,0x4e12,0x4e21,0x4e32,0x4e41,0x4e52,0x4e61,
    0x4e72,0x4e81,0x4e92,0x4ea1,0x4eb2,0x4ec1,0x4ed2,0x4ee1,0x4ef2,0x4f01,
    0x4f12,0x4f21,0x4f32,0x4f41,0x4f52,0x4f61,0x4f72,0x4f81,0x4f92,0x4fa1,
    0x4fb2,0x4fc1,0x4fd2,0x4fe1,0x4ff2,0x5001,0x5012,0x5021,0x5032,0x5041,
    0x5052,0x5061,0x5072,0x5081,0x5092,0x50a1,0x50b2,0x50c1,0x50d2,0x50e1,
    0x50f2,0x5101,0x5112,0x5121,0x5132,0x5141,0x5152,0x5161,0x5172,0x5181,
    0x5192,0x51a1,0x51b2,0x51c1,0x51d2,0x51e1,0x51f2,0x5201,0x5212,0x5221,
    0x5232,0x5241,0x5252,0x5261,0x5272,0x5281,0x5292,0x52a1,0x52b2,0x52c1,
    0x52d2,0x52e1,0x52f2,0x5300,0x5311,0x5570,0x5584,0x55a8,0x5602,0x5898,
    0x58b4,0x58d9,0x5900,0x5916,0x5be8,0x5bf6,0x5c08,0x5c16,0x5c38,0x5c46,
    0x5c68,0x5c76,0x5ca0,0x5d05,0x5eb0,0x5ef5,0x5f38,0x5f50,0x600b,0x6069,
    0x6098,0x60b9,0x60c8,0x60e9,0x6106,0x61b8,0x61cb,0x61d8,0x6205,0x6404,
    0x6415,0x64b6,0x6607,0x66a8,0x66e5,0x6706,0x6715,0x6d48,0x6d55,0x6d66,
    0x6ddb,0x6de9,0x6df6,0x6e54,0x6e76,0x6e99,0x6ea6,0x6ee5,0x6f07,0x6fa5,
    0x6fd9,0x6ff5,0x7008,0x70e0,0x70fb,0x7105,0x7116,0x7125,0x7306,0x74b0,
    0x74d5,0x7a66,0x7b15,0x7b20,0x7c07,0x7ca5,0x7eb6,0x7f44,0x7f69,0x7f78,
    0x7fa4,0x7fb0,0x7fd6,0x7fe9,0x8005,0x8166,0x81a4,0x81b6,0x8244,0x8256,
    0x8284,0x8296,0x82e0,0x8308,0x83f0,0x8405,0x8596,0x85c0,0x85e8,0x85f0,
    0x8605,0x86b0,0x8705,0x8889,0x8895,0x890b,0x8920,0x8976,0x8a05,0x8c94,
    0x8ca6,0x8e2b,0x8e36,0x9045,0x93a6,0x93d5,0x93e6,0x9505,0x9516,0x9585,
    0x9626,0x9648,0x9667,0x9708,0x9714,0x9725,0x9816,0x9840,0x9855,0x98d0,
    0x98f5,0x9910,0x9935,0x9a90,0x9aa5,0x9b10,0x9b25,0x9b30,0x9b65,0x9ba0,
    0x9bc6,0x9bd5,0x9be6,0x9c50,0x9c76,0x9c90,0x9cb6,0x9ce5,0x9cf0,0x9d76,
    0x9d80,0x9dc5,0x9de0,0x9df5,0x9e26,0x9e40,0x9e67,0x9f05,0x9f29,0x9f47,
    0x9fa9,0x9fc5,0x9fd8,0x9fe6,0x9ff0,0xa016,0xa040,0xa055,0xa0b0,0xa0f5,
    0xa110,0xa135,0xa290,0xa2a5,0xa310,0xa325,0xa340,0xa355,0xa370,0xa385,
    0xa3a0,0xa3c6,0xa3d0,0xa3e6,0xa430,0xa476,0xa490,0xa4b6,0xa4e0,0xa516,
    0xa520,0xa595,0xa5d0,0xa5e5,0xa5f0,0xa667,0xa706,0xa725,0xa756,0xa768,
    0xa770,0xa816,0xa840,0xa855,0xa8e0,0xa8f5,0xa920,0xa935,0xaa90,0xaaa5,
    0xab10,0xab25,0xab40,0xab55,0xaba0,0xabc6,0xabd5,0xabe6,0xac60,0xac76,
    0xaca0,0xacb6,0xace0,0xad05,0xad10,0xae05,0xae26,0xae40,0xae67,0xaf08,
    0xaf19,0xaf20,0xaf95,0xafa6,0xb000,0xb016,0xb040,0xb055,0xb0d0,0xb0f5,
    0xb110,0xb135,0xb290,0xb2a5,0xb310,0xb325,0xb340,0xb355,0xb3a0,0xb3c6,
    0xb3d5,0xb3e6,0xb450,0xb476,0xb490,0xb4b6,0xb4e0,0xb536,0xb580,0xb5c5,
    0xb5e0,0xb5f5,0xb626,0xb640,0xb667,0xb709,0xb715,0xb727,0xb780,0xb826,
    0xb835,0xb840,0xb855,0xb8b0,0xb8e5,0xb910,0xb925,0xb960,0xb995,0xb9b0,
    0xb9c5,0xb9d0,0xb9e5,0xba00,0xba35,0xba50,0xba85,0xbab0,0xbae5,0xbba0,
    0xbbe6,0xbc30,0xbc66,0xbc90,0xbca6,0xbce0,0xbd05,0xbd10,0xbd76,0xbd80,
    0xbe67,0xbf39,0xbfb0,0xc006,0xc055,0xc0d0,0xc0e5,0xc110,0xc125,0xc290,
    0xc2a5,0xc3a0,0xc3c6,0xc3d5,0xc3e6,0xc450,0xc466,0xc490,0xc4a6,0xc4e0,
    0xc556,0xc570,0xc585,0xc5b0,0xc5c5,0xc5e0,0xc605,0xc626,0xc640,0xc667,
    0xc700,0xc778,0xc787,0xc7f9,0xc805,0xc816,0xc848,0xc855,0xc8d0,0xc8e5,
    0xc910,0xc925,0xca90,0xcaa5,0xcb40,0xcb55,0xcba0,0xcbc6,0xcbd5,0xcbe6,
    0xcc50,0xcc66,0xcc90,0xcca6,0xcce0,0xcd56,0xcd70,0xcdc5,0xcdf0,0xce05,
    0xce26,0xce40,0xce67,0xcf00,0xcf15,0xcf36,0xcf40,0xd006,0xd045,0xd0d0,
    0xd0e5,0xd110,0xd125,0xd3b6,0xd3d5,0xd3e6,0xd450,0xd466,0xd490,0xd4a6,
    0xd4e5,0xd4f9,0xd500,0xd545,0xd576,0xd587,0xd5f5,0xd626,0xd640,0xd667,
    0xd799,0xd7a5,0xd800,0xd816,0xd840,0xd855,0xd970,0xd9a5,0xdb20,0xdb35,
    0xdbc0,0xdbd5,0xdbe0,0xdc05,0xdc70,0xdca6,0xdcb0,0xdcf6,0xdd50,0xdd66,
    0xdd70,0xdd86,0xde00,0xde67,0xdf00,0xdf26,0xdf48,0xdf50,0xe015,0xe316,
    0xe325,0xe346,0xe3b0,0xe3f9,0xe405,0xe464,0xe476,0xe4f8,0xe507,0xe5a8,
    0xe5c0,0xe815,0xe830,0xe845,0xe850,0xe865,0xe8b0,0xe8c5,0xea40,0xea55,
    0xea60,0xea75,0xeb16,0xeb25,0xeb46,0xebd5,0xebe0,0xec05,0xec50,0xec64,
    0xec70,0xec86,0xecf0,0xed07,0xeda0,0xedc5,0xee00,0xf005,0xf019,0xf048,
    0xf139,0xf148,0xf159,0xf186,0xf1a9,0xf207,0xf349,0xf356,0xf369,0xf376,
    0xf389,0xf396,0xf3a8,0xf3e6,0xf405,0xf480,0xf495,0xf6d0,0xf716,0xf858,
    0xf866,0xf885,0xf8d6,0xf980,0xf996,0xfbd0,0xfbe9,0xfc66,0xfc79,0xfcd0,
    0xfce9,0xfd08,0xfd59,0xfd98,0xfdb0,0x10005,0x102b6,0x103f5,0x10407,0x104a8,
    0x10505,0x10566,0x105a5,0x105e6,0x10615,0x10626,0x10655,0x10676,0x106e5,0x10716,
    0x10755,0x10826,0x108e5,0x108f6,0x10907,0x109a6,0x109e9,0x10a01,0x10c60,0x10c71,
    0x10c80,0x10cd1,0x10ce0,0x10d02,0x10fb8,0x10fc4,0x10fd2,0x11005,0x12490,0x124a5,
    0x124e0,0x12505,0x12570,0x12585,0x12590,0x125a5,0x125e0,0x12605,0x12890,0x128a5,
    0x128e0,0x12905,0x12b10,0x12b25,0x12b60,0x12b85,0x12bf0,0x12c05,0x12c10,0x12c25,
    0x12c60,0x12c85,0x12d70,0x12d85,0x13110,0x13125,0x13160,0x13185,0x135b0,0x135d6,
    0x13608,0x13697,0x137d0,0x13805,0x13909,0x139a0,0x13a01,0x13f60,0x13f82,0x13fe0,
    0x14008,0x14015,0x166d9,0x166e8,0x166f5,0x1680a,0x16815,0x169b8,0x169d0,0x16a05,
    0x16eb8,0x16ee7,0x16f15,0x16f90,0x17005,0x17126,0x17160,0x171f5,0x17326,0x17358,
    0x17370,0x17405,0x17526,0x17540,0x17605,0x176d0,0x176e5,0x17710,0x17726,0x17740,
    0x17805,0x17b46,0x17d48,0x17d74,0x17d88,0x17db9,0x17dc5,0x17dd6,0x17de0,0x17e07,
    0x17ea0,0x17f07,0x17fa0,0x18008,0x180b6,0x180eb,0x180f6,0x18107,0x181a0,0x18205,
    0x18434,0x18445,0x18790,0x18805,0x18856,0x18875,0x18a96,0x18aa5,0x18ab0,0x18b05,
    0x18f60,0x19005,0x191f0,0x19206,0x192c0,0x19306,0x193c0,0x19409,0x19410,0x19448,
    0x19467,0x19505,0x196e0,0x19705,0x19750,0x19805,0x19ac0,0x19b05,0x19ca0,0x19d07,
    0x19db0,0x19de9,0x1a005,0x1a176,0x1a1c0,0x1a1e8,0x1a205,0x1a556,0x1a5f0,0x1a606,
    0x1a7d0,0x1a7f6,0x1a807,0x1a8a0,0x1a907,0x1a9a0,0x1aa08,0x1aa74,0x1aa88,0x1aae0,
    0x1ab06,0x1af10,0x1b006,0x1b055,0x1b346,0x1b455,0x1b4d0,0x1b4e8,0x1b507,0x1b5a8,
    0x1b619,0x1b6b6,0x1b749,0x1b7d8,0x1b806,0x1b835,0x1ba16,0x1bae5,0x1bb07,0x1bba5,
    0x1be66,0x1bf40,0x1bfc8,0x1c005,0x1c246,0x1c380,0x1c3b8,0x1c407,0x1c4a0,0x1c4d5,
    0x1c507,0x1c5a5,0x1c784,0x1c7e8,0x1c802,0x1c891,0x1c8a2,0x1c8b0,0x1c901,0x1cbb0,
    0x1cbd1,0x1cc08,0x1cc80,0x1cd06,0x1cd38,0x1cd46,0x1ce95,0x1ced6,0x1cee5,0x1cf46,
    0x1cf55,0x1cf76,0x1cfa5,0x1cfb0,0x1d002,0x1d2c4,0x1d6b2,0x1d784,0x1d792,0x1d9b4,
    0x1dc06,0x1e001,0x1e012,0x1e021,0x1e032,0x1e041,0x1e052,0x1e061,0x1e072,0x1e081,
    0x1e092,0x1e0a1,0x1e0b2,0x1e0c1,0x1e0d2,0x1e0e1,0x1e0f2,0x1e101,0x1e112,0x1e121,
    0x1e132,0x1e141,0x1e152,0x1e161,0x1e172,0x1e181,0x1e192,0x1e1a1,0x1e1b2,0x1e1c1,
    0x1e1d2,0x1e1e1,0x1e1f2,0x1e201,0x1e212,0x1e221,0x1e232,0x1e241,0x1e252,0x1e261,
    0x1e272,0x1e281,0x1e292,0x1e2a1,0x1e2b2,0x1e2c1,0x1e2d2,0x1e2e1,0x1e2f2,0x1e301,
    0x1e312,0x1e321,0x1e332,0x1e341,0x1e352,0x1e361,0x1e372,0x1e381,0x1e392,0x1e3a1,
    0x1e3b2,0x1e3c1,0x1e3d2,0x1e3e1,0x1e3f2,0x1e401,0x1e412,0x1e421,0x1e432,0x1e441,
    0x1e452,0x1e461,0x1e472,0x1e481,0x1e492,0x1e4a1,0x1e4b2,0x1e4c1,0x1e4d2,0x1e4e1,
    0x1e4f2,0x1e501,0x1e512,0x1e521,0x1e532,0x1e541,0x1e552,0x1e561,0x1e572,0x1e581,
    0x1e592,0x1e5a1,0x1e5b2,0x1e5c1,0x1e5d2,0x1e5e1,0x1e5f2,0x1e601,0x1e612,0x1e621,
    0x1e632,0x1e641,0x1e652,0x1e661,0x1e672,0x1e681,0x1e692,0x1e6a1,0x1e6b2,0x1e6c1,
    0x1e6d2,0x1e6e1,0x1e6f2,0x1e701,0x1e712,0x1e721,0x1e732,0x1e741,0x1e752,0x1e761,
    0x1e772,0x1e781,0x1e792,0x1e7a1,0x1e7b2,0x1e7c1,0x1e7d2,0x1e7e1,0x1e7f2,0x1e801,
    0x1e812,0x1e821,0x1e832,0x1e841,0x1e852,0x1e861,0x1e872,0x1e881,0x1e892,0x1e8a1,
    0x1e8b2,0x1e8c1,0x1e8d2,0x1e8e1,0x1e8f2,0x1e901,0x1e912,0x1e921,0x1e932,0x1e941,
    0x1e952,0x1e9e1,0x1e9f2,0x1ea01,0x1ea12,0x1ea21,0x1ea32,0x1ea41,0x1ea52,0x1ea61,
    0x1ea72,0x1ea81,0x1ea92,0x1eaa1,0x1eab2,0x1eac1,0x1ead2,0x1eae1,0x1eaf2,0x1eb01,
    0x1eb12,0x1eb21,0x1eb32,0x1eb41,0x1eb52,0x1eb61,0x1eb72,0x1eb81,0x1eb92,0x1eba1,
    0x1ebb2,0x1ebc1,0x1ebd2,0x1ebe1,0x1ebf2,0x1ec01,0x1ec12,0x1ec21,0x1ec32,0x1ec41,
    0x1ec52,0x1ec61,0x1ec72,0x1ec81,0x1ec92,0x1eca1,0x1ecb2,0x1ecc1,0x1ecd2,0x1ece1,
    0x1ecf2,0x1ed01,0x1ed12,0x1ed21,0x1ed32,0x1ed41,0x1ed52,0x1ed61,0x1ed72,0x1ed81,
    0x1ed92,0x1eda1,0x1edb2,0x1edc1,0x1edd2,0x1ede1,0x1edf2,0x1ee01,0x1ee12,0x1ee21,
    0x1ee32,0x1ee41,0x1ee52,0x1ee61,0x1ee72,0x1ee81,0x1ee92,0x1eea1,0x1eeb2,0x1eec1,
    0x1eed2,0x1eee1,0x1eef2,0x1ef01,0x1ef12,0x1ef21,0x1ef32,0x1ef41,0x1ef52,0x1ef61,
    0x1ef72,0x1ef81,0x1ef92,0x1efa1,0x1efb2,0x1efc1,0x1efd2,0x1efe1,0x1eff2,0x1f081,
    0x1f102,0x1f160,0x1f181,0x1f1e0,0x1f202,0x1f281,0x1f302,0x1f381,0x1f402,0x1f460,
    0x1f481,0x1f4e0,0x1f502,0x1f580,0x1f591,0x1f5a0,0x1f5b1,0x1f5c0,0x1f5d1,0x1f5e0,
    0x1f5f1,0x1f602,0x1f681,0x1f702,0x1f7e0,0x1f802,0x1f883,0x1f902,0x1f983,0x1fa02,
    0x1fa83,0x1fb02,0x1fb50,0x1fb62,0x1fb81,0x1fbc3,0x1fbd9,0x1fbe2,0x1fbf9,0x1fc22,
    0x1fc50,0x1fc62,0x1fc81,0x1fcc3,0x1fcd9,0x1fd02,0x1fd40,0x1fd62,0x1fd81,0x1fdc0,
    0x1fdd9,0x1fe02,0x1fe81,0x1fed9,0x1ff00,0x1ff22,0x1ff50,0x1ff62,0x1ff81,0x1ffc3,
    0x1ffd9,0x1fff0,0x2000a,0x200bb,0x20108,0x2028a,0x202ab,0x202fa,0x20308,0x20449,
    0x20458,0x20529,0x20538,0x205fa,0x2060b,0x20650,0x2066b,0x20707,0x20714,0x20720,
    0x20747,0x207a9,0x207d8,0x207f4,0x20807,0x208a9,0x208d8,0x208f4,0x20a09,0x20c50,
    0x20d06,0x20f10,0x21009,0x21021,0x21039,0x21071,0x21089,0x210a2,0x210b1,0x210e2,
    0x21101,0x21132,0x21149,0x21151,0x21169,0x21191,0x211e9,0x21241,0x21259,0x21261,
    0x21279,0x21281,0x21299,0x212a1,0x212e9,0x212f2,0x21301,0x21342,0x21355,0x21392,
    0x213a9,0x213c2,0x213e1,0x21409,0x21451,0x21462,0x214a9,0x214e2,0x214f9,0x21507,
    0x21831,0x21842,0x21857,0x218a9,0x218c0,0x21909,0x23088,0x230c9,0x23298,0x232b9,
    0x242a0,0x24409,0x244b0,0x24607,0x249c9,0x24ea7,0x25009,0x27688,0x27767,0x27949,
    0x27c58,0x27c79,0x27e68,0x27f09,0x29838,0x29999,0x29d88,0x29dc9,0x29fc8,0x29fe9,
    0x2b740,0x2b769,0x2c001,0x2c302,0x2c601,0x2c612,0x2c621,0x2c652,0x2c671,0x2c682,
    0x2c691,0x2c6a2,0x2c6b1,0x2c6c2,0x2c6d1,0x2c712,0x2c721,0x2c732,0x2c751,0x2c762,
    0x2c7c4,0x2c7e1,0x2c812,0x2c821,0x2c832,0x2c841,0x2c852,0x2c861,0x2c872,0x2c881,
    0x2c892,0x2c8a1,0x2c8b2,0x2c8c1,0x2c8d2,0x2c8e1,0x2c8f2,0x2c901,0x2c912,0x2c921,
    0x2c932,0x2c941,0x2c952,0x2c961,0x2c972,0x2c981,0x2c992,0x2c9a1,0x2c9b2,0x2c9c1,
    0x2c9d2,0x2c9e1,0x2c9f2,0x2ca01,0x2ca12,0x2ca21,0x2ca32,0x2ca41,0x2ca52,0x2ca61,
    0x2ca72,0x2ca81,0x2ca92,0x2caa1,0x2cab2,0x2cac1,0x2cad2,0x2cae1,0x2caf2,0x2cb01,
    0x2cb12,0x2cb21,0x2cb32,0x2cb41,0x2cb52,0x2cb61,0x2cb72,0x2cb81,0x2cb92,0x2cba1,
    0x2cbb2,0x2cbc1,0x2cbd2,0x2cbe1,0x2cbf2,0x2cc01,0x2cc12,0x2cc21,0x2cc32,0x2cc41,
    0x2cc52,0x2cc61,0x2cc72,0x2cc81,0x2cc92,0x2cca1,0x2ccb2,0x2ccc1,0x2ccd2,0x2cce1,
    0x2ccf2,0x2cd01,0x2cd12,0x2cd21,0x2cd32,0x2cd41,0x2cd52,0x2cd61,0x2cd72,0x2cd81,
    0x2cd92,0x2cda1,0x2cdb2,0x2cdc1,0x2cdd2,0x2cde1,0x2cdf2,0x2ce01,0x2ce12,0x2ce21,
    0x2ce32,0x2ce59,0x2ceb1,0x2cec2,0x2ced1,0x2cee2,0x2cef6,0x2cf21,0x2cf32,0x2cf40,
    0x2cf98,0x2cfd7,0x2cfe8,0x2d002,0x2d260,0x2d272,0x2d280,0x2d2d2,0x2d2e0,0x2d305,
    0x2d680,0x2d6f4,0x2d708,0x2d710,0x2d7f6,0x2d805,0x2d970,0x2da05,0x2da70,0x2da85,
    0x2daf0,0x2db05,0x2db70,0x2db85,0x2dbf0,0x2dc05,0x2dc70,0x2dc85,0x2dcf0,0x2dd05,
    0x2dd70,0x2dd85,0x2ddf0,0x2de06,0x2e008,0x2e2f4,0x2e308,0x2e509,0x2e528,0x2e5e0,
    0x2e608,0x2e640,0x2e809,0x2e9a0,0x2e9b9,0x2ef40,0x2f009,0x2fd60,0x2ff09,0x3000a,
    0x30018,0x30049,0x30054,0x30065,0x30077,0x30088,0x30129,0x30148,0x30209,0x30217,
    0x302a6,0x30308,0x30314,0x30369,0x30387,0x303b4,0x303c5,0x303d8,0x303e9,0x30400,
    0x30415,0x30970,0x30996,0x309b9,0x309d4,0x309f5,0x30a08,0x30a15,0x30fb8,0x30fc4,
    0x30ff5,0x31000,0x31055,0x31300,0x31315,0x318f0,0x31909,0x31927,0x31969,0x31a05,
    0x31c09,0x31e60,0x31ef9,0x31f05,0x32009,0x321f0,0x32207,0x322a9,0x32487,0x32509,
    0x32517,0x32609,0x32807,0x328a9,0x32b17,0x32c09,0x34005,0x4dc09,0x4e005,0xa0154,
    0xa0165,0xa48d0,0xa4909,0xa4c70,0xa4d05,0xa4f84,0xa4fe8,0xa5005,0xa60c4,0xa60d8,
    0xa6105,0xa6207,0xa62a5,0xa62c0,0xa6401,0xa6412,0xa6421,0xa6432,0xa6441,0xa6452,
    0xa6461,0xa6472,0xa6481,0xa6492,0xa64a1,0xa64b2,0xa64c1,0xa64d2,0xa64e1,0xa64f2,
    0xa6501,0xa6512,0xa6521,0xa6532,0xa6541,0xa6552,0xa6561,0xa6572,0xa6581,0xa6592,
    0xa65a1,0xa65b2,0xa65c1,0xa65d2,0xa65e1,0xa65f2,0xa6601,0xa6612,0xa6621,0xa6632,
    0xa6641,0xa6652,0xa6661,0xa6672,0xa6681,0xa6692,0xa66a1,0xa66b2,0xa66c1,0xa66d2,
    0xa66e5,0xa66f6,0xa6738,0xa6746,0xa67e8,0xa67f4,0xa6801,0xa6812,0xa6821,0xa6832,
    0xa6841,0xa6852,0xa6861,0xa6872,0xa6881,0xa6892,0xa68a1,0xa68b2,0xa68c1,0xa68d2,
    0xa68e1,0xa68f2,0xa6901,0xa6912,0xa6921,0xa6932,0xa6941,0xa6952,0xa6961,0xa6972,
    0xa6981,0xa6992,0xa69a1,0xa69b2,0xa69c4,0xa69e6,0xa6a05,0xa6e67,0xa6f06,0xa6f28,
    0xa6f80,0xa7009,0xa7174,0xa7209,0xa7221,0xa7232,0xa7241,0xa7252,0xa7261,0xa7272,
    0xa7281,0xa7292,0xa72a1,0xa72b2,0xa72c1,0xa72d2,0xa72e1,0xa72f2,0xa7321,0xa7332,
    0xa7341,0xa7352,0xa7361,0xa7372,0xa7381,0xa7392,0xa73a1,0xa73b2,0xa73c1,0xa73d2,
    0xa73e1,0xa73f2,0xa7401,0xa7412,0xa7421,0xa7432,0xa7441,0xa7452,0xa7461,0xa7472,
    0xa7481,0xa7492,0xa74a1,0xa74b2,0xa74c1,0xa74d2,0xa74e1,0xa74f2,0xa7501,0xa7512,
    0xa7521,0xa7532,0xa7541,0xa7552,0xa7561,0xa7572,0xa7581,0xa7592,0xa75a1,0xa75b2,
    0xa75c1,0xa75d2,0xa75e1,0xa75f2,0xa7601,0xa7612,0xa7621,0xa7632,0xa7641,0xa7652,
    0xa7661,0xa7672,0xa7681,0xa7692,0xa76a1,0xa76b2,0xa76c1,0xa76d2,0xa76e1,0xa76f2,
    0xa7704,0xa7712,0xa7791,0xa77a2,0xa77b1,0xa77c2,0xa77d1,0xa77f2,0xa7801,0xa7812,
    0xa7821,0xa7832,0xa7841,0xa7852,0xa7861,0xa7872,0xa7884,0xa7899,0xa78b1,0xa78c2,
    0xa78d1,0xa78e2,0xa78f5,0xa7901,0xa7912,0xa7921,0xa7932,0xa7961,0xa7972,0xa7981,
    0xa7992,0xa79a1,0xa79b2,0xa79c1,0xa79d2,0xa79e1,0xa79f2,0xa7a01,0xa7a12,0xa7a21,
    0xa7a32,0xa7a41,0xa7a52,0xa7a61,0xa7a72,0xa7a81,0xa7a92,0xa7aa1,0xa7af2,0xa7b01,
    0xa7b52,0xa7b61,0xa7b72,0xa7b81,0xa7b92,0xa7ba1,0xa7bb2,0xa7bc1,0xa7bd2,0xa7be1,
    0xa7bf2,0xa7c01,0xa7c12,0xa7c21,0xa7c32,0xa7c41,0xa7c82,0xa7c91,0xa7ca2,0xa7cb1,
    0xa7cd2,0xa7ce1,0xa7cf2,0xa7d01,0xa7d12,0xa7d21,0xa7d32,0xa7d41,0xa7d52,0xa7d61,
    0xa7d72,0xa7d81,0xa7d92,0xa7da1,0xa7db2,0xa7dc1,0xa7de0,0xa7e21,0xa7e30,0xa7f14,
    0xa7f51,0xa7f62,0xa7f75,0xa7f84,0xa7fa2,0xa7fb5,0xa8026,0xa8035,0xa8066,0xa8075,
    0xa80b6,0xa80c5,0xa8236,0xa8289,0xa82c6,0xa82d0,0xa8307,0xa8369,0xa83a0,0xa8405,
    0xa8748,0xa8780,0xa8806,0xa8825,0xa8b46,0xa8c60,0xa8ce8,0xa8d07,0xa8da0,0xa8e06,
    0xa8f25,0xa8f88,0xa8fb5,0xa8fc8,0xa8fd5,0xa8ff6,0xa9007,0xa90a5,0xa9266,0xa92e8,
    0xa9305,0xa9476,0xa9540,0xa95f8,0xa9605,0xa97d0,0xa9806,0xa9845,0xa9b36,0xa9c18,
    0xa9ce0,0xa9cf4,0xa9d07,0xa9da0,0xa9de8,0xa9e05,0xa9e56,0xa9e64,0xa9e75,0xa9f07,
    0xa9fa5,0xa9ff0,0xaa005,0xaa296,0xaa370,0xaa405,0xaa436,0xaa445,0xaa4c6,0xaa4e0,
    0xaa507,0xaa5a0,0xaa5c8,0xaa605,0xaa704,0xaa715,0xaa779,0xaa7a5,0xaa7b6,0xaa7e5,
    0xaab06,0xaab15,0xaab26,0xaab55,0xaab76,0xaab95,0xaabe6,0xaac05,0xaac16,0xaac25,
    0xaac30,0xaadb5,0xaadd4,0xaade8,0xaae05,0xaaeb6,0xaaf08,0xaaf25,0xaaf34,0xaaf56,
    0xaaf70,0xab015,0xab070,0xab095,0xab0f0,0xab115,0xab170,0xab205,0xab270,0xab285,
    0xab2f0,0xab302,0xab5b9,0xab5c4,0xab602,0xab694,0xab6a9,0xab6c1,0xab6e0,0xab702,
    0xabc05,0xabe36,0xabeb8,0xabec6,0xabee0,0xabf07,0xabfa0,0xac005,0xd7a40,0xd7b05,
    0xd7c70,0xd7cb5,0xd7fc0,0xd800b,0xf9005,0xfa6e0,0xfa705,0xfada0,0xfb002,0xfb070,
    0xfb132,0xfb180,0xfb1d5,0xfb1e6,0xfb1f5,0xfb299,0xfb2a5,0xfb370,0xfb385,0xfb3d0,
    0xfb3e5,0xfb3f0,0xfb405,0xfb420,0xfb435,0xfb450,0xfb465,0xfbb29,0xfbd35,0xfd3e8,
    0xfd409,0xfd505,0xfd909,0xfd925,0xfdc89,0xfdd00,0xfdf05,0xfdfc9,0xfe006,0xfe108,
    0xfe1a0,0xfe206,0xfe308,0xfe530,0xfe548,0xfe629,0xfe638,0xfe649,0xfe670,0xfe688,
    0xfe699,0xfe6a8,0xfe6c0,0xfe705,0xfe750,0xfe765,0xfefd0,0xfeffb,0xff000,0xff018,
    0xff049,0xff058,0xff0b9,0xff0c8,0xff107,0xff1a8,0xff1c9,0xff1f8,0xff211,0xff3b8,
    0xff3e9,0xff3f8,0xff409,0xff412,0xff5b8,0xff5c9,0xff5d8,0xff5e9,0xff5f8,0xff665,
    0xff704,0xff715,0xff9e4,0xffa05,0xffbf0,0xffc25,0xffc80,0xffca5,0xffd00,0xffd25,
    0xffd80,0xffda5,0xffdd0,0xffe09,0xffe70,0xffe89,0xffef0,0xfff9b,0xfffc9,0xfffe0,
    0x100005,0x1000c0,0x1000d5,0x100270,0x100285,0x1003b0,0x1003c5,0x1003e0,0x1003f5,0x1004e0,
    0x100505,0x1005e0,0x100805,0x100fb0,0x101008,0x101030,0x101077,0x101340,0x101379,0x101407,
    0x101799,0x1018a7,0x1018c9,0x1018f0,0x101909,0x1019d0,0x101a09,0x101a10,0x101d09,0x101fd6,
    0x101fe0,0x102805,0x1029d0,0x102a05,0x102d10,0x102e06,0x102e17,0x102fc0,0x103005,0x103207,
    0x103240,0x1032d5,0x103417,0x103425,0x1034a7,0x1034b0,0x103505,0x103766,0x1037b0,0x103805,
    0x1039e0,0x1039f8,0x103a05,0x103c40,0x103c85,0x103d08,0x103d17,0x103d60,0x104001,0x104282,
    0x104505,0x1049e0,0x104a07,0x104aa0,0x104b01,0x104d40,0x104d82,0x104fc0,0x105005,0x105280,
    0x105305,0x105640,0x1056f8,0x105701,0x1057b0,0x1057c1,0x1058b0,0x1058c1,0x105930,0x105941,
    0x105960,0x105972,0x105a20,0x105a32,0x105b20,0x105b32,0x105ba0,0x105bb2,0x105bd0,0x105c05,
    0x105f40,0x106005,0x107370,0x107405,0x107560,0x107605,0x107680,0x107804,0x107860,0x107874,
    0x107b10,0x107b24,0x107c00,0x108005,0x108060,0x108085,0x108090,0x1080a5,0x108360,0x108375,
    0x108390,0x1083c5,0x1083d0,0x1083f5,0x108560,0x108578,0x108587,0x108605,0x108779,0x108797,
    0x108805,0x1089f0,0x108a77,0x108b00,0x108e05,0x108f30,0x108f45,0x108f60,0x108fb7,0x109005,
    0x109167,0x1091c0,0x1091f8,0x109205,0x1093a0,0x1093f8,0x109405,0x1095a0,0x109805,0x109b80,
    0x109bc7,0x109be5,0x109c07,0x109d00,0x109d27,0x10a005,0x10a016,0x10a040,0x10a056,0x10a070,
    0x10a0c6,0x10a105,0x10a140,0x10a155,0x10a180,0x10a195,0x10a360,0x10a386,0x10a3b0,0x10a3f6,
    0x10a407,0x10a490,0x10a508,0x10a590,0x10a605,0x10a7d7,0x10a7f8,0x10a805,0x10a9d7,0x10aa00,
    0x10ac05,0x10ac89,0x10ac95,0x10ae56,0x10ae70,0x10aeb7,0x10af08,0x10af70,0x10b005,0x10b360,
    0x10b398,0x10b405,0x10b560,0x10b587,0x10b605,0x10b730,0x10b787,0x10b805,0x10b920,0x10b998,
    0x10b9d0,0x10ba97,0x10bb00,0x10c005,0x10c490,0x10c801,0x10cb30,0x10cc02,0x10cf30,0x10cfa7,
    0x10d005,0x10d246,0x10d280,0x10d307,0x10d3a0,0x10d407,0x10d4a5,0x10d4e4,0x10d4f5,0x10d501,
    0x10d660,0x10d696,0x10d6e8,0x10d6f4,0x10d702,0x10d860,0x10d8e9,0x10d900,0x10e607,0x10e7f0,
    0x10e805,0x10eaa0,0x10eab6,0x10ead8,0x10eae0,0x10eb05,0x10eb20,0x10ec25,0x10ec54,0x10ec65,
    0x10ec80,0x10ec99,0x10ecb6,0x10ed08,0x10ed19,0x10ed95,0x10eef0,0x10ef06,0x10f005,0x10f1d7,
    0x10f275,0x10f280,0x10f305,0x10f466,0x10f517,0x10f558,0x10f5a0,0x10f705,0x10f826,0x10f868,
    0x10f8a0,0x10fb05,0x10fc57,0x10fcc0,0x10fe05,0x10ff70,0x110006,0x110035,0x110386,0x110478,
    0x1104e0,0x110527,0x110706,0x110715,0x110736,0x110755,0x110760,0x1107f6,0x110835,0x110b06,
    0x110bb8,0x110bdb,0x110be8,0x110c26,0x110c30,0x110cdb,0x110ce0,0x110d05,0x110e90,0x110f07,
    0x110fa0,0x111006,0x111035,0x111276,0x111350,0x111367,0x111408,0x111445,0x111456,0x111475,
    0x111480,0x111505,0x111736,0x111748,0x111765,0x111770,0x111806,0x111835,0x111b36,0x111c15,
    0x111c58,0x111c96,0x111cd8,0x111ce6,0x111d07,0x111da5,0x111db8,0x111dc5,0x111dd8,0x111e00,
    0x111e17,0x111f50,0x112005,0x112120,0x112135,0x1122c6,0x112388,0x1123e6,0x1123f5,0x112416,
    0x112420,0x112805,0x112870,0x112885,0x112890,0x1128a5,0x1128e0,0x1128f5,0x1129e0,0x1129f5,
    0x112a98,0x112aa0,0x112b05,0x112df6,0x112eb0,0x112f07,0x112fa0,0x113006,0x113040,0x113055,
    0x1130d0,0x1130f5,0x113110,0x113135,0x113290,0x1132a5,0x113310,0x113325,0x113340,0x113355,
    0x1133a0,0x1133b6,0x1133d5,0x1133e6,0x113450,0x113476,0x113490,0x1134b6,0x1134e0,0x113505,
    0x113510,0x113576,0x113580,0x1135d5,0x113626,0x113640,0x113666,0x1136d0,0x113706,0x113750,
    0x113805,0x1138a0,0x1138b5,0x1138c0,0x1138e5,0x1138f0,0x113905,0x113b60,0x113b75,0x113b86,
    0x113c10,0x113c26,0x113c30,0x113c56,0x113c60,0x113c76,0x113cb0,0x113cc6,0x113d15,0x113d26,
    0x113d35,0x113d48,0x113d60,0x113d78,0x113d90,0x113e16,0x113e30,0x114005,0x114356,0x114475,
    0x1144b8,0x114507,0x1145a8,0x1145c0,0x1145d8,0x1145e6,0x1145f5,0x114620,0x114805,0x114b06,
    0x114c45,0x114c68,0x114c75,0x114c80,0x114d07,0x114da0,0x115805,0x115af6,0x115b60,0x115b86,
    0x115c18,0x115d85,0x115dc6,0x115de0,0x116005,0x116306,0x116418,0x116445,0x116450,0x116507,
    0x1165a0,0x116608,0x1166d0,0x116805,0x116ab6,0x116b85,0x116b98,0x116ba0,0x116c07,0x116ca0,
    0x116d07,0x116e40,0x117005,0x1171b0,0x1171d6,0x1172c0,0x117307,0x1173c8,0x1173f9,0x117405,
    0x117470,0x118005,0x1182c6,0x1183b8,0x1183c0,0x118a01,0x118c02,0x118e07,0x118f30,0x118ff5,
    0x119070,0x119095,0x1190a0,0x1190c5,0x119140,0x119155,0x119170,0x119185,0x119306,0x119360,
    0x119376,0x119390,0x1193b6,0x1193f5,0x119406,0x119415,0x119426,0x119448,0x119470,0x119507,
    0x1195a0,0x119a05,0x119a80,0x119aa5,0x119d16,0x119d80,0x119da6,0x119e15,0x119e28,0x119e35,
    0x119e46,0x119e50,0x11a005,0x11a016,0x11a0b5,0x11a336,0x11a3a5,0x11a3b6,0x11a3f8,0x11a476,
    0x11a480,0x11a505,0x11a516,0x11a5c5,0x11a8a6,0x11a9a8,0x11a9d5,0x11a9e8,0x11aa30,0x11ab05,
    0x11af90,0x11b008,0x11b0a5,0x11b0b0,0x11b606,0x11b680,0x11bc05,0x11be18,0x11be20,0x11bf07,
    0x11bfa0,0x11c005,0x11c090,0x11c0a5,0x11c2f6,0x11c370,0x11c386,0x11c405,0x11c418,0x11c460,
    0x11c507,0x11c6d0,0x11c708,0x11c725,0x11c900,0x11c926,0x11ca80,0x11ca96,0x11cb70,0x11d005,
    0x11d070,0x11d085,0x11d0a0,0x11d0b5,0x11d316,0x11d370,0x11d3a6,0x11d3b0,0x11d3c6,0x11d3e0,
    0x11d3f6,0x11d465,0x11d476,0x11d480,0x11d507,0x11d5a0,0x11d605,0x11d660,0x11d675,0x11d690,
    0x11d6a5,0x11d8a6,0x11d8f0,0x11d906,0x11d920,0x11d936,0x11d985,0x11d990,0x11da07,0x11daa0,
    0x11db05,0x11dd94,0x11dda5,0x11ddc0,0x11de07,0x11dea0,0x11df06,0x11df15,0x11df20,0x11ee05,
    0x11ef36,0x11ef78,0x11ef90,0x11f006,0x11f025,0x11f036,0x11f045,0x11f110,0x11f125,0x11f346,
    0x11f3b0,0x11f3e6,0x11f438,0x11f507,0x11f5a6,0x11f5b0,0x11fb05,0x11fb10,0x11fc07,0x11fd59,
    0x11ff20,0x11fff8,0x120005,0x1239a0,0x124007,0x124708,0x124757,0x124805,0x125440,0x125507,
    0x126870,0x12f905,0x12ff18,0x12ff30,0x130005,0x13430b,0x134406,0x134415,0x134476,0x134560,
    0x134605,0x143fb0,0x144005,0x146470,0x161005,0x1611e6,0x161307,0x1613a0,0x168005,0x16a390,
    0x16a405,0x16a5f0,0x16a607,0x16a6a0,0x16a6e8,0x16a705,0x16abf0,0x16ac07,0x16aca0,0x16ad05,
    0x16aee0,0x16af06,0x16af58,0x16af60,0x16b005,0x16b306,0x16b378,0x16b3c9,0x16b404,0x16b448,
    0x16b459,0x16b460,0x16b507,0x16b5a0,0x16b5b7,0x16b620,0x16b635,0x16b780,0x16b7d5,0x16b900,
    0x16d404,0x16d435,0x16d6b4,0x16d6d8,0x16d707,0x16d7a0,0x16e401,0x16e602,0x16e807,0x16e978,
    0x16e9b0,0x16ea01,0x16eb90,0x16ebb2,0x16ed40,0x16f005,0x16f4b0,0x16f4f6,0x16f505,0x16f516,
    0x16f880,0x16f8f6,0x16f934,0x16fa00,0x16fe04,0x16fe28,0x16fe34,0x16fe46,0x16fe50,0x16ff06,
    0x16ff24,0x16ff47,0x16ff70,0x170005,0x18cdb0,0x18cff5,0x18d210,0x18d805,0x18df30,0x18e005,
    0x191920,0x191a05,0x191d30,0x1aff04,0x1aff40,0x1aff54,0x1affc0,0x1affd4,0x1afff0,0x1b0005,
    0x1b1290,0x1b1325,0x1b1330,0x1b1505,0x1b1530,0x1b1555,0x1b1560,0x1b1645,0x1b1690,0x1b1705,
    0x1b2fc0,0x1bc005,0x1bc6b0,0x1bc705,0x1bc7d0,0x1bc805,0x1bc890,0x1bc905,0x1bc9a0,0x1bc9c9,
    0x1bc9d6,0x1bc9f8,0x1bca0b,0x1bca40,0x1cc009,0x1ccf07,0x1ccfa9,0x1ccfd0,0x1cd009,0x1ceb40,
    0x1ceba9,0x1ced10,0x1ced29,0x1ced50,0x1cedd9,0x1cefe0,0x1cf006,0x1cf2e0,0x1cf306,0x1cf470,
    0x1cf509,0x1cfc40,0x1d0009,0x1d0f60,0x1d1009,0x1d1276,0x1d1299,0x1d1656,0x1d16a9,0x1d16d6,
    0x1d173b,0x1d17b6,0x1d1839,0x1d1856,0x1d18c9,0x1d1aa6,0x1d1ae9,0x1d2426,0x1d2459,0x1d2460,
    0x1d2506,0x1d2539,0x1d25b6,0x1d25d9,0x1d25f6,0x1d2609,0x1d2806,0x1d2820,0x1d2c07,0x1d2d40,
    0x1d2e07,0x1d2f40,0x1d3009,0x1d3570,0x1d3607,0x1d3790,0x1d4001,0x1d41a2,0x1d4341,0x1d44e2,
    0x1d4550,0x1d4562,0x1d4681,0x1d4822,0x1d49c1,0x1d49d0,0x1d49e1,0x1d4a00,0x1d4a21,0x1d4a30,
    0x1d4a51,0x1d4a70,0x1d4a91,0x1d4ad0,0x1d4ae1,0x1d4b62,0x1d4ba0,0x1d4bb2,0x1d4bc0,0x1d4bd2,
    0x1d4c40,0x1d4c52,0x1d4d01,0x1d4ea2,0x1d5041,0x1d5060,0x1d5071,0x1d50b0,0x1d50d1,0x1d5150,
    0x1d5161,0x1d51d0,0x1d51e2,0x1d5381,0x1d53a0,0x1d53b1,0x1d53f0,0x1d5401,0x1d5450,0x1d5461,
    0x1d5470,0x1d54a1,0x1d5510,0x1d5522,0x1d56c1,0x1d5862,0x1d5a01,0x1d5ba2,0x1d5d41,0x1d5ee2,
    0x1d6081,0x1d6222,0x1d63c1,0x1d6562,0x1d6701,0x1d68a2,0x1d6a70,0x1d6a81,0x1d6c19,0x1d6c22,
    0x1d6db9,0x1d6dc2,0x1d6e21,0x1d6fb9,0x1d6fc2,0x1d7159,0x1d7162,0x1d71c1,0x1d7359,0x1d7362,
    0x1d74f9,0x1d7502,0x1d7561,0x1d76f9,0x1d7702,0x1d7899,0x1d78a2,0x1d7901,0x1d7a99,0x1d7aa2,
    0x1d7c39,0x1d7c42,0x1d7ca1,0x1d7cb2,0x1d7cc0,0x1d7ce7,0x1d8009,0x1da006,0x1da379,0x1da3b6,
    0x1da6d9,0x1da756,0x1da769,0x1da846,0x1da859,0x1da878,0x1da8c0,0x1da9b6,0x1daa00,0x1daa16,
    0x1dab00,0x1db009,0x1db1d0,0x1df002,0x1df0a5,0x1df0b2,0x1df401,0x1df412,0x1df481,0x1df492,
    0x1df4a1,0x1df4b2,0x1df4d1,0x1df4e2,0x1df511,0x1df522,0x1df681,0x1df692,0x1df6a1,0x1df6b2,
    0x1df6c1,0x1df6d2,0x1df6e1,0x1df6f2,0x1df721,0x1df732,0x1df741,0x1df752,0x1df761,0x1df772,
    0x1df781,0x1df792,0x1df7a1,0x1df7b2,0x1df7c1,0x1df7d2,0x1df7e1,0x1df7f2,0x1df805,0x1df820,
    0x1df902,0x1df970,0x1dfcd4,0x1e0006,0x1e0070,0x1e0086,0x1e0190,0x1e01b6,0x1e0220,0x1e0236,
    0x1e0250,0x1e0266,0x1e02b0,0x1e0304,0x1e06e0,0x1e08f6,0x1e0900,0x1e1005,0x1e12d0,0x1e1306,
    0x1e1374,0x1e13e0,0x1e1407,0x1e14a0,0x1e14e5,0x1e14f9,0x1e1500,0x1e2905,0x1e2ae6,0x1e2af0,
    0x1e2c05,0x1e2ec6,0x1e2f07,0x1e2fa0,0x1e2ff9,0x1e3000,0x1e4d05,0x1e4eb4,0x1e4ec6,0x1e4f07,
    0x1e4fa0,0x1e5d05,0x1e5ee6,0x1e5f05,0x1e5f17,0x1e5fb0,0x1e5ff8,0x1e6000,0x1e6c05,0x1e6df0,
    0x1e6e05,0x1e6e36,0x1e6e45,0x1e6e66,0x1e6e75,0x1e6ee6,0x1e6f05,0x1e6f56,0x1e6f60,0x1e6fe5,
    0x1e6ff4,0x1e7000,0x1e7e05,0x1e7e70,0x1e7e85,0x1e7ec0,0x1e7ed5,0x1e7ef0,0x1e7f05,0x1e7ff0,
    0x1e8005,0x1e8c50,0x1e8c77,0x1e8d06,0x1e8d70,0x1e9001,0x1e9222,0x1e9446,0x1e94b4,0x1e94c0,
    0x1e9507,0x1e95a0,0x1e95e8,0x1e9600,0x1ec717,0x1ecac9,0x1ecad7,0x1ecb09,0x1ecb17,0x1ecb50,
    0x1ed017,0x1ed2e9,0x1ed2f7,0x1ed3e0,0x1ee005,0x1ee040,0x1ee055,0x1ee200,0x1ee215,0x1ee230,
    0x1ee245,0x1ee250,0x1ee275,0x1ee280,0x1ee295,0x1ee330,0x1ee345,0x1ee380,0x1ee395,0x1ee3a0,
    0x1ee3b5,0x1ee3c0,0x1ee425,0x1ee430,0x1ee475,0x1ee480,0x1ee495,0x1ee4a0,0x1ee4b5,0x1ee4c0,
    0x1ee4d5,0x1ee500,0x1ee515,0x1ee530,0x1ee545,0x1ee550,0x1ee575,0x1ee580,0x1ee595,0x1ee5a0,
    0x1ee5b5,0x1ee5c0,0x1ee5d5,0x1ee5e0,0x1ee5f5,0x1ee600,0x1ee615,0x1ee630,0x1ee645,0x1ee650,
    0x1ee675,0x1ee6b0,0x1ee6c5,0x1ee730,0x1ee745,0x1ee780,0x1ee795,0x1ee7d0,0x1ee7e5,0x1ee7f0,
    0x1ee805,0x1ee8a0,0x1ee8b5,0x1ee9c0,0x1eea15,0x1eea40,0x1eea55,0x1eeaa0,0x1eeab5,0x1eebc0,
    0x1eef09,0x1eef20,0x1f0009,0x1f02c0,0x1f0309,0x1f0940,0x1f0a09,0x1f0af0,0x1f0b19,0x1f0c00,
    0x1f0c19,0x1f0d00,0x1f0d19,0x1f0f60,0x1f1007,0x1f10d9,0x1f1af0,0x1f1e69,0x1f2030,0x1f2109,
    0x1f23c0,0x1f2409,0x1f2490,0x1f2509,0x1f2520,0x1f2609,0x1f2660,0x1f3009,0x1f6da0,0x1f6dc9,
    0x1f6ed0,0x1f6f09,0x1f6fd0,0x1f7009,0x1f7dc0,0x1f7e09,0x1f7ec0,0x1f7f09,0x1f80c0,0x1f8109,
    0x1f8480,0x1f8509,0x1f85a0,0x1f8609,0x1f8880,0x1f8909,0x1f8ae0,0x1f8b09,0x1f8bc0,0x1f8c09,
    0x1f8c20,0x1f8d09,0x1f8d90,0x1f9009,0x1fa580,0x1fa609,0x1fa6e0,0x1fa709,0x1fa7d0,0x1fa809,
    0x1fac70,0x1fac89,0x1fac90,0x1facc9,0x1fade0,0x1fadf9,0x1faec0,0x1faef9,0x1fafb0,0x1fb009,
    0x1fb930,0x1fb949,0x1fbf07,0x1fbfa9,0x1fbfb0,0x200005,0x2a6e00,0x2a7005,0x2b81f0,0x2b8205,
    0x2ceae0,0x2ceb05,0x2ebe10,0x2ebf05,0x2ee5e0,0x2f8005,0x2fa1e0,0x300005,0x3134b0,0x313505,
    0x3347a0,0x3d0005,0x3fc400,0xe0001b,0xe00020,0xe0020b,0xe00800,0xe01006,0xe01f00,0xf0000b,
    0xffffe0,0x100000b,0x10fffe0,
};
static const uint32_t swa__uc_white_space[25] = {
    0x9,0xa,0xb,0xc,0xd,0x20,0x85,0xa0,0x1680,0x2000,0x2001,0x2002,0x2003,0x2004,0x2005,0x2006,0x2007,0x2008,0x2009,0x200a,0x2028,0x2029,0x202f,0x205f,0x3000
};
static const uint16_t swa__uc_ascii[128] = {
    0x800,0x800,0x800,0x800,0x800,0x800,0x800,0x800,0x800,0x1800,0x1800,0x1800,0x1800,0x1800,0x800,0x800,
    0x800,0x800,0x800,0x800,0x800,0x800,0x800,0x800,0x800,0x800,0x800,0x800,0x800,0x800,0x800,0x800,
    0x1400,0x100,0x100,0x100,0x200,0x100,0x100,0x100,0x100,0x100,0x100,0x200,0x100,0x100,0x100,0x100,
    0x80,0x80,0x80,0x80,0x80,0x80,0x80,0x80,0x80,0x80,0x100,0x100,0x200,0x200,0x200,0x100,
    0x100,0x2,0x2,0x2,0x2,0x2,0x2,0x2,0x2,0x2,0x2,0x2,0x2,0x2,0x2,0x2,
    0x2,0x2,0x2,0x2,0x2,0x2,0x2,0x2,0x2,0x2,0x2,0x100,0x100,0x100,0x200,0x100,
    0x200,0x4,0x4,0x4,0x4,0x4,0x4,0x4,0x4,0x4,0x4,0x4,0x4,0x4,0x4,0x4,
    0x4,0x4,0x4,0x4,0x4,0x4,0x4,0x4,0x4,0x4,0x4,0x100,0x200,0x100,0x200,0x800,
};
/* end of unicode tables */

static unsigned swa__uc_category(uint32_t cp)
{
    size_t lo = 0, hi = sizeof swa__uc_ranges / sizeof swa__uc_ranges[0];
    if (cp > 0x10FFFF) return SWA__UC_CN;
    while (hi - lo > 1) {                    /* the last range starting at or before cp */
        size_t mid = (lo + hi) / 2;
        if ((swa__uc_ranges[mid] >> 4) <= cp) lo = mid;
        else hi = mid;
    }
    return swa__uc_ranges[lo] & 15;
}

/* The category bit of cp, with SWA__UCF_SPACE for White_Space. */
static unsigned swa__uc_flags(uint32_t cp)
{
    unsigned f;
    size_t i;
    if (cp < 128) return swa__uc_ascii[cp];
    f = 1u << swa__uc_category(cp);
    if (cp <= 0x3000 && (cp <= 0x20 || cp >= 0x85))
        for (i = 0; i < sizeof swa__uc_white_space / sizeof swa__uc_white_space[0]; i++)
            if (swa__uc_white_space[i] == cp) return f | SWA__UCF_SPACE;
    return f;
}

/* ==== tokenizer ==== */

/* ---- pre-tokenizer: the regular expressions of byte-level BPE vocabularies ----
   Each vocabulary names its pre-tokenizer (tokenizer.ggml.pre): a list of regular expressions
   applied one after another, each cutting every piece of text into its matches and the text
   between them. The expressions are compiled here into a small backtracking program with
   Perl's leftmost, greedy-first semantics, over the subset they use: alternation, groups,
   character classes with ranges, \s, \S and \p{..} (Unicode categories), the quantifiers
   ? * + {m,n}, a look-ahead of one character class, and $. */

enum { SWA__RE_CLASS, SWA__RE_SPLIT, SWA__RE_JMP, SWA__RE_AHEAD, SWA__RE_AHEAD_NOT, SWA__RE_END, SWA__RE_MATCH };

typedef struct swa__re_inst {
    uint8_t op;
    int32_t x, y;              /* CLASS, AHEAD: class index; SPLIT, JMP: jumps relative to this one */
} swa__re_inst;

typedef struct swa__re_class {
    uint32_t ascii[4];         /* code points below 128, negation applied */
    uint32_t cats;             /* SWA__UCF_* bits that match from 128 on */
    int32_t first, n;          /* ranges[2 * first ..] that match from 128 on */
    int negate;
} swa__re_class;

#define SWA__RE_MAX_CODE 768
#define SWA__RE_MAX_CLASS 96
#define SWA__RE_MAX_RANGE 256

typedef struct swa__regex {
    swa__re_inst code[SWA__RE_MAX_CODE];
    swa__re_class cls[SWA__RE_MAX_CLASS];
    uint32_t range[2 * SWA__RE_MAX_RANGE];
    int32_t n_code, n_cls, n_range;
} swa__regex;

typedef struct swa__chars {    /* a piece of text decoded for matching */
    const uint32_t *cp;        /* code points; a byte that is not valid UTF-8 is 0x110000 + byte */
    const uint16_t *flags;     /* SWA__UCF_* of each */
} swa__chars;

typedef struct swa__re_parser {
    swa__regex *re;
    const char *p;
    int bad;
} swa__re_parser;

/* One UTF-8 character of a pattern (patterns are ours and valid). */
static uint32_t swa__re_utf8(const char **p)
{
    const unsigned char *s = (const unsigned char *)*p;
    uint32_t c = s[0];
    int n = c < 0x80 ? 0 : c < 0xE0 ? 1 : c < 0xF0 ? 2 : 3, i;
    if (n) c &= 0x3Fu >> n;
    for (i = 1; i <= n; i++) c = (c << 6) | (s[i] & 0x3F);
    *p += n + 1;
    return c;
}

static swa__re_inst *swa__re_emit(swa__re_parser *ps, int op, int32_t x, int32_t y)
{
    swa__re_inst *in;
    if (ps->re->n_code >= SWA__RE_MAX_CODE) { ps->bad = 1; return &ps->re->code[0]; }
    in = &ps->re->code[ps->re->n_code++];
    in->op = (uint8_t)op;
    in->x = x;
    in->y = y;
    return in;
}

/* Make room for one instruction at `at`; jumps are relative, so moved code still works. */
static swa__re_inst *swa__re_insert(swa__re_parser *ps, int32_t at)
{
    swa__regex *re = ps->re;
    if (re->n_code >= SWA__RE_MAX_CODE) { ps->bad = 1; return &re->code[0]; }
    memmove(&re->code[at + 1], &re->code[at], (size_t)(re->n_code - at) * sizeof re->code[0]);
    re->n_code++;
    return &re->code[at];
}

static void swa__re_add_range(swa__re_parser *ps, uint32_t lo, uint32_t hi)
{
    swa__regex *re = ps->re;
    if (re->n_range >= SWA__RE_MAX_RANGE) { ps->bad = 1; return; }
    re->range[2 * re->n_range] = lo;
    re->range[2 * re->n_range + 1] = hi;
    re->n_range++;
}

/* \p{X}: the category bits of X. */
static uint32_t swa__re_category(swa__re_parser *ps)
{
    static const struct { const char *name; uint32_t bits; } names[] = {
        {"L}", SWA__UCF_L}, {"Lu}", 1u << SWA__UC_LU}, {"Ll}", 1u << SWA__UC_LL}, {"Lt}", 1u << SWA__UC_LT},
        {"Lm}", 1u << SWA__UC_LM}, {"Lo}", 1u << SWA__UC_LO}, {"M}", 1u << SWA__UC_M}, {"N}", 1u << SWA__UC_N},
        {"P}", 1u << SWA__UC_P}, {"S}", 1u << SWA__UC_S}, {"Z}", 1u << SWA__UC_Z},
        {"C}", (1u << SWA__UC_C) | (1u << SWA__UC_CN)}
    };
    size_t i;
    if (*ps->p++ != '{') { ps->bad = 1; return 0; }
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n = strlen(names[i].name);
        if (strncmp(ps->p, names[i].name, n) == 0) { ps->p += n; return names[i].bits; }
    }
    ps->bad = 1;
    return 0;
}

/* An escaped character: \r \n \t, or a punctuation character standing for itself. */
static uint32_t swa__re_escaped(char c)
{
    return c == 'r' ? '\r' : c == 'n' ? '\n' : c == 't' ? '\t' : (uint32_t)(unsigned char)c;
}

static int swa__re_in_class(const swa__regex *re, const swa__re_class *k, uint32_t cp, uint32_t flags)
{
    int32_t i;
    int hit = (k->cats & flags) != 0;
    for (i = k->first; !hit && i < k->first + k->n; i++)
        hit = cp >= re->range[2 * i] && cp <= re->range[2 * i + 1];
    return hit != k->negate;
}

/* Open a class; its ranges are the ones added until swa__re_class_close. */
static swa__re_class *swa__re_class_open(swa__re_parser *ps, uint32_t cats, int negate)
{
    swa__regex *re = ps->re;
    swa__re_class *k;
    if (re->n_cls >= SWA__RE_MAX_CLASS) { ps->bad = 1; return &re->cls[0]; }
    k = &re->cls[re->n_cls++];
    memset(k, 0, sizeof *k);
    k->cats = cats;
    k->negate = negate;
    k->first = re->n_range;
    return k;
}

static void swa__re_class_close(swa__re_parser *ps, swa__re_class *k)
{
    uint32_t c;
    k->n = ps->re->n_range - k->first;
    for (c = 0; c < 128; c++)
        if (swa__re_in_class(ps->re, k, c, swa__uc_flags(c))) k->ascii[c >> 5] |= 1u << (c & 31);
    swa__re_emit(ps, SWA__RE_CLASS, (int32_t)(k - ps->re->cls), 0);
}

/* [...] after the '[' */
static void swa__re_bracket(swa__re_parser *ps)
{
    int negate = *ps->p == '^';
    swa__re_class *k;
    if (negate) ps->p++;
    k = swa__re_class_open(ps, 0, negate);
    while (*ps->p && *ps->p != ']' && !ps->bad) {
        uint32_t lo;
        if (*ps->p == '\\') {
            char e = ps->p[1];
            ps->p += 2;
            if (e == 's') { k->cats |= SWA__UCF_SPACE; continue; }
            if (e == 'p') { k->cats |= swa__re_category(ps); continue; }
            lo = swa__re_escaped(e);
        } else {
            lo = swa__re_utf8(&ps->p);
        }
        if (ps->p[0] == '-' && ps->p[1] && ps->p[1] != ']') {
            uint32_t hi;
            ps->p++;
            if (*ps->p == '\\') { hi = swa__re_escaped(ps->p[1]); ps->p += 2; }
            else hi = swa__re_utf8(&ps->p);
            if (hi < lo) ps->bad = 1;
            swa__re_add_range(ps, lo, hi);
        } else {
            swa__re_add_range(ps, lo, lo);
        }
    }
    if (*ps->p != ']') ps->bad = 1;
    else ps->p++;
    swa__re_class_close(ps, k);
}

static void swa__re_alternation(swa__re_parser *ps);

static void swa__re_atom(swa__re_parser *ps)
{
    char c = *ps->p;
    if (c == '(') {
        int look = 0;
        ps->p++;
        if (ps->p[0] == '?' && ps->p[1] == ':') ps->p += 2;
        else if (ps->p[0] == '?' && (ps->p[1] == '=' || ps->p[1] == '!')) { look = ps->p[1]; ps->p += 2; }
        if (look) {                               /* a look-ahead holds one class */
            int32_t at = ps->re->n_code;
            swa__re_atom(ps);
            if (ps->re->n_code != at + 1 || ps->re->code[at].op != SWA__RE_CLASS) ps->bad = 1;
            ps->re->code[at].op = look == '=' ? SWA__RE_AHEAD : SWA__RE_AHEAD_NOT;
        } else {
            swa__re_alternation(ps);
        }
        if (*ps->p != ')') ps->bad = 1;
        else ps->p++;
    } else if (c == '[') {
        ps->p++;
        swa__re_bracket(ps);
    } else if (c == '$') {
        ps->p++;
        swa__re_emit(ps, SWA__RE_END, 0, 0);
    } else if (c == '\\') {
        char e = ps->p[1];
        ps->p += 2;
        if (e == 's' || e == 'S') swa__re_class_close(ps, swa__re_class_open(ps, SWA__UCF_SPACE, e == 'S'));
        else if (e == 'p') swa__re_class_close(ps, swa__re_class_open(ps, swa__re_category(ps), 0));
        else {
            uint32_t ch = swa__re_escaped(e);
            swa__re_class *k = swa__re_class_open(ps, 0, 0);
            swa__re_add_range(ps, ch, ch);
            swa__re_class_close(ps, k);
        }
    } else if (c && !strchr("|)?*+{", c)) {
        uint32_t ch = swa__re_utf8(&ps->p);
        swa__re_class *k = swa__re_class_open(ps, 0, 0);
        swa__re_add_range(ps, ch, ch);
        swa__re_class_close(ps, k);
    } else {
        ps->bad = 1;
    }
}

/* Append a copy of code[from, from + n). */
static void swa__re_copy(swa__re_parser *ps, int32_t from, int32_t n)
{
    int32_t i;
    if (ps->re->n_code + n > SWA__RE_MAX_CODE) { ps->bad = 1; return; }
    for (i = 0; i < n; i++) ps->re->code[ps->re->n_code++] = ps->re->code[from + i];
}

/* The quantifier after the atom at code[at, n_code), if any. */
static void swa__re_quantify(swa__re_parser *ps, int32_t at)
{
    swa__regex *re = ps->re;
    int32_t len = re->n_code - at, lo, hi, i, end;
    char q = *ps->p;
    swa__re_inst *in;
    if (q == '?' || q == '*') {                   /* SPLIT over the atom; '*' loops back to it */
        ps->p++;
        in = swa__re_insert(ps, at);
        in->op = SWA__RE_SPLIT;
        in->x = 1;
        in->y = len + 1 + (q == '*');
        if (q == '*') swa__re_emit(ps, SWA__RE_JMP, -(len + 1), 0);
    } else if (q == '+') {                        /* the atom, then SPLIT back to it */
        ps->p++;
        swa__re_emit(ps, SWA__RE_SPLIT, -len, 1);
    } else if (q == '{') {                        /* {lo,hi}: lo copies, then hi - lo optional ones */
        char *e;
        lo = (int32_t)strtol(ps->p + 1, &e, 10);
        hi = *e == ',' ? (int32_t)strtol(e + 1, &e, 10) : lo;
        if (*e != '}' || lo < 1 || hi < lo || hi > 8) { ps->bad = 1; return; }
        ps->p = e + 1;
        for (i = 1; i < lo; i++) swa__re_copy(ps, at, len);
        end = re->n_code + (hi - lo) * (len + 1);
        for (i = lo; i < hi && !ps->bad; i++) {
            swa__re_emit(ps, SWA__RE_SPLIT, 1, end - re->n_code);
            swa__re_copy(ps, at, len);
        }
    }
}

static void swa__re_sequence(swa__re_parser *ps)
{
    while (*ps->p && *ps->p != '|' && *ps->p != ')' && !ps->bad) {
        int32_t at = ps->re->n_code;
        swa__re_atom(ps);
        swa__re_quantify(ps, at);
    }
}

/* a|b|c: SPLIT to each branch in turn, each branch jumping to the end. */
static void swa__re_alternation(swa__re_parser *ps)
{
    int32_t at = ps->re->n_code, jmp;
    swa__re_inst *in;
    swa__re_sequence(ps);
    if (*ps->p != '|' || ps->bad) return;
    ps->p++;
    in = swa__re_insert(ps, at);
    in->op = SWA__RE_SPLIT;
    in->x = 1;
    jmp = ps->re->n_code;
    swa__re_emit(ps, SWA__RE_JMP, 0, 0);
    ps->re->code[at].y = ps->re->n_code - at;
    swa__re_alternation(ps);
    ps->re->code[jmp].x = ps->re->n_code - jmp;
}

static int swa__re_compile(swa__regex *re, const char *pattern)
{
    swa__re_parser ps;
    memset(re, 0, sizeof *re);
    ps.re = re;
    ps.p = pattern;
    ps.bad = 0;
    swa__re_alternation(&ps);
    swa__re_emit(&ps, SWA__RE_MATCH, 0, 0);
    return !ps.bad && *ps.p == '\0';
}

typedef struct swa__re_stack {    /* backtracking points: (pc, position) pairs */
    size_t *at;
    size_t n, cap;
} swa__re_stack;

static int swa__re_has(const swa__regex *re, int32_t k, const swa__chars *t, size_t i)
{
    uint32_t cp = t->cp[i];
    if (cp < 128) return (int)(re->cls[k].ascii[cp >> 5] >> (cp & 31)) & 1;
    return swa__re_in_class(re, &re->cls[k], cp, t->flags[i]);
}

/* The end of the match that starts at pos (a text ending at end), -1 for none, -2 when out of
   memory. The stack is explicit, so long runs of text cannot exhaust the C stack. */
static int64_t swa__re_match(const swa__regex *re, const swa__chars *t, size_t pos, size_t end, swa__re_stack *st)
{
    int32_t pc = 0;
    size_t sp = pos;
    st->n = 0;
    for (;;) {
        const swa__re_inst *in = &re->code[pc];
        switch (in->op) {
        case SWA__RE_CLASS:
            if (sp < end && swa__re_has(re, in->x, t, sp)) { sp++; pc++; continue; }
            break;
        case SWA__RE_SPLIT: {
            /* a branch that starts with a class the next character is not in fails at once:
               take the other without a backtracking point */
            const swa__re_inst *a = &re->code[pc + in->x], *b = &re->code[pc + in->y];
            int a_dead = a->op == SWA__RE_CLASS && !(sp < end && swa__re_has(re, a->x, t, sp));
            int b_dead = b->op == SWA__RE_CLASS && !(sp < end && swa__re_has(re, b->x, t, sp));
            if (a_dead && b_dead) break;
            if (a_dead || b_dead) {
                pc += a_dead ? in->y : in->x;
                continue;
            }
            if (st->n + 2 > st->cap) {
                size_t cap = st->cap ? 2 * st->cap : 256, *p = (size_t *)SWA_MALLOC(cap * sizeof *p);
                if (!p) return -2;
                if (st->n) memcpy(p, st->at, st->n * sizeof *p);
                SWA_FREE(st->at);
                st->at = p;
                st->cap = cap;
            }
            st->at[st->n++] = (size_t)(pc + in->y);
            st->at[st->n++] = sp;
            pc += in->x;
            continue;
        }
        case SWA__RE_JMP:
            pc += in->x;
            continue;
        case SWA__RE_AHEAD: case SWA__RE_AHEAD_NOT:
            if ((sp < end && swa__re_has(re, in->x, t, sp)) == (in->op == SWA__RE_AHEAD)) { pc++; continue; }
            break;
        case SWA__RE_END:
            if (sp == end) { pc++; continue; }
            break;
        default:
            return (int64_t)sp;
        }
        if (st->n == 0) return -1;
        sp = st->at[--st->n];
        pc = (int32_t)st->at[--st->n];
    }
}

/* Cut every piece [start, next start) of chars [0, n) at the matches of re: cut[i] is 1 where a
   piece starts. */
static swa_status swa__re_split(const swa__regex *re, const swa__chars *t, size_t n, uint8_t *cut,
                                swa__re_stack *st)
{
    size_t start = 0;
    /* An expression C+R (one branch, a class loop first, as DeepSeek's \s+$) that fails at p
       where C holds fails at p + 1 too: it would try a subset of the same places for R. Skipping
       the rest of such a run keeps a long run of C linear. */
    int lead_loop = re->code[0].op == SWA__RE_CLASS && re->code[1].op == SWA__RE_SPLIT && re->code[1].x == -1;
    while (start < n) {
        size_t end = start + 1, p = start;
        while (end < n && !cut[end]) end++;
        while (p < end) {
            int64_t m = swa__re_match(re, t, p, end, st);
            if (m == -2) return SWA_ERR_NOMEM;
            if (m <= (int64_t)p) {
                if (lead_loop)
                    while (p + 1 < end && swa__re_has(re, re->code[0].x, t, p) && swa__re_has(re, re->code[0].x, t, p + 1)) p++;
                p++;
                continue;
            }
            cut[p] = 1;
            if ((size_t)m < end) cut[m] = 1;
            p = (size_t)m;
        }
        start = end;
    }
    return SWA_OK;
}

/* The pre-tokenizers llama.cpp knows, by tokenizer.ggml.pre. Where llama.cpp rewrote an
   expression for std::regex, the original (tokenizer.json) is kept when both mean the same
   on valid text: (?i:'s|...) is written '[sS]|..., which is what it means for these letters. */
#define SWA__RE_GPT2 "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"
#define SWA__RE_LLAMA3(digits) "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|" \
    digits "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
/* o200k (GPT-4o, gpt-oss, Llama 4): a word of upper then lower case letters (upper, lower: the
   quantifiers), with a contraction */
#define SWA__RE_GPT4O_WORD(upper, lower) "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]" upper \
    "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]" lower "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?"
#define SWA__RE_PORO " ?[^(\\s|.,!?…。，、।۔،)]+"

typedef struct swa__pretok {
    const char *names;         /* the tokenizer.ggml.pre values, space-separated */
    int flags;                 /* SWA__PRETOK_* */
    const char *regex[6];
} swa__pretok;

enum {
    SWA__PRETOK_WORD_TOKENS = 1,   /* a word that is a token is that token, merges or not */
    SWA__PRETOK_ADD_BOS = 2        /* default of tokenizer.ggml.add_bos_token */
};
#define SWA__PRETOK(names, flags, ...) {names, flags, {__VA_ARGS__}}

static const swa__pretok swa__pretoks[] = {
    SWA__PRETOK("default", 0, "[\\p{P}\\$\\+<=>\\^~\\|]+", SWA__RE_GPT2, "\\p{N}+", "[0-9][0-9][0-9]"),
    SWA__PRETOK("llama3 llama-v3 llama-bpe falcon3", SWA__PRETOK_WORD_TOKENS | SWA__PRETOK_ADD_BOS, SWA__RE_LLAMA3("\\p{N}{1,3}")),
    SWA__PRETOK("dbrx smaug-bpe", 0, SWA__RE_LLAMA3("\\p{N}{1,3}")),
    /* DeepSeek's letters: a few are escapes, as editors normalise them to other code points */
    SWA__PRETOK("deepseek-llm", 0, "[\r\n]",
        "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-\xe1\xbd\xbd" "ᾀ-ᾴᾶ-ᾼ\xe1\xbe\xbe" "ῂ-ῄῆ-ῌῐ-\xe1\xbf\x93" "ῖ-\xe1\xbf\x9b" "ῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ\xe2\x84\xa6" "ℨ\xe2\x84\xaa" "-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+",
        "\\s?[!-/:-~！-／：-～‘-‟　-。]+", "\\s+$", "[一-龥ࠀ-一가-퟿]+", "\\p{N}+"),
    SWA__PRETOK("deepseek-v3", 0, "\\p{N}{1,3}", "[一-龥぀-ゟ゠-ヿ]+",
        "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"),
    SWA__PRETOK("deepseek-coder", 0, "[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", "[一-龥ࠀ-一가-퟿]+", "\\p{N}"),
    SWA__PRETOK("falcon", 0, "[\\p{P}\\$\\+<=>\\^~\\|`]+", SWA__RE_GPT2, "[0-9][0-9][0-9]"),
    SWA__PRETOK("starcoder refact command-r smollm codeshell exaone minerva-7b", 0, "\\p{N}", SWA__RE_GPT2),
    SWA__PRETOK("gpt-2 phi-2 jina-es jina-de gigachat jina-v1-en jina-v2-es jina-v2-de jina-v2-code roberta-bpe mpt olmo jais",
        0, SWA__RE_GPT2),
    SWA__PRETOK("qwen2 deepseek-r1-qwen megrez stablelm2", 0, SWA__RE_LLAMA3("\\p{N}")),
    SWA__PRETOK("poro-chat bloom gpt3-finnish", 0, SWA__RE_PORO),
    SWA__PRETOK("viking", 0, SWA__RE_PORO, "\\p{N}"),
    SWA__PRETOK("tekken", SWA__PRETOK_WORD_TOKENS | SWA__PRETOK_ADD_BOS, "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+|"
        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*|\\p{N}|"
        " ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"),
    SWA__PRETOK("gpt-4o llama4", 0, SWA__RE_GPT4O_WORD("*", "+") "|" SWA__RE_GPT4O_WORD("+", "*") "|\\p{N}{1,3}|"
        " ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"),
    SWA__PRETOK("chameleon", SWA__PRETOK_ADD_BOS, "<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )", "\\p{N}",
        "[\\p{P}!-/:-@\\[-`{-~]", SWA__RE_GPT2),
};

/* The pre-tokenizer called name, or NULL. */
static const swa__pretok *swa__pretok_find(swa_str name)
{
    size_t i;
    for (i = 0; i < sizeof swa__pretoks / sizeof swa__pretoks[0]; i++) {
        const char *p = swa__pretoks[i].names;
        while (*p) {
            size_t n = strcspn(p, " ");
            if (n == name.len && memcmp(p, name.ptr, n) == 0) return &swa__pretoks[i];
            p += n + (p[n] == ' ');
        }
    }
    return NULL;
}

#undef SWA__RE_GPT2
#undef SWA__RE_LLAMA3
#undef SWA__RE_PORO
#undef SWA__RE_GPT4O_WORD
#undef SWA__PRETOK
#undef SWA__RE_MAX_CODE
#undef SWA__RE_MAX_CLASS
#undef SWA__RE_MAX_RANGE

struct swa_vocab {
    int32_t n;
    const swa_str *pieces;     /* [n] strings inside the GGUF file */
    float *scores;             /* [n] merge priority: higher merges first */
    uint8_t *types;            /* [n] swa_token_type */
    swa__name_table lookup;    /* piece -> id (the first id on duplicates) */
    int32_t byte_token[256];   /* id of "<0xXX>", -1 when absent */
    int32_t bos, eos, unk;     /* -1 when absent */
    int add_bos, add_eos, add_space_prefix;
    int32_t n_special;         /* control, user-defined and unknown tokens */
    size_t *special_len;       /* the lengths of their texts, by first byte, longest first, each once */
    int32_t special_at[257];   /* special_len[special_at[b] .. special_at[b + 1]) are of texts starting with b */
    swa_str *piece_store;      /* owns pieces */
    /* byte-level BPE (tokenizer.ggml.model "gpt2") */
    int bpe;
    const swa__pretok *pre;
    swa__regex *regex;         /* [n_regex] the pre-tokenizer's expressions, compiled */
    int n_regex;
    struct swa__merge *merges; /* open addressing on the (left, right) pair of ids */
    uint64_t merge_mask;
    int32_t byte_char[256];    /* token of the character GPT-2's byte mapping gives each byte, or -1 */
};

typedef struct swa__merge {
    uint64_t key;              /* left id << 32 | right id; UINT64_MAX when the slot is empty */
    int32_t rank, id;          /* rank in tokenizer.ggml.merges (lower merges first), merged token */
} swa__merge;

/* An optional token id key. Absent means `def` (none when the vocabulary is smaller);
   0xFFFFFFFF and -1 mean none, as llama.cpp's converters write them. */
static swa_status swa__vocab_id(const swa_gguf *g, const char *key, int32_t def, int32_t n, int32_t *out,
                                swa_error *err)
{
    int64_t i = swa_gguf_kv_find(g, key), v = def < n ? def : -1;
    swa_gguf_value val;
    if (i >= 0) {
        val = swa_gguf_kv_value(g, i);
        if (val.type == SWA_GGUF_BOOL || swa_gguf_value_int(&val, &v) != SWA_OK)
            return swa__fail(err, SWA_ERR_FORMAT, "key %s: want a token id", key);
        if (v == 0xFFFFFFFFll) v = -1;
        if (v < -1 || v >= n)
            return swa__fail(err, SWA_ERR_FORMAT, "key %s: token id %lld is out of range 0..%d", key, (long long)v, n - 1);
    }
    *out = (int32_t)v;
    return SWA_OK;
}

/* An optional numeric array with one entry per token. */
static swa_status swa__vocab_array(const swa_gguf *g, const char *key, int32_t n, swa_gguf_value *arr,
                                   int *present, swa_error *err)
{
    int64_t i = swa_gguf_kv_find(g, key);
    *present = 0;
    if (i < 0) return SWA_OK;
    *arr = swa_gguf_kv_value(g, i);
    if (arr->type != SWA_GGUF_ARRAY || arr->elem_type == SWA_GGUF_STRING || arr->elem_type == SWA_GGUF_ARRAY)
        return swa__fail(err, SWA_ERR_FORMAT, "key %s: want an array of numbers", key);
    if (arr->n != (uint64_t)n)
        return swa__fail(err, SWA_ERR_FORMAT, "key %s has %llu entries, tokenizer.ggml.tokens has %d", key,
                         (unsigned long long)arr->n, n);
    *present = 1;
    return SWA_OK;
}

static int swa__parse_byte_piece(swa_str p, int *byte)   /* "<0x0A>" -> 10 */
{
    static const char hex[] = "0123456789ABCDEF";
    const char *hi, *lo;
    if (p.len != 6 || memcmp(p.ptr, "<0x", 3) != 0 || p.ptr[5] != '>') return 0;
    hi = strchr(hex, p.ptr[3]);
    lo = strchr(hex, p.ptr[4]);
    if (!hi || !lo || !p.ptr[3] || !p.ptr[4]) return 0;
    *byte = (int)(hi - hex) * 16 + (int)(lo - hex);
    return 1;
}

typedef struct swa__special_key {
    size_t len;
    int32_t id;
    unsigned char first;
} swa__special_key;

/* First byte, then longer piece first, then smaller id: a total order. */
static int swa__cmp_special(const void *a, const void *b)
{
    const swa__special_key *x = (const swa__special_key *)a, *y = (const swa__special_key *)b;
    if (x->first != y->first) return x->first < y->first ? -1 : 1;
    if (x->len != y->len) return x->len > y->len ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* The lengths special tokens (control, user-defined, unknown) have, grouped by first byte,
   longest first: matching at a position looks up the text of each length in the piece table,
   a few hash probes even with thousands of special tokens, and takes the longest. */
static swa_status swa__vocab_specials(swa_vocab *v, swa_error *err)
{
    swa__special_key *r = (swa__special_key *)swa__calloc((uint64_t)v->n, sizeof *r);
    int32_t i, n = 0, b;
    if (!r) return swa__fail(err, SWA_ERR_NOMEM, "cannot sort %d tokens", v->n);
    for (i = 0; i < v->n; i++)
        if ((v->types[i] == SWA_TOKEN_CONTROL || v->types[i] == SWA_TOKEN_USER_DEFINED ||
             v->types[i] == SWA_TOKEN_UNKNOWN) && v->pieces[i].len > 0) {
            r[n].len = v->pieces[i].len;
            r[n].first = (unsigned char)v->pieces[i].ptr[0];
            r[n++].id = i;
        }
    qsort(r, (size_t)n, sizeof *r, swa__cmp_special);
    v->n_special = n;
    for (i = 0, n = 0, b = 0; i < v->n_special; i++) {
        if (i > 0 && r[i].first == r[i - 1].first && r[i].len == r[i - 1].len) continue;
        while (b <= r[i].first) v->special_at[b++] = n;
        v->special_len[n++] = r[i].len;
    }
    while (b <= 256) v->special_at[b++] = n;
    SWA_FREE(r);
    return SWA_OK;
}

/* llama.cpp treats these as control tokens (ends of turn, fill-in-the-middle markers) whatever
   type the file gives them, so they never come out of plain text. */
static void swa__vocab_promote_control(swa_vocab *v)
{
    static const char *const names[] = {
        "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|eom_id|>", "<EOT>",
        "<\xef\xbd\x9c\x65nd\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>"   /* DeepSeek's, in full-width bars */
    };
    size_t i;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        int32_t id = swa_vocab_find(v, names[i]);
        if (id >= 0 && v->types[id] != SWA_TOKEN_CONTROL) v->types[id] = SWA_TOKEN_CONTROL;
    }
}

/* The character GPT-2's byte-level BPE writes for byte b: printable Latin-1 bytes stand for
   themselves, the other 68 take U+0100 onwards in byte order. */
static uint32_t swa__gpt2_char(unsigned b)
{
    if ((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE) return b;
    return b <= 0x20 ? 0x100 + b : b <= 0xA0 ? 0x121 + (b - 0x7F) : 0x143;
}

/* The byte a GPT-2 character stands for, or -1. */
static int swa__gpt2_byte(uint32_t c)
{
    if ((c >= 0x21 && c <= 0x7E) || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE && c <= 0xFF)) return (int)c;
    return c >= 0x100 && c <= 0x120 ? (int)(c - 0x100) : c >= 0x121 && c <= 0x142 ? (int)(c - 0x121 + 0x7F) : c == 0x143 ? 0xAD : -1;
}

static void swa__merge_insert(swa_vocab *v, int32_t left, int32_t right, int32_t rank, int32_t id)
{
    uint64_t key = (uint64_t)(uint32_t)left << 32 | (uint32_t)right, h;
    for (h = ((key * 0x9E3779B97F4A7C15ull) >> 20) & v->merge_mask;; h = (h + 1) & v->merge_mask) {
        if (v->merges[h].key == key) return;                  /* the first rank of a pair counts */
        if (v->merges[h].key == UINT64_MAX) {
            v->merges[h].key = key;
            v->merges[h].rank = rank;
            v->merges[h].id = id;
            return;
        }
    }
}

static const swa__merge *swa__merge_find(const swa_vocab *v, int32_t left, int32_t right)
{
    uint64_t key = (uint64_t)(uint32_t)left << 32 | (uint32_t)right, h;
    if (left < 0 || right < 0) return NULL;
    for (h = ((key * 0x9E3779B97F4A7C15ull) >> 20) & v->merge_mask;; h = (h + 1) & v->merge_mask) {
        if (v->merges[h].key == key) return &v->merges[h];
        if (v->merges[h].key == UINT64_MAX) return NULL;
    }
}

/* tokenizer.ggml.merges: "left right" strings, highest priority first. A merge whose parts or
   result are not tokens can never apply to token ids, so it is left out. */
static swa_status swa__vocab_merges(swa_vocab *v, const swa_gguf *g, swa_error *err)
{
    int64_t ki = swa_gguf_kv_find(g, "tokenizer.ggml.merges");
    swa_gguf_value arr = swa_gguf_kv_value(g, ki), e;
    uint64_t cap = 16, i;
    char *both;
    size_t longest = 0;
    int32_t k;
    if (ki < 0 || arr.type != SWA_GGUF_ARRAY || arr.elem_type != SWA_GGUF_STRING || arr.n > (uint64_t)INT32_MAX)
        return swa__fail(err, SWA_ERR_FORMAT, "key tokenizer.ggml.merges: want an array of strings (a gpt2 vocabulary needs it)");
    while (cap < arr.n * 2) cap *= 2;
    for (k = 0; k < v->n; k++) if (v->pieces[k].len > longest) longest = v->pieces[k].len;
    if (!(v->merges = (swa__merge *)swa__calloc(cap, sizeof *v->merges)) || !(both = (char *)SWA_MALLOC(longest + 1)))
        return swa__fail(err, SWA_ERR_NOMEM, "cannot allocate %llu merges", (unsigned long long)arr.n);
    v->merge_mask = cap - 1;
    for (i = 0; i < cap; i++) v->merges[i].key = UINT64_MAX;
    for (i = 0; i < arr.n; i++) {
        swa_str m = {"", 0};
        const char *sp;
        int64_t l, r, id;
        swa_gguf_value_at(&arr, i, &e);
        swa_gguf_value_str(&e, &m);
        if (m.len < 3 || !(sp = (const char *)memchr(m.ptr + 1, ' ', m.len - 1)) || m.len - 1 > longest) continue;
        l = swa__names_find(&v->lookup, v->pieces, sizeof(swa_str), m.ptr, (size_t)(sp - m.ptr), -1);
        r = swa__names_find(&v->lookup, v->pieces, sizeof(swa_str), sp + 1, m.len - (size_t)(sp - m.ptr) - 1, -1);
        memcpy(both, m.ptr, (size_t)(sp - m.ptr));
        memcpy(both + (sp - m.ptr), sp + 1, m.len - (size_t)(sp - m.ptr) - 1);
        id = swa__names_find(&v->lookup, v->pieces, sizeof(swa_str), both, m.len - 1, -1);
        if (l >= 0 && r >= 0 && id >= 0) swa__merge_insert(v, (int32_t)l, (int32_t)r, (int32_t)i, (int32_t)id);
    }
    SWA_FREE(both);
    return SWA_OK;
}

/* The byte-level BPE parts: pre-tokenizer, byte characters, merges. */
static swa_status swa__vocab_read_bpe(swa_vocab *v, const swa_gguf *g, swa_error *err)
{
    int64_t ki = swa_gguf_kv_find(g, "tokenizer.ggml.pre");
    swa_str name = {"default", 7};
    swa_gguf_value e;
    char c[4];
    int i;
    if (ki >= 0) {
        e = swa_gguf_kv_value(g, ki);
        if (swa_gguf_value_str(&e, &name) != SWA_OK)
            return swa__fail(err, SWA_ERR_FORMAT, "key tokenizer.ggml.pre: want a string");
    }
    if (!(v->pre = swa__pretok_find(name)))
        return swa__fail(err, SWA_ERR_UNSUPPORTED, "pre-tokenizer \"%.*s\" (tokenizer.ggml.pre) is not supported",
                         name.len > 48 ? 48 : (int)name.len, name.ptr);
    while (v->n_regex < 6 && v->pre->regex[v->n_regex]) v->n_regex++;
    if (!(v->regex = (swa__regex *)swa__calloc((uint64_t)v->n_regex, sizeof *v->regex)))
        return swa__fail(err, SWA_ERR_NOMEM, "cannot allocate a pre-tokenizer");
    for (i = 0; i < v->n_regex; i++)
        if (!swa__re_compile(&v->regex[i], v->pre->regex[i]))
            return swa__fail(err, SWA_ERR_UNSUPPORTED, "pre-tokenizer %.*s: expression %d does not compile",
                             (int)name.len, name.ptr, i);
    for (i = 0; i < 256; i++)
        v->byte_char[i] = (int32_t)swa__names_find(&v->lookup, v->pieces, sizeof(swa_str), c,
                                                   swa__utf8_put(swa__gpt2_char((unsigned)i), c), -1);
    return swa__vocab_merges(v, g, err);
}

static swa_status swa__vocab_read(swa_vocab *v, const swa_gguf *g, swa_error *err)
{
    swa_gguf_value tokens, scores, types, e;
    int has_scores, has_types, byte;
    int64_t ti = swa_gguf_kv_find(g, "tokenizer.ggml.model");
    swa_str model;
    int32_t i;
    swa_status s;
    if (ti < 0) return swa__fail(err, SWA_ERR_NOT_FOUND, "the file has no tokenizer (key tokenizer.ggml.model)");
    e = swa_gguf_kv_value(g, ti);
    if (swa_gguf_value_str(&e, &model) != SWA_OK)
        return swa__fail(err, SWA_ERR_FORMAT, "key tokenizer.ggml.model: want a string");
    v->bpe = swa__str_eq(model, "gpt2");
    if (!swa__str_eq(model, "llama") && !v->bpe)
        return swa__fail(err, SWA_ERR_UNSUPPORTED, "tokenizer \"%.*s\" is not supported (\"llama\", SentencePiece BPE, "
                         "and \"gpt2\", byte-level BPE, are)", model.len > 32 ? 32 : (int)model.len, model.ptr);
    ti = swa_gguf_kv_find(g, "tokenizer.ggml.tokens");
    tokens = swa_gguf_kv_value(g, ti);
    if (ti < 0 || tokens.type != SWA_GGUF_ARRAY || tokens.elem_type != SWA_GGUF_STRING || tokens.n == 0 ||
        tokens.n > (uint64_t)INT32_MAX)
        return swa__fail(err, SWA_ERR_FORMAT, "key tokenizer.ggml.tokens: want a non-empty array of strings");
    v->n = (int32_t)tokens.n;
    if ((s = swa__vocab_array(g, "tokenizer.ggml.scores", v->n, &scores, &has_scores, err)) != SWA_OK ||
        (s = swa__vocab_array(g, "tokenizer.ggml.token_type", v->n, &types, &has_types, err)) != SWA_OK)
        return s;
    v->piece_store = (swa_str *)swa__calloc((uint64_t)v->n, sizeof(swa_str));
    v->scores = (float *)swa__calloc((uint64_t)v->n, sizeof(float));
    v->types = (uint8_t *)swa__calloc((uint64_t)v->n, 1);
    v->special_len = (size_t *)swa__calloc((uint64_t)v->n, sizeof(size_t));
    if (!v->piece_store || !v->scores || !v->types || !v->special_len || swa__names_init(&v->lookup, v->n) != SWA_OK)
        return swa__fail(err, SWA_ERR_NOMEM, "cannot allocate a vocabulary of %d tokens", v->n);
    v->pieces = v->piece_store;
    for (i = 0; i < 256; i++) v->byte_token[i] = -1;
    for (i = 0; i < v->n; i++) {
        double score = 0.0;
        int64_t type = SWA_TOKEN_NORMAL;
        swa_gguf_value_at(&tokens, (uint64_t)i, &e);
        swa_gguf_value_str(&e, &v->piece_store[i]);
        if (has_scores && (swa_gguf_value_at(&scores, (uint64_t)i, &e), swa_gguf_value_float(&e, &score)) != SWA_OK)
            return swa__fail(err, SWA_ERR_FORMAT, "key tokenizer.ggml.scores: entry %d is not a number", i);
        if (has_types && (swa_gguf_value_at(&types, (uint64_t)i, &e), swa_gguf_value_int(&e, &type)) != SWA_OK)
            return swa__fail(err, SWA_ERR_FORMAT, "key tokenizer.ggml.token_type: entry %d is not an integer", i);
        if (!has_types && swa__parse_byte_piece(v->pieces[i], &byte)) type = SWA_TOKEN_BYTE;
        if (type < SWA_TOKEN_NORMAL || type > SWA_TOKEN_BYTE)
            return swa__fail(err, SWA_ERR_FORMAT, "key tokenizer.ggml.token_type: entry %d is %lld, want 1..6", i, (long long)type);
        v->scores[i] = (float)score;
        v->types[i] = (uint8_t)type;
        swa__names_find(&v->lookup, v->pieces, sizeof(swa_str), v->pieces[i].ptr, v->pieces[i].len, i);
        if (type == SWA_TOKEN_BYTE && swa__parse_byte_piece(v->pieces[i], &byte) && v->byte_token[byte] < 0)
            v->byte_token[byte] = i;
    }
    swa__vocab_promote_control(v);
    if ((s = swa__vocab_specials(v, err)) != SWA_OK) return s;
    if (v->bpe && (s = swa__vocab_read_bpe(v, g, err)) != SWA_OK) return s;
    /* defaults as llama.cpp's: SentencePiece <unk> <s> </s> are 0 1 2; GPT-2 files without ids
       are GPT-NeoX's, whose <|endoftext|> is 11 */
    if ((s = swa__vocab_id(g, "tokenizer.ggml.bos_token_id", v->bpe ? 11 : 1, v->n, &v->bos, err)) != SWA_OK ||
        (s = swa__vocab_id(g, "tokenizer.ggml.eos_token_id", v->bpe ? 11 : 2, v->n, &v->eos, err)) != SWA_OK ||
        (s = swa__vocab_id(g, "tokenizer.ggml.unknown_token_id", v->bpe ? INT32_MAX : 0, v->n, &v->unk, err)) != SWA_OK)
        return s;
    if ((s = swa__get_bool(g, "tokenizer.ggml.add_bos_token", v->bpe ? (v->pre->flags & SWA__PRETOK_ADD_BOS) != 0 : 1, &v->add_bos, err)) != SWA_OK ||
        (s = swa__get_bool(g, "tokenizer.ggml.add_eos_token", 0, &v->add_eos, err)) != SWA_OK ||
        (s = swa__get_bool(g, "tokenizer.ggml.add_space_prefix", !v->bpe, &v->add_space_prefix, err)) != SWA_OK)
        return s;
    if (v->bpe) v->add_space_prefix = 0;   /* byte-level BPE never adds one */
    return SWA_OK;
}

SWADEF void swa_vocab_free(swa_vocab *v)
{
    if (!v) return;
    SWA_FREE(v->piece_store);
    SWA_FREE(v->scores);
    SWA_FREE(v->types);
    SWA_FREE(v->special_len);
    SWA_FREE(v->lookup.slots);
    SWA_FREE(v->regex);
    SWA_FREE(v->merges);
    SWA_FREE(v);
}

SWADEF swa_status swa_vocab_load(const swa_gguf *g, swa_vocab **out, swa_error *err)
{
    swa_vocab *v;
    swa_status s;
    if (!out || !g) return swa__fail(err, SWA_ERR_INVALID_ARG, "swa_vocab_load: NULL argument");
    *out = NULL;
    if (!(v = (swa_vocab *)swa__calloc(1, sizeof *v))) return swa__fail(err, SWA_ERR_NOMEM, "cannot allocate a vocabulary");
    if ((s = swa__vocab_read(v, g, err)) != SWA_OK) {
        swa_vocab_free(v);
        return s;
    }
    *out = v;
    swa__ok(err);
    return SWA_OK;
}

SWADEF int32_t swa_vocab_size(const swa_vocab *v) { return v->n; }
SWADEF int32_t swa_vocab_bos(const swa_vocab *v) { return v->bos; }
SWADEF int32_t swa_vocab_eos(const swa_vocab *v) { return v->eos; }
SWADEF int swa_vocab_add_bos(const swa_vocab *v) { return v->add_bos; }
SWADEF int swa_vocab_add_eos(const swa_vocab *v) { return v->add_eos; }

SWADEF swa_str swa_vocab_piece(const swa_vocab *v, int32_t id)
{
    swa_str none = {"", 0};
    return id >= 0 && id < v->n ? v->pieces[id] : none;
}

SWADEF swa_token_type swa_vocab_type(const swa_vocab *v, int32_t id)
{
    return id >= 0 && id < v->n ? (swa_token_type)v->types[id] : SWA_TOKEN_UNUSED;
}

SWADEF int32_t swa_vocab_find(const swa_vocab *v, const char *piece)
{
    return (int32_t)swa__names_find(&v->lookup, v->pieces, sizeof(swa_str), piece, strlen(piece), -1);
}

/* A normal token with exactly this text, or -1: BPE merges only ever produce normal tokens,
   so control, byte and unknown pieces never come out of plain text. */
static int32_t swa__vocab_normal(const swa_vocab *v, const char *p, size_t n)
{
    int64_t id = swa__names_find(&v->lookup, v->pieces, sizeof(swa_str), p, n, -1);
    return id >= 0 && v->types[id] == SWA_TOKEN_NORMAL ? (int32_t)id : -1;
}

typedef struct swa__tokens {      /* output that keeps counting past the caller's capacity */
    int32_t *ids;
    size_t cap, n;
} swa__tokens;

static void swa__tokens_push(swa__tokens *t, int32_t id)
{
    if (t->n < t->cap) t->ids[t->n] = id;
    t->n++;
}

/* A merge that may apply to the neighbouring pieces left and right, in the binary heap both
   tokenizers take their next merge from: SentencePiece the highest score first, byte-level BPE
   the lowest rank, each the leftmost on ties (a tokenizer leaves the other's key at 0). */
typedef struct swa__candidate {
    float score;                  /* SentencePiece: the merged piece's score */
    int32_t rank;                 /* BPE: the merge's rank */
    int32_t left, right;
    int32_t left_id, right_id, id;   /* BPE: the tokens it joins and the one it makes */
    size_t len;                   /* SentencePiece: text length when queued: a stale entry no longer matches */
} swa__candidate;

static int swa__candidate_before(const swa__candidate *a, const swa__candidate *b)
{
    if (a->score != b->score) return a->score > b->score;
    if (a->rank != b->rank) return a->rank < b->rank;
    return a->left < b->left;
}

static void swa__heap_push(swa__candidate *h, size_t *n, swa__candidate b)
{
    size_t i = (*n)++;
    while (i > 0 && swa__candidate_before(&b, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = b;
}

static swa__candidate swa__heap_pop(swa__candidate *h, size_t *n)
{
    swa__candidate top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && swa__candidate_before(&h[c + 1], &h[c])) c++;
        if (!swa__candidate_before(&h[c], &last)) break;
        h[i] = h[c];
        i = c;
    }
    if (*n) h[i] = last;
    return top;
}

typedef struct swa__symbols {     /* the text as a linked list of pieces, merged in place */
    const char *text;
    size_t *off, *len;
    int32_t *prev, *next;
    swa__candidate *heap;
    size_t n_heap;
} swa__symbols;

static void swa__try_bigram(const swa_vocab *v, swa__symbols *s, int32_t left, int32_t right)
{
    swa__candidate b;
    int32_t id;
    if (left < 0 || right < 0) return;
    memset(&b, 0, sizeof b);
    b.len = s->len[left] + s->len[right];
    if ((id = swa__vocab_normal(v, s->text + s->off[left], b.len)) < 0) return;
    b.score = v->scores[id];
    b.left = left;
    b.right = right;
    swa__heap_push(s->heap, &s->n_heap, b);
}

/* SentencePiece BPE on one run of text (spaces already turned into "▁"): start from single
   characters, repeatedly merge the adjacent pair whose merged piece has the highest score
   (leftmost on ties), then map each piece to its token, or to byte tokens when it has none. */
static swa_status swa__bpe(const swa_vocab *v, const char *text, size_t len, swa__tokens *out, swa_error *err)
{
    swa__symbols s;
    size_t n = 0, i, b;
    int32_t k;
    if (len == 0) return SWA_OK;
    memset(&s, 0, sizeof s);
    s.text = text;
    s.off = (size_t *)swa__calloc(len, sizeof(size_t));
    s.len = (size_t *)swa__calloc(len, sizeof(size_t));
    s.prev = (int32_t *)swa__calloc(len, sizeof(int32_t));
    s.next = (int32_t *)swa__calloc(len, sizeof(int32_t));
    s.heap = (swa__candidate *)swa__calloc(len, 3 * sizeof(swa__candidate));   /* n-1 pairs + 2 per merge */
    if (!s.off || !s.len || !s.prev || !s.next || !s.heap || len > (size_t)INT32_MAX) {
        SWA_FREE(s.off); SWA_FREE(s.len); SWA_FREE(s.prev); SWA_FREE(s.next); SWA_FREE(s.heap);
        return swa__fail(err, SWA_ERR_NOMEM, "cannot tokenize %zu bytes", len);
    }
    for (i = 0; i < len; n++) {
        size_t c = swa__utf8_len((unsigned char)text[i]), take;
        /* a lead byte takes only real continuation bytes: in broken UTF-8 it must not swallow
           the start of the next character (a "▁" would then come out as three byte tokens) */
        for (take = 1; take < c && i + take < len && ((unsigned char)text[i + take] & 0xC0) == 0x80; take++) {}
        s.off[n] = i;
        s.len[n] = take;
        s.prev[n] = (int32_t)n - 1;
        s.next[n] = i + s.len[n] < len ? (int32_t)n + 1 : -1;
        i += s.len[n];
    }
    for (i = 0; i + 1 < n; i++) swa__try_bigram(v, &s, (int32_t)i, (int32_t)i + 1);
    while (s.n_heap) {
        swa__candidate top = swa__heap_pop(s.heap, &s.n_heap);
        int32_t l = top.left, r = top.right;
        if (s.len[l] == 0 || s.len[r] == 0 || s.len[l] + s.len[r] != top.len) continue;   /* stale */
        s.len[l] += s.len[r];
        s.len[r] = 0;
        s.next[l] = s.next[r];
        if (s.next[r] >= 0) s.prev[s.next[r]] = l;
        swa__try_bigram(v, &s, s.prev[l], l);
        swa__try_bigram(v, &s, l, s.next[l]);
    }
    for (k = 0; k >= 0; k = s.next[k]) {
        int32_t id = swa__vocab_normal(v, text + s.off[k], s.len[k]);
        if (id >= 0) {
            swa__tokens_push(out, id);
            continue;
        }
        for (b = 0; b < s.len[k]; b++) {   /* byte fallback */
            int32_t bt = v->byte_token[(unsigned char)text[s.off[k] + b]];
            swa__tokens_push(out, bt >= 0 ? bt : v->unk >= 0 ? v->unk : 0);
        }
    }
    SWA_FREE(s.off); SWA_FREE(s.len); SWA_FREE(s.prev); SWA_FREE(s.next); SWA_FREE(s.heap);
    return SWA_OK;
}

/* Escape a run of text the SentencePiece way ("▁" for each space, one more in front when asked)
   and run BPE on it. */
static swa_status swa__tokenize_run(const swa_vocab *v, const char *text, size_t len, int prefix,
                                    swa__tokens *out, swa_error *err)
{
    char *esc;
    size_t i, n = 0;
    swa_status s;
    if (len == 0) return SWA_OK;
    if (len > (SIZE_MAX - 3) / 3 || !(esc = (char *)SWA_MALLOC(3 * len + 3)))
        return swa__fail(err, SWA_ERR_NOMEM, "cannot tokenize %zu bytes", len);
    if (prefix) { memcpy(esc, "\xe2\x96\x81", 3); n = 3; }
    for (i = 0; i < len; i++) {
        if (text[i] == ' ') { memcpy(esc + n, "\xe2\x96\x81", 3); n += 3; }
        else esc[n++] = text[i];
    }
    s = swa__bpe(v, esc, n, out, err);
    SWA_FREE(esc);
    return s;
}

/* ---- byte-level BPE ---- */

typedef struct swa__bpe_work {    /* one word as a linked list of tokens, merged in place */
    int32_t *id, *prev, *next;    /* next[k] == -2: merged into its left neighbour */
    swa__candidate *heap;
    size_t n_heap;
    char *enc;                    /* the word in GPT-2 characters (SWA__PRETOK_WORD_TOKENS) */
} swa__bpe_work;

static void swa__bpe_try(const swa_vocab *v, swa__bpe_work *w, int32_t left, int32_t right)
{
    const swa__merge *m;
    swa__candidate p;
    if (left < 0 || right < 0 || !(m = swa__merge_find(v, w->id[left], w->id[right]))) return;
    memset(&p, 0, sizeof p);
    p.rank = m->rank;
    p.left = left;
    p.right = right;
    p.left_id = w->id[left];
    p.right_id = w->id[right];
    p.id = m->id;
    swa__heap_push(w->heap, &w->n_heap, p);
}

/* One pre-tokenized word of n bytes: each byte becomes the token of its GPT-2 character, then
   the adjacent pair with the lowest merge rank (leftmost on ties) merges until none applies.
   Bytes whose character is not a token are dropped, as llama.cpp drops them. */
static void swa__bpe_word(const swa_vocab *v, const unsigned char *s, size_t n, swa__bpe_work *w, swa__tokens *out)
{
    size_t i;
    int32_t k;
    if (v->pre->flags & SWA__PRETOK_WORD_TOKENS) {
        size_t len = 0;
        int64_t id;
        for (i = 0; i < n; i++) len += swa__utf8_put(swa__gpt2_char(s[i]), w->enc + len);
        if ((id = swa__names_find(&v->lookup, v->pieces, sizeof(swa_str), w->enc, len, -1)) >= 0) {
            swa__tokens_push(out, (int32_t)id);
            return;
        }
    }
    for (i = 0; i < n; i++) {
        w->id[i] = v->byte_char[s[i]];
        w->prev[i] = (int32_t)i - 1;
        w->next[i] = i + 1 < n ? (int32_t)i + 1 : -1;
    }
    w->n_heap = 0;
    for (i = 0; i + 1 < n; i++) swa__bpe_try(v, w, (int32_t)i, (int32_t)i + 1);
    while (w->n_heap) {
        swa__candidate p = swa__heap_pop(w->heap, &w->n_heap);
        int32_t l = p.left, r = p.right;
        if (w->next[l] != r || w->id[l] != p.left_id || w->id[r] != p.right_id) continue;   /* stale */
        w->id[l] = p.id;
        w->next[l] = w->next[r];
        if (w->next[r] >= 0) w->prev[w->next[r]] = l;
        w->next[r] = -2;
        swa__bpe_try(v, w, w->prev[l], l);
        swa__bpe_try(v, w, l, w->next[l]);
    }
    for (k = 0; k >= 0; k = w->next[k])
        if (w->id[k] >= 0) swa__tokens_push(out, w->id[k]);
}

typedef struct swa__words {       /* a run of text decoded and cut into words */
    uint32_t *cp;                 /* [n] code points; a byte that is not valid UTF-8 is 0x110000 + it */
    uint16_t *flags;              /* [n] SWA__UCF_* */
    uint8_t *len;                 /* [n] bytes of each character */
    uint8_t *cut;                 /* [n + 1] 1 where a word starts */
    size_t n;
} swa__words;

static void swa__words_free(swa__words *w)
{
    SWA_FREE(w->cp); SWA_FREE(w->flags); SWA_FREE(w->len); SWA_FREE(w->cut);
    memset(w, 0, sizeof *w);
}

/* Decode len bytes of text and cut them into words with n_re expressions in turn. */
static swa_status swa__pretokenize(const swa__regex *re, int n_re, const char *text, size_t len, swa__words *w,
                                   swa_error *err)
{
    const unsigned char *s = (const unsigned char *)text;
    swa__re_stack st = {NULL, 0, 0};
    swa__chars t;
    size_t i, n = 0;
    int r;
    memset(w, 0, sizeof *w);
    w->cp = (uint32_t *)swa__calloc(len + 1, sizeof *w->cp);
    w->flags = (uint16_t *)swa__calloc(len + 1, sizeof *w->flags);
    w->len = (uint8_t *)swa__calloc(len + 1, 1);
    w->cut = (uint8_t *)swa__calloc(len + 1, 1);
    if (!w->cp || !w->flags || !w->len || !w->cut || len > (size_t)INT32_MAX) {
        swa__words_free(w);
        return swa__fail(err, SWA_ERR_NOMEM, "cannot pre-tokenize %zu bytes", len);
    }
    for (i = 0; i < len; i += w->len[n++]) {
        size_t l;
        w->cp[n] = swa__utf8_get(s + i, len - i, &l);
        w->len[n] = (uint8_t)l;
        /* broken UTF-8 splits as llama.cpp's U+FFFD would, a symbol, but keeps its bytes */
        w->flags[n] = (uint16_t)(w->cp[n] > 0x10FFFF ? 1u << SWA__UC_S : swa__uc_flags(w->cp[n]));
    }
    w->n = n;
    w->cut[0] = 1;
    t.cp = w->cp;
    t.flags = w->flags;
    for (r = 0; r < n_re; r++)
        if (swa__re_split(&re[r], &t, n, w->cut, &st) != SWA_OK) {
            SWA_FREE(st.at);
            swa__words_free(w);
            return swa__fail(err, SWA_ERR_NOMEM, "cannot pre-tokenize %zu bytes", len);
        }
    SWA_FREE(st.at);
    return SWA_OK;
}

/* The pieces the pre-tokenizer called name cuts len bytes of text into, as the byte offsets where
   each ends: SWA_ERR_NOT_FOUND for an unknown name, SWA_ERR_FORMAT when one of its expressions
   does not compile, SWA_ERR_BUFFER_TOO_SMALL when more than cap pieces (*n_out says how many). */
SWA__INTERNAL swa_status swa__pretok_pieces(const char *name, const char *text, size_t len, size_t *ends, size_t cap,
                                     size_t *n_out, swa_error *err)
{
    swa_str sname;
    const swa__pretok *pre;
    swa__regex *re;
    swa__words w;
    swa_status s;
    size_t i, at = 0;
    int n_re = 0;
    sname.ptr = name;
    sname.len = strlen(name);
    *n_out = 0;
    if (!(pre = swa__pretok_find(sname))) return swa__fail(err, SWA_ERR_NOT_FOUND, "no pre-tokenizer %s", name);
    if (!(re = (swa__regex *)swa__calloc(6, sizeof *re))) return swa__fail(err, SWA_ERR_NOMEM, "out of memory");
    for (; n_re < 6 && pre->regex[n_re]; n_re++)
        if (!swa__re_compile(&re[n_re], pre->regex[n_re])) {
            SWA_FREE(re);
            return swa__fail(err, SWA_ERR_FORMAT, "%s: expression %d does not compile", name, n_re);
        }
    s = swa__pretokenize(re, n_re, text, len, &w, err);
    SWA_FREE(re);
    if (s != SWA_OK) return s;
    for (i = 1; i <= w.n; i++) {
        at += w.len[i - 1];
        if (i < w.n && !w.cut[i]) continue;
        if (*n_out < cap) ends[*n_out] = at;
        ++*n_out;
    }
    swa__words_free(&w);
    return *n_out > cap ? swa__fail(err, SWA_ERR_BUFFER_TOO_SMALL, "%zu pieces", *n_out) : SWA_OK;
}

/* A run of text between special tokens: cut it into words with the pre-tokenizer and run BPE
   on each word. */
static swa_status swa__bpe_run(const swa_vocab *v, const char *text, size_t len, swa__tokens *out, swa_error *err)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i, k, longest = 0, at;
    swa__bpe_work w;
    swa__words words;
    swa_status status;
    if (len == 0) return SWA_OK;
    if ((status = swa__pretokenize(v->regex, v->n_regex, text, len, &words, err)) != SWA_OK) return status;
    for (i = 0, at = 0, k = 0; i <= words.n; i++) {           /* the longest word, in bytes */
        if (i == words.n || words.cut[i]) {
            if (at - k > longest) longest = at - k;
            k = at;
        }
        if (i < words.n) at += words.len[i];
    }
    memset(&w, 0, sizeof w);
    w.id = (int32_t *)swa__calloc(longest, sizeof(int32_t));
    w.prev = (int32_t *)swa__calloc(longest, sizeof(int32_t));
    w.next = (int32_t *)swa__calloc(longest, sizeof(int32_t));
    w.heap = (swa__candidate *)swa__calloc(longest, 3 * sizeof(swa__candidate));   /* n-1 pairs + 2 per merge */
    w.enc = (char *)swa__calloc(longest, 2);
    if (!w.id || !w.prev || !w.next || !w.heap || !w.enc) {
        status = swa__fail(err, SWA_ERR_NOMEM, "cannot tokenize a word of %zu bytes", longest);
    } else {
        for (i = 1, at = words.len[0], k = 0; i <= words.n; i++) {
            if (i == words.n || words.cut[i]) {
                swa__bpe_word(v, s + k, at - k, &w, out);
                k = at;
            }
            if (i < words.n) at += words.len[i];
        }
    }
    swa__words_free(&words);
    SWA_FREE(w.id); SWA_FREE(w.prev); SWA_FREE(w.next); SWA_FREE(w.heap); SWA_FREE(w.enc);
    return status;
}

/* A run of plain text, by the vocabulary's kind. SentencePiece puts a space before a run that
   starts the text or follows a special token, when the vocabulary asks for it. */
static swa_status swa__run(const swa_vocab *v, const char *text, size_t len, swa__tokens *out, swa_error *err)
{
    if (v->bpe) return swa__bpe_run(v, text, len, out, err);
    return swa__tokenize_run(v, text, len, v->add_space_prefix, out, err);
}

/* The special token whose text starts at p (the longest one), or -1. User-defined tokens always
   count; control and unknown tokens only when asked (SWA_TOKENIZE_SPECIAL), as in llama.cpp. */
static int32_t swa__match_special(const swa_vocab *v, const char *p, size_t left, int flags)
{
    int32_t i, first = (unsigned char)p[0];
    for (i = v->special_at[first]; i < v->special_at[first + 1]; i++) {
        int64_t id;
        if (v->special_len[i] > left) continue;
        id = swa__names_find(&v->lookup, v->pieces, sizeof(swa_str), p, v->special_len[i], -1);
        if (id < 0) continue;
        if (v->types[id] == SWA_TOKEN_USER_DEFINED ||
            ((flags & SWA_TOKENIZE_SPECIAL) && (v->types[id] == SWA_TOKEN_CONTROL || v->types[id] == SWA_TOKEN_UNKNOWN)))
            return (int32_t)id;
    }
    return -1;
}

SWADEF swa_status swa_tokenize(const swa_vocab *v, const char *text, size_t len, int flags,
                               int32_t *out, size_t cap, size_t *n_out, swa_error *err)
{
    swa__tokens t;
    size_t start = 0, i;
    swa_status s;
    if (n_out) *n_out = 0;
    if (!v || (!text && len) || (!out && cap) || !n_out)
        return swa__fail(err, SWA_ERR_INVALID_ARG, "swa_tokenize: NULL argument");
    t.ids = out;
    t.cap = cap;
    t.n = 0;
    if ((flags & SWA_TOKENIZE_ADD_BOS) && v->bos >= 0) swa__tokens_push(&t, v->bos);
    /* The text is cut at special tokens first, the longest at each position, leftmost first;
       empty runs of plain text give nothing. */
    for (i = 0; v->n_special && i < len; i++) {
        int32_t id = swa__match_special(v, text + i, len - i, flags);
        if (id < 0) continue;
        if ((s = swa__run(v, text + start, i - start, &t, err)) != SWA_OK) return s;
        swa__tokens_push(&t, id);
        start = i + v->pieces[id].len;
        i = start - 1;
    }
    if ((s = swa__run(v, text + start, len - start, &t, err)) != SWA_OK) return s;
    if ((flags & SWA_TOKENIZE_ADD_EOS) && v->eos >= 0) swa__tokens_push(&t, v->eos);
    *n_out = t.n;
    if (t.n > cap)
        return swa__fail(err, SWA_ERR_BUFFER_TOO_SMALL, "%zu tokens do not fit in a buffer of %zu", t.n, cap);
    swa__ok(err);
    return SWA_OK;
}

/* A byte-level BPE token's text: normal tokens map their GPT-2 characters back to bytes
   (a character outside the mapping stays as written); user-defined tokens are their text;
   control, unknown and unused tokens are nothing, as in llama.cpp. */
static size_t swa__bpe_token_text(const swa_vocab *v, int32_t id, char *buf, size_t cap)
{
    const unsigned char *p = (const unsigned char *)v->pieces[id].ptr;
    size_t len = v->pieces[id].len, i, k, n = 0;
    if (v->types[id] == SWA_TOKEN_USER_DEFINED) {
        if (cap) memcpy(buf, p, len < cap ? len : cap);
        return len;
    }
    if (v->types[id] != SWA_TOKEN_NORMAL) return 0;
    for (i = 0; i < len; i += k) {
        uint32_t c = swa__utf8_get(p + i, len - i, &k);
        int b = swa__gpt2_byte(c);
        if (b >= 0) {
            if (n < cap) buf[n] = (char)b;
            n++;
            continue;
        }
        for (b = 0; b < (int)k; b++, n++) if (n < cap) buf[n] = (char)p[i + (size_t)b];
    }
    return n;
}

SWADEF size_t swa_token_to_text(const swa_vocab *v, int32_t id, char *buf, size_t cap)
{
    swa_str p;
    size_t i, n = 0;
    int byte;
    if (!v || id < 0 || id >= v->n) return 0;
    p = v->pieces[id];
    if (v->bpe) return swa__bpe_token_text(v, id, buf, cap);
    switch (v->types[id]) {
    case SWA_TOKEN_BYTE:
        if (!swa__parse_byte_piece(p, &byte)) return 0;
        if (cap) buf[0] = (char)byte;
        return 1;
    case SWA_TOKEN_UNKNOWN:
        p.ptr = " \xe2\x81\x87 ";   /* SentencePiece shows unknown pieces as " ⁇ " */
        p.len = 5;
        break;
    case SWA_TOKEN_CONTROL: case SWA_TOKEN_UNUSED:
        return 0;
    default:
        break;
    }
    for (i = 0; i < p.len; i++) {
        char c = p.ptr[i];
        if (i + 2 < p.len && memcmp(p.ptr + i, "\xe2\x96\x81", 3) == 0) { c = ' '; i += 2; }
        if (n < cap) buf[n] = c;
        n++;
    }
    return n;
}

SWADEF void swa_decoder_init(swa_decoder *d, const swa_vocab *v)
{
    memset(d, 0, sizeof *d);
    d->vocab = v;
    d->at_start = 1;
}

/* Bytes at the end of p[0..n) that start a UTF-8 character still missing bytes (0 to 3). */
static size_t swa__utf8_unfinished(const unsigned char *p, size_t n)
{
    size_t i;
    for (i = n; i > 0 && n - i < 4; i--) {
        unsigned char c = p[i - 1];
        if ((c & 0xC0) == 0x80) continue;                       /* a continuation byte */
        return c >= 0xC0 && swa__utf8_len(c) > n - (i - 1) ? n - (i - 1) : 0;
    }
    return 0;
}

/* The held bytes, then the token's text, straight into out; an unfinished character at the end
   is held back for the next token. Text that does not fit in cap is cut at a character start. */
SWADEF size_t swa_decoder_push(swa_decoder *d, int32_t id, char *out, size_t cap)
{
    size_t held = (size_t)d->n_pending, len = swa_token_to_text(d->vocab, id, NULL, 0), room, n, tail;
    if (len == 0 || cap <= held) return 0;
    memcpy(out, d->pending, held);
    room = cap - held;
    n = swa_token_to_text(d->vocab, id, out + held, room);
    if (n > room) n = room;
    if (d->at_start) {
        d->at_start = 0;
        if (d->vocab->add_space_prefix && out[held] == ' ') memmove(out + held, out + held + 1, --n);
    }
    n += held;
    tail = swa__utf8_unfinished((const unsigned char *)out, n);
    d->n_pending = 0;
    if (len <= room) {                                          /* all of it: hold the tail */
        memcpy(d->pending, out + n - tail, tail);
        d->n_pending = (int)tail;
    }
    return n - tail;
}

SWADEF size_t swa_decoder_flush(swa_decoder *d, char *out, size_t cap)
{
    size_t n = (size_t)d->n_pending < cap ? (size_t)d->n_pending : cap;
    memcpy(out, d->pending, n);
    d->n_pending = 0;
    return n;
}

#else /* SWA_NO_TOKENIZER: a vocabulary never loads, so a model has none */

struct swa_vocab {
    int32_t n;
};

SWADEF swa_status swa_vocab_load(const swa_gguf *g, swa_vocab **out, swa_error *err)
{
    (void)g;
    (void)swa__get_bool;    /* the model section's reader of the tokenizer's keys */
    if (out) *out = NULL;
    return swa__fail(err, SWA_ERR_UNSUPPORTED, "the library was built with SWA_NO_TOKENIZER");
}

SWADEF void swa_vocab_free(swa_vocab *v) { (void)v; }
SWADEF int32_t swa_vocab_size(const swa_vocab *v) { return v ? v->n : 0; }
#endif /* SWA_NO_TOKENIZER */

/* ==== JSON and text buffers ====
   A JSON reader for what the library is given as JSON (schemas, a template's variables, the
   arguments of tool calls) and a growing text buffer for what it writes (grammars, rendered
   templates). The reader checks the whole text first and counts what it holds, then builds the
   tree in one allocation, so a tree is freed with one SWA_FREE and a failed parse leaves
   nothing behind. Some builds leave these uncalled (SWA__UNUSED). */

/* The reader walks the text three times with the same code: to check it and count nodes,
   containers and string bytes; to note each container's size (in the order containers open);
   and to build the tree into the one block sized by the first walk. */
typedef struct swa__json_reader {
    const char *start, *p, *end;
    int walk;                         /* 0 check and count, 1 sizes, 2 build */
    size_t n_nodes, n_containers, n_bytes;
    size_t *sizes, next_container;    /* walks 1 and 2: members per container */
    swa__json *nodes;                 /* walk 2 */
    size_t next_node;
    char *bytes;
    size_t next_byte;
    swa_error *err;
} swa__json_reader;

static swa_status swa__json_fail(swa__json_reader *r, const char *what)
{
    size_t line = 1, col = 1;
    const char *q;
    for (q = r->start; q < r->p; q++) {
        if (*q == '\n') { line++; col = 1; }
        else if (((unsigned char)*q & 0xC0) != 0x80) col++;    /* columns count characters */
    }
    return swa__fail(r->err, SWA_ERR_FORMAT, "JSON: line %zu, column %zu: %s", line, col, what);
}

static void swa__json_space(swa__json_reader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')) r->p++;
}

static int swa__json_hex4(const char *p, uint32_t *out)
{
    uint32_t v = 0;
    int i;
    for (i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return 0;
        v = v << 4 | (uint32_t)d;
    }
    *out = v;
    return 1;
}

/* One \u escape at r->p (after the backslash and u), with its low surrogate when it is a high one. */
static swa_status swa__json_escape_u(swa__json_reader *r, uint32_t *cp)
{
    uint32_t lo;
    if (r->end - r->p < 4 || !swa__json_hex4(r->p, cp)) return swa__json_fail(r, "\\u needs four hex digits");
    r->p += 4;
    if (*cp >= 0xDC00 && *cp <= 0xDFFF) return swa__json_fail(r, "a low surrogate without a high one");
    if (*cp < 0xD800 || *cp > 0xDBFF) return SWA_OK;
    if (r->end - r->p < 6 || r->p[0] != '\\' || r->p[1] != 'u' || !swa__json_hex4(r->p + 2, &lo) || lo < 0xDC00 ||
        lo > 0xDFFF)
        return swa__json_fail(r, "a high surrogate without a low one");
    r->p += 6;
    *cp = 0x10000 + ((*cp - 0xD800) << 10) + (lo - 0xDC00);
    return SWA_OK;
}

/* A string at r->p (at its opening quote): decoded into dst when dst is set; *n its length. */
static swa_status swa__json_string(swa__json_reader *r, char *dst, size_t *n)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    *n = 0;
    for (r->p++;;) {
        unsigned char c;
        if (r->p >= r->end) return swa__json_fail(r, "a string has no closing quote");
        c = (unsigned char)*r->p;
        if (c == '"') { r->p++; return SWA_OK; }
        if (c < 0x20) return swa__json_fail(r, "a control character in a string (escape it)");
        if (c == '\\') {
            const char *e = r->p + 1 < r->end ? strchr(from, r->p[1]) : NULL;
            char enc[4];
            uint32_t cp;
            size_t k;
            r->p += 2;
            if (e && *e) { if (dst) dst[*n] = to[e - from]; (*n)++; continue; }
            if (r->p > r->end || r->p[-1] != 'u') { r->p--; return swa__json_fail(r, "an unknown escape in a string"); }
            if (swa__json_escape_u(r, &cp)) return SWA_ERR_FORMAT;
            k = swa__utf8_put(cp, enc);
            if (dst) memcpy(dst + *n, enc, k);
            *n += k;
        } else {
            size_t k;
            (void)swa__utf8_get((const unsigned char *)r->p, (size_t)(r->end - r->p), &k);
            if (k == 1 && c >= 0x80) return swa__json_fail(r, "a string is not valid UTF-8");
            if (dst) memcpy(dst + *n, r->p, k);
            *n += k;
            r->p += k;
        }
    }
}

/* A number at r->p, checked against JSON's grammar; INT when it has no fraction or exponent and
   fits in 64 bits. Converted with strtod under the C locale's decimal point. */
static swa_status swa__json_number(swa__json_reader *r, swa__json *out)
{
    const char *s = r->p, *q = s;
    char buf[64];
    int frac = 0;
    if (q < r->end && *q == '-') q++;
    if (q >= r->end || *q < '0' || *q > '9') return swa__json_fail(r, "expected a value");
    if (*q == '0') q++;
    else while (q < r->end && *q >= '0' && *q <= '9') q++;
    if (q < r->end && *q == '.') {
        frac = 1;
        if (++q >= r->end || *q < '0' || *q > '9') { r->p = q; return swa__json_fail(r, "a digit must follow the decimal point"); }
        while (q < r->end && *q >= '0' && *q <= '9') q++;
    }
    if (q < r->end && (*q == 'e' || *q == 'E')) {
        frac = 1;
        if (++q < r->end && (*q == '+' || *q == '-')) q++;
        if (q >= r->end || *q < '0' || *q > '9') { r->p = q; return swa__json_fail(r, "an exponent needs digits"); }
        while (q < r->end && *q >= '0' && *q <= '9') q++;
    }
    if ((size_t)(q - s) >= sizeof buf) return swa__json_fail(r, "a number longer than 63 characters");
    r->p = q;
    if (!out) return SWA_OK;
    memcpy(buf, s, (size_t)(q - s));
    buf[q - s] = '\0';
    out->kind = SWA__JSON_REAL;
    if (!frac) {
        errno = 0;
        out->i = (int64_t)strtoll(buf, NULL, 10);
        if (errno != ERANGE) out->kind = SWA__JSON_INT;
    }
    {
        char *dot = strchr(buf, '.'), *point = localeconv()->decimal_point;
        if (dot && point && *point) *dot = *point;
        out->num = strtod(buf, NULL);
    }
    return SWA_OK;
}

static swa_status swa__json_value(swa__json_reader *r, swa__json *out, int depth);

/* An array or object at r->p (at its bracket), each member through swa__json_value. */
static swa_status swa__json_container(swa__json_reader *r, swa__json *out, int depth)
{
    int object = *r->p == '{';
    char close = object ? '}' : ']';
    size_t count = 0, id = r->n_containers, k;
    swa__json *items = NULL;
    if (depth >= SWA__JSON_MAX_DEPTH) return swa__json_fail(r, "nesting deeper than 256");
    if (r->walk == 0) r->n_containers++;
    else id = r->next_container++;
    if (r->walk == 2) {
        items = r->nodes + r->next_node;
        r->next_node += r->sizes[id];
        out->kind = object ? SWA__JSON_OBJECT : SWA__JSON_ARRAY;
        out->items = r->sizes[id] ? items : NULL;
        out->n = r->sizes[id];
    }
    r->p++;
    swa__json_space(r);
    if (r->p < r->end && *r->p == close) { r->p++; if (r->walk == 1) r->sizes[id] = 0; return SWA_OK; }
    for (;; count++) {
        swa__json *item = items ? items + count : NULL;
        swa__json_space(r);
        if (object) {
            if (r->p >= r->end || *r->p != '"') return swa__json_fail(r, "expected a member's name in quotes");
            if (swa__json_string(r, item ? r->bytes + r->next_byte : NULL, &k)) return SWA_ERR_FORMAT;
            if (item) { item->key = r->bytes + r->next_byte; item->key_len = k; r->bytes[r->next_byte + k] = '\0'; }
            if (r->walk == 0) r->n_bytes += k + 1;
            if (item) r->next_byte += k + 1;
            swa__json_space(r);
            if (r->p >= r->end || *r->p != ':') return swa__json_fail(r, "expected ':' after a member's name");
            r->p++;
        }
        if (r->walk == 0) r->n_nodes++;
        if (swa__json_value(r, item, depth + 1)) return SWA_ERR_FORMAT;
        swa__json_space(r);
        if (r->p < r->end && *r->p == ',') { r->p++; continue; }
        if (r->p < r->end && *r->p == close) break;
        return swa__json_fail(r, object ? "expected ',' or '}'" : "expected ',' or ']'");
    }
    r->p++;
    if (r->walk == 1) r->sizes[id] = count + 1;
    return SWA_OK;
}

static swa_status swa__json_value(swa__json_reader *r, swa__json *out, int depth)
{
    static const char *const words[3] = {"null", "false", "true"};
    size_t k;
    swa__json_space(r);
    if (r->p >= r->end) return swa__json_fail(r, "expected a value, found the end of the text");
    if (*r->p == '{' || *r->p == '[') return swa__json_container(r, out, depth);
    if (*r->p == '"') {
        char *dst = out ? r->bytes + r->next_byte : NULL;
        if (swa__json_string(r, dst, &k)) return SWA_ERR_FORMAT;
        if (r->walk == 0) r->n_bytes += k + 1;
        if (out) { dst[k] = '\0'; out->kind = SWA__JSON_STRING; out->str = dst; out->len = k; r->next_byte += k + 1; }
        return SWA_OK;
    }
    for (k = 0; k < 3; k++) {
        size_t n = strlen(words[k]);
        if ((size_t)(r->end - r->p) >= n && memcmp(r->p, words[k], n) == 0) {
            r->p += n;
            if (out) out->kind = (swa__json_kind)(SWA__JSON_NULL + (int)k);
            return SWA_OK;
        }
    }
    return swa__json_number(r, out);
}

/* One walk over the whole text: a value and nothing after it but whitespace. */
static swa_status swa__json_walk(swa__json_reader *r, swa__json *root)
{
    r->p = r->start;
    r->next_container = 0;
    if (swa__json_value(r, root, 0)) return SWA_ERR_FORMAT;
    swa__json_space(r);
    return r->p == r->end ? SWA_OK : swa__json_fail(r, "text after the value");
}

/* Parse len bytes of JSON (RFC 8259: one value, whitespace around it). The tree is one
   allocation, freed with SWA_FREE(*root); depth is capped at SWA__JSON_MAX_DEPTH. Errors
   (SWA_ERR_FORMAT) say what was wrong and where, by line and column. */
SWA__INTERNAL swa_status swa__json_parse(const char *text, size_t len, swa__json **root, swa_error *err)
{
    swa__json_reader r;
    uint64_t bytes, nodes_bytes;
    void *block;
    *root = NULL;
    memset(&r, 0, sizeof r);
    r.start = text;
    r.end = text + len;
    r.err = err;
    r.n_nodes = 1;
    if (swa__json_walk(&r, NULL)) return SWA_ERR_FORMAT;
    if (!swa__mul_u64(r.n_nodes, sizeof(swa__json), &nodes_bytes) ||
        !swa__add_u64(nodes_bytes, (uint64_t)r.n_containers * sizeof(size_t), &bytes) ||
        !swa__add_u64(bytes, r.n_bytes, &bytes) || !(block = swa__calloc(1, bytes)))
        return swa__fail(err, SWA_ERR_NOMEM, "JSON: cannot allocate %zu values", r.n_nodes);
    r.nodes = (swa__json *)block;
    r.sizes = (size_t *)(void *)((char *)block + nodes_bytes);
    r.bytes = (char *)(r.sizes + r.n_containers);
    r.walk = 1;
    (void)swa__json_walk(&r, NULL);   /* the text is known good: the walks cannot fail */
    r.walk = 2;
    r.next_node = 1;
    (void)swa__json_walk(&r, r.nodes);
    *root = r.nodes;
    swa__ok(err);
    return SWA_OK;
}

/* The member named key of an object (the last one when a name repeats, as Python's json keeps);
   NULL when there is none or obj is not an object. */
SWA__INTERNAL const swa__json *swa__json_get(const swa__json *obj, const char *key)
{
    size_t i, n = strlen(key);
    if (!obj || obj->kind != SWA__JSON_OBJECT) return NULL;
    for (i = obj->n; i-- > 0;)
        if (obj->items[i].key_len == n && memcmp(obj->items[i].key, key, n) == 0) return &obj->items[i];
    return NULL;
}

SWA__UNUSED static int swa__json_is_str(const swa__json *j, const char *s)
{
    return j && j->kind == SWA__JSON_STRING && j->len == strlen(s) && memcmp(j->str, s, j->len) == 0;
}

static int swa__buf_reserve(swa__buf *b, size_t more)
{
    size_t want, cap;
    char *p;
    if (b->failed) return 0;
    if (more > SIZE_MAX / 2 - b->n || (b->limit && b->n + more > b->limit)) { b->failed = 1; return 0; }
    want = b->n + more + 1;                    /* room for the NUL swa__buf_take writes */
    if (want <= b->cap) return 1;
    for (cap = b->cap ? b->cap : 64; cap < want; cap *= 2) {}
    if (!(p = (char *)swa__calloc(1, cap))) { b->failed = 1; return 0; }
    if (b->n) memcpy(p, b->p, b->n);
    SWA_FREE(b->p);
    b->p = p;
    b->cap = cap;
    return 1;
}

SWA__UNUSED static void swa__buf_put(swa__buf *b, const char *s, size_t n)
{
    if (!swa__buf_reserve(b, n)) return;
    if (n) memcpy(b->p + b->n, s, n);
    b->n += n;
}

SWA__UNUSED static void swa__buf_puts(swa__buf *b, const char *s) { swa__buf_put(b, s, strlen(s)); }
SWA__UNUSED static void swa__buf_putc(swa__buf *b, char c) { swa__buf_put(b, &c, 1); }

SWA__UNUSED static void swa__buf_printf(swa__buf *b, const char *fmt, ...)
{
    va_list ap;
    int n;
    char small[256];
    va_start(ap, fmt);
    n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) { b->failed = 1; return; }
    if ((size_t)n < sizeof small) { swa__buf_put(b, small, (size_t)n); return; }
    if (!swa__buf_reserve(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
}

/* The text, NUL-terminated, now the caller's (SWA_FREE); NULL when the buffer failed, which
   then frees what it held. */
SWA__UNUSED static char *swa__buf_take(swa__buf *b)
{
    char *p;
    if (!swa__buf_reserve(b, 0)) { SWA_FREE(b->p); memset(b, 0, sizeof *b); return NULL; }
    p = b->p;
    p[b->n] = '\0';
    b->p = NULL;
    b->n = b->cap = 0;
    return p;
}

SWA__UNUSED static void swa__buf_free(swa__buf *b)
{
    SWA_FREE(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}

/* s as a JSON string literal, quotes included, as Python's json.dumps writes it: the short
   escapes for " \ and \b \f \n \r \t, \u00XX for other control characters, and with
   ensure_ascii every character from DEL on as \uXXXX (two for one beyond the BMP). A byte that
   is not UTF-8 is written as \u00XX of itself under ensure_ascii, as is otherwise. */
SWA__INTERNAL void swa__buf_json_string(swa__buf *b, const char *s, size_t n, int ensure_ascii)
{
    static const char short_from[] = "\"\\\b\f\n\r\t", short_to[] = "\"\\bfnrt";
    size_t i = 0, k;
    swa__buf_putc(b, '"');
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        const char *e = c ? (const char *)memchr(short_from, c, sizeof short_from - 1) : NULL;
        uint32_t cp;
        if (e) { char esc[2] = {'\\', short_to[e - short_from]}; swa__buf_put(b, esc, 2); i++; continue; }
        if (c < 0x20) { swa__buf_printf(b, "\\u%04x", c); i++; continue; }
        if (c < 0x7F || !ensure_ascii) { swa__buf_putc(b, (char)c); i++; continue; }   /* DEL too is escaped */
        cp = swa__utf8_get((const unsigned char *)s + i, n - i, &k);
        if (cp >= 0x110000) cp -= 0x110000;
        if (cp >= 0x10000)
            swa__buf_printf(b, "\\u%04x\\u%04x", 0xD800 + ((cp - 0x10000) >> 10), 0xDC00 + ((cp - 0x10000) & 0x3FF));
        else
            swa__buf_printf(b, "\\u%04x", cp);
        i += k;
    }
    swa__buf_putc(b, '"');
}

/* ==== chat templates ====
   One descriptor per family, in llama.cpp's terms. Most families write each message as an
   opening, the content and a closing chosen by role, or as head, the role's own name, tail,
   content and closing; a few options cover the rest (trimming, system messages folded into the
   next turn, a default system message, the role's name in capitals). The Mistral and Llama 2
   families carry [INST] state across messages and have a function each. */

typedef enum swa__chat_layout {
    SWA__CHAT_TURNS,      /* each message on its own: open/close by role, or head role tail */
    SWA__CHAT_MISTRAL,    /* [INST] opens a turn, an answer closes it: v1, v3, v3-tekken */
    SWA__CHAT_LLAMA2      /* [INST] always first, <<SYS>> optional, <s> in history optional */
} swa__chat_layout;

/* Roles by index. OTHER is "tool" in the families that give it an opening, and any other name
   in the families that write the role's name. */
enum { SWA__CHAT_SYSTEM, SWA__CHAT_USER, SWA__CHAT_ASSISTANT, SWA__CHAT_OTHER };

/* Family options: */
#define SWA__CHAT_SPACE_BEFORE        1   /* mistral-v1: " [INST]" and " [/INST]" */
#define SWA__CHAT_SPACE_AFTER         2   /* mistral-v1/v3: "[INST] " and " answer" */
#define SWA__CHAT_SYS_TAGS            4   /* llama2-sys*: <<SYS>> around the system message */
#define SWA__CHAT_BOS_IN_HISTORY      8   /* llama2-sys-bos: "<s>[INST] " after the first turn;
                                             monarch: no head before the first message */
#define SWA__CHAT_FOLD_SYSTEM        16   /* system messages open the next message that is not an answer */
#define SWA__CHAT_SYSTEM_FIRST       32   /* a system message is written only as the first message */
#define SWA__CHAT_DEFAULT_IF_EMPTY   64   /* the default system message even when there are no messages */
#define SWA__CHAT_PROMPT_AFTER_USER 128   /* the prefix follows a last user message, asked for or not */
#define SWA__CHAT_ROLE_UPPER        256   /* the role's name in capitals, "user" as HUMAN */
#define SWA__CHAT_ROLE_CAPITAL      512   /* the role's first letter in capitals */
#define SWA__CHAT_TOOL_CALL        1024   /* <|tool_call|> opens an assistant_tool_call message */

/* Roles whose content is trimmed (the trim field): bit r for role r */
#define SWA__CHAT_TRIM_ALL 15
#define SWA__CHAT_TRIM_A (1 << SWA__CHAT_ASSISTANT)
#define SWA__CHAT_TRIM_SU ((1 << SWA__CHAT_SYSTEM) | (1 << SWA__CHAT_USER))

/* Markers outside ASCII, in UTF-8: FULLWIDTH VERTICAL LINE (U+FF5C), LOWER ONE EIGHTH BLOCK
   (U+2581), FULLWIDTH COLON (U+FF1A), and Chinese and Russian role names. */
#define SWA__CHAT_FW_BAR "\xef\xbd\x9c"
#define SWA__CHAT_LOWBAR "\xe2\x96\x81"
#define SWA__CHAT_DS_EOS "<" SWA__CHAT_FW_BAR "end" SWA__CHAT_LOWBAR "of" SWA__CHAT_LOWBAR "sentence" SWA__CHAT_FW_BAR ">"
#define SWA__CHAT_DS_USER "<" SWA__CHAT_FW_BAR "User" SWA__CHAT_FW_BAR ">"
#define SWA__CHAT_DS_ASSISTANT "<" SWA__CHAT_FW_BAR "Assistant" SWA__CHAT_FW_BAR ">"
#define SWA__CHAT_HY(x) "<" SWA__CHAT_FW_BAR "hy_" x SWA__CHAT_FW_BAR ">"
#define SWA__CHAT_HY_HOLDER(digit) SWA__CHAT_HY("place" SWA__CHAT_LOWBAR "holder" SWA__CHAT_LOWBAR "no" SWA__CHAT_LOWBAR digit)
#define SWA__CHAT_PANGU(role) "[unused9]" role "\xef\xbc\x9a"
#define SWA__CHAT_PANGU_SYSTEM SWA__CHAT_PANGU("\xe7\xb3\xbb\xe7\xbb\x9f")            /* 系统 */
#define SWA__CHAT_PANGU_USER SWA__CHAT_PANGU("\xe7\x94\xa8\xe6\x88\xb7")              /* 用户 */
#define SWA__CHAT_PANGU_ASSISTANT SWA__CHAT_PANGU("\xe5\x8a\xa9\xe6\x89\x8b")         /* 助手 */
#define SWA__CHAT_PANGU_TOOL SWA__CHAT_PANGU("\xe5\xb7\xa5\xe5\x85\xb7")              /* 工具 */
#define SWA__CHAT_MINICPM_USER "<\xe7\x94\xa8\xe6\x88\xb7>"                           /* <用户> */
#define SWA__CHAT_YANDEX_USER " \xd0\x9f\xd0\xbe\xd0\xbb\xd1\x8c\xd0\xb7\xd0\xbe\xd0\xb2\xd0\xb0\xd1\x82\xd0\xb5\xd0\xbb\xd1\x8c: "
#define SWA__CHAT_YANDEX_ASSISTANT " \xd0\x90\xd1\x81\xd1\x81\xd0\xb8\xd1\x81\xd1\x82\xd0\xb5\xd0\xbd\xd1\x82:"

struct swa_chat_template {
    const char *name;
    const char *eot;               /* what ends the assistant's turn */
    swa__chat_layout layout;
    int options, trim;             /* SWA__CHAT_* options; the roles whose content is trimmed */
    const char *start;             /* written once before the messages */
    const char *head, *tail;       /* head role tail opens a message whose open[] is NULL; NULL: no head */
    const char *open[4], *close[4];/* by role; without a head a NULL open leaves the role's messages out,
                                      as llama.cpp does (OTHER: refuses them) */
    const char *generation;        /* the assistant's prefix; NULL: the format has none */
    const char *default_system;    /* written as a system message when the first message is not one */
};

/* Rows by what a family's format is made of: a layout coded below (CODED); head, the role's
   name, tail, the message and close (NAMED); fixed text before and after each role's message
   (ROLES: system, user, assistant, tool); or any of these with options (ROW, whose open and
   close are four strings in parentheses). */
#define SWA__CHAT_FOUR(a, b, c, d) {a, b, c, d}
#define SWA__CHAT_CODED(name, eot, layout, options, trim) \
    {name, eot, layout, options, trim, "", NULL, NULL, {0}, {0}, NULL, NULL}
#define SWA__CHAT_NAMED(name, eot, trim, start, head, tail, close, generation) \
    {name, eot, SWA__CHAT_TURNS, 0, trim, start, head, tail, {0}, {close, close, close, close}, generation, NULL}
#define SWA__CHAT_ROLES(name, eot, trim, open_s, open_u, open_a, open_t, close_s, close_u, close_a, close_t, generation) \
    {name, eot, SWA__CHAT_TURNS, 0, trim, "", NULL, NULL, {open_s, open_u, open_a, open_t},                       \
     {close_s, close_u, close_a, close_t}, generation, NULL}
#define SWA__CHAT_ROW(name, eot, options, trim, start, head, tail, open, close, generation, default_system) \
    {name, eot, SWA__CHAT_TURNS, options, trim, start, head, tail, SWA__CHAT_FOUR open, SWA__CHAT_FOUR close,  \
     generation, default_system}

static const swa_chat_template swa__chat_templates[] = {
    SWA__CHAT_NAMED("chatml", "<|im_end|>", 0, "", "<|im_start|>", "\n", "<|im_end|>\n", "<|im_start|>assistant\n"),
    SWA__CHAT_CODED("llama2", "</s>", SWA__CHAT_LLAMA2, 0, 0),
    SWA__CHAT_CODED("llama2-sys", "</s>", SWA__CHAT_LLAMA2, SWA__CHAT_SYS_TAGS, 0),
    SWA__CHAT_CODED("llama2-sys-bos", "</s>", SWA__CHAT_LLAMA2, SWA__CHAT_SYS_TAGS | SWA__CHAT_BOS_IN_HISTORY, 0),
    SWA__CHAT_CODED("llama2-sys-strip", "</s>", SWA__CHAT_LLAMA2, SWA__CHAT_SYS_TAGS, SWA__CHAT_TRIM_ALL),
    SWA__CHAT_CODED("mistral-v1", "</s>", SWA__CHAT_MISTRAL, SWA__CHAT_SPACE_BEFORE | SWA__CHAT_SPACE_AFTER, 0),
    SWA__CHAT_CODED("mistral-v3", "</s>", SWA__CHAT_MISTRAL, SWA__CHAT_SPACE_AFTER, SWA__CHAT_TRIM_A),
    SWA__CHAT_CODED("mistral-v3-tekken", "</s>", SWA__CHAT_MISTRAL, 0, 0),
    SWA__CHAT_ROLES("mistral-v7", "</s>", 0, "[SYSTEM_PROMPT] ", "[INST] ", " ", NULL, "[/SYSTEM_PROMPT]", "[/INST]",
                    "</s>", NULL, NULL),
    SWA__CHAT_NAMED("llama3", "<|eot_id|>", SWA__CHAT_TRIM_ALL, "", "<|start_header_id|>", "<|end_header_id|>\n\n",
                    "<|eot_id|>", "<|start_header_id|>assistant<|end_header_id|>\n\n"),
    SWA__CHAT_ROW("gemma", "<end_of_turn>", SWA__CHAT_FOLD_SYSTEM, SWA__CHAT_TRIM_ALL, "", "<start_of_turn>", "\n",
                  (NULL, NULL, "<start_of_turn>model\n", NULL),
                  ("<end_of_turn>\n", "<end_of_turn>\n", "<end_of_turn>\n", "<end_of_turn>\n"),
                  "<start_of_turn>model\n", NULL),
    SWA__CHAT_NAMED("phi3", "<|end|>", 0, "", "<|", "|>\n", "<|end|>\n", "<|assistant|>\n"),
    SWA__CHAT_NAMED("phi4", "<|im_end|>", 0, "", "<|im_start|>", "<|im_sep|>", "<|im_end|>",
                    "<|im_start|>assistant<|im_sep|>"),
    SWA__CHAT_ROLES("deepseek", "<|EOT|>", 0, "", "### Instruction:\n", "### Response:\n", NULL, "", "\n", "\n<|EOT|>\n",
                    NULL, "### Response:\n"),
    SWA__CHAT_ROLES("deepseek2", SWA__CHAT_DS_EOS, 0, "", "User: ", "Assistant: ", NULL, "\n\n", "\n\n",
                    SWA__CHAT_DS_EOS, NULL, "Assistant:"),
    SWA__CHAT_ROLES("deepseek3", SWA__CHAT_DS_EOS, 0, "", SWA__CHAT_DS_USER, SWA__CHAT_DS_ASSISTANT, NULL, "\n\n", "",
                    SWA__CHAT_DS_EOS, NULL, SWA__CHAT_DS_ASSISTANT),
    SWA__CHAT_ROLES("mistral-v7-tekken", "</s>", 0, "[SYSTEM_PROMPT]", "[INST]", "", NULL, "[/SYSTEM_PROMPT]", "[/INST]",
                    "</s>", NULL, NULL),
    SWA__CHAT_NAMED("falcon3", "<|endoftext|>", 0, "", "<|", "|>\n", "\n", "<|assistant|>\n"),
    SWA__CHAT_NAMED("zephyr", "<|endoftext|>", 0, "", "<|", "|>\n", "<|endoftext|>\n", "<|assistant|>\n"),
    SWA__CHAT_ROW("monarch", "</s>", SWA__CHAT_BOS_IN_HISTORY, 0, "", "<s>", "\n", (NULL, NULL, NULL, NULL),
                  ("</s>\n", "</s>\n", "</s>\n", "</s>\n"), "<s>assistant\n", NULL),
    SWA__CHAT_ROW("orion", "</s>", SWA__CHAT_FOLD_SYSTEM, 0, "", NULL, NULL, (NULL, "Human: ", "", NULL),
                  (NULL, "\n\nAssistant: </s>", "</s>", NULL), NULL, NULL),
    SWA__CHAT_ROW("openchat", "<|end_of_turn|>", SWA__CHAT_ROLE_CAPITAL, 0, "", "GPT4 Correct ", ": ",
                  ("", NULL, NULL, NULL), ("<|end_of_turn|>", "<|end_of_turn|>", "<|end_of_turn|>", "<|end_of_turn|>"),
                  "GPT4 Correct Assistant:", NULL),
    SWA__CHAT_ROLES("vicuna", "</s>", 0, "", "USER: ", "ASSISTANT: ", NULL, "\n\n", "\n", "</s>\n", NULL, "ASSISTANT:"),
    SWA__CHAT_ROLES("vicuna-orca", "</s>", 0, "SYSTEM: ", "USER: ", "ASSISTANT: ", NULL, "\n", "\n", "</s>\n", NULL,
                    "ASSISTANT:"),
    SWA__CHAT_ROLES("command-r", "<|END_OF_TURN_TOKEN|>", SWA__CHAT_TRIM_ALL, "<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>",
                    "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>", "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>", NULL,
                    "<|END_OF_TURN_TOKEN|>", "<|END_OF_TURN_TOKEN|>", "<|END_OF_TURN_TOKEN|>", NULL,
                    "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"),
    SWA__CHAT_NAMED("chatglm3", "<|user|>", 0, "[gMASK]sop", "<|", "|>\n ", "", "<|assistant|>"),
    SWA__CHAT_NAMED("chatglm4", "<|user|>", 0, "[gMASK]<sop>", "<|", "|>\n", "", "<|assistant|>\n"),
    SWA__CHAT_NAMED("glmedge", "<|user|>", 0, "", "<|", "|>\n", "", "<|assistant|>"),
    SWA__CHAT_ROLES("minicpm", "</s>", SWA__CHAT_TRIM_ALL, "", SWA__CHAT_MINICPM_USER, "", NULL, "", "<AI>", "", NULL, NULL),
    SWA__CHAT_ROLES("exaone3", "[|endofturn|]", SWA__CHAT_TRIM_ALL, "[|system|]", "[|user|]", "[|assistant|]", NULL,
                    "[|endofturn|]\n", "\n", "[|endofturn|]\n", NULL, "[|assistant|]"),
    SWA__CHAT_ROLES("exaone4", "[|endofturn|]", SWA__CHAT_TRIM_ALL, "[|system|]", "[|user|]", "[|assistant|]", "[|tool|]",
                    "[|endofturn|]\n", "\n", "[|endofturn|]\n", "[|endofturn|]\n", "[|assistant|]"),
    SWA__CHAT_ROW("rwkv-world", "\n\n", SWA__CHAT_PROMPT_AFTER_USER, SWA__CHAT_TRIM_ALL, "", NULL, NULL,
                  ("System: ", "User: ", "Assistant: ", NULL), ("\n\n", "\n\n", "\n\n", NULL), "Assistant:", NULL),
    SWA__CHAT_ROW("granite", "<|end_of_text|>", SWA__CHAT_TOOL_CALL, 0, "", "<|start_of_role|>", "<|end_of_role|>",
                  (NULL, NULL, NULL, NULL),
                  ("<|end_of_text|>\n", "<|end_of_text|>\n", "<|end_of_text|>\n", "<|end_of_text|>\n"),
                  "<|start_of_role|>assistant<|end_of_role|>", NULL),
    SWA__CHAT_ROW("gigachat", "</s>", SWA__CHAT_SYSTEM_FIRST, 0, "<s>", NULL, NULL,
                  ("", "user<|role_sep|>", "assistant<|role_sep|>", NULL),
                  ("<|message_sep|>", "<|message_sep|>available functions<|role_sep|>[]<|message_sep|>",
                   "<|message_sep|>", NULL),
                  "assistant<|role_sep|>", NULL),
    SWA__CHAT_NAMED("megrez", "<|turn_end|>", 0, "", "<|role_start|>", "<|role_end|>", "<|turn_end|>",
                    "<|role_start|>assistant<|role_end|>"),
    SWA__CHAT_ROLES("yandex", "\n\n", 0, NULL, SWA__CHAT_YANDEX_USER, SWA__CHAT_YANDEX_ASSISTANT " ", NULL, NULL, "\n\n",
                    "\n\n", NULL, SWA__CHAT_YANDEX_ASSISTANT "[SEP]"),
    SWA__CHAT_ROW("bailing", "<|endoftext|>", SWA__CHAT_ROLE_UPPER, 0, "", "<role>", "</role>", (NULL, NULL, NULL, NULL),
                  ("", "", "", ""), "<role>ASSISTANT</role>", NULL),
    SWA__CHAT_ROW("bailing-think", "<|endoftext|>", SWA__CHAT_ROLE_UPPER, 0, "", "<role>", "</role>",
                  (NULL, NULL, NULL, NULL), ("", "", "", ""), "<role>ASSISTANT</role><think>", NULL),
    SWA__CHAT_ROW("bailing2", "<|role_end|>", SWA__CHAT_ROLE_UPPER | SWA__CHAT_DEFAULT_IF_EMPTY, 0, "", "<role>",
                  "</role>", (NULL, NULL, NULL, NULL), ("<|role_end|>", "<|role_end|>", "<|role_end|>", "<|role_end|>"),
                  "<role>ASSISTANT</role>", "detailed thinking off"),
    SWA__CHAT_NAMED("llama4", "<|eot|>", SWA__CHAT_TRIM_ALL, "", "<|header_start|>", "<|header_end|>\n\n", "<|eot|>",
                    "<|header_start|>assistant<|header_end|>\n\n"),
    SWA__CHAT_ROW("smolvlm", "<end_of_utterance>", 0, 0, "<|im_start|>", NULL, NULL, ("", "User: ", "Assistant: ", NULL),
                  ("\n\n", "<end_of_utterance>\n", "<end_of_utterance>\n", NULL), "Assistant:", NULL),
    SWA__CHAT_ROLES("dots1", "<|endofresponse|>", 0, "<|system|>", "<|userprompt|>", "<|response|>", NULL,
                    "<|endofsystem|>", "<|endofuserprompt|>", "<|endofresponse|>", NULL, "<|response|>"),
    SWA__CHAT_ROLES("hunyuan-moe", "<|eos|>", 0, "<|startoftext|>", "<|startoftext|>", "", NULL, "<|extra_4|>",
                    "<|extra_0|>", "<|eos|>", NULL, NULL),
    SWA__CHAT_ROW("gpt-oss", "<|return|>", 0, 0, "", "<|start|>", "<|message|>", (NULL, NULL, NULL, NULL),
                  ("<|end|>", "<|end|>", "<|return|>", "<|end|>"), "<|start|>assistant", NULL),
    SWA__CHAT_ROW("hunyuan-dense", SWA__CHAT_HY_HOLDER("2"), SWA__CHAT_SYSTEM_FIRST, 0, "", NULL, NULL,
                  ("", SWA__CHAT_HY("User"), SWA__CHAT_HY("Assistant"), NULL),
                  (SWA__CHAT_HY_HOLDER("3"), SWA__CHAT_HY("Assistant"), SWA__CHAT_HY_HOLDER("2"), NULL), NULL, NULL),
    SWA__CHAT_ROLES("kimi-k2", "<|im_end|>", 0, "<|im_system|>system<|im_middle|>", "<|im_user|>user<|im_middle|>",
                    "<|im_assistant|>assistant<|im_middle|>", "<|im_system|>tool<|im_middle|>", "<|im_end|>",
                    "<|im_end|>", "<|im_end|>", "<|im_end|>", "<|im_assistant|>assistant<|im_middle|>"),
    SWA__CHAT_NAMED("seed_oss", "<seed:eos>", SWA__CHAT_TRIM_A, "", "<seed:bos>", "\n", "<seed:eos>",
                    "<seed:bos>assistant\n"),
    SWA__CHAT_ROLES("grok-2", "<|separator|>", SWA__CHAT_TRIM_SU, "System: ", "Human: ", "Assistant: ", NULL,
                    "<|separator|>\n\n", "<|separator|>\n\n", "<|separator|>\n\n", NULL, "Assistant:"),
    SWA__CHAT_ROW("pangu-embedded", "[unused10]", 0, 0, "", NULL, NULL,
                  (SWA__CHAT_PANGU_SYSTEM, SWA__CHAT_PANGU_USER, SWA__CHAT_PANGU_ASSISTANT, SWA__CHAT_PANGU_TOOL),
                  ("[unused10]", "[unused10]", "[unused10]", "[unused10]"), SWA__CHAT_PANGU_ASSISTANT, ""),
};

#undef SWA__CHAT_FOUR
#undef SWA__CHAT_CODED
#undef SWA__CHAT_NAMED
#undef SWA__CHAT_ROLES
#undef SWA__CHAT_ROW

#define SWA__N_CHAT_TEMPLATES ((int32_t)(sizeof swa__chat_templates / sizeof swa__chat_templates[0]))

SWADEF const swa_chat_template *swa_chat_template_at(int32_t i)
{
    return i >= 0 && i < SWA__N_CHAT_TEMPLATES ? &swa__chat_templates[i] : NULL;
}

SWADEF const swa_chat_template *swa_chat_template_by_name(const char *name)
{
    int32_t i;
    for (i = 0; name && i < SWA__N_CHAT_TEMPLATES; i++)
        if (!strcmp(swa__chat_templates[i].name, name)) return &swa__chat_templates[i];
    return NULL;
}

SWADEF const char *swa_chat_template_name(const swa_chat_template *t) { return t->name; }
SWADEF const char *swa_chat_template_eot(const swa_chat_template *t) { return t->eot; }

SWADEF int32_t swa_chat_template_eot_token(const swa_chat_template *t, const swa_vocab *v)
{
#ifndef SWA_NO_TOKENIZER
    return swa_vocab_find(v, t->eot);
#else
    (void)t;
    (void)v;
    return -1;
#endif
}

/* -- detection -- */

static int swa__chat_has(const char *s, size_t len, const char *needle)
{
    size_t n = strlen(needle), i;
    for (i = 0; n <= len && i <= len - n; i++)
        if (s[i] == needle[0] && !memcmp(s + i, needle, n)) return 1;
    return 0;
}

/* The Mistral and Llama 2 families, told apart as llama.cpp does: [SYSTEM_PROMPT] is v7; the
   official v1/v3/v3-tekken templates carry "' [INST] ' + system_message" or [AVAILABLE_TOOLS],
   and differ in the spaces around [INST]; the rest are Llama 2 variants. */
static const char *swa__chat_detect_inst(const char *s, size_t len)
{
    if (swa__chat_has(s, len, "[SYSTEM_PROMPT]")) return "mistral-v7";
    if (swa__chat_has(s, len, "' [INST] ' + system_message") || swa__chat_has(s, len, "[AVAILABLE_TOOLS]")) {
        if (swa__chat_has(s, len, " [INST]")) return "mistral-v1";
        if (swa__chat_has(s, len, "\"[INST]\"")) return "mistral-v3-tekken";
        return "mistral-v3";
    }
    if (swa__chat_has(s, len, "content.strip()")) return "llama2-sys-strip";
    if (swa__chat_has(s, len, "bos_token + '[INST]")) return "llama2-sys-bos";
    if (swa__chat_has(s, len, "<<SYS>>")) return "llama2-sys";
    return "llama2";
}

/* llama.cpp's markers in its order (llm_chat_detect_template): the first row whose markers all
   occur names the family. The row without a family is the [INST] group, which also takes a
   template that starts with "mistral". */
static const struct swa__chat_marker {
    const char *family;
    const char *all[4];
} swa__chat_markers[] = {
    {"phi4", {"<|im_start|>", "<|im_sep|>"}},
    {"smolvlm", {"<|im_start|>", "<end_of_utterance>"}},
    {"chatml", {"<|im_start|>"}},
    {NULL, {"[INST]"}},
    {"phi3", {"<|assistant|>", "<|end|>"}},
    {"chatglm4", {"[gMASK]<sop>"}},
    {"falcon3", {"<|assistant|>", "<|user|>", "</s>"}},
    {"glmedge", {"<|assistant|>", "<|user|>"}},
    {"glmedge", {"<|{{ item['role'] }}|>", "<|begin_of_image|>"}},
    {"zephyr", {"<|user|>", "<|endoftext|>"}},
    {"monarch", {"bos_token + message['role']"}},
    {"gemma", {"<start_of_turn>"}},
    {"orion", {"'\\n\\nAssistant: ' + eos_token"}},
    {"openchat", {"GPT4 Correct "}},
    {"vicuna-orca", {"USER: ", "ASSISTANT: ", "SYSTEM: "}},
    {"vicuna", {"USER: ", "ASSISTANT: "}},
    {"deepseek", {"### Instruction:", "<|EOT|>"}},
    {"command-r", {"<|START_OF_TURN_TOKEN|>", "<|USER_TOKEN|>"}},
    {"llama3", {"<|start_header_id|>", "<|end_header_id|>"}},
    {"chatglm3", {"[gMASK]sop"}},
    {"minicpm", {SWA__CHAT_MINICPM_USER}},
    {"deepseek2", {"'Assistant: ' + message['content'] + eos_token"}},
    {"deepseek3", {SWA__CHAT_DS_ASSISTANT, SWA__CHAT_DS_USER, SWA__CHAT_DS_EOS}},
    {"exaone4", {"[|system|]", "[|assistant|]", "[|endofturn|]", "[|tool|]"}},
    {"exaone3", {"[|system|]", "[|assistant|]", "[|endofturn|]"}},
    {"rwkv-world", {"rwkv-world"}},
    {"rwkv-world", {"{{- 'User: ' + message['content']|trim + '\\n\\n' -}}"}},
    {"granite", {"<|start_of_role|>"}},
    {"gigachat", {"message['role'] + additional_special_tokens[0] + message['content'] + additional_special_tokens[1]"}},
    {"megrez", {"<|role_start|>"}},
    {"yandex", {SWA__CHAT_YANDEX_ASSISTANT}},
    {"bailing", {"<role>ASSISTANT</role>", "'HUMAN'"}},
    {"bailing-think", {"<role>ASSISTANT</role>", "\"HUMAN\"", "<think>"}},
    {"bailing2", {"<role>ASSISTANT</role>", "<role>HUMAN</role>", "<|role_end|>"}},
    {"llama4", {"<|header_start|>", "<|header_end|>"}},
    {"dots1", {"<|endofuserprompt|>"}},
    {"hunyuan-moe", {"<|extra_0|>", "<|extra_4|>"}},
    {"gpt-oss", {"<|start|>", "<|channel|>"}},
    {"hunyuan-dense", {SWA__CHAT_HY("Assistant"), SWA__CHAT_HY_HOLDER("3")}},
    {"kimi-k2", {"<|im_assistant|>assistant<|im_middle|>"}},
    {"seed_oss", {"<seed:bos>"}},
    {"grok-2", {"'Assistant: '  + message['content'] + '<|separator|>"}},
    {"pangu-embedded", {SWA__CHAT_PANGU_SYSTEM "[unused10]"}},
};

/* The family whose markers the template carries; NULL when none matches. */
static const char *swa__chat_detect_name(const char *s, size_t len)
{
    size_t r, k;
    for (r = 0; r < sizeof swa__chat_markers / sizeof swa__chat_markers[0]; r++) {
        const struct swa__chat_marker *m = &swa__chat_markers[r];
        int all = 1;
        for (k = 0; k < 4 && m->all[k] && all; k++) all = swa__chat_has(s, len, m->all[k]);
        if (!m->family && (all || (len >= 7 && !memcmp(s, "mistral", 7)))) return swa__chat_detect_inst(s, len);
        if (m->family && all) return m->family;
    }
    return NULL;
}

/* The first bytes of a template, printable ASCII only, for an error message. */
static void swa__chat_excerpt(const char *s, size_t len, char *out, size_t cap)
{
    size_t i, n = 0;
    for (i = 0; i < len && n + 4 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n' || c == '\t' || c == '\r') c = ' ';
        if (c == ' ' && n > 0 && out[n - 1] == ' ') continue;
        out[n++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    if (i < len) out[n++] = '.', out[n++] = '.', out[n++] = '.';
    out[n] = '\0';
}

SWADEF swa_status swa_chat_template_detect(const char *tmpl, size_t len, const swa_chat_template **out,
                                           swa_error *err)
{
    const char *name;
    char excerpt[64];
    if (!tmpl || !out) return swa__fail(err, SWA_ERR_INVALID_ARG, "swa_chat_template_detect: NULL argument");
    *out = NULL;
    if (len < 32 && memchr(tmpl, '\0', len) == NULL) {   /* a family's own name */
        char name_buf[32];
        memcpy(name_buf, tmpl, len);
        name_buf[len] = '\0';
        *out = swa_chat_template_by_name(name_buf);
    }
    if (!*out && (name = swa__chat_detect_name(tmpl, len)) != NULL) *out = swa_chat_template_by_name(name);
    if (!*out) {
        swa__chat_excerpt(tmpl, len, excerpt, sizeof excerpt);
        return swa__fail(err, SWA_ERR_UNSUPPORTED, "chat template \"%s\" is none of the %d families swa.h writes "
                         "(llama.cpp's; swa_chat_template_at lists them): choose one by name", excerpt,
                         (int)SWA__N_CHAT_TEMPLATES);
    }
    swa__ok(err);
    return SWA_OK;
}

SWADEF swa_status swa_chat_template_of(const swa_gguf *g, const swa_chat_template **out, swa_error *err)
{
    int64_t k;
    swa_gguf_value v;
    swa_str s;
    if (!g || !out) return swa__fail(err, SWA_ERR_INVALID_ARG, "swa_chat_template_of: NULL argument");
    *out = NULL;
    if ((k = swa_gguf_kv_find(g, "tokenizer.chat_template")) < 0)
        return swa__fail(err, SWA_ERR_NOT_FOUND, "the file has no chat template (key tokenizer.chat_template)");
    v = swa_gguf_kv_value(g, k);
    if (swa_gguf_value_str(&v, &s) != SWA_OK)
        return swa__fail(err, SWA_ERR_FORMAT, "key tokenizer.chat_template: want a string");
    return swa_chat_template_detect(s.ptr, s.len, out, err);
}

SWADEF swa_status swa_model_chat_template(const swa_model *m, const swa_chat_template **out, swa_error *err)
{
    if (!m) return swa__fail(err, SWA_ERR_INVALID_ARG, "swa_model_chat_template: NULL argument");
    return swa_chat_template_of(swa_model_gguf(m), out, err);
}

/* -- formatting -- */

/* The output: bytes past cap are counted, not written; a total past SIZE_MAX is an overflow. */
typedef struct swa__chat_out {
    char *buf;
    size_t cap, n;
    int overflow;
} swa__chat_out;

static void swa__chat_put(swa__chat_out *o, const char *s, size_t len)
{
    if (len > SIZE_MAX - o->n) { o->overflow = 1; return; }
    if (o->n < o->cap) memcpy(o->buf + o->n, s, len < o->cap - o->n ? len : o->cap - o->n);
    o->n += len;
}

static void swa__chat_puts(swa__chat_out *o, const char *s) { swa__chat_put(o, s, strlen(s)); }

static int swa__chat_space(char c)   /* isspace in the C locale, as llama.cpp's trim uses */
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* content, without leading and trailing white space when trim is set */
static void swa__chat_content(swa__chat_out *o, const char *s, int trim)
{
    size_t len = strlen(s);
    if (trim) {
        while (len > 0 && swa__chat_space(*s)) s++, len--;
        while (len > 0 && swa__chat_space(s[len - 1])) len--;
    }
    swa__chat_put(o, s, len);
}

static int swa__chat_role(const char *role)
{
    if (!strcmp(role, "system")) return SWA__CHAT_SYSTEM;
    if (!strcmp(role, "user")) return SWA__CHAT_USER;
    if (!strcmp(role, "assistant")) return SWA__CHAT_ASSISTANT;
    return SWA__CHAT_OTHER;
}

/* Whether t can write a message of this role (the three common ones always, if only by leaving
   it out as llama.cpp does). */
static int swa__chat_role_ok(const swa_chat_template *t, const char *role)
{
    return swa__chat_role(role) != SWA__CHAT_OTHER || t->head || (t->open[SWA__CHAT_OTHER] && !strcmp(role, "tool"));
}

/* The role's name as a head writes it: as given, in capitals ("user" as HUMAN), or capitalised. */
static void swa__chat_role_name(swa__chat_out *o, const swa_chat_template *t, const char *role)
{
    size_t i;
    if ((t->options & SWA__CHAT_ROLE_UPPER) && !strcmp(role, "user")) {
        swa__chat_puts(o, "HUMAN");
        return;
    }
    for (i = 0; role[i]; i++) {
        char c = role[i];
        int upper = (t->options & SWA__CHAT_ROLE_UPPER) || (i == 0 && (t->options & SWA__CHAT_ROLE_CAPITAL));
        if (upper && c >= 'a' && c <= 'z') c = (char)(c - 'a' + 'A');
        swa__chat_put(o, &c, 1);
    }
}

/* One message: its opening (head role tail when open[r] is NULL; no head before the first
   message with BOS_IN_HISTORY), the n_fold messages of fold that are system ones (trimmed as
   system messages are) and a blank line if they wrote anything, the content, its closing. */
static void swa__chat_turn(const swa_chat_template *t, const char *role, const char *content, int first,
                           const swa_chat_message *fold, size_t n_fold, swa__chat_out *o)
{
    int r = swa__chat_role(role);
    size_t j, before;
    if (t->open[r]) {
        swa__chat_puts(o, t->open[r]);
    } else {
        if (!first || !(t->options & SWA__CHAT_BOS_IN_HISTORY)) swa__chat_puts(o, t->head);
        swa__chat_role_name(o, t, role);
        swa__chat_puts(o, t->tail);
        if ((t->options & SWA__CHAT_TOOL_CALL) && !strcmp(role, "assistant_tool_call")) swa__chat_puts(o, "<|tool_call|>");
    }
    before = o->n;
    for (j = 0; j < n_fold; j++)
        if (swa__chat_role(fold[j].role) == SWA__CHAT_SYSTEM) swa__chat_content(o, fold[j].content, t->trim & 1);
    if (o->n > before) swa__chat_puts(o, "\n\n");
    swa__chat_content(o, content, (t->trim >> r) & 1);
    swa__chat_puts(o, t->close[r]);
}

static void swa__chat_turns(const swa_chat_template *t, const swa_chat_message *m, size_t n, swa__chat_out *o)
{
    size_t i, fold_from = 0;
    int fold = t->options & SWA__CHAT_FOLD_SYSTEM;
    swa__chat_puts(o, t->start);
    if (t->default_system &&
        (n ? swa__chat_role(m[0].role) != SWA__CHAT_SYSTEM : (t->options & SWA__CHAT_DEFAULT_IF_EMPTY) != 0))
        swa__chat_turn(t, "system", t->default_system, 0, NULL, 0, o);
    for (i = 0; i < n; i++) {
        int r = swa__chat_role(m[i].role);
        if (r == SWA__CHAT_SYSTEM && (fold || (i > 0 && (t->options & SWA__CHAT_SYSTEM_FIRST)))) continue;
        if (!t->head && !t->open[r]) continue;   /* a role llama.cpp leaves out */
        if (fold && r != SWA__CHAT_ASSISTANT) {
            swa__chat_turn(t, m[i].role, m[i].content, i == 0, m + fold_from, i - fold_from, o);
            fold_from = i + 1;
        } else {
            swa__chat_turn(t, m[i].role, m[i].content, i == 0, NULL, 0, o);
        }
        if ((t->options & SWA__CHAT_PROMPT_AFTER_USER) && r == SWA__CHAT_USER && i + 1 == n)
            swa__chat_puts(o, t->generation);
    }
}

/* v1: " [INST] sys\n\nuser [/INST] answer</s>"; v3: "[INST] sys\n\nuser[/INST] answer</s>";
   v3-tekken: "[INST]sys\n\nuser[/INST]answer</s>". */
static void swa__chat_mistral(const swa_chat_template *t, const swa_chat_message *m, size_t n, swa__chat_out *o)
{
    const char *before = t->options & SWA__CHAT_SPACE_BEFORE ? " " : "";
    const char *after = t->options & SWA__CHAT_SPACE_AFTER ? " " : "";
    int in_turn = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        int r = swa__chat_role(m[i].role);
        if (!in_turn) {
            swa__chat_puts(o, before);
            swa__chat_puts(o, "[INST]");
            swa__chat_puts(o, after);
            in_turn = 1;
        }
        if (r == SWA__CHAT_SYSTEM) {
            swa__chat_puts(o, m[i].content);
            swa__chat_puts(o, "\n\n");
        } else if (r == SWA__CHAT_USER) {
            swa__chat_puts(o, m[i].content);
            swa__chat_puts(o, before);
            swa__chat_puts(o, "[/INST]");
        } else {
            swa__chat_puts(o, after);
            swa__chat_content(o, m[i].content, (t->trim >> SWA__CHAT_ASSISTANT) & 1);
            swa__chat_puts(o, "</s>");
            in_turn = 0;
        }
    }
}

/* "[INST] <<SYS>>\nsys\n<</SYS>>\n\nuser [/INST]answer</s>[INST] ..." (without <<SYS>>: "sys\n") */
static void swa__chat_llama2(const swa_chat_template *t, const swa_chat_message *m, size_t n, swa__chat_out *o)
{
    int trim = t->trim != 0, in_turn = 1;
    size_t i;
    swa__chat_puts(o, "[INST] ");
    for (i = 0; i < n; i++) {
        int r = swa__chat_role(m[i].role);
        if (!in_turn) {
            swa__chat_puts(o, t->options & SWA__CHAT_BOS_IN_HISTORY ? "<s>[INST] " : "[INST] ");
            in_turn = 1;
        }
        if (r == SWA__CHAT_SYSTEM) {
            int tags = t->options & SWA__CHAT_SYS_TAGS;
            if (tags) swa__chat_puts(o, "<<SYS>>\n");
            swa__chat_content(o, m[i].content, trim);
            swa__chat_puts(o, tags ? "\n<</SYS>>\n\n" : "\n");
        } else if (r == SWA__CHAT_USER) {
            swa__chat_content(o, m[i].content, trim);
            swa__chat_puts(o, " [/INST]");
        } else {
            swa__chat_content(o, m[i].content, trim);
            swa__chat_puts(o, "</s>");
            in_turn = 0;
        }
    }
}

SWADEF swa_status swa_chat_format(const swa_chat_template *t, const swa_chat_message *msgs, size_t n,
                                  int add_generation_prompt, char *out, size_t cap, size_t *n_out,
                                  swa_error *err)
{
    swa__chat_out o;
    size_t i;
    if (n_out) *n_out = 0;
    if (!t || (!msgs && n) || (!out && cap) || !n_out)
        return swa__fail(err, SWA_ERR_INVALID_ARG, "swa_chat_format: NULL argument");
    for (i = 0; i < n; i++) {
        if (!msgs[i].role || !msgs[i].content)
            return swa__fail(err, SWA_ERR_INVALID_ARG, "swa_chat_format: message %zu has a NULL role or content", i);
        if (!swa__chat_role_ok(t, msgs[i].role))
            return swa__fail(err, SWA_ERR_INVALID_ARG, "swa_chat_format: message %zu: the %s format has no role \"%.40s\" "
                             "(only system, user and assistant%s)", i, t->name, msgs[i].role,
                             t->open[SWA__CHAT_OTHER] ? " and tool" : "");
    }
    o.buf = out;
    o.cap = cap;
    o.n = 0;
    o.overflow = 0;
    switch (t->layout) {
    case SWA__CHAT_TURNS: swa__chat_turns(t, msgs, n, &o); break;
    case SWA__CHAT_MISTRAL: swa__chat_mistral(t, msgs, n, &o); break;
    case SWA__CHAT_LLAMA2: swa__chat_llama2(t, msgs, n, &o); break;
    }
    if (add_generation_prompt && t->generation && !(t->options & SWA__CHAT_PROMPT_AFTER_USER))
        swa__chat_puts(&o, t->generation);
    if (o.overflow || o.n == SIZE_MAX) return swa__fail(err, SWA_ERR_NOMEM, "swa_chat_format: the text does not fit in memory");
    *n_out = o.n;
    if (o.n >= cap)
        return swa__fail(err, SWA_ERR_BUFFER_TOO_SMALL, "a chat of %zu bytes does not fit in a buffer of %zu", o.n, cap);
    out[o.n] = '\0';
    swa__ok(err);
    return SWA_OK;
}

#undef SWA__CHAT_SPACE_BEFORE
#undef SWA__CHAT_SPACE_AFTER
#undef SWA__CHAT_SYS_TAGS
#undef SWA__CHAT_BOS_IN_HISTORY
#undef SWA__CHAT_FOLD_SYSTEM
#undef SWA__CHAT_SYSTEM_FIRST
#undef SWA__CHAT_DEFAULT_IF_EMPTY
#undef SWA__CHAT_PROMPT_AFTER_USER
#undef SWA__CHAT_ROLE_UPPER
#undef SWA__CHAT_ROLE_CAPITAL
#undef SWA__CHAT_TOOL_CALL
#undef SWA__CHAT_TRIM_ALL
#undef SWA__CHAT_TRIM_A
#undef SWA__CHAT_TRIM_SU
#undef SWA__CHAT_FW_BAR
#undef SWA__CHAT_LOWBAR
#undef SWA__CHAT_DS_EOS
#undef SWA__CHAT_DS_USER
#undef SWA__CHAT_DS_ASSISTANT
#undef SWA__CHAT_HY
#undef SWA__CHAT_HY_HOLDER
#undef SWA__CHAT_PANGU
#undef SWA__CHAT_PANGU_SYSTEM
#undef SWA__CHAT_PANGU_USER
#undef SWA__CHAT_PANGU_ASSISTANT
#undef SWA__CHAT_PANGU_TOOL
#undef SWA__CHAT_MINICPM_USER
#undef SWA__CHAT_YANDEX_USER
#undef SWA__CHAT_YANDEX_ASSISTANT
#undef SWA__N_CHAT_TEMPLATES

/* ==== sampler ==== */
#ifndef SWA_NO_SAMPLER

typedef struct swa__ranked {      /* a token with a sort key, for qsort without globals */
    float key;
    int32_t id;
} swa__ranked;

/* Larger key first, then smaller id: a total order, so sorting is deterministic. */
static int swa__cmp_ranked(const void *a, const void *b)
{
    const swa__ranked *x = (const swa__ranked *)a, *y = (const swa__ranked *)b;
    if (x->key != y->key) return x->key > y->key ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

struct swa_sampler {
    swa_sampler_config cfg;    /* resolved */
    int32_t n_vocab;
    uint64_t rng;
    int32_t *history;          /* [repeat_last_n] ring of recent tokens */
    int32_t n_history, history_next;
    float *work;               /* [n_vocab] logits after the penalty */
    float *bias;               /* [n_vocab] added to the logits; NULL until a bias is set */
    float *prob;               /* [n_vocab] */
    swa__ranked *cand;         /* [n_vocab] candidates (logit, id), best first when filtered */
};

static uint64_t swa__splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

SWADEF float swa_sampler_uniform(swa_sampler *s)
{
    s->rng ^= s->rng >> 12;   /* xorshift64*: integer-only, so every machine draws the same */
    s->rng ^= s->rng << 25;
    s->rng ^= s->rng >> 27;
    return (float)((s->rng * 2685821657736338717ull) >> 40) * (1.0f / 16777216.0f);
}

SWADEF void swa_sampler_reset(swa_sampler *s)
{
    s->rng = swa__splitmix64(s->cfg.seed) | 1;   /* xorshift state must not be 0 */
    s->n_history = 0;
    s->history_next = 0;
}

SWADEF swa_sampler_config swa_sampler_config_default(void)
{
    swa_sampler_config c;
    memset(&c, 0, sizeof c);
    c.temperature = 0.8f;
    c.top_k = 40;
    c.top_p = 0.95f;
    c.min_p = 0.05f;
    c.repeat_penalty = 1.0f;
    c.repeat_last_n = 64;
    c.seed = 42;
    return c;
}

SWADEF swa_status swa_sampler_create(const swa_sampler_config *cfg, int32_t n_vocab, swa_sampler **out, swa_error *err)
{
    swa_sampler *s;
    swa_sampler_config c;
    if (!out) return swa__fail(err, SWA_ERR_INVALID_ARG, "swa_sampler_create: out is NULL");
    *out = NULL;
    memset(&c, 0, sizeof c);
    if (cfg) c = *cfg;
    if (n_vocab < 1 || !(c.temperature >= 0) || c.top_k < 0 || !(c.top_p >= 0 && c.top_p <= 1) ||
        !(c.min_p >= 0 && c.min_p <= 1) || !(c.repeat_penalty >= 0) || c.repeat_last_n < 0 ||
        !(c.presence_penalty == c.presence_penalty) || !(c.frequency_penalty == c.frequency_penalty))
        return swa__fail(err, SWA_ERR_INVALID_ARG, "sampler: n_vocab %d, temperature %g, top_k %d, top_p %g, min_p %g, "
                         "repeat_penalty %g, repeat_last_n %d, presence_penalty %g, frequency_penalty %g: a value is out "
                         "of range", n_vocab, c.temperature, c.top_k, c.top_p, c.min_p, c.repeat_penalty, c.repeat_last_n,
                         c.presence_penalty, c.frequency_penalty);
    if (c.top_p == 0) c.top_p = 1;
    if (c.repeat_penalty == 0) c.repeat_penalty = 1;
    if (c.repeat_last_n == 0) c.repeat_last_n = 64;
    if (!(s = (swa_sampler *)swa__calloc(1, sizeof *s)) ||
        !(s->history = (int32_t *)swa__calloc((uint64_t)c.repeat_last_n, sizeof(int32_t))) ||
        !(s->work = (float *)swa__calloc((uint64_t)n_vocab, sizeof(float))) ||
        !(s->prob = (float *)swa__calloc((uint64_t)n_vocab, sizeof(float))) ||
        !(s->cand = (swa__ranked *)swa__calloc((uint64_t)n_vocab, sizeof(swa__ranked)))) {
        swa_sampler_free(s);
        return swa__fail(err, SWA_ERR_NOMEM, "cannot allocate a sampler for %d tokens", n_vocab);
    }
    s->cfg = c;
    s->n_vocab = n_vocab;
    swa_sampler_reset(s);
    *out = s;
    swa__ok(err);
    return SWA_OK;
}

SWADEF void swa_sampler_free(swa_sampler *s)
{
    if (!s) return;
    SWA_FREE(s->history);
    SWA_FREE(s->work);
    SWA_FREE(s->bias);
    SWA_FREE(s->prob);
    SWA_FREE(s->cand);
    SWA_FREE(s);
}

SWADEF void swa_sampler_accept(swa_sampler *s, int32_t token)
{
    if (token < 0 || token >= s->n_vocab) return;   /* not ours: nothing to penalise */
    s->history[s->history_next] = token;
    s->history_next = (s->history_next + 1) % s->cfg.repeat_last_n;
    if (s->n_history < s->cfg.repeat_last_n) s->n_history++;
}

SWADEF swa_status swa_sampler_set_logit_bias(swa_sampler *s, const int32_t *ids, const float *biases, size_t n,
                                             swa_error *err)
{
    size_t i;
    if (!s || (n && (!ids || !biases))) return swa__fail(err, SWA_ERR_INVALID_ARG, "swa_sampler_set_logit_bias: NULL argument");
    for (i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= s->n_vocab || biases[i] != biases[i])
            return swa__fail(err, SWA_ERR_INVALID_ARG, "logit bias %zu: token %d (of %d) with bias %g", i, ids[i],
                             s->n_vocab, biases[i]);
    if (n && !s->bias && !(s->bias = (float *)swa__calloc((uint64_t)s->n_vocab, sizeof(float))))
        return swa__fail(err, SWA_ERR_NOMEM, "cannot allocate a logit bias for %d tokens", s->n_vocab);
    if (!n) {
        SWA_FREE(s->bias);
        s->bias = NULL;
    } else {
        memset(s->bias, 0, (size_t)s->n_vocab * sizeof(float));
        for (i = 0; i < n; i++) s->bias[ids[i]] = biases[i] <= -100.0f ? -INFINITY : s->bias[ids[i]] + biases[i];
    }
    swa__ok(err);
    return SWA_OK;
}

/* The penalties on the recent tokens, as llama.cpp applies them: CTRL's repetition penalty
   divides each distinct token's logit by the penalty when positive and multiplies it when
   negative, so it always becomes less likely; then OpenAI's presence penalty is subtracted once
   and the frequency penalty once per occurrence. */
static void swa__apply_penalty(swa_sampler *s)
{
    int32_t i;
    float p = s->cfg.repeat_penalty, pres = s->cfg.presence_penalty, freq = s->cfg.frequency_penalty;
    if (p == 1.0f && pres == 0.0f && freq == 0.0f) return;
    for (i = 0; i < s->n_history; i++) s->prob[s->history[i]] = 0.0f;     /* prob as a count */
    for (i = 0; i < s->n_history; i++) s->prob[s->history[i]] += 1.0f;
    for (i = 0; i < s->n_history; i++) {
        int32_t t = s->history[i];
        float count = s->prob[t];
        if (count == 0.0f) continue;   /* done already */
        s->prob[t] = 0.0f;
        s->work[t] = s->work[t] > 0 ? s->work[t] / p : s->work[t] * p;
        s->work[t] -= pres + count * freq;
    }
}

/* Min-heap on (logit, id) order: the root is the worst of the k kept so far. */
static void swa__sift_down(swa__ranked *h, int32_t n, int32_t i)
{
    for (;;) {
        int32_t c = 2 * i + 1;
        swa__ranked t;
        if (c >= n) return;
        if (c + 1 < n && swa__cmp_ranked(&h[c + 1], &h[c]) > 0) c++;
        if (swa__cmp_ranked(&h[c], &h[i]) <= 0) return;
        t = h[i]; h[i] = h[c]; h[c] = t;
        i = c;
    }
}

/* The candidates the filters look at, best first: all tokens, or the top k found with a heap
   in O(n log k) (a full sort of 32000 logits per token would cost more than a small model's
   forward pass). Without top-p and min-p the order does not matter and nothing is sorted. */
static int32_t swa__candidates(swa_sampler *s)
{
    int32_t i, n = s->n_vocab, k = s->cfg.top_k;
    int sort = s->cfg.top_p < 1.0f || s->cfg.min_p > 0.0f;
    if (k > 0 && k < n) {
        for (i = 0; i < n; i++) {
            swa__ranked r;
            r.key = s->work[i];
            r.id = i;
            if (i < k) {
                s->cand[i] = r;
                if (i == k - 1) { int32_t j; for (j = k / 2; j >= 0; j--) swa__sift_down(s->cand, k, j); }
            } else if (swa__cmp_ranked(&r, &s->cand[0]) < 0) {
                s->cand[0] = r;
                swa__sift_down(s->cand, k, 0);
            }
        }
        n = k;
        sort = 1;
    } else {
        for (i = 0; i < n; i++) { s->cand[i].key = s->work[i]; s->cand[i].id = i; }
    }
    if (sort) qsort(s->cand, (size_t)n, sizeof *s->cand, swa__cmp_ranked);
    return n;
}

/* The choice, before it is remembered. */
static int32_t swa__sampler_choose(swa_sampler *s, const float *logits)
{
    int32_t n, i, kept;
    float max = -INFINITY, sum = 0.0f, cum, u;
    for (i = 0; i < s->n_vocab; i++) s->work[i] = logits[i] == logits[i] ? logits[i] : -INFINITY;   /* NaN: never */
    if (s->bias) for (i = 0; i < s->n_vocab; i++) s->work[i] += s->bias[i];
    swa__apply_penalty(s);
    if (s->cfg.temperature <= 0.0f) return swa_argmax(s->work, s->n_vocab);
    n = swa__candidates(s);
    for (i = 0; i < n; i++) if (s->cand[i].key > max) max = s->cand[i].key;
    if (max == -INFINITY) return swa_argmax(s->work, s->n_vocab);   /* nothing is possible: the first */
    /* the filters see probabilities at temperature 1, as in llama.cpp */
    for (i = 0; i < n; i++) sum += (s->prob[i] = expf(s->cand[i].key - max));
    for (kept = 0, cum = 0.0f; kept < n; kept++) {
        if (s->prob[kept] < s->cfg.min_p * s->prob[0]) break;   /* min-p, relative to the best */
        cum += s->prob[kept] / sum;
        if (cum >= s->cfg.top_p) { kept++; break; }              /* top-p: smallest sufficient prefix */
    }
    if (kept < 1) kept = 1;
    for (sum = 0.0f, i = 0; i < kept; i++)
        sum += (s->prob[i] = expf((s->cand[i].key - max) / s->cfg.temperature));
    u = swa_sampler_uniform(s) * sum;
    for (i = 0; i < kept - 1; i++) {
        u -= s->prob[i];
        if (u < 0.0f) break;
    }
    return s->cand[i].id;
}
SWADEF int32_t swa_sampler_sample(swa_sampler *s, const float *logits)
{
    int32_t id = swa__sampler_choose(s, logits);
    swa_sampler_accept(s, id);
    return id;
}
#endif /* SWA_NO_SAMPLER */

/* ==== kernels (AVX2 + FMA + F16C) ====
   Compiled into every x86-64 build through target attributes and chosen at run time after a
   CPU check, so no -march flag is needed. Differences from the reference, and the tolerances
   tests/test_kernels.c holds them to:
   - float tiles (F32, F16, BF16 rows and F16/F32 keys) keep one 8-lane sum per (row, token)
     pair, with FMA: relative error within 1e-5 of the sum of |products|;
   - Q8_0 and Q4_0 dots scale each block's exact integer sum into a float lane (8 blocks to a
     register): within 1e-5 of the sum of |block terms|; the K-quants keep a super-block's
     integers exact in 8 lanes and scale them with one FMA (Q4_K's and Q5_K's mins in the same
     one): within 1e-6;
   - activation quantization and the F16 conversion round exactly as the reference does:
     bit-identical. Tails shorter than a vector go through the same scalar loop. */

#if defined(SWA__HAVE_AVX2)

SWA__AVX2 static inline float swa__hsum_avx2(__m256 v)
{
    __m128 r = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    r = _mm_add_ps(r, _mm_movehl_ps(r, r));
    r = _mm_add_ss(r, _mm_movehdup_ps(r));
    return _mm_cvtss_f32(r);
}

/* 8 floats from 8 bf16: the bf16 bits are the top half of the float. */
SWA__AVX2 static inline __m256 swa__load_bf16_avx2(const uint16_t *p)
{
    __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
}

#define SWA__LOAD_F16(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))

/* Columns per chunk of the float tiles with several tokens (see swa__dots_float_avx2). */
#define SWA__FLOAT_CHUNK 512

SWA__AVX2 static inline __m256 swa__load8_avx2(const uint8_t *w, int64_t i, uint32_t type)
{
    if (type == SWA_TYPE_F32) return _mm256_loadu_ps((const float *)w + i);
    if (type == SWA_TYPE_F16) return SWA__LOAD_F16((const uint16_t *)w + i);
    return swa__load_bf16_avx2((const uint16_t *)w + i);
}

static inline float swa__float_at(const uint8_t *w, int64_t i, uint32_t type)
{
    if (type == SWA_TYPE_F32) return ((const float *)w)[i];
    if (type == SWA_TYPE_F16) return swa__f16_to_f32(((const uint16_t *)w)[i]);
    return swa__bf16_to_f32(((const uint16_t *)w)[i]);
}

SWA__AVX2 static inline float swa__tile_sum_avx2(__m256 acc, const uint8_t *w, const float *x, int64_t i, int64_t n, uint32_t type)
{
    float sum = swa__hsum_avx2(acc);
    for (; i < n; i++) sum += swa__float_at(w, i, type) * x[i];
    return sum;
}

/* A tile reads its rows side by side (generation and a batch of up to a tile's tokens, each
   weight once). The hardware prefetcher follows one sequential stream well but not 3 or 4 rows
   a few KB apart, so the next tile's rows are fetched ahead by hand, as fast as reading row
   after row (docs/performance.md). A prompt's later passes over a block find those lines in L2
   already, where the prefetch costs little. A prefetch never faults; its address is formed as
   an integer because it may lie past the end of the matrix. (Always inlined: GCC takes a
   function that only prefetches for one without effects and drops its calls.) */
SWA__AVX2 SWA__INLINE void swa__prefetch_next_rows(const uint8_t *w, size_t w_stride, int rows, size_t offset)
{
    uintptr_t p = (uintptr_t)w + (size_t)rows * w_stride + offset;
    int r;
    SWA__UNROLL(8)
    for (r = 0; r < rows; r++) _mm_prefetch((const char *)(p + (size_t)r * w_stride), _MM_HINT_T0);
}

/* Generation reads each thread's rows once, unit after unit (a group of 8 blocks, a
   super-block), and so does a batch of up to 4 tokens, or the first 4 of a larger one. The
   hardware prefetcher alone can leave a quantized kernel waiting on memory while its arithmetic
   has time to spare, so each unit fetches the lines SWA__PREFETCH_AHEAD bytes ahead of it by
   hand (docs/performance.md: the distances and caches compared). Into L2, not L1: a core keeps
   many more misses to L2 in flight than to L1. Then, SWA__PREFETCH_NEAR ahead, the same lines
   from L2 into L1, so that the kernel's loads do not wait on L2 either. Every token loop does,
   the tiles' too: a prompt's later passes over a block find the lines in L2, where a prefetch
   costs little. */
#define SWA__PREFETCH_AHEAD 4096
#define SWA__PREFETCH_NEAR 1024
SWA__AVX2 SWA__INLINE void swa__prefetch_unit(const uint8_t *w, int unit_bytes)
{
    uintptr_t to_l2 = (uintptr_t)w + SWA__PREFETCH_AHEAD, to_l1 = (uintptr_t)w + SWA__PREFETCH_NEAR;
    size_t o;
    for (o = 0; o < (size_t)unit_bytes; o += 64) _mm_prefetch((const char *)(to_l2 + o), _MM_HINT_T1);
    for (o = 0; o < (size_t)unit_bytes; o += 64) _mm_prefetch((const char *)(to_l1 + o), _MM_HINT_T0);
}

/* A tile's rows fetched at offset + SWA__PREFETCH_AHEAD into L2 and + SWA__PREFETCH_NEAR into
   L1, as swa__prefetch_unit does: generation's way on float rows at least twice the distance
   long. On shorter rows those lines are in the rows the tile already reads (TinyLlama's are
   4 KB), and the next tile's rows are the ones to fetch. */
#define SWA__PREFETCH_ROWS_FROM (2 * SWA__PREFETCH_AHEAD)
SWA__AVX2 SWA__INLINE void swa__prefetch_rows_ahead(const uint8_t *w, size_t w_stride, int rows, size_t offset)
{
    uintptr_t p = (uintptr_t)w + offset;
    int r;
    SWA__UNROLL(8)
    for (r = 0; r < rows; r++) {
        _mm_prefetch((const char *)(p + (size_t)r * w_stride + SWA__PREFETCH_AHEAD), _MM_HINT_T1);
        _mm_prefetch((const char *)(p + (size_t)r * w_stride + SWA__PREFETCH_NEAR), _MM_HINT_T0);
    }
}

/* What a float tile fetches at a line of its rows (rows of row_bytes, `next` of them in the
   next tile): its own rows ahead for one token on long rows, else the next tile's rows. */
SWA__AVX2 SWA__INLINE void swa__prefetch_float_tile(const uint8_t *w, size_t w_stride, int rows, int next, size_t offset,
                                                    size_t row_bytes, int tokens)
{
    if (tokens == 1 && row_bytes >= SWA__PREFETCH_ROWS_FROM) swa__prefetch_rows_ahead(w, w_stride, rows, offset);
    else swa__prefetch_next_rows(w, w_stride, next, offset);
}

/* Token t's float activations, x_stride bytes apart from x. */
SWA__AVX2 SWA__INLINE const float *swa__token_f32(const uint8_t *x, size_t x_stride, int t)
{
    return (const float *)(x + (size_t)t * x_stride);
}

/* Float rows in tiles of up to 3 rows x 4 tokens, for the matrix products. Per 8 columns the
   3 weight vectors are widened once and each token's vector is loaded once, for 12 FMAs into
   12 accumulators: with the 3 weights and the token, all 16 YMM registers; a tile of 1 row x 4
   tokens would load the tokens again for every row. Every (row, token) pair has one
   accumulator running over the whole 8s of columns in order, then the scalar tail, so its bits
   do not depend on the tile or the chunk of columns it was computed in: generation's 3 x 1
   tiles give what a prompt's 3 x 4 tiles give. A tile goes over len columns from wb and xb
   on, its accumulators carried in acc (SWA__TILE_TOKENS to a row) from the columns before. R
   and T are constants after inlining. */
SWA__AVX2 SWA__INLINE void
swa__tile_avx2(const uint8_t *wb, size_t w_stride, const uint8_t *xb, size_t x_stride, int64_t len,
               __m256 acc[][SWA__TILE_TOKENS], uint32_t type, const int R, const int T)
{
    __m256 c[SWA__TILE_ROWS][SWA__TILE_TOKENS], w[SWA__TILE_ROWS];
    const size_t elt = (size_t)swa__types[type].block_bytes;   /* block_size 1 */
    int64_t i;
    int r, t;
    SWA__UNROLL(3)
    for (r = 0; r < R; r++)
        SWA__UNROLL(4)
        for (t = 0; t < T; t++) c[r][t] = acc[r][t];
    for (i = 0; i + 8 <= len; i += 8) {
        SWA__UNROLL(3)
        for (r = 0; r < R; r++) w[r] = swa__load8_avx2(wb + (size_t)r * w_stride, i, type);
        SWA__UNROLL(4)
        for (t = 0; t < T; t++) {
            const __m256 x = _mm256_loadu_ps(swa__token_f32(xb, x_stride, t) + i);
            SWA__UNROLL(3)
            for (r = 0; r < R; r++) c[r][t] = _mm256_fmadd_ps(w[r], x, c[r][t]);
        }
        if ((size_t)i * elt % 64 == 0) swa__prefetch_float_tile(wb, w_stride, R, SWA__TILE_ROWS, (size_t)i * elt, (size_t)len * elt, T);
    }
    SWA__UNROLL(3)
    for (r = 0; r < R; r++)
        SWA__UNROLL(4)
        for (t = 0; t < T; t++) acc[r][t] = c[r][t];
}

/* Up to SWA__FLOAT_ROWS_AVX2 rows against up to 4 tokens, in tiles of 3 rows. With several
   tokens the whole 8s of columns go in chunks of SWA__FLOAT_CHUNK, each met by every tile
   before the next: the tokens' activations for a chunk (8 KB for 4 tokens) stay in L1 while
   the rows pass, the accumulators kept in acc in between. Met over all the columns at once,
   each tile of 3 rows would read its tokens' activations from L2 again, 4 of its 7 loads for
   12 FMAs. More tokens a call, each tile's rows met by several groups of 4 while in L1, ran
   slower: a model's activations lie a multiple of 4 KB apart (its width in floats), so every
   token's chunk falls in the same sets of L1, and 12 of them fill those sets. One token's rows
   go whole, one stream at a time. */
SWA__AVX2 SWA__INLINE void swa__dots_float_avx2(const void *w, size_t w_stride, int nr, const void *x, size_t x_stride,
                                                int nt, int64_t n, float *y, int64_t ldy, uint32_t type)
{
    const int64_t whole = n / 8 * 8, chunk = nt > 1 ? SWA__FLOAT_CHUNK : whole;
    const size_t elt = (size_t)swa__types[type].block_bytes;   /* block_size 1 */
    const uint8_t *wb = (const uint8_t *)w, *xb = (const uint8_t *)x;
    __m256 acc[SWA__FLOAT_ROWS_AVX2][SWA__TILE_TOKENS];
    int64_t i, len;
    int r, t;
    for (r = 0; r < nr; r++)
        for (t = 0; t < nt; t++) acc[r][t] = _mm256_setzero_ps();
    for (i = 0; i < whole; i += len) {
        len = whole - i < chunk ? whole - i : chunk;
        for (r = 0; r < nr; r += SWA__TILE_ROWS) {
            const uint8_t *wt = wb + (size_t)r * w_stride + (size_t)i * elt, *xt = xb + (size_t)i * sizeof(float);
            /* the tile's rows and tokens, constants in the kernel each case picks */
            switch ((nr - r < SWA__TILE_ROWS ? nr - r - 1 : SWA__TILE_ROWS - 1) * SWA__TILE_TOKENS + nt - 1) {
            case 0: swa__tile_avx2(wt, w_stride, xt, x_stride, len, acc + r, type, 1, 1); break;
            case 1: swa__tile_avx2(wt, w_stride, xt, x_stride, len, acc + r, type, 1, 2); break;
            case 2: swa__tile_avx2(wt, w_stride, xt, x_stride, len, acc + r, type, 1, 3); break;
            case 3: swa__tile_avx2(wt, w_stride, xt, x_stride, len, acc + r, type, 1, 4); break;
            case 4: swa__tile_avx2(wt, w_stride, xt, x_stride, len, acc + r, type, 2, 1); break;
            case 5: swa__tile_avx2(wt, w_stride, xt, x_stride, len, acc + r, type, 2, 2); break;
            case 6: swa__tile_avx2(wt, w_stride, xt, x_stride, len, acc + r, type, 2, 3); break;
            case 7: swa__tile_avx2(wt, w_stride, xt, x_stride, len, acc + r, type, 2, 4); break;
            case 8: swa__tile_avx2(wt, w_stride, xt, x_stride, len, acc + r, type, 3, 1); break;
            case 9: swa__tile_avx2(wt, w_stride, xt, x_stride, len, acc + r, type, 3, 2); break;
            case 10: swa__tile_avx2(wt, w_stride, xt, x_stride, len, acc + r, type, 3, 3); break;
            case 11: swa__tile_avx2(wt, w_stride, xt, x_stride, len, acc + r, type, 3, 4); break;
            default: break;
            }
        }
    }
    for (t = 0; t < nt; t++)
        for (r = 0; r < nr; r++)
            y[t * ldy + r] = swa__tile_sum_avx2(acc[r][t], wb + (size_t)r * w_stride, swa__token_f32(xb, x_stride, t), whole, n, type);
}

SWA__AVX2 static void swa__dots_f32_avx2(const void *w, size_t w_stride, int nr, const void *x, size_t x_stride, int nt,
                                         int64_t n, float *y, int64_t ldy)
{
    swa__dots_float_avx2(w, w_stride, nr, x, x_stride, nt, n, y, ldy, SWA_TYPE_F32);
}

SWA__AVX2 static void swa__dots_f16_avx2(const void *w, size_t w_stride, int nr, const void *x, size_t x_stride, int nt,
                                         int64_t n, float *y, int64_t ldy)
{
    swa__dots_float_avx2(w, w_stride, nr, x, x_stride, nt, n, y, ldy, SWA_TYPE_F16);
}

SWA__AVX2 static void swa__dots_bf16_avx2(const void *w, size_t w_stride, int nr, const void *x, size_t x_stride, int nt,
                                          int64_t n, float *y, int64_t ldy)
{
    swa__dots_float_avx2(w, w_stride, nr, x, x_stride, nt, n, y, ldy, SWA_TYPE_BF16);
}

/* F16 and BF16 rows as f32 for the F32 tiles: each column converted as the tiles convert it (8
   at a time, then one by one), exact either way. */
SWA__AVX2 SWA__INLINE void swa__widen_avx2(const void *row, float *out, int64_t n, uint32_t type)
{
    const uint8_t *w = (const uint8_t *)row;
    int64_t i;
    for (i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, swa__load8_avx2(w, i, type));
    for (; i < n; i++) out[i] = swa__float_at(w, i, type);
}

SWA__AVX2 static void swa__widen_f16_avx2(const void *row, float *out, int64_t n)
{
    swa__widen_avx2(row, out, n, SWA_TYPE_F16);
}

SWA__AVX2 static void swa__widen_bf16_avx2(const void *row, float *out, int64_t n)
{
    swa__widen_avx2(row, out, n, SWA_TYPE_BF16);
}
SWA__DOT_FROM_DOTS(SWA__AVX2, swa__dot_f32_avx2, swa__dots_f32_avx2)
SWA__DOT_FROM_DOTS(SWA__AVX2, swa__dot_f16_avx2, swa__dots_f16_avx2)
SWA__DOT_FROM_DOTS(SWA__AVX2, swa__dot_bf16_avx2, swa__dots_bf16_avx2)

/* 16 bytes of nibbles as 32 bytes in element order: the low nibbles, then the high ones. */
SWA__AVX2 SWA__INLINE __m256i swa__nibbles_avx2(const uint8_t *p)
{
    const __m128i raw = _mm_loadu_si128((const __m128i *)p);
    return _mm256_and_si256(_mm256_inserti128_si256(_mm256_castsi128_si256(raw), _mm_srli_epi16(raw, 4), 1),
                            _mm256_set1_epi8(15));
}

SWA__AVX2 SWA__INLINE __m256i swa__table_lookup_avx2(const int8_t *table, __m256i nibbles)   /* table[16] */
{
    return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)table)), nibbles);
}

/* Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL and MXFP4 rows against swa__q8g groups of activations,
   8 blocks at a time and up to 4 tokens at once. Weight blocks p and p + 4 (p < 4) share a register pair, first halves in one
   and second halves in the other, against the activations laid out to match, so that madd
   leaves each block's sum in 4 lanes of one 128-bit half and a short reduction gathers the 8
   blocks' sums into one register, in block order, where the scales (converted 8 at a time) and
   one FMA finish them: block by block, the scale products and their broadcasts would cost more
   than the integer work. A row's last blocks (fewer than 8) go one at a time.
   maddubs wants one unsigned operand: Q8_0 gives it |w| and moves w's sign onto the
   activation; Q4_0's nibbles are unsigned (0..15) as they are, and its offset comes off the
   sums afterwards: sum (w - 8) q = sum w q - sum8. IQ4_NL and MXFP4 are Q4_0's nibbles looked up
   in a table (one byte shuffle): IQ4_NL's values are signed as Q8_0's bytes are; MXFP4's codes
   plus 12 (0..24) are unsigned as Q4_0's nibbles are, and their offset comes off the same way:
   12 sum q = sum8 + sum8 / 2. Q5_0's and Q5_1's fifth bits join the nibbles as 16 (two blocks'
   words expanded to bytes at once), making Q5_0's unsigned quants 0..31 with offset 16:
   16 sum q = 2 sum8. Q4_1's and Q5_1's quants are unsigned as they are, and their offsets m
   (f16, converted 8 at a time as the scales are) meet the blocks' activation sums in a second
   product beside the scales': dx (d s + m / 8 sum8). A token's steps do not depend on the other
   tokens of the tile, so its result does not either. */
static const int8_t swa__mxfp4_plus12[16] = {12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0};

/* Whether a type's weights go to maddubs unsigned with an integer offset (Q4_0's 8, MXFP4's 12,
   Q5_0's 16) taken off the sums afterwards. */
static int swa__offset_quants(uint32_t type)
{
    return type == SWA_TYPE_Q4_0 || type == SWA_TYPE_MXFP4 || type == SWA_TYPE_Q5_0;
}

/* Whether a type's weights go to maddubs unsigned: those with an integer offset and those with
   a float one (Q4_1's and Q5_1's m). All are small (0..31), so that the int16 sums below have
   room to add up before they widen. */
static int swa__unsigned_quants(uint32_t type) { return swa__offset_quants(type) || swa__b32_has_min(type); }

/* k sum q of a block, from sum8 = 8 sum q: Q4_0's k = 8, MXFP4's 12, Q5_0's 16. */
SWA__AVX2 SWA__INLINE __m256i swa__offsets_avx2(__m256i sum8, uint32_t type)
{
    return type == SWA_TYPE_MXFP4 ? _mm256_add_epi32(sum8, _mm256_srai_epi32(sum8, 1))
         : type == SWA_TYPE_Q5_0  ? _mm256_slli_epi32(sum8, 1) : sum8;
}

/* For the unsigned products of the VNNI sets: whether a type's weights are signed bytes there
   (Q8_0's, IQ4_NL's table values), made unsigned by adding 128; the offset k its unsigned
   bytes carry (Q4_0's 8, MXFP4's 12 (its codes plus 12), Q5_0's 16, none for Q4_1's and Q5_1's,
   whose m is a float; the signed ones' 128); and k sum x, which comes off a block's sum, from
   sum8 = 8 sum x. */
static inline int swa__signed_quants(uint32_t type) { return type == SWA_TYPE_Q8_0 || type == SWA_TYPE_IQ4_NL; }
static inline int32_t swa__quant_offset(uint32_t type)
{
    return type == SWA_TYPE_Q4_0 ? 8 : type == SWA_TYPE_MXFP4 ? 12 : type == SWA_TYPE_Q5_0 ? 16 : swa__b32_has_min(type) ? 0 : 128;
}
static inline int32_t swa__offset_of(uint32_t type, int32_t sum8) { return swa__quant_offset(type) * (sum8 / 8); }

/* The table a type's nibbles go through here, or NULL (Q4_0's as they are). */
static const int8_t *swa__group_table(uint32_t type)
{
    return type == SWA_TYPE_MXFP4 ? swa__mxfp4_plus12 : type == SWA_TYPE_IQ4_NL ? swa__iq4nl_values : NULL;
}

/* 16 where a bit is set, else 0: byte e of the result tests bit e % 8 of byte spread[e] of its
   128-bit lane of bits. */
SWA__AVX2 SWA__INLINE __m256i swa__bits_to_16s_avx2(__m256i bits, __m256i spread)
{
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ull);
    __m256i v = _mm256_and_si256(_mm256_shuffle_epi8(bits, spread), bit);
    return _mm256_and_si256(_mm256_cmpeq_epi8(v, bit), _mm256_set1_epi8(16));
}

/* The fifth bits of pair p's blocks (Q5_0, Q5_1) onto their nibbles: both blocks' 32-bit words
   in one 64-bit lane, block p's bits 0..15 to lo's low 128-bit lane and p + 4's to its high one,
   bits 16..31 to hi's. */
SWA__AVX2 SWA__INLINE void swa__pair_fifth_bits_avx2(const uint8_t *w, int p, int bb, int at, __m256i *lo, __m256i *hi)
{
    const __m256i spread_lo = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                               4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5);
    const __m256i spread_hi = _mm256_add_epi8(spread_lo, _mm256_set1_epi8(2));
    const uint64_t qh = swa__load_le32(w + bb * p + at - 4) | (uint64_t)swa__load_le32(w + bb * (p + 4) + at - 4) << 32;
    const __m256i bits = _mm256_set1_epi64x((long long)qh);
    *lo = _mm256_or_si256(*lo, swa__bits_to_16s_avx2(bits, spread_lo));
    *hi = _mm256_or_si256(*hi, swa__bits_to_16s_avx2(bits, spread_hi));
}

SWA__AVX2 SWA__INLINE void swa__pair_avx2(const uint8_t *w, int p, uint32_t type, __m256i *lo, __m256i *hi)
{
    if (type != SWA_TYPE_Q8_0) {   /* nibbles, as they are or through a table, or with fifth bits */
        const __m256i low4 = _mm256_set1_epi8(15);
        const int bb = (int)swa__types[type].block_bytes, at = swa__b32_qs_at(type);
        __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(w + bb * p + at))),
                                            _mm_loadu_si128((const __m128i *)(w + bb * (p + 4) + at)), 1);
        *lo = _mm256_and_si256(v, low4);
        *hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low4);
        if (swa__b32_has_qh(type)) swa__pair_fifth_bits_avx2(w, p, bb, at, lo, hi);
        if (swa__group_table(type)) {
            *lo = swa__table_lookup_avx2(swa__group_table(type), *lo);
            *hi = swa__table_lookup_avx2(swa__group_table(type), *hi);
        }
    } else {
        __m256i a = _mm256_loadu_si256((const __m256i *)(w + 34 * p + 2));
        __m256i b = _mm256_loadu_si256((const __m256i *)(w + 34 * (p + 4) + 2));
        *lo = _mm256_permute2x128_si256(a, b, 0x20);
        *hi = _mm256_permute2x128_si256(a, b, 0x31);
    }
}

/* The int16 sums of w x over 2 bytes at a time, for a register of weights and one of activations. */
SWA__AVX2 SWA__INLINE __m256i swa__sums2_avx2(__m256i w, __m256i x, uint32_t type)
{
    return swa__unsigned_quants(type) ? _mm256_maddubs_epi16(w, x)
                                   : _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(x, w));
}

SWA__AVX2 SWA__INLINE __m256i swa__sums4_avx2(__m256i w, __m256i x, uint32_t type)
{
    return _mm256_madd_epi16(swa__sums2_avx2(w, x, type), _mm256_set1_epi16(1));
}

/* The unsigned quants' int16 sums stay within 2 * 31 * 127, so two of them add before widening
   (4 * 31 * 127 < 2^15); Q8_0's and IQ4_NL's reach 2 * 127 * 127 and widen first. */
SWA__AVX2 SWA__INLINE __m256i swa__pair_sums_avx2(__m256i lo, __m256i hi, const int8_t *q, uint32_t type)
{
    __m256i xl = _mm256_loadu_si256((const __m256i *)q), xh = _mm256_loadu_si256((const __m256i *)(q + 32));
    if (swa__unsigned_quants(type))
        return _mm256_madd_epi16(_mm256_add_epi16(swa__sums2_avx2(lo, xl, type), swa__sums2_avx2(hi, xh, type)),
                                 _mm256_set1_epi16(1));
    return _mm256_add_epi32(swa__sums4_avx2(lo, xl, type), swa__sums4_avx2(hi, xh, type));
}

/* The 8 blocks' scales, packed four to a 64-bit word in general registers: two transfers to
   the vector unit instead of eight. */
SWA__AVX2 SWA__INLINE uint64_t swa__scales4(const uint8_t *w, int block_bytes)
{
    uint64_t s = (uint64_t)swa__load_u16(w) | (uint64_t)swa__load_u16(w + block_bytes) << 16 |
                 (uint64_t)swa__load_u16(w + 2 * block_bytes) << 32 | (uint64_t)swa__load_u16(w + 3 * block_bytes) << 48;
    __asm__("" : "+r"(s));   /* else GCC packs the two calls' work into costlier vector shuffles */
    return s;
}

/* MXFP4's 8 E8M0 bytes as the floats 2^(e - 128) (see swa__e8m0_half): the exponent field e - 1,
   or for e < 2 the subnormals 2^-128 and 2^-127. */
SWA__AVX2 SWA__INLINE __m256 swa__e8m0_8_avx2(const uint8_t *w, int block_bytes)
{
    uint64_t e = 0;
    __m256i v, sub, norm;
    int k;
    for (k = 0; k < 8; k++) e |= (uint64_t)w[k * block_bytes] << (8 * k);
    v = _mm256_cvtepu8_epi32(_mm_set_epi64x(0, (long long)e));
    norm = _mm256_slli_epi32(_mm256_sub_epi32(v, _mm256_set1_epi32(1)), 23);
    sub = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), v);
    return _mm256_castsi256_ps(_mm256_blendv_epi8(sub, norm, _mm256_cmpgt_epi32(v, _mm256_set1_epi32(1))));
}

SWA__AVX2 SWA__INLINE __m256 swa__scales8_avx2(const uint8_t *w, int block_bytes)   /* f16 scales */
{
    return _mm256_cvtph_ps(_mm_set_epi64x((long long)swa__scales4(w + 4 * block_bytes, block_bytes),
                                          (long long)swa__scales4(w, block_bytes)));
}

/* The two token loops: every quantized row kernel runs over its units (groups of 8 blocks,
   super-blocks) twice over, both prefetching: generation (one token) in a loop of its own,
   which the compiler schedules without the other tokens' registers, and up to 4 tokens sharing
   each unpacked unit. A token's step is the same function in both loops, so its result does
   not depend on the tile. */

/* The tokens' results: each accumulator's lanes added up. */
SWA__AVX2 SWA__INLINE void swa__store_sums_avx2(float *out, int nt, __m256 c0, __m256 c1, __m256 c2, __m256 c3)
{
    out[0] = swa__hsum_avx2(c0);
    if (nt > 1) out[1] = swa__hsum_avx2(c1);
    if (nt > 2) out[2] = swa__hsum_avx2(c2);
    if (nt > 3) out[3] = swa__hsum_avx2(c3);
}

/* The 8 blocks' sums in block order, from pairs p (block p in lanes 0..3, p + 4 in 4..7). The
   unsigned quants' lanes stay within 8 * 31 * 127 < 2^15, so they pack to int16 without
   saturating and one madd adds pairs of them: two packs and two madds cost less than two hadds. */
SWA__AVX2 SWA__INLINE __m256i swa__block_sums8_avx2(__m256i p0, __m256i p1, __m256i p2, __m256i p3, uint32_t type)
{
    if (swa__unsigned_quants(type)) {
        const __m256i ones = _mm256_set1_epi16(1);
        return _mm256_hadd_epi32(_mm256_madd_epi16(_mm256_packs_epi32(p0, p1), ones),
                                 _mm256_madd_epi16(_mm256_packs_epi32(p2, p3), ones));
    }
    return _mm256_hadd_epi32(_mm256_hadd_epi32(p0, p1), _mm256_hadd_epi32(p2, p3));
}

/* A group of 8 blocks, unpacked once for all the tokens: its 4 pairs of weight registers (see
   swa__pair_avx2), its 8 scales and (Q4_1, Q5_1) its 8 offsets m / 8. */
typedef struct swa__group_avx2 {
    __m256i lo[4], hi[4];
    __m256 dw, mw;
} swa__group_avx2;

/* A group's 8 scales, f16 or (MXFP4) E8M0. */
SWA__AVX2 SWA__INLINE __m256 swa__group_scales_avx2(const uint8_t *w, int block_bytes, uint32_t type)
{
    return type == SWA_TYPE_MXFP4 ? swa__e8m0_8_avx2(w, block_bytes) : swa__scales8_avx2(w, block_bytes);
}

/* A block's scale, f16 or (MXFP4) E8M0. */
SWA__AVX2 SWA__INLINE float swa__block_scale_avx2(const uint8_t *w, uint32_t type)
{
    return type == SWA_TYPE_MXFP4 ? swa__e8m0_half(w[0]) : _cvtsh_ss(swa__load_u16(w));
}

/* Q4_1's and Q5_1's m / 8 (exact: a power of 2), which meets sum8 = 8 sum x. */
SWA__AVX2 SWA__INLINE __m256 swa__group_mins_avx2(const uint8_t *w, int block_bytes)
{
    return _mm256_mul_ps(swa__scales8_avx2(w + 2, block_bytes), _mm256_set1_ps(0.125f));
}

SWA__AVX2 SWA__INLINE void swa__group_unpack_avx2(const uint8_t *w, int block_bytes, uint32_t type, swa__group_avx2 *g)
{
    g->dw = swa__group_scales_avx2(w, block_bytes, type);
    if (swa__b32_has_min(type)) g->mw = swa__group_mins_avx2(w, block_bytes);
    swa__pair_avx2(w, 0, type, &g->lo[0], &g->hi[0]);
    swa__pair_avx2(w, 1, type, &g->lo[1], &g->hi[1]);
    swa__pair_avx2(w, 2, type, &g->lo[2], &g->hi[2]);
    swa__pair_avx2(w, 3, type, &g->lo[3], &g->hi[3]);
}

/* Token k's activations, x_stride bytes apart from x. */
SWA__AVX2 SWA__INLINE const swa__q8g *swa__q8g_token(const uint8_t *x, size_t x_stride, int k)
{
    return (const swa__q8g *)(x + (size_t)k * x_stride);
}

/* One token's turn on group g: a, its activations' group, into acc. */
SWA__AVX2 SWA__INLINE __m256 swa__group_step_avx2(const swa__group_avx2 *g, const swa__q8g *a, uint32_t type, __m256 acc)
{
    __m256i s = swa__block_sums8_avx2(swa__pair_sums_avx2(g->lo[0], g->hi[0], a->q, type),
                                      swa__pair_sums_avx2(g->lo[1], g->hi[1], a->q + 64, type),
                                      swa__pair_sums_avx2(g->lo[2], g->hi[2], a->q + 128, type),
                                      swa__pair_sums_avx2(g->lo[3], g->hi[3], a->q + 192, type), type);
    const __m256i sum8 = _mm256_loadu_si256((const __m256i *)a->sum8);
    if (swa__b32_has_min(type))
        return _mm256_fmadd_ps(_mm256_loadu_ps(a->d),
                               _mm256_fmadd_ps(g->dw, _mm256_cvtepi32_ps(s), _mm256_mul_ps(g->mw, _mm256_cvtepi32_ps(sum8))), acc);
    if (swa__offset_quants(type)) s = _mm256_sub_epi32(s, swa__offsets_avx2(sum8, type));
    return _mm256_fmadd_ps(_mm256_mul_ps(g->dw, _mm256_loadu_ps(a->d)), _mm256_cvtepi32_ps(s), acc);
}

/* The sum of 8 int32 lanes. */
SWA__AVX2 SWA__INLINE int32_t swa__hsum_epi32_avx2(__m256i v)
{
    __m128i r = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    r = _mm_add_epi32(r, _mm_shuffle_epi32(r, 0x4e));
    r = _mm_add_epi32(r, _mm_shuffle_epi32(r, 0xb1));
    return _mm_cvtsi128_si32(r);
}

/* Block b's 32 activations of a swa__q8g row, in element order. */
SWA__AVX2 SWA__INLINE __m256i swa__block_x_avx2(const swa__q8g *a, int64_t b)
{
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)swa__q8g_half(a, b, 0))),
                                   _mm_loadu_si128((const __m128i *)swa__q8g_half(a, b, 1)), 1);
}

/* One block's 32 weights in element order: Q4_0's low nibbles then its high ones (IQ4_NL's and
   MXFP4's through their tables, Q5_0's and Q5_1's with their fifth bits, as swa__pair_avx2 has
   them). */
SWA__AVX2 SWA__INLINE __m256i swa__block_avx2(const uint8_t *w, uint32_t type)
{
    const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                            2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const int at = swa__b32_qs_at(type);
    __m256i q;
    if (type == SWA_TYPE_Q8_0) return _mm256_loadu_si256((const __m256i *)(w + 2));
    q = swa__nibbles_avx2(w + at);
    if (swa__b32_has_qh(type)) q = _mm256_or_si256(q, swa__bits_to_16s_avx2(_mm256_set1_epi32((int)swa__load_le32(w + at - 4)), spread));
    return swa__group_table(type) ? swa__table_lookup_avx2(swa__group_table(type), q) : q;
}

/* A block's m / 8 (Q4_1, Q5_1; else 0). */
SWA__AVX2 SWA__INLINE float swa__block_min_avx2(const uint8_t *w, uint32_t type)
{
    return swa__b32_has_min(type) ? _cvtsh_ss(swa__load_u16(w + 2)) * 0.125f : 0.0f;
}

/* One token's turn on block b (weights q, scale dw, offset mw = m / 8) of a row's last, partial
   group. */
SWA__AVX2 SWA__INLINE __m256 swa__block_step_avx2(__m256i q, float dw, float mw, const swa__q8g *a, int64_t b, uint32_t type,
                                                  __m256 acc)
{
    const int32_t sum8 = a[b / 8].sum8[b % 8];
    __m256i s = swa__sums4_avx2(q, swa__block_x_avx2(a, b), type);
    if (swa__b32_has_min(type))
        return _mm256_fmadd_ps(_mm256_set1_ps(a[b / 8].d[b % 8]),
                               _mm256_fmadd_ps(_mm256_set1_ps(dw), _mm256_cvtepi32_ps(s),
                                               _mm256_setr_ps(mw * (float)sum8, 0, 0, 0, 0, 0, 0, 0)), acc);
    if (swa__offset_quants(type)) s = _mm256_sub_epi32(s, swa__offsets_avx2(_mm256_setr_epi32(sum8, 0, 0, 0, 0, 0, 0, 0), type));
    return _mm256_fmadd_ps(_mm256_set1_ps(dw * a[b / 8].d[b % 8]), _mm256_cvtepi32_ps(s), acc);
}

SWA__AVX2 SWA__INLINE void swa__row_dots_grouped_avx2(const void *row, const void *x, size_t stride, int nt, int64_t n,
                                                      float *out, const uint32_t type)
{
    const uint8_t *w = (const uint8_t *)row, *xa = (const uint8_t *)x;
    const int block_bytes = (int)swa__types[type].block_bytes;
    __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;
    swa__group_avx2 g;
    int64_t i, b;
    /* the two token loops, then the last, partial group block by block */
    for (i = 0; nt == 1 && i < n / 256; i++, w += 8 * block_bytes) {
        swa__prefetch_unit(w, 8 * block_bytes);
        swa__group_unpack_avx2(w, block_bytes, type, &g);
        if (nt > 0) c0 = swa__group_step_avx2(&g, swa__q8g_token(xa, stride, 0) + i, type, c0);
    }
    for (i = 0; nt > 1 && i < n / 256; i++, w += 8 * block_bytes) {
        swa__prefetch_unit(w, 8 * block_bytes);
        swa__group_unpack_avx2(w, block_bytes, type, &g);
        if (nt > 0) c0 = swa__group_step_avx2(&g, swa__q8g_token(xa, stride, 0) + i, type, c0);
        if (nt > 1) c1 = swa__group_step_avx2(&g, swa__q8g_token(xa, stride, 1) + i, type, c1);
        if (nt > 2) c2 = swa__group_step_avx2(&g, swa__q8g_token(xa, stride, 2) + i, type, c2);
        if (nt > 3) c3 = swa__group_step_avx2(&g, swa__q8g_token(xa, stride, 3) + i, type, c3);
    }
    for (b = n / 256 * 8; b < n / 32; b++, w += block_bytes) {
        __m256i q = swa__block_avx2(w, type);
        float dw = swa__block_scale_avx2(w, type), mw = swa__block_min_avx2(w, type);
        if (nt > 0) c0 = swa__block_step_avx2(q, dw, mw, swa__q8g_token(xa, stride, 0), b, type, c0);
        if (nt > 1) c1 = swa__block_step_avx2(q, dw, mw, swa__q8g_token(xa, stride, 1), b, type, c1);
        if (nt > 2) c2 = swa__block_step_avx2(q, dw, mw, swa__q8g_token(xa, stride, 2), b, type, c2);
        if (nt > 3) c3 = swa__block_step_avx2(q, dw, mw, swa__q8g_token(xa, stride, 3), b, type, c3);
    }
    swa__store_sums_avx2(out, nt, c0, c1, c2, c3);
}

/* K-quant rows against up to 4 tokens at once: a super-block's weights and scales are unpacked
   once for all the tokens, and each token's integer sums meet their scales in vector registers,
   with one FMA per super-block and no horizontal sum until the row ends. */

/* The shuffle_epi8 control that copies int16 lane k of a 128-bit lane into an int16. */
static inline short swa__int16_lane(int k)
{
    return (short)(0x0100 + 0x0202 * k);
}

/* [s_2m x 8 | s_2m+1 x 8] as int16, from 8 int16 scales held in both 128-bit lanes of s: the
   scales of the two 16-element halves of a maddubs result (one in-lane shuffle, which costs less
   than a permute picking the pair from 16 scales in one register). */
SWA__AVX2 SWA__INLINE __m256i swa__scale_pair_avx2(__m256i s, int m)
{
    return _mm256_shuffle_epi8(s, _mm256_set_m128i(_mm_set1_epi16(swa__int16_lane(2 * m + 1)),
                                                   _mm_set1_epi16(swa__int16_lane(2 * m))));
}

SWA__AVX2 SWA__INLINE uint32_t swa__load_u32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }

/* Q4_K's eight 6-bit scales (bytes 0..7) and mins (8..15), unpacked 4 at a time in 32-bit
   words from the 12 bytes at s (layout at swa__q4k_scales). */
static uint64_t swa__q4k_unpack4(uint32_t low6, uint32_t low4, uint32_t high2)
{
    return (uint64_t)(low6 & 0x3f3f3f3fu) | (uint64_t)((low4 & 0x0f0f0f0fu) | ((high2 >> 6) & 0x03030303u) << 4) << 32;
}

/* Two f16 in a word (d low, dmin high) as [d d dmin dmin] in each 128-bit lane. */
SWA__AVX2 SWA__INLINE __m256 swa__d_dmin_avx2(uint32_t halves)
{
    return _mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_cvtph_ps(_mm_cvtsi32_si128((int)halves))),
                                    _mm256_setr_epi32(0, 0, 1, 1, 0, 0, 1, 1));
}

/* acc + a token's super-block: its scaled sums and its mins (the activations' 16-element sums
   against neg_mins16, -m for each, so that both add) share one hadd and one FMA against
   [d d dmin dmin], fewer operations than a second FMA and d and dmin converted apart. The types
   without mins pass with_mins 0 (a constant after inlining) and dmin 0. */
SWA__AVX2 SWA__INLINE __m256 swa__kfinish_avx2(__m256 acc, __m256i sums, const swa__q8k *a, __m256i neg_mins16, __m256 d_dmin,
                                              int with_mins)
{
    const __m256i mins = with_mins ? _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)a->bsum), neg_mins16)
                                   : _mm256_setzero_si256();
    return _mm256_fmadd_ps(_mm256_mul_ps(d_dmin, _mm256_set1_ps(a->d)), _mm256_cvtepi32_ps(_mm256_hadd_epi32(sums, mins)), acc);
}

SWA__AVX2 SWA__INLINE __m128i swa__q4k_scales_avx2(const uint8_t *s)
{
    uint32_t u0 = swa__load_u32(s), u1 = swa__load_u32(s + 4), u2 = swa__load_u32(s + 8);
    uint64_t scales = swa__q4k_unpack4(u0, u2, u0), mins = swa__q4k_unpack4(u1, u2 >> 4, u1);
    __asm__("" : "+r"(scales), "+r"(mins));   /* in general registers: see swa__scales4 */
    return _mm_set_epi64x((long long)mins, (long long)scales);
}

/* Q4_K group g (64 elements): sub-block 2g in the low nibbles, 2g + 1 in the high ones, and
   their scales broadcast from the 8 scales held in both 128-bit lanes. Written out per group
   (not as arrays in a loop, which GCC keeps in memory at -O2); a token's sums end in
   swa__kfinish_avx2. */
/* A Q4_K super-block unpacked once for all the tokens: per group g of 64 its low and high
   nibbles and their two scales (as int16 in every lane), the mins negated for the 16-element
   sums (m[j] for bsum[2 j] and bsum[2 j + 1]), and [d, dmin] alternating by pairs. */
typedef struct swa__q4k_avx2 {
    __m256i lo[4], hi[4], sl[4], sh[4];
    __m256i mins16;
    __m256 d_dmin;
} swa__q4k_avx2;

SWA__AVX2 SWA__INLINE void swa__q4k_group_unpack_avx2(const uint8_t *w, __m256i sc16, int g, swa__q4k_avx2 *u)
{
    const __m256i low4 = _mm256_set1_epi8(15);
    __m256i raw = _mm256_loadu_si256((const __m256i *)(w + 16 + 32 * g));
    u->lo[g] = _mm256_and_si256(raw, low4);
    u->hi[g] = _mm256_and_si256(_mm256_srli_epi16(raw, 4), low4);
    u->sl[g] = _mm256_shuffle_epi8(sc16, _mm256_set1_epi16(swa__int16_lane(2 * g)));
    u->sh[g] = _mm256_shuffle_epi8(sc16, _mm256_set1_epi16(swa__int16_lane(2 * g + 1)));
}

SWA__AVX2 SWA__INLINE void swa__q4k_unpack_avx2(const uint8_t *w, swa__q4k_avx2 *u)
{
    const __m128i twice = _mm_setr_epi8(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15);
    __m128i scales_mins = swa__q4k_scales_avx2(w + 4);
    __m256i sc16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(scales_mins));
    u->mins16 = _mm256_sub_epi16(_mm256_setzero_si256(), _mm256_cvtepu8_epi16(_mm_shuffle_epi8(scales_mins, twice)));
    u->d_dmin = swa__d_dmin_avx2(swa__load_u32(w));
    swa__q4k_group_unpack_avx2(w, sc16, 0, u);
    swa__q4k_group_unpack_avx2(w, sc16, 1, u);
    swa__q4k_group_unpack_avx2(w, sc16, 2, u);
    swa__q4k_group_unpack_avx2(w, sc16, 3, u);
}

SWA__AVX2 SWA__INLINE __m256i swa__q4k_group_sum_avx2(const swa__q4k_avx2 *u, const swa__q8k *a, int g)
{
    return _mm256_add_epi32(
        _mm256_madd_epi16(_mm256_maddubs_epi16(u->lo[g], _mm256_loadu_si256((const __m256i *)(a->q + 64 * g))), u->sl[g]),
        _mm256_madd_epi16(_mm256_maddubs_epi16(u->hi[g], _mm256_loadu_si256((const __m256i *)(a->q + 64 * g + 32))), u->sh[g]));
}

/* One token's turn on super-block u: a, its activations' block, into acc. */
SWA__AVX2 SWA__INLINE __m256 swa__q4k_step_avx2(const swa__q4k_avx2 *u, const swa__q8k *a, __m256 acc)
{
    __m256i sum = _mm256_add_epi32(_mm256_add_epi32(swa__q4k_group_sum_avx2(u, a, 0), swa__q4k_group_sum_avx2(u, a, 1)),
                                   _mm256_add_epi32(swa__q4k_group_sum_avx2(u, a, 2), swa__q4k_group_sum_avx2(u, a, 3)));
    return swa__kfinish_avx2(acc, sum, a, u->mins16, u->d_dmin, 1);
}

/* Token k's activations, x_stride bytes apart from x. */
SWA__AVX2 SWA__INLINE const swa__q8k *swa__q8k_token(const uint8_t *x, size_t x_stride, int k)
{
    return (const swa__q8k *)(x + (size_t)k * x_stride);
}

SWA__AVX2 SWA__INLINE void swa__row_dots_q4_k_avx2(const void *row, const void *x, size_t stride, int nt, int64_t n, float *out)
{
    const uint8_t *w = (const uint8_t *)row, *xa = (const uint8_t *)x;
    const int bytes = (int)swa__types[SWA_TYPE_Q4_K].block_bytes;
    __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;
    swa__q4k_avx2 u;
    int64_t i;
    for (i = 0; nt == 1 && i < n / 256; i++, w += bytes) {   /* the two token loops */
        swa__prefetch_unit(w, bytes);
        swa__q4k_unpack_avx2(w, &u);
        if (nt > 0) c0 = swa__q4k_step_avx2(&u, swa__q8k_token(xa, stride, 0) + i, c0);
    }
    for (i = 0; nt > 1 && i < n / 256; i++, w += bytes) {
        swa__prefetch_unit(w, bytes);
        swa__q4k_unpack_avx2(w, &u);
        if (nt > 0) c0 = swa__q4k_step_avx2(&u, swa__q8k_token(xa, stride, 0) + i, c0);
        if (nt > 1) c1 = swa__q4k_step_avx2(&u, swa__q8k_token(xa, stride, 1) + i, c1);
        if (nt > 2) c2 = swa__q4k_step_avx2(&u, swa__q8k_token(xa, stride, 2) + i, c2);
        if (nt > 3) c3 = swa__q4k_step_avx2(&u, swa__q8k_token(xa, stride, 3) + i, c3);
    }
    swa__store_sums_avx2(out, nt, c0, c1, c2, c3);
}

/* Q5_K: Q4_K's scales, mins and nibbles, and a fifth bit for every quant from qh. The
   super-block is unpacked a group (64 elements) at a time, and each group meets every token of
   the tile while its quants and scales are in registers: about 12 live vectors for 4 tokens,
   where Q4_K's unpack-all-first takes more than the 16 there are. A token's sums gather in one
   integer register per super-block, exact, and end in Q4_K's hadd and FMA; the integer work
   does not depend on the other tokens, so neither does the result. The 1-token loop is a copy
   of its own with nt = 1 known to the compiler, without the other tokens' tests. */

/* Bit j of each byte of qh, moved to bit 4: the fifth bits of sub-block j. The shifts are 16
   bits wide; the mask drops whatever crosses between bytes. */
SWA__AVX2 SWA__INLINE __m256i swa__q5k_bits_avx2(__m256i qh, int j)
{
    const __m256i b = j < 4 ? _mm256_slli_epi16(qh, 4 - j) : j > 4 ? _mm256_srli_epi16(qh, j - 4) : qh;
    return _mm256_and_si256(b, _mm256_set1_epi8(16));
}

/* The sums of up to 4 tokens, as one super-block goes by. */
typedef struct swa__tile_sums_avx2 {
    __m256i t0, t1, t2, t3;
} swa__tile_sums_avx2;

/* sum + a token's scaled products over one group: x holds its 64 activations, sl and sh the two
   sub-blocks' scales as int16. maddubs stays within 2 * 31 * 127, madd within 2^21. */
SWA__AVX2 SWA__INLINE __m256i swa__q5k_group_sum_avx2(__m256i sum, __m256i lo, __m256i hi, __m256i sl, __m256i sh,
                                                     const int8_t *x)
{
    __m256i a = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, _mm256_loadu_si256((const __m256i *)x)), sl);
    __m256i b = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, _mm256_loadu_si256((const __m256i *)(x + 32))), sh);
    return _mm256_add_epi32(sum, _mm256_add_epi32(a, b));
}

/* Group g of super-block w for the tile's tokens a[0..nt-1]: sub-block 2g is the low nibbles of
   qs[32g..32g+31] with bit 2g of qh, 2g + 1 the high nibbles with bit 2g + 1; their scales are
   int16 lanes 2g and 2g + 1 of sc16. g is a constant after inlining. */
SWA__AVX2 SWA__INLINE swa__tile_sums_avx2
swa__q5k_group_avx2(swa__tile_sums_avx2 s, const uint8_t *w, int g, __m256i sc16, __m256i qh, const swa__q8k *const *a,
                    int nt)
{
    const __m256i low4 = _mm256_set1_epi8(15), raw = _mm256_loadu_si256((const __m256i *)(w + 48 + 32 * g));
    const __m256i lo = _mm256_or_si256(_mm256_and_si256(raw, low4), swa__q5k_bits_avx2(qh, 2 * g));
    const __m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(raw, 4), low4),
                                       swa__q5k_bits_avx2(qh, 2 * g + 1));
    const __m256i sl = _mm256_shuffle_epi8(sc16, _mm256_set1_epi16(swa__int16_lane(2 * g)));
    const __m256i sh = _mm256_shuffle_epi8(sc16, _mm256_set1_epi16(swa__int16_lane(2 * g + 1)));
    s.t0 = swa__q5k_group_sum_avx2(s.t0, lo, hi, sl, sh, a[0]->q + 64 * g);
    if (nt > 1) s.t1 = swa__q5k_group_sum_avx2(s.t1, lo, hi, sl, sh, a[1]->q + 64 * g);
    if (nt > 2) s.t2 = swa__q5k_group_sum_avx2(s.t2, lo, hi, sl, sh, a[2]->q + 64 * g);
    if (nt > 3) s.t3 = swa__q5k_group_sum_avx2(s.t3, lo, hi, sl, sh, a[3]->q + 64 * g);
    return s;
}

SWA__AVX2 SWA__INLINE void swa__q5k_rows_avx2(const uint8_t *w, const uint8_t *x, size_t stride, int nt, int64_t n,
                                              float *out)
{
    /* mins for the 16-element sums: m[j] for bsum[2 j] and bsum[2 j + 1] */
    const __m128i twice = _mm_setr_epi8(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15);
    __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;
    int64_t i;
    for (i = 0; i < n / 256; i++, w += 176) {
        const __m128i scales_mins = swa__q4k_scales_avx2(w + 4);
        swa__prefetch_unit(w, 176);
        const __m256i sc16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(scales_mins));   /* in both 128-bit lanes */
        const __m256i neg_mins16 = _mm256_sub_epi16(_mm256_setzero_si256(),
                                                    _mm256_cvtepu8_epi16(_mm_shuffle_epi8(scales_mins, twice)));
        const __m256 d_dmin = swa__d_dmin_avx2(swa__load_u32(w));
        const __m256i qh = _mm256_loadu_si256((const __m256i *)(w + 16));
        const swa__q8k *a[SWA__TILE_TOKENS];   /* tokens past nt stand in as token 0, never read */
        swa__tile_sums_avx2 s;
        int t;
        for (t = 0; t < SWA__TILE_TOKENS; t++) a[t] = (const swa__q8k *)(x + (size_t)(t < nt ? t : 0) * stride) + i;
        s.t0 = s.t1 = s.t2 = s.t3 = _mm256_setzero_si256();
        s = swa__q5k_group_avx2(s, w, 0, sc16, qh, a, nt);
        s = swa__q5k_group_avx2(s, w, 1, sc16, qh, a, nt);
        s = swa__q5k_group_avx2(s, w, 2, sc16, qh, a, nt);
        s = swa__q5k_group_avx2(s, w, 3, sc16, qh, a, nt);
        c0 = swa__kfinish_avx2(c0, s.t0, a[0], neg_mins16, d_dmin, 1);
        if (nt > 1) c1 = swa__kfinish_avx2(c1, s.t1, a[1], neg_mins16, d_dmin, 1);
        if (nt > 2) c2 = swa__kfinish_avx2(c2, s.t2, a[2], neg_mins16, d_dmin, 1);
        if (nt > 3) c3 = swa__kfinish_avx2(c3, s.t3, a[3], neg_mins16, d_dmin, 1);
    }
    swa__store_sums_avx2(out, nt, c0, c1, c2, c3);
}

SWA__AVX2 SWA__INLINE void swa__row_dots_q5_k_avx2(const void *row, const void *x, size_t stride, int nt, int64_t n, float *out)
{
    if (nt == 1) swa__q5k_rows_avx2((const uint8_t *)row, (const uint8_t *)x, stride, 1, n, out);
    else swa__q5k_rows_avx2((const uint8_t *)row, (const uint8_t *)x, stride, nt, n, out);
}

/* Q6_K: the quants are 0..63 here and the -32 comes back through the 16-element sums. Half h
   (128 elements) takes its low nibbles from ql and two high bits from qh; elements 32 j..
   32 j + 31 use scales 2 j and 2 j + 1. */
/* A Q6_K super-block unpacked once for all the tokens: its 256 quants (0..63, the -32 comes
   from bsum) in 8 registers of 32, the int8 scales as int16 (in order, and the low and high 8
   in both lanes) and d. */
typedef struct swa__q6k_avx2 {
    __m256i q[8];
    __m256i sc16, sc_low, sc_high;
    float d;
} swa__q6k_avx2;

/* Half h (128 quants) into q[4 h .. 4 h + 3]. */
SWA__AVX2 SWA__INLINE void swa__q6k_half_unpack_avx2(const uint8_t *w, int h, swa__q6k_avx2 *u)
{
    const __m256i low4 = _mm256_set1_epi8(15), low2 = _mm256_set1_epi8(3);
    __m256i l0 = _mm256_loadu_si256((const __m256i *)(w + 64 * h));
    __m256i l1 = _mm256_loadu_si256((const __m256i *)(w + 64 * h + 32));
    __m256i hb = _mm256_loadu_si256((const __m256i *)(w + 128 + 32 * h));
    u->q[4 * h] = _mm256_or_si256(_mm256_and_si256(l0, low4), _mm256_slli_epi16(_mm256_and_si256(hb, low2), 4));
    u->q[4 * h + 1] = _mm256_or_si256(_mm256_and_si256(l1, low4),
                                      _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 2), low2), 4));
    u->q[4 * h + 2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low4),
                                      _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 4), low2), 4));
    u->q[4 * h + 3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), low4),
                                      _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 6), low2), 4));
}

SWA__AVX2 SWA__INLINE void swa__q6k_unpack_avx2(const uint8_t *w, swa__q6k_avx2 *u)
{
    __m128i sc8 = _mm_loadu_si128((const __m128i *)(w + 192));
    u->sc16 = _mm256_cvtepi8_epi16(sc8);
    u->sc_low = _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(sc8));
    u->sc_high = _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(_mm_srli_si128(sc8, 8)));
    u->d = _cvtsh_ss(swa__load_u16(w + 208));
    swa__q6k_half_unpack_avx2(w, 0, u);
    swa__q6k_half_unpack_avx2(w, 1, u);
}

SWA__AVX2 SWA__INLINE __m256i swa__q6k_sum_avx2(const swa__q6k_avx2 *u, const swa__q8k *a, int j)
{
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u->q[j], _mm256_loadu_si256((const __m256i *)(a->q + 32 * j))),
                             swa__scale_pair_avx2(j < 4 ? u->sc_low : u->sc_high, j % 4));
}

/* One token's turn on super-block u: a, its activations' block, into acc. */
SWA__AVX2 SWA__INLINE __m256 swa__q6k_step_avx2(const swa__q6k_avx2 *u, const swa__q8k *a, __m256 acc)
{
    __m256i sum = _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(swa__q6k_sum_avx2(u, a, 0), swa__q6k_sum_avx2(u, a, 1)),
                                                    _mm256_add_epi32(swa__q6k_sum_avx2(u, a, 2), swa__q6k_sum_avx2(u, a, 3))),
                                   _mm256_add_epi32(_mm256_add_epi32(swa__q6k_sum_avx2(u, a, 4), swa__q6k_sum_avx2(u, a, 5)),
                                                    _mm256_add_epi32(swa__q6k_sum_avx2(u, a, 6), swa__q6k_sum_avx2(u, a, 7))));
    __m256i offset = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)a->bsum), u->sc16);
    sum = _mm256_sub_epi32(sum, _mm256_slli_epi32(offset, 5));
    return _mm256_fmadd_ps(_mm256_set1_ps(u->d * a->d), _mm256_cvtepi32_ps(sum), acc);
}

SWA__AVX2 SWA__INLINE void swa__row_dots_q6_k_avx2(const void *row, const void *x, size_t stride, int nt, int64_t n, float *out)
{
    const uint8_t *w = (const uint8_t *)row, *xa = (const uint8_t *)x;
    const int bytes = (int)swa__types[SWA_TYPE_Q6_K].block_bytes;
    __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;
    swa__q6k_avx2 u;
    int64_t i;
    for (i = 0; nt == 1 && i < n / 256; i++, w += bytes) {   /* the two token loops */
        swa__prefetch_unit(w, bytes);
        swa__q6k_unpack_avx2(w, &u);
        if (nt > 0) c0 = swa__q6k_step_avx2(&u, swa__q8k_token(xa, stride, 0) + i, c0);
    }
    for (i = 0; nt > 1 && i < n / 256; i++, w += bytes) {
        swa__prefetch_unit(w, bytes);
        swa__q6k_unpack_avx2(w, &u);
        if (nt > 0) c0 = swa__q6k_step_avx2(&u, swa__q8k_token(xa, stride, 0) + i, c0);
        if (nt > 1) c1 = swa__q6k_step_avx2(&u, swa__q8k_token(xa, stride, 1) + i, c1);
        if (nt > 2) c2 = swa__q6k_step_avx2(&u, swa__q8k_token(xa, stride, 2) + i, c2);
        if (nt > 3) c3 = swa__q6k_step_avx2(&u, swa__q8k_token(xa, stride, 3) + i, c3);
    }
    swa__store_sums_avx2(out, nt, c0, c1, c2, c3);
}

SWA__DOTS_FROM_ROW_DOTS(SWA__AVX2, swa__dots_q4_k_avx2, swa__row_dots_q4_k_avx2)
SWA__DOTS_FROM_ROW_DOTS(SWA__AVX2, swa__dots_q5_k_avx2, swa__row_dots_q5_k_avx2)
SWA__DOTS_FROM_ROW_DOTS(SWA__AVX2, swa__dots_q6_k_avx2, swa__row_dots_q6_k_avx2)
SWA__DOT_FROM_DOTS(SWA__AVX2, swa__dot_q4_k_avx2, swa__dots_q4_k_avx2)
SWA__DOT_FROM_DOTS(SWA__AVX2, swa__dot_q5_k_avx2, swa__dots_q5_k_avx2)
SWA__DOT_FROM_DOTS(SWA__AVX2, swa__dot_q6_k_avx2, swa__dots_q6_k_avx2)

/* Q2_K, Q3_K and IQ4_XS rows against Q8_K activations, one super-block at a time for up to 4
   tokens. The scales come out of their bytes in vector registers (16 per super-block, one per
   16 elements; IQ4_XS's 8 each taken twice); then each 32 quants in element order are unpacked
   once and meet every token of the tile while they are in registers, as Q5_K's groups do.
   maddubs wants one unsigned operand: Q2_K's quants are unsigned (0..3); Q3_K's (-4..3) and IQ4_XS's
   are held as |q|, with q's sign moved onto each token's activations (one vpsignb). A token's
   scaled sums and, for Q2_K, its mins (negated, so that both add) share one hadd and one FMA
   against [d d dmin dmin], as Q4_K's do; the types without mins have dmin = 0 there. A token's
   integer work does not depend on the other tokens, so neither does its result. */
typedef struct swa__kscales_avx2 {
    __m256i low, high;   /* int16 scales 0..7 and 8..15, each in both 128-bit lanes */
    __m256i neg_mn;      /* int16 -mn[g] for each 16-element sum of the activations (Q2_K) */
    __m256 d_dmin;
} swa__kscales_avx2;

/* Q3_K's sixteen 6-bit scales minus 32 as int8 (layout at swa__q3k_scales): the low 4 bits of
   scale i from byte i % 8, the high 2 from bits 2 (i / 4) .. +1 of byte 8 + i % 4. */
SWA__AVX2 SWA__INLINE __m128i swa__q3k_scales_avx2(const uint8_t *s)
{
    const __m128i low4 = _mm_set1_epi8(15), raw = _mm_loadl_epi64((const __m128i *)s);
    const __m128i low = _mm_unpacklo_epi64(_mm_and_si128(raw, low4), _mm_and_si128(_mm_srli_epi16(raw, 4), low4));
    const __m128i high = _mm_and_si128(_mm_srlv_epi32(_mm_set1_epi32((int)swa__load_u32(s + 8)), _mm_setr_epi32(0, 2, 4, 6)),
                                       _mm_set1_epi8(3));
    return _mm_sub_epi8(_mm_or_si128(low, _mm_slli_epi16(high, 4)), _mm_set1_epi8(32));
}

/* IQ4_XS's eight 6-bit scales minus 32 as int16, in order (layout at swa__iq4xs_scales). */
SWA__AVX2 SWA__INLINE __m128i swa__iq4xs_scales_avx2(const uint8_t *b)
{
    const __m128i low4 = _mm_set1_epi8(15), raw = _mm_cvtsi32_si128((int)swa__load_u32(b + 4));
    const __m128i low = _mm_cvtepu8_epi16(_mm_unpacklo_epi8(_mm_and_si128(raw, low4), _mm_and_si128(_mm_srli_epi16(raw, 4), low4)));
    const __m256i high = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(swa__load_u16(b + 2)),
                                                            _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14)), _mm256_set1_epi32(3));
    const __m128i high16 = _mm_packus_epi32(_mm256_castsi256_si128(high), _mm256_extracti128_si256(high, 1));
    return _mm_sub_epi16(_mm_or_si128(low, _mm_slli_epi16(high16, 4)), _mm_set1_epi16(32));
}

SWA__AVX2 SWA__INLINE swa__kscales_avx2 swa__kscales_unpack_avx2(const uint8_t *w, uint32_t type)
{
    /* d (and Q2_K's dmin beside it; 0 for the others) to [d d dmin dmin] in each 128-bit lane */
    const uint32_t halves = type == SWA_TYPE_Q2_K ? swa__load_u32(w + 80) : swa__load_u16(w + (type == SWA_TYPE_Q3_K ? 108 : 0));
    swa__kscales_avx2 k;
    k.d_dmin = swa__d_dmin_avx2(halves);
    k.neg_mn = _mm256_setzero_si256();
    if (type == SWA_TYPE_IQ4_XS) {
        const __m128i sc = swa__iq4xs_scales_avx2(w);
        k.low = _mm256_broadcastsi128_si256(_mm_unpacklo_epi16(sc, sc));
        k.high = _mm256_broadcastsi128_si256(_mm_unpackhi_epi16(sc, sc));
    } else {
        const __m128i raw = _mm_loadu_si128((const __m128i *)w), low4 = _mm_set1_epi8(15);
        const __m128i sc = type == SWA_TYPE_Q2_K ? _mm_and_si128(raw, low4) : swa__q3k_scales_avx2(w + 96);
        if (type == SWA_TYPE_Q2_K)   /* scale in the low nibble, min in the high one */
            k.neg_mn = _mm256_sub_epi16(k.neg_mn, _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(raw, 4), low4)));
        k.low = _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(sc));
        k.high = _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(_mm_srli_si128(sc, 8)));
    }
    return k;
}

/* Quants 32 j .. 32 j + 31 of super-block w, in element order: Q2_K's and Q3_K's low 2 bits
   at bits 2 (j % 4) of qs[32 (j / 4) ..], Q3_K's third from bit j of hmask[0..31] (clear
   subtracts 4), IQ4_XS's from the nibbles of qs[16 j .. 16 j + 15] through IQ4_NL's table. */
SWA__AVX2 SWA__INLINE __m256i swa__kblock_quants_avx2(const uint8_t *w, int j, uint32_t type)
{
    const __m256i three = _mm256_set1_epi8(3);
    __m256i q, raw;
    if (type == SWA_TYPE_IQ4_XS) return swa__table_lookup_avx2(swa__iq4nl_values, swa__nibbles_avx2(w + 8 + 16 * j));
    raw = _mm256_loadu_si256((const __m256i *)(w + (type == SWA_TYPE_Q2_K ? 16 : 32) + 32 * (j / 4)));
    q = _mm256_and_si256(_mm256_srli_epi16(raw, 2 * (j % 4)), three);
    if (type == SWA_TYPE_Q3_K) {   /* the hmask bit set adds 4 back */
        const __m256i bit = _mm256_and_si256(_mm256_srli_epi16(_mm256_loadu_si256((const __m256i *)w), j), _mm256_set1_epi8(1));
        q = _mm256_sub_epi8(_mm256_or_si256(q, _mm256_slli_epi16(bit, 2)), _mm256_set1_epi8(4));
    }
    return q;
}

/* sum + a token's 32 products with quants q (u: |q|, or q itself for Q2_K's unsigned ones) at
   x, scaled by sc: maddubs stays within 2 * 127 * 127 (Q8_K's activations are within 127 of
   0), madd within 2^21. */
SWA__AVX2 SWA__INLINE __m256i swa__kblock_sum_avx2(__m256i sum, __m256i u, __m256i q, __m256i sc, const int8_t *x, uint32_t type)
{
    const __m256i xq = _mm256_loadu_si256((const __m256i *)x);
    const __m256i pairs = _mm256_maddubs_epi16(u, type == SWA_TYPE_Q2_K ? xq : _mm256_sign_epi8(xq, q));
    return _mm256_add_epi32(sum, _mm256_madd_epi16(pairs, sc));
}

/* Quants 32 j .. 32 j + 31 of super-block w for the tile's tokens a[0..nt-1]; j is a constant
   after inlining. */
SWA__AVX2 SWA__INLINE swa__tile_sums_avx2 swa__kblock_part_avx2(swa__tile_sums_avx2 s, const uint8_t *w, int j,
                                                                const swa__kscales_avx2 *k, const swa__q8k *const *a,
                                                                int nt, uint32_t type)
{
    const __m256i q = swa__kblock_quants_avx2(w, j, type), u = type == SWA_TYPE_Q2_K ? q : _mm256_abs_epi8(q);
    const __m256i sc = swa__scale_pair_avx2(j < 4 ? k->low : k->high, j % 4);
    s.t0 = swa__kblock_sum_avx2(s.t0, u, q, sc, a[0]->q + 32 * j, type);
    if (nt > 1) s.t1 = swa__kblock_sum_avx2(s.t1, u, q, sc, a[1]->q + 32 * j, type);
    if (nt > 2) s.t2 = swa__kblock_sum_avx2(s.t2, u, q, sc, a[2]->q + 32 * j, type);
    if (nt > 3) s.t3 = swa__kblock_sum_avx2(s.t3, u, q, sc, a[3]->q + 32 * j, type);
    return s;
}

SWA__AVX2 SWA__INLINE void swa__kblock_rows_avx2(const uint8_t *w, const uint8_t *x, size_t stride, int nt, int64_t n,
                                                 float *out, uint32_t type)
{
    const int bytes = (int)swa__types[type].block_bytes;
    __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;
    int64_t i;
    for (i = 0; i < n / 256; i++, w += bytes) {
        const swa__kscales_avx2 k = swa__kscales_unpack_avx2(w, type);
        const swa__q8k *a[SWA__TILE_TOKENS];   /* tokens past nt stand in as token 0, never read */
        swa__tile_sums_avx2 s;
        int t;
        swa__prefetch_unit(w, bytes);
        for (t = 0; t < SWA__TILE_TOKENS; t++) a[t] = (const swa__q8k *)(x + (size_t)(t < nt ? t : 0) * stride) + i;
        s.t0 = s.t1 = s.t2 = s.t3 = _mm256_setzero_si256();
        s = swa__kblock_part_avx2(s, w, 0, &k, a, nt, type);
        s = swa__kblock_part_avx2(s, w, 1, &k, a, nt, type);
        s = swa__kblock_part_avx2(s, w, 2, &k, a, nt, type);
        s = swa__kblock_part_avx2(s, w, 3, &k, a, nt, type);
        s = swa__kblock_part_avx2(s, w, 4, &k, a, nt, type);
        s = swa__kblock_part_avx2(s, w, 5, &k, a, nt, type);
        s = swa__kblock_part_avx2(s, w, 6, &k, a, nt, type);
        s = swa__kblock_part_avx2(s, w, 7, &k, a, nt, type);
        c0 = swa__kfinish_avx2(c0, s.t0, a[0], k.neg_mn, k.d_dmin, type == SWA_TYPE_Q2_K);
        if (nt > 1) c1 = swa__kfinish_avx2(c1, s.t1, a[1], k.neg_mn, k.d_dmin, type == SWA_TYPE_Q2_K);
        if (nt > 2) c2 = swa__kfinish_avx2(c2, s.t2, a[2], k.neg_mn, k.d_dmin, type == SWA_TYPE_Q2_K);
        if (nt > 3) c3 = swa__kfinish_avx2(c3, s.t3, a[3], k.neg_mn, k.d_dmin, type == SWA_TYPE_Q2_K);
    }
    swa__store_sums_avx2(out, nt, c0, c1, c2, c3);
}

SWA__AVX2 SWA__INLINE void swa__row_dots_kblock_avx2(const void *row, const void *x, size_t stride, int nt, int64_t n,
                                                     float *out, const uint32_t type)
{
    if (nt == 1) swa__kblock_rows_avx2((const uint8_t *)row, (const uint8_t *)x, stride, 1, n, out, type);
    else swa__kblock_rows_avx2((const uint8_t *)row, (const uint8_t *)x, stride, nt, n, out, type);
}

/* The row kernels of each type, its tile and its 1-token dot. */
/* The types whose AVX2 kernels come from SWA__NEW_TYPE(SWA__AVX2, ...): the row kernel, the
   tile and the 1-token dot, from the driver with the type's unpacking. swa__kernels_avx2 enters
   them in the table from this same list, so a new type is one line here. */
#define SWA__AVX2_TYPES(X)                                                                              \
    X(swa__row_dots_q8_0_avx2, swa__dots_q8_0_avx2, swa__dot_q8_0_avx2, swa__row_dots_grouped_avx2, SWA_TYPE_Q8_0) \
    X(swa__row_dots_q4_0_avx2, swa__dots_q4_0_avx2, swa__dot_q4_0_avx2, swa__row_dots_grouped_avx2, SWA_TYPE_Q4_0) \
    X(swa__row_dots_q4_1_avx2, swa__dots_q4_1_avx2, swa__dot_q4_1_avx2, swa__row_dots_grouped_avx2, SWA_TYPE_Q4_1) \
    X(swa__row_dots_q5_0_avx2, swa__dots_q5_0_avx2, swa__dot_q5_0_avx2, swa__row_dots_grouped_avx2, SWA_TYPE_Q5_0) \
    X(swa__row_dots_q5_1_avx2, swa__dots_q5_1_avx2, swa__dot_q5_1_avx2, swa__row_dots_grouped_avx2, SWA_TYPE_Q5_1) \
    X(swa__row_dots_iq4_nl_avx2, swa__dots_iq4_nl_avx2, swa__dot_iq4_nl_avx2, swa__row_dots_grouped_avx2, SWA_TYPE_IQ4_NL) \
    X(swa__row_dots_mxfp4_avx2, swa__dots_mxfp4_avx2, swa__dot_mxfp4_avx2, swa__row_dots_grouped_avx2, SWA_TYPE_MXFP4) \
    X(swa__row_dots_q2_k_avx2, swa__dots_q2_k_avx2, swa__dot_q2_k_avx2, swa__row_dots_kblock_avx2, SWA_TYPE_Q2_K) \
    X(swa__row_dots_q3_k_avx2, swa__dots_q3_k_avx2, swa__dot_q3_k_avx2, swa__row_dots_kblock_avx2, SWA_TYPE_Q3_K) \
    X(swa__row_dots_iq4_xs_avx2, swa__dots_iq4_xs_avx2, swa__dot_iq4_xs_avx2, swa__row_dots_kblock_avx2, SWA_TYPE_IQ4_XS)
#define SWA__NEW_TYPE_AVX2(row_dots, dots, dot, driver, type) SWA__NEW_TYPE(SWA__AVX2, row_dots, dots, dot, driver, type)
SWA__AVX2_TYPES(SWA__NEW_TYPE_AVX2)
#undef SWA__NEW_TYPE_AVX2

/* The largest |x| of 32 floats, and q = lrint(x * id) packed to bytes in order. */
SWA__AVX2 static inline float swa__amax32_avx2(const float *x)
{
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 m = _mm256_andnot_ps(sign, _mm256_loadu_ps(x));
    __m128 r;
    int k;
    for (k = 8; k < 32; k += 8) m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + k)));
    r = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    r = _mm_max_ps(r, _mm_movehl_ps(r, r));
    r = _mm_max_ss(r, _mm_movehdup_ps(r));
    return _mm_cvtss_f32(r);
}

SWA__AVX2 static inline __m256i swa__round32_avx2(const float *x, float id)
{
    __m256 s = _mm256_set1_ps(id);
    __m256i a = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x), s));
    __m256i b = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 8), s));
    __m256i c = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 16), s));
    __m256i d = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 24), s));
    __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(a, b), _mm256_packs_epi32(c, d));
    /* the packs work per 128-bit lane: put the 4-byte groups back in order */
    return _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

SWA__AVX2 static void swa__quantize_q8_avx2(const float *x, void *out, int64_t n)
{
    swa__q8 *b = (swa__q8 *)out;
    int64_t i;
    for (i = 0; i < n; i += 32, b++, x += 32) {
        float amax = swa__amax32_avx2(x);
        __m256i q = swa__round32_avx2(x, amax > 0.0f ? 127.0f / amax : 0.0f);
        b->d = amax / 127.0f;
        _mm256_storeu_si256((__m256i *)b->q, q);
    }
}

SWA__AVX2 static void swa__quantize_q8k_avx2(const float *x, void *out, int64_t n)
{
    swa__q8k *b = (swa__q8k *)out;
    int64_t i;
    int k;
    for (i = 0; i < n; i += 256, b++, x += 256) {
        float amax = 0.0f, id;
        for (k = 0; k < 256; k += 32) {
            float m = swa__amax32_avx2(x + k);
            amax = m > amax ? m : amax;
        }
        b->d = amax / 127.0f;
        id = amax > 0.0f ? 127.0f / amax : 0.0f;
        for (k = 0; k < 256; k += 32) {
            __m256i q = swa__round32_avx2(x + k, id);
            /* sums of each 16 bytes: maddubs with ones gives pairs, madd folds them to 4s */
            __m256i s = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), q), _mm256_set1_epi16(1));
            int32_t part[8];
            _mm256_storeu_si256((__m256i *)(b->q + k), q);
            _mm256_storeu_si256((__m256i *)part, s);
            b->bsum[k / 16] = (int16_t)(part[0] + part[1] + part[2] + part[3]);
            b->bsum[k / 16 + 1] = (int16_t)(part[4] + part[5] + part[6] + part[7]);
        }
    }
}

SWA__AVX2 static void swa__store_f16_avx2(const float *x, void *row, int64_t n)
{
    uint16_t *out = (uint16_t *)row;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(out + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) out[i] = swa__f32_to_f16(x[i]);
}

/* The weighted sum of values for up to 4 query heads sharing a value head. Per 8 dimensions
   the heads' sums stay in registers over all the keys and each value vector is loaded (widened,
   dequantized) once for the heads, where one axpy per head and key would load and store the
   sums every time. Keys are added in order, with FMA: within 1e-6 of the reference, relative to
   the sum of |p v|. */
SWA__AVX2 static inline __m256 swa__value8_avx2(const uint8_t *v, int64_t d, uint32_t type)
{
    if (type == SWA_TYPE_Q8_0) {    /* 8 values inside one block of 32 */
        const uint8_t *b = v + d / 32 * 34;
        __m256 q = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(b + 2 + d % 32))));
        return _mm256_mul_ps(_mm256_set1_ps(_cvtsh_ss(swa__load_u16(b))), q);
    }
    return swa__load8_avx2(v, d, type);
}

/* out[h * ldo + d] += sum over keys j0 <= j < j1, in order, of p[h * ldp + j] v_j[d], for the
   columns d in whole 8s. */
SWA__AVX2 SWA__INLINE void swa__wsum_keys_avx2(float *out, int64_t ldo, int nh, const float *p, int64_t ldp, const uint8_t *v,
                                               size_t v_stride, int64_t j0, int64_t j1, int64_t hd, uint32_t type)
{
    int64_t d, j;
    for (d = 0; d + 8 <= hd; d += 8) {
        __m256 s0 = _mm256_loadu_ps(out + d), s1 = s0, s2 = s0, s3 = s0;
        if (nh > 1) s1 = _mm256_loadu_ps(out + ldo + d);
        if (nh > 2) s2 = _mm256_loadu_ps(out + 2 * ldo + d);
        if (nh > 3) s3 = _mm256_loadu_ps(out + 3 * ldo + d);
        for (j = j0; j < j1; j++) {
            const __m256 x = swa__value8_avx2(v + (size_t)j * v_stride, d, type);
            s0 = _mm256_fmadd_ps(_mm256_set1_ps(p[j]), x, s0);
            if (nh > 1) s1 = _mm256_fmadd_ps(_mm256_set1_ps(p[ldp + j]), x, s1);
            if (nh > 2) s2 = _mm256_fmadd_ps(_mm256_set1_ps(p[2 * ldp + j]), x, s2);
            if (nh > 3) s3 = _mm256_fmadd_ps(_mm256_set1_ps(p[3 * ldp + j]), x, s3);
        }
        _mm256_storeu_ps(out + d, s0);
        if (nh > 1) _mm256_storeu_ps(out + ldo + d, s1);
        if (nh > 2) _mm256_storeu_ps(out + 2 * ldo + d, s2);
        if (nh > 3) _mm256_storeu_ps(out + 3 * ldo + d, s3);
    }
}

/* Keys a block of the weighted sum: about 16 KB of f32 values. */
static int64_t swa__wsum_block(int64_t hd) { return hd < 512 ? 4096 / hd : 8; }

/* The weighted sum 8 columns at a time, over the keys in blocks of swa__wsum_block: a block's
   values stay in L1 while each 8 columns pass over it, instead of every pass reading all nk
   rows again (a long prompt's keys are megabytes). The sums go back to out between blocks,
   which keeps each one's order. */
SWA__AVX2 SWA__INLINE void
swa__wsum_avx2(float *out, int64_t ldo, int nh, const float *p, int64_t ldp, const uint8_t *v, size_t v_stride,
               int64_t nk, int64_t hd, uint32_t type)
{
    const int64_t block = swa__wsum_block(hd);
    int64_t d, j, j0;
    int h;
    for (j0 = 0; j0 < nk; j0 += block) {
        const int64_t j1 = nk - j0 < block ? nk : j0 + block;
        swa__wsum_keys_avx2(out, ldo, nh, p, ldp, v, v_stride, j0, j1, hd, type);
    }
    for (d = hd / 8 * 8; d < hd; d++)    /* float caches only: a Q8_0 head is whole blocks */
        for (h = 0; h < nh; h++)
            for (j = 0; j < nk; j++) out[h * ldo + d] += p[h * ldp + j] * swa__float_at(v + (size_t)j * v_stride, d, type);
}

#define SWA__WSUM_AVX2(wsum, TYPE)                                                                 \
    SWA__AVX2 static void wsum(float *out, int64_t ldo, int nh, const float *p, int64_t ldp, const uint8_t *v, \
                               size_t v_stride, int64_t nk, int64_t hd)                             \
    {                                                                                               \
        swa__wsum_avx2(out, ldo, nh, p, ldp, v, v_stride, nk, hd, TYPE);                            \
    }
SWA__WSUM_AVX2(swa__wsum_f32_avx2, SWA_TYPE_F32)
SWA__WSUM_AVX2(swa__wsum_f16_avx2, SWA_TYPE_F16)
SWA__WSUM_AVX2(swa__wsum_q8_0_avx2, SWA_TYPE_Q8_0)

/* exp(x) for 8 floats, Cephes' method: x = n ln2 + r with |r| <= ln2/2, a degree-5 polynomial
   for e^r, and 2^n built in the exponent bits. Inputs are clamped to +-88.37, where expf
   overflows or goes subnormal. Within 2e-7 relative of expf (1.5 ulp). */
SWA__AVX2 static inline __m256 swa__exp_avx2(__m256 x)
{
    __m256 n, r, y;
    x = _mm256_max_ps(_mm256_min_ps(x, _mm256_set1_ps(88.3762626647949f)), _mm256_set1_ps(-87.3365478515625f));
    n = _mm256_floor_ps(_mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), _mm256_set1_ps(0.5f)));
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    y = _mm256_set1_ps(1.9875691500e-4f);
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.3981999507e-3f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(8.3334519073e-3f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(4.1665795894e-2f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.6666665459e-1f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(5.0000001201e-1f));
    y = _mm256_fmadd_ps(y, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    return _mm256_mul_ps(y, _mm256_castsi256_ps(_mm256_slli_epi32(
                                _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23)));
}

SWA__AVX2 static void swa__rmsnorm_avx2(float *out, const float *x, const float *w, int64_t n, float eps)
{
    __m256 acc = _mm256_setzero_ps(), s;
    float ss, scale;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(x + i), acc);
    ss = swa__hsum_avx2(acc);
    for (; i < n; i++) ss += x[i] * x[i];
    scale = 1.0f / sqrtf(ss / (float)n + eps);
    s = _mm256_set1_ps(scale);
    for (i = 0; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), s), _mm256_loadu_ps(w + i)));
    for (; i < n; i++) out[i] = x[i] * scale * w[i];
}

/* Four pairs at a time: with x = (x0 x1 ...), cs = (c s ...), fmaddsub gives x0 c - x1 s in the
   even lanes and x1 c + x0 s in the odd ones. */
SWA__AVX2 static void swa__rope_avx2(float *v, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float *cs)
{
    int64_t h, i;
    for (h = 0; h < n_heads; h++, v += head_dim) {
        for (i = 0; i + 8 <= n_rot; i += 8) {
            __m256 x = _mm256_loadu_ps(v + i), t = _mm256_loadu_ps(cs + i);
            __m256 c = _mm256_moveldup_ps(t), s = _mm256_movehdup_ps(t);
            __m256 swapped = _mm256_permute_ps(x, 0xb1);
            _mm256_storeu_ps(v + i, _mm256_fmaddsub_ps(x, c, _mm256_mul_ps(swapped, s)));
        }
        for (; i < n_rot; i += 2) {
            float c = cs[i], s = cs[i + 1], x0 = v[i], x1 = v[i + 1];
            v[i] = x0 * c - x1 * s;
            v[i + 1] = x0 * s + x1 * c;
        }
    }
}

SWA__AVX2 static void swa__softmax_avx2(float *x, int64_t n)
{
    __m256 m = _mm256_set1_ps(-INFINITY), acc = _mm256_setzero_ps(), vmax, inv;
    float max, sum;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(x + i));
    {
        __m128 r = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        r = _mm_max_ps(r, _mm_movehl_ps(r, r));
        max = _mm_cvtss_f32(_mm_max_ss(r, _mm_movehdup_ps(r)));
    }
    for (; i < n; i++) if (x[i] > max) max = x[i];
    vmax = _mm256_set1_ps(max);
    for (i = 0; i + 8 <= n; i += 8) {
        __m256 e = swa__exp_avx2(_mm256_sub_ps(_mm256_loadu_ps(x + i), vmax));
        _mm256_storeu_ps(x + i, e);
        acc = _mm256_add_ps(acc, e);
    }
    sum = swa__hsum_avx2(acc);
    for (; i < n; i++) sum += (x[i] = expf(x[i] - max));
    inv = _mm256_set1_ps(1.0f / sum);
    for (i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), inv));
    for (; i < n; i++) x[i] /= sum;
}

SWA__AVX2 static void swa__swiglu_avx2(float *gate, const float *up, int64_t n)
{
    const __m256 one = _mm256_set1_ps(1.0f);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 g = _mm256_loadu_ps(gate + i);
        __m256 silu = _mm256_div_ps(g, _mm256_add_ps(one, swa__exp_avx2(_mm256_sub_ps(_mm256_setzero_ps(), g))));
        _mm256_storeu_ps(gate + i, _mm256_mul_ps(silu, _mm256_loadu_ps(up + i)));
    }
    for (; i < n; i++) gate[i] = gate[i] / (1.0f + expf(-gate[i])) * up[i];
}

SWA__AVX2 static void swa__geglu_avx2(float *gate, const float *up, int64_t n)
{
    const __m256 one = _mm256_set1_ps(1.0f), a = _mm256_set1_ps(-1.5957691216057308f), b = _mm256_set1_ps(0.044715f);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 g = _mm256_loadu_ps(gate + i);
        __m256 t = _mm256_mul_ps(_mm256_mul_ps(a, g), _mm256_fmadd_ps(_mm256_mul_ps(b, g), g, one));
        __m256 gelu = _mm256_div_ps(g, _mm256_add_ps(one, swa__exp_avx2(t)));
        _mm256_storeu_ps(gate + i, _mm256_mul_ps(gelu, _mm256_loadu_ps(up + i)));
    }
    for (; i < n; i++) gate[i] = gate[i] / (1.0f + expf(SWA__GELU_EXPONENT(gate[i]))) * up[i];
}

#if defined(SWA__HAVE_AVX_VNNI) || defined(SWA__HAVE_AVX512)
/* ---- Products with the tokens in the lanes: what the VNNI sets share ----
   The AVX-VNNI and AVX-512 sets' matrix products put W tokens (8 or 16) in the lanes of a
   register. For the blocks of 32, a block's 32 activations of W tokens are packed once per chunk
   into a unit, its 8 words of 4 elements a register (token t's bytes at 4 t), plus 128 so that
   they are vpdpbusd's unsigned operand, beside the tokens' scales d_x and d_x sum x (Q4_1's and
   Q5_1's m meets it); each row's block is unpacked once as signed bytes beside minus 128 times
   their sum, on which a chain of 8 vpdpbusd (4 bytes of the row broadcast against each word of
   the unit) starts, and which leaves the block's exact integer sum for every token. The
   K-quants and IQ4_XS go the same way a super-block at a time (swa__kpack, swa__krow), each
   sub-block's sums scaled in integers. */

/* d_x sum x of a token's block b. */
static inline float swa__block_dsum(const swa__q8g *a, int64_t b)
{
    return a[b / 8].d[b % 8] * (float)(a[b / 8].sum8[b % 8] / 8);
}

/* Tokens [0, n) of swa__q8g rows (x_stride bytes apart) as units of W tokens, zeros where no
   token is: unit g * (n_in / 32) + b, 40 W bytes, holds block b of tokens W g .. W g + W - 1:
   int8_t q[8][4 W] (+ 128), float d[W], float dsum[W]. */
static void swa__qpack_lanes(const uint8_t *xq, size_t x_stride, int64_t n, int64_t n_in, void *out, int W)
{
    uint8_t *u = (uint8_t *)out;
    int64_t nbk = n_in / 32, g, b, t;
    int k;
    for (g = 0; g * W < n; g++)
        for (b = 0; b < nbk; b++, u += 40 * W) {
            memset(u, 0, (size_t)(40 * W));
            for (t = 0; t < W && g * W + t < n; t++) {
                const swa__q8g *a = (const swa__q8g *)(xq + (size_t)(g * W + t) * x_stride);
                const float d = a[b / 8].d[b % 8], dsum = swa__block_dsum(a, b);
                for (k = 0; k < 8; k++) {
                    uint32_t v;
                    memcpy(&v, swa__q8g_half(a, b, k / 4) + 4 * (k % 4), 4);
                    v ^= 0x80808080u;
                    memcpy(u + 4 * (k * W + t), &v, 4);
                }
                memcpy(u + 4 * (8 * W + t), &d, 4);
                memcpy(u + 4 * (9 * W + t), &dsum, 4);
            }
        }
}

/* A row's block unpacked, one line. */
typedef struct swa__qrow {
    int8_t q[32];        /* its quants in order, signed (Q4_0's less 8, Q5_0's less 16) */
    int32_t neg_offset;  /* -128 sum q: what the tokens' + 128 adds to the sum, taken off */
    float d, m;          /* m: Q4_1's and Q5_1's */
    int32_t unused[5];
} swa__qrow;

SWA__AVX2 SWA__INLINE void swa__qrow_unpack(const uint8_t *w, uint32_t type, swa__qrow *u)
{
    __m256i q = swa__block_avx2(w, type), sums;
    int64_t part[4];
    if (!swa__signed_quants(type)) q = _mm256_sub_epi8(q, _mm256_set1_epi8((char)swa__quant_offset(type)));
    _mm256_storeu_si256((__m256i *)u->q, q);
    sums = _mm256_sad_epu8(_mm256_xor_si256(q, _mm256_set1_epi8((char)0x80)), _mm256_setzero_si256());
    _mm256_storeu_si256((__m256i *)part, sums);
    u->neg_offset = -128 * ((int32_t)(part[0] + part[1] + part[2] + part[3]) - 128 * 32);
    u->d = swa__block_scale_avx2(w, type);
    u->m = swa__b32_has_min(type) ? _cvtsh_ss(swa__load_u16(w + 2)) : 0.0f;
}

/* The K-quants' and IQ4_XS's (as the sets that have their products read them): W tokens'
   super-block s in a unit, the quants of each 4 elements side by side, and the sums their mins
   and offsets meet. Tokens [0, n) of swa__q8k rows (x_stride bytes apart) as units, their quants
   xor flip (0x80: a + 128), zeros where no token is: unit g * (n_in / 256) + s, 308 W bytes,
   holds super-block s of tokens W g .. W g + W - 1: int8_t q[4][16][4 W] (quarter k's elements
   4 i .. 4 i + 3, token t's at q[k][i][4 t]), int32_t pair_sums[4][W] ((B_2p, B_2p+1) as two
   int16, B_j the sum of 32-element sub-block j), int32_t bsum_pairs[8][W] ((bsum_2p, bsum_2p+1),
   the 16-element sums, as two int16), float d[W]. */
static void swa__kpack(const uint8_t *xq, size_t x_stride, int64_t n, int64_t n_in, void *out, int W, uint32_t flip)
{
    uint8_t *u = (uint8_t *)out;
    int64_t nsb = n_in / 256, g, s, t;
    int k, i, p;
    for (g = 0; g * W < n; g++)
        for (s = 0; s < nsb; s++, u += 308 * W) {
            memset(u, 0, (size_t)(308 * W));
            for (t = 0; t < W && g * W + t < n; t++) {
                const swa__q8k *a = (const swa__q8k *)(xq + (size_t)(g * W + t) * x_stride) + s;
                for (k = 0; k < 4; k++)
                    for (i = 0; i < 16; i++) {
                        uint32_t v;
                        memcpy(&v, a->q + 64 * k + 4 * i, 4);
                        v ^= flip * 0x01010101u;
                        memcpy(u + 4 * ((16 * k + i) * W + t), &v, 4);
                    }
                for (p = 0; p < 4; p++) {
                    int16_t b[2];
                    b[0] = (int16_t)(a->bsum[4 * p] + a->bsum[4 * p + 1]);
                    b[1] = (int16_t)(a->bsum[4 * p + 2] + a->bsum[4 * p + 3]);
                    memcpy(u + 4 * ((64 + p) * W + t), b, 4);
                }
                for (p = 0; p < 8; p++) memcpy(u + 4 * ((68 + p) * W + t), a->bsum + 2 * p, 4);
                memcpy(u + 4 * (76 * W + t), &a->d, 4);
            }
        }
}

/* A row's super-block unpacked, 384 bytes (whole lines). */
typedef struct swa__krow {
    int8_t q[256];     /* its weights in order: Q4_K's, Q5_K's, Q2_K's and Q3_K's quants, Q6_K's less 32, IQ4_XS's values */
    int32_t sc[16];    /* its sub-blocks' scales: Q4_K's and Q5_K's 8, Q6_K's, Q2_K's and Q3_K's 16, IQ4_XS's 8 less 32 */
    int32_t mins[8];   /* each pair's (-m_2p, -m_2p+1) as two int16: Q4_K's and Q5_K's 4, Q2_K's 8 */
    int32_t offset;    /* 128 sum_j sc_j sum q over sub-block j: what the tokens' + 128 adds to S */
    float d, dmin;
    int32_t unused[5];
} swa__krow;

/* Elements a sub-block of a type's unpacked super-block: Q6_K's, Q2_K's and Q3_K's 16 scales
   cover 16 each, Q4_K's, Q5_K's and IQ4_XS's 8 cover 32. */
static int swa__krow_sub(uint32_t type)
{
    return type == SWA_TYPE_Q6_K || type == SWA_TYPE_Q2_K || type == SWA_TYPE_Q3_K ? 16 : 32;
}

/* The row's offset from its quants and scales. */
SWA__AVX2 SWA__INLINE void swa__krow_offset(swa__krow *u, uint32_t type)
{
    const int size = swa__krow_sub(type);
    int64_t sums[32];   /* of each 8 weights + 128 */
    int32_t offset = 0;
    int k, j, l;
    for (k = 0; k < 8; k++)
        _mm256_storeu_si256((__m256i *)(sums + 4 * k),
                            _mm256_sad_epu8(_mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(u->q + 32 * k)), _mm256_set1_epi8((char)0x80)),
                                            _mm256_setzero_si256()));
    for (j = 0; j < 256 / size; j++) {
        int32_t sum = -128 * size;
        for (l = 0; l < size / 8; l++) sum += (int32_t)sums[j * size / 8 + l];
        offset += u->sc[j] * sum;
    }
    u->offset = 128 * offset;
}

/* Q2_K's, Q3_K's and IQ4_XS's super-block (layouts at swa__kunpacked), the types AVX2's
   super-block steps take: quants, scales and (Q2_K) d, dmin and mins; sc and mins zeroed before. */
SWA__AVX2 SWA__INLINE void swa__krow_unpack_kblock(const uint8_t *w, uint32_t type, swa__krow *u)
{
    const __m128i raw = _mm_loadu_si128((const __m128i *)w), low4 = _mm_set1_epi8(15);
    int j;
    for (j = 0; j < 8; j++) _mm256_storeu_si256((__m256i *)(u->q + 32 * j), swa__kblock_quants_avx2(w, j, type));
    if (type == SWA_TYPE_IQ4_XS) {
        _mm256_storeu_si256((__m256i *)u->sc, _mm256_cvtepi16_epi32(swa__iq4xs_scales_avx2(w)));
        u->d = _cvtsh_ss(swa__load_u16(w));
    } else if (type == SWA_TYPE_Q2_K) {   /* scale in the low nibble, min in the high one */
        const __m128i sc = _mm_and_si128(raw, low4);
        _mm256_storeu_si256((__m256i *)u->sc, _mm256_cvtepu8_epi32(sc));
        _mm256_storeu_si256((__m256i *)(u->sc + 8), _mm256_cvtepu8_epi32(_mm_srli_si128(sc, 8)));
        _mm256_storeu_si256((__m256i *)u->mins,
                            _mm256_sub_epi16(_mm256_setzero_si256(), _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(raw, 4), low4))));
        u->d = _cvtsh_ss(swa__load_u16(w + 80));
        u->dmin = _cvtsh_ss(swa__load_u16(w + 82));
    } else {
        const __m128i sc = swa__q3k_scales_avx2(w + 96);
        _mm256_storeu_si256((__m256i *)u->sc, _mm256_cvtepi8_epi32(sc));
        _mm256_storeu_si256((__m256i *)(u->sc + 8), _mm256_cvtepi8_epi32(_mm_srli_si128(sc, 8)));
        u->d = _cvtsh_ss(swa__load_u16(w + 108));
    }
}

/* A product's results for `rows` rows (from row r) and token group g of W tokens, out[m * W + t],
   into y[t * ldy + r + m] for the group's tokens below n. */
static void swa__put_group(const float *out, int rows, int64_t g, int W, int64_t n, float *y, int64_t ldy, int64_t r)
{
    int64_t t;
    int m;
    for (t = 0; t < W && g * W + t < n; t++)
        for (m = 0; m < rows; m++) y[(g * W + t) * ldy + r + m] = out[m * W + t];
}

/* Rows a product unpacks at once, in sets of 16 (avx512) or 8 (avx-vnni) that each group of
   tokens meets in turn before the next group: the packed tokens (about 1 MB for 512 tokens of
   2048 columns, 3 MB for 5632: more than L2 holds) are read once for every SWA__GEMM_ROWS rows
   instead of once for every set. A thread's scratch holds the unpacked rows. */
#define SWA__GEMM_ROWS 64

/* Sets of `set` rows in the SWA__GEMM_ROWS (or fewer) rows from r on, of a product's nr. */
static int64_t swa__sets(int64_t nr, int64_t r, int set)
{
    return ((nr - r < SWA__GEMM_ROWS ? nr - r : SWA__GEMM_ROWS) + set - 1) / set;
}

/* Rows of set q (of `set` rows each) in the product's rows r .. nr - 1. */
static int swa__set_rows(int64_t nr, int64_t r, int set, int64_t q)
{
    int64_t left = nr - r - (int64_t)set * q;
    return left < set ? (int)left : set;
}
#endif

/* The code-generating macros of this section end here. */
#undef SWA__LOAD_F16
#undef SWA__WSUM_AVX2

#endif /* SWA__HAVE_AVX2 */

/* ==== kernels (AVX-VNNI) ====
   The 256-bit VNNI of CPUs that have it without AVX-512 (Alder Lake and later client cores):
   the AVX2 quantized kernels with vpdpbusd and vpdpwssd (VEX encoded) in place of the
   maddubs / madd pairs for every quantized type, chosen at run time, and from 16 tokens on
   matrix products with 8 tokens in the lanes that keep the dots' orders; the float rows and
   everything else stay with AVX2. Exact integer block sums, the
   weights made unsigned (Q4_0's, Q4_1's nibbles as they are, Q5_0's, Q5_1's with their fifth
   bits, MXFP4's codes plus 12, Q8_0 and IQ4_NL plus 128) and the offsets taken off in integers
   through the activations' block sums; tolerances as AVX2's. */

#if defined(SWA__HAVE_AVX_VNNI)

/* Pair p of a group for vpdpbusd: its first halves (lo) and second halves (hi), unsigned. */
SWA__AVX_VNNI SWA__INLINE void swa__pair_vnni(const uint8_t *w, int p, uint32_t type, __m256i *lo, __m256i *hi)
{
    swa__pair_avx2(w, p, type, lo, hi);
    if (swa__signed_quants(type)) {
        *lo = _mm256_xor_si256(*lo, _mm256_set1_epi8((char)0x80));
        *hi = _mm256_xor_si256(*hi, _mm256_set1_epi8((char)0x80));
    }
}

/* Block p's exact sum in lanes 0-3 and block p + 4's in 4-7. */
SWA__AVX_VNNI SWA__INLINE __m256i swa__pair_sums_vnni(__m256i lo, __m256i hi, const int8_t *q)
{
    __m256i s = _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), lo, _mm256_loadu_si256((const __m256i *)q));
    return _mm256_dpbusd_avx_epi32(s, hi, _mm256_loadu_si256((const __m256i *)(q + 32)));
}

/* The blocks of 32's order in this set, which its dots, tiles and products all keep: a row's
   full groups of 8 blocks go lane by lane into 8 accumulators, block j of each group into the
   j-th, acc_j = fma(S, d_w d_x, acc_j) with S the block's exact integer sum, then for Q4_1 and
   Q5_1 acc_j = fma(m, d_x sum x, acc_j); the last, partial group's blocks go in order into a
   ninth the same way; the result is swa__hsum_avx2's tree over the 8, plus the ninth. */

/* One token's turn on a group of 8 weight blocks (scales dw, Q4_1's and Q5_1's m in mw, pairs
   unpacked): the 8 blocks' sums in block order, their offsets off, into acc. */
SWA__AVX_VNNI SWA__INLINE __m256 swa__group_step_vnni(__m256 dw, __m256 mw, const __m256i lo[4], const __m256i hi[4],
                                                      const swa__q8g *a, uint32_t type, __m256 acc)
{
    __m256i p01 = _mm256_hadd_epi32(swa__pair_sums_vnni(lo[0], hi[0], a->q), swa__pair_sums_vnni(lo[1], hi[1], a->q + 64));
    __m256i p23 = _mm256_hadd_epi32(swa__pair_sums_vnni(lo[2], hi[2], a->q + 128), swa__pair_sums_vnni(lo[3], hi[3], a->q + 192));
    const __m256i sum8 = _mm256_loadu_si256((const __m256i *)a->sum8);
    const __m256 dx = _mm256_loadu_ps(a->d);
    __m256i s = _mm256_hadd_epi32(p01, p23);
    if (swa__offset_quants(type)) s = _mm256_sub_epi32(s, swa__offsets_avx2(sum8, type));
    else if (swa__signed_quants(type)) s = _mm256_sub_epi32(s, _mm256_slli_epi32(sum8, 4));
    acc = _mm256_fmadd_ps(_mm256_mul_ps(dw, dx), _mm256_cvtepi32_ps(s), acc);
    if (swa__b32_has_min(type)) acc = _mm256_fmadd_ps(mw, _mm256_mul_ps(dx, _mm256_cvtepi32_ps(_mm256_srai_epi32(sum8, 3))), acc);
    return acc;
}

/* Block b of a row's last, partial group, into the ninth accumulator t. */
SWA__AVX_VNNI SWA__INLINE __m128 swa__block_step_vnni(const uint8_t *w, uint32_t type, const swa__q8g *a, int64_t b, __m128 t)
{
    __m256i q = swa__block_avx2(w, type);
    int32_t s;
    if (swa__signed_quants(type)) q = _mm256_xor_si256(q, _mm256_set1_epi8((char)0x80));
    s = swa__hsum_epi32_avx2(_mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), q, swa__block_x_avx2(a, b))) -
        swa__offset_of(type, a[b / 8].sum8[b % 8]);
    t = _mm_fmadd_ss(_mm_set_ss((float)s), _mm_set_ss(swa__block_scale_avx2(w, type) * a[b / 8].d[b % 8]), t);
    if (swa__b32_has_min(type)) t = _mm_fmadd_ss(_mm_set_ss(_cvtsh_ss(swa__load_u16(w + 2))), _mm_set_ss(swa__block_dsum(a, b)), t);
    return t;
}

SWA__AVX_VNNI SWA__INLINE void swa__row_dots_grouped_vnni(const void *row, const void *x, size_t stride, int nt, int64_t n,
                                                          float *out, const uint32_t type)
{
    const uint8_t *w = (const uint8_t *)row, *xa = (const uint8_t *)x;
    const swa__q8g *a0 = (const swa__q8g *)xa, *a1 = (const swa__q8g *)(xa + stride);
    const swa__q8g *a2 = (const swa__q8g *)(xa + 2 * stride), *a3 = (const swa__q8g *)(xa + 3 * stride);
    const int block_bytes = (int)swa__types[type].block_bytes;
    __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, mw = c0;
    __m256i lo[4], hi[4];
    __m128 t0 = _mm_setzero_ps(), t1 = t0, t2 = t0, t3 = t0;
    int64_t i, b;
    for (i = 0; nt == 1 && i < n / 256; i++, w += 8 * block_bytes) {
        __m256 dw = swa__group_scales_avx2(w, block_bytes, type);
        if (swa__b32_has_min(type)) mw = swa__scales8_avx2(w + 2, block_bytes);
        swa__prefetch_unit(w, 8 * block_bytes);
        swa__pair_vnni(w, 0, type, &lo[0], &hi[0]);
        swa__pair_vnni(w, 1, type, &lo[1], &hi[1]);
        swa__pair_vnni(w, 2, type, &lo[2], &hi[2]);
        swa__pair_vnni(w, 3, type, &lo[3], &hi[3]);
        c0 = swa__group_step_vnni(dw, mw, lo, hi, a0 + i, type, c0);
    }
    for (i = 0; nt > 1 && i < n / 256; i++, w += 8 * block_bytes) {
        __m256 dw = swa__group_scales_avx2(w, block_bytes, type);
        if (swa__b32_has_min(type)) mw = swa__scales8_avx2(w + 2, block_bytes);
        swa__prefetch_unit(w, 8 * block_bytes);
        swa__pair_vnni(w, 0, type, &lo[0], &hi[0]);
        swa__pair_vnni(w, 1, type, &lo[1], &hi[1]);
        swa__pair_vnni(w, 2, type, &lo[2], &hi[2]);
        swa__pair_vnni(w, 3, type, &lo[3], &hi[3]);
        c0 = swa__group_step_vnni(dw, mw, lo, hi, a0 + i, type, c0);
        c1 = swa__group_step_vnni(dw, mw, lo, hi, a1 + i, type, c1);
        if (nt > 2) c2 = swa__group_step_vnni(dw, mw, lo, hi, a2 + i, type, c2);
        if (nt > 3) c3 = swa__group_step_vnni(dw, mw, lo, hi, a3 + i, type, c3);
    }
    for (b = n / 256 * 8; b < n / 32; b++, w += block_bytes) {
        t0 = swa__block_step_vnni(w, type, a0, b, t0);
        if (nt > 1) t1 = swa__block_step_vnni(w, type, a1, b, t1);
        if (nt > 2) t2 = swa__block_step_vnni(w, type, a2, b, t2);
        if (nt > 3) t3 = swa__block_step_vnni(w, type, a3, b, t3);
    }
    out[0] = swa__hsum_avx2(c0) + _mm_cvtss_f32(t0);
    if (nt > 1) out[1] = swa__hsum_avx2(c1) + _mm_cvtss_f32(t1);
    if (nt > 2) out[2] = swa__hsum_avx2(c2) + _mm_cvtss_f32(t2);
    if (nt > 3) out[3] = swa__hsum_avx2(c3) + _mm_cvtss_f32(t3);
}

#define SWA__VNNI_TYPES(X) \
    X(q8_0, SWA_TYPE_Q8_0) X(q4_0, SWA_TYPE_Q4_0) X(q4_1, SWA_TYPE_Q4_1) X(q5_0, SWA_TYPE_Q5_0) \
    X(q5_1, SWA_TYPE_Q5_1) X(iq4_nl, SWA_TYPE_IQ4_NL) X(mxfp4, SWA_TYPE_MXFP4)
#define SWA__NEW_TYPE_VNNI(stem, type) \
    SWA__NEW_TYPE(SWA__AVX_VNNI, swa__row_dots_##stem##_vnni, swa__dots_##stem##_vnni, swa__dot_##stem##_vnni, \
                  swa__row_dots_grouped_vnni, type)
SWA__VNNI_TYPES(SWA__NEW_TYPE_VNNI)
#undef SWA__NEW_TYPE_VNNI

/* ---- The blocks of 32's products: tokens in the lanes ----
   As the AVX2 section's end describes, with 8 tokens to a unit (swa__qunit8), 8 rows' chains at
   a time. A (row, token) pair keeps the order above: its 9 accumulators live in memory (a load
   and a store a row and block, beside 8 vpdpbusd), block b going to the (b mod 8)-th in full
   groups and to the ninth after them, and the same tree sums them at the end. */
typedef struct swa__qunit8 {   /* swa__qpack_lanes's unit of 8 tokens */
    int8_t q[8][32];
    float d[8];
    float dsum[8];
} swa__qunit8;

static void swa__qpack_vnni(const uint8_t *xq, size_t x_stride, int64_t n, int64_t n_in, void *out)
{
    swa__qpack_lanes(xq, x_stride, n, n_in, out, 8);
}

#define SWA__VNNI_ACCS 9   /* accumulators a (row, token): 8 for the full groups, one after them */

/* Block b of 8 unpacked rows (row[m]) against a unit of 8 tokens, into accumulator acc + m *
   SWA__VNNI_ACCS * 8 of row m. */
SWA__AVX_VNNI SWA__INLINE void swa__qstep_vnni(const swa__qrow *row, const swa__qunit8 *x, float *acc, const uint32_t type)
{
    const __m256 dx = _mm256_loadu_ps(x->d);
    __m256i s[8];
    int m, k;
    SWA__UNROLL(8)
    for (m = 0; m < 8; m++) s[m] = _mm256_set1_epi32(row[m].neg_offset);
    SWA__UNROLL(8)
    for (k = 0; k < 8; k++) {
        const __m256i t = _mm256_loadu_si256((const __m256i *)x->q[k]);
        SWA__UNROLL(8)
        for (m = 0; m < 8; m++)
            s[m] = _mm256_dpbusd_avx_epi32(s[m], t, _mm256_set1_epi32((int)swa__load_u32((const uint8_t *)row[m].q + 4 * k)));
    }
    SWA__UNROLL(8)
    for (m = 0; m < 8; m++) {
        float *c = acc + m * SWA__VNNI_ACCS * 8;
        __m256 v = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_set1_ps(row[m].d), dx), _mm256_cvtepi32_ps(s[m]), _mm256_loadu_ps(c));
        if (swa__b32_has_min(type)) v = _mm256_fmadd_ps(_mm256_set1_ps(row[m].m), _mm256_loadu_ps(x->dsum), v);
        _mm256_storeu_ps(c, v);
    }
}

/* y[t * ldy + r] = dot(row r, token t) for nr rows of a block-of-32 type and n tokens packed
   by swa__qpack_vnni. */
SWA__AVX_VNNI SWA__INLINE void swa__gemm_q_vnni(const uint8_t *w, size_t w_stride, int64_t nr, const void *xpack, int64_t n,
                                                int64_t n_in, float *y, int64_t ldy, void *scratch, const uint32_t type)
{
    const int64_t nbk = n_in / 32, full = nbk / 8 * 8, bytes = (int64_t)swa_type_block_bytes(type);
    const swa__qunit8 *xu = (const swa__qunit8 *)xpack;
    swa__qrow *u0 = (swa__qrow *)swa__line_up(scratch);
    float *acc = (float *)(u0 + SWA__GEMM_ROWS * nbk), *out = acc + 8 * SWA__VNNI_ACCS * 8;
    int64_t r, g, b, q;
    int m, j;
    for (r = 0; r < nr; r += SWA__GEMM_ROWS) {
        const int64_t sets = swa__sets(nr, r, 8);
        for (q = 0; q < sets; q++) {
            swa__qrow *u = u0 + q * 8 * nbk;
            const int rows = swa__set_rows(nr, r, 8, q);
            for (b = 0; b < nbk; b++)
                for (m = 0; m < 8; m++) {
                    if (m < rows) swa__qrow_unpack(w + (size_t)(r + 8 * q + m) * w_stride + b * bytes, type, u + 8 * b + m);
                    else memset(u + 8 * b + m, 0, sizeof *u);
                }
        }
        for (g = 0; g * 8 < n; g++) {
            for (q = 0; q < sets; q++) {
                const swa__qrow *u = u0 + q * 8 * nbk;
                const int rows = swa__set_rows(nr, r, 8, q);
                memset(acc, 0, sizeof(float) * 8 * SWA__VNNI_ACCS * 8);
                for (b = 0; b < nbk; b++) swa__qstep_vnni(u + 8 * b, xu + g * nbk + b, acc + 8 * (b < full ? b % 8 : 8), type);
                for (m = 0; m < rows; m++) {   /* swa__hsum_avx2's tree, lane by lane, then the ninth */
                    __m256 c[SWA__VNNI_ACCS];
                    for (j = 0; j < SWA__VNNI_ACCS; j++) c[j] = _mm256_loadu_ps(acc + (m * SWA__VNNI_ACCS + j) * 8);
                    c[0] = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c[0], c[4]), _mm256_add_ps(c[2], c[6])),
                                         _mm256_add_ps(_mm256_add_ps(c[1], c[5]), _mm256_add_ps(c[3], c[7])));
                    _mm256_storeu_ps(out + 8 * m, _mm256_add_ps(c[0], c[8]));
                }
                swa__put_group(out, rows, g, 8, n, y, ldy, r + 8 * q);
            }
        }
    }
}

#define SWA__GEMM_VNNI(stem, type)                                                                                    \
    SWA__AVX_VNNI static void swa__gemm_##stem##_vnni(const uint8_t *w, size_t w_stride, int64_t nr, const void *xpack, \
                                                      int64_t n, int64_t n_in, float *y, int64_t ldy, void *scratch)  \
    {                                                                                                                 \
        swa__gemm_q_vnni(w, w_stride, nr, xpack, n, n_in, y, ldy, scratch, type);                                    \
    }
SWA__VNNI_TYPES(SWA__GEMM_VNNI)
#undef SWA__GEMM_VNNI
#undef SWA__VNNI_TYPES

/* K-quants: a super-block's 256 weights as 8 registers of 32 unsigned quants in element order,
   and beside each the int16 scales of its two 16-element halves; maddubs gives the pair sums
   and vpdpwssd scales and adds them, so the super-block's integers stay exact. The loops over
   registers are unrolled so that constant indices let the compiler keep what fits in registers. */
typedef struct swa__kquant_vnni {
    __m256i q[8], s[8];
} swa__kquant_vnni;

SWA__AVX_VNNI SWA__INLINE __m256i swa__kquant_sums_vnni(const swa__kquant_vnni *u, const int8_t *x)
{
    __m256i acc = _mm256_setzero_si256();
    int j;
    SWA__UNROLL(8)
    for (j = 0; j < 8; j++)
        acc = _mm256_dpwssd_avx_epi32(acc, _mm256_maddubs_epi16(u->q[j], _mm256_loadu_si256((const __m256i *)(x + 32 * j))), u->s[j]);
    return acc;
}

/* Q4_K (layout at swa__q4k_scales): group g's low nibbles are sub-block 2g, its high ones 2g + 1;
   Q5_K (layout at swa__q5k_rows_avx2) the same with each quant's fifth bit from qh. */
SWA__AVX_VNNI SWA__INLINE void swa__kmin_unpack_vnni(const uint8_t *w, uint32_t type, swa__kquant_vnni *u, __m256i *mins16)
{
    const __m128i twice = _mm_setr_epi8(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15);
    const __m256i low4 = _mm256_set1_epi8(15);
    const int q5 = type == SWA_TYPE_Q5_K;
    __m128i scales_mins = swa__q4k_scales_avx2(w + 4);
    __m256i sc16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(scales_mins));
    __m256i qh = q5 ? _mm256_loadu_si256((const __m256i *)(w + 16)) : _mm256_setzero_si256();
    int g;
    SWA__UNROLL(4)
    for (g = 0; g < 4; g++) {
        __m256i raw = _mm256_loadu_si256((const __m256i *)(w + (q5 ? 48 : 16) + 32 * g));
        u->q[2 * g] = _mm256_and_si256(raw, low4);
        u->q[2 * g + 1] = _mm256_and_si256(_mm256_srli_epi16(raw, 4), low4);
        if (q5) {
            u->q[2 * g] = _mm256_or_si256(u->q[2 * g], swa__q5k_bits_avx2(qh, 2 * g));
            u->q[2 * g + 1] = _mm256_or_si256(u->q[2 * g + 1], swa__q5k_bits_avx2(qh, 2 * g + 1));
        }
        u->s[2 * g] = _mm256_shuffle_epi8(sc16, _mm256_set1_epi16(swa__int16_lane(2 * g)));
        u->s[2 * g + 1] = _mm256_shuffle_epi8(sc16, _mm256_set1_epi16(swa__int16_lane(2 * g + 1)));
    }
    *mins16 = _mm256_sub_epi16(_mm256_setzero_si256(), _mm256_cvtepu8_epi16(_mm_shuffle_epi8(scales_mins, twice)));
}

/* Q6_K (layout at swa__q6k_unpack): quants 0..63, the -32 through the 16-element sums. */
SWA__AVX_VNNI SWA__INLINE void swa__q6k_unpack_vnni(const uint8_t *w, swa__kquant_vnni *u, __m256i *sc16)
{
    const __m256i low4 = _mm256_set1_epi8(15), low2 = _mm256_set1_epi8(3);
    __m128i sc8 = _mm_loadu_si128((const __m128i *)(w + 192));
    __m256i sc_low = _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(sc8));
    __m256i sc_high = _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(_mm_srli_si128(sc8, 8)));
    int h, k;
    SWA__UNROLL(2)
    for (h = 0; h < 2; h++) {
        __m256i l0 = _mm256_loadu_si256((const __m256i *)(w + 64 * h)), l1 = _mm256_loadu_si256((const __m256i *)(w + 64 * h + 32));
        __m256i hb = _mm256_loadu_si256((const __m256i *)(w + 128 + 32 * h));
        SWA__UNROLL(4)
        for (k = 0; k < 4; k++) {
            __m256i l = k & 1 ? l1 : l0;
            __m256i lo = _mm256_and_si256(k < 2 ? l : _mm256_srli_epi16(l, 4), low4);
            __m256i hi2 = _mm256_and_si256(_mm256_srli_epi16(hb, 2 * k), low2);
            u->q[4 * h + k] = _mm256_or_si256(lo, _mm256_slli_epi16(hi2, 4));
            u->s[4 * h + k] = swa__scale_pair_avx2(h == 0 ? sc_low : sc_high, k);
        }
    }
    *sc16 = _mm256_cvtepi8_epi16(sc8);
}

/* [S, M] from a token's lanes of S and 16-element sums against -m (neg_mn), scaled by [d d_x,
   dmin d_x] into c's first two lanes (d_dmin: d, dmin, d, dmin). Q4_K's and Q5_K's dots too. */
SWA__AVX_VNNI SWA__INLINE __m128 swa__kfinish_vnni(__m128 c, __m256i sums, const swa__q8k *a, __m256i neg_mn, __m128 d_dmin,
                                                  int with_mins)
{
    const __m256i mins = with_mins ? _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)a->bsum), neg_mn) : _mm256_setzero_si256();
    const __m256i v = _mm256_hadd_epi32(sums, mins);   /* S's and M's parts, in pairs */
    __m128i h = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    h = _mm_hadd_epi32(h, h);   /* S, M, S, M */
    return _mm_fmadd_ps(_mm_mul_ps(d_dmin, _mm_set1_ps(a->d)), _mm_cvtepi32_ps(h), c);
}

/* Q4_K's, Q5_K's and Q6_K's dots in the orders their products keep (the avx512 set's): a
   super-block's S = sum_j sc_j sum q a, exact (swa__kquant_sums_vnni's lanes added up); Q4_K's
   and Q5_K's M = -sum_j m_j B_j likewise, [S, M] scaled by [d d_x, dmin d_x] into two lanes
   [ls, lm] and the result ls + lm; Q6_K's S less 32 sum_j sc_j bsum_j, scaled by d d_x into one
   lane. */
SWA__AVX_VNNI SWA__INLINE void swa__row_dots_kmin_vnni(const void *row, const void *x, size_t stride, int nt, int64_t n, float *out,
                                                       const uint32_t type)
{
    const uint8_t *w = (const uint8_t *)row, *xa = (const uint8_t *)x;
    const int bytes = (int)swa__types[type].block_bytes;
    __m128 c[4];
    swa__kquant_vnni u;
    __m256i mins16;
    int64_t i;
    int t;
    for (t = 0; t < 4; t++) c[t] = _mm_setzero_ps();
    for (i = 0; i < n / 256; i++, w += bytes) {
        const __m128 d_dmin = _mm_cvtph_ps(_mm_set1_epi32((int)swa__load_u32(w)));   /* d, dmin, d, dmin */
        swa__prefetch_unit(w, bytes);
        swa__kmin_unpack_vnni(w, type, &u, &mins16);
        for (t = 0; t < nt; t++) {
            const swa__q8k *a = (const swa__q8k *)(xa + (size_t)t * stride) + i;
            c[t] = swa__kfinish_vnni(c[t], swa__kquant_sums_vnni(&u, a->q), a, mins16, d_dmin, 1);
        }
    }
    for (t = 0; t < nt; t++) out[t] = _mm_cvtss_f32(c[t]) + _mm_cvtss_f32(_mm_movehdup_ps(c[t]));
}

SWA__AVX_VNNI SWA__INLINE void swa__row_dots_q6_k_vnni(const void *row, const void *x, size_t stride, int nt, int64_t n, float *out)
{
    const uint8_t *w = (const uint8_t *)row, *xa = (const uint8_t *)x;
    __m128 c[4];
    swa__kquant_vnni u;
    __m256i sc16;
    int64_t i;
    int t;
    for (t = 0; t < 4; t++) c[t] = _mm_setzero_ps();
    for (i = 0; i < n / 256; i++, w += 210) {
        float d = _cvtsh_ss(swa__load_u16(w + 208));
        swa__prefetch_unit(w, 210);
        swa__q6k_unpack_vnni(w, &u, &sc16);
        for (t = 0; t < nt; t++) {
            const swa__q8k *a = (const swa__q8k *)(xa + (size_t)t * stride) + i;
            __m256i offset = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)a->bsum), sc16);
            __m256i sum = _mm256_sub_epi32(swa__kquant_sums_vnni(&u, a->q), _mm256_slli_epi32(offset, 5));
            c[t] = _mm_fmadd_ss(_mm_set_ss(d * a->d), _mm_set_ss((float)swa__hsum_epi32_avx2(sum)), c[t]);
        }
    }
    for (t = 0; t < nt; t++) out[t] = _mm_cvtss_f32(c[t]);
}

/* Q2_K's, Q3_K's and IQ4_XS's dots in the avx512 set's orders: AVX2's super-block steps
   (swa__kblock_part_avx2: each 32 quants met by up to 4 tokens while in registers, Q2_K's
   unsigned, the others' as |q| against the activations with q's sign, the pairs within 2 * 127
   * 127 as Q8_K's activations are within 127 of 0), vpdpwssd applying the scales; each
   super-block's S (and Q2_K's M = -sum_j m_j bsum_j) added up exactly, then [S, M] by [d d_x,
   dmin d_x] into two lanes, the result their sum (M's lane stays 0 for the other two). */
SWA__AVX_VNNI SWA__INLINE __m256i swa__kblock_sum_vnni(__m256i sum, __m256i u, __m256i q, __m256i sc, const int8_t *x, uint32_t type)
{
    const __m256i xq = _mm256_loadu_si256((const __m256i *)x);
    return _mm256_dpwssd_avx_epi32(sum, _mm256_maddubs_epi16(u, type == SWA_TYPE_Q2_K ? xq : _mm256_sign_epi8(xq, q)), sc);
}

/* Up to 4 tokens, nt a constant after inlining. */
SWA__AVX_VNNI SWA__INLINE void swa__kblock_rows_vnni(const uint8_t *w, const uint8_t *xa, size_t stride, int nt, int64_t n, float *out,
                                                     uint32_t type)
{
    const int bytes = (int)swa__types[type].block_bytes;
    __m128 c0 = _mm_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;
    int64_t i;
    int t, j;
    for (i = 0; i < n / 256; i++, w += bytes) {
        const swa__kscales_avx2 k = swa__kscales_unpack_avx2(w, type);
        const uint32_t halves = type == SWA_TYPE_Q2_K ? swa__load_u32(w + 80) : swa__load_u16(w + (type == SWA_TYPE_Q3_K ? 108 : 0));
        const __m128 d_dmin = _mm_cvtph_ps(_mm_set1_epi32((int)halves));   /* d, dmin (or 0), d, dmin */
        const swa__q8k *a[4];
        __m256i s0 = _mm256_setzero_si256(), s1 = s0, s2 = s0, s3 = s0;
        swa__prefetch_unit(w, bytes);
        for (t = 0; t < 4; t++) a[t] = (const swa__q8k *)(xa + (size_t)(t < nt ? t : 0) * stride) + i;   /* past nt: never read */
        SWA__UNROLL(8)
        for (j = 0; j < 8; j++) {
            const __m256i q = swa__kblock_quants_avx2(w, j, type), u = type == SWA_TYPE_Q2_K ? q : _mm256_abs_epi8(q);
            const __m256i sc = swa__scale_pair_avx2(j < 4 ? k.low : k.high, j % 4);
            s0 = swa__kblock_sum_vnni(s0, u, q, sc, a[0]->q + 32 * j, type);
            if (nt > 1) s1 = swa__kblock_sum_vnni(s1, u, q, sc, a[1]->q + 32 * j, type);
            if (nt > 2) s2 = swa__kblock_sum_vnni(s2, u, q, sc, a[2]->q + 32 * j, type);
            if (nt > 3) s3 = swa__kblock_sum_vnni(s3, u, q, sc, a[3]->q + 32 * j, type);
        }
        c0 = swa__kfinish_vnni(c0, s0, a[0], k.neg_mn, d_dmin, type == SWA_TYPE_Q2_K);
        if (nt > 1) c1 = swa__kfinish_vnni(c1, s1, a[1], k.neg_mn, d_dmin, type == SWA_TYPE_Q2_K);
        if (nt > 2) c2 = swa__kfinish_vnni(c2, s2, a[2], k.neg_mn, d_dmin, type == SWA_TYPE_Q2_K);
        if (nt > 3) c3 = swa__kfinish_vnni(c3, s3, a[3], k.neg_mn, d_dmin, type == SWA_TYPE_Q2_K);
    }
    out[0] = _mm_cvtss_f32(c0) + _mm_cvtss_f32(_mm_movehdup_ps(c0));
    if (nt > 1) out[1] = _mm_cvtss_f32(c1) + _mm_cvtss_f32(_mm_movehdup_ps(c1));
    if (nt > 2) out[2] = _mm_cvtss_f32(c2) + _mm_cvtss_f32(_mm_movehdup_ps(c2));
    if (nt > 3) out[3] = _mm_cvtss_f32(c3) + _mm_cvtss_f32(_mm_movehdup_ps(c3));
}

SWA__AVX_VNNI SWA__INLINE void swa__row_dots_kblock_vnni(const void *row, const void *x, size_t stride, int nt, int64_t n, float *out,
                                                         const uint32_t type)
{
    if (nt == 1) swa__kblock_rows_vnni((const uint8_t *)row, (const uint8_t *)x, stride, 1, n, out, type);
    else swa__kblock_rows_vnni((const uint8_t *)row, (const uint8_t *)x, stride, nt, n, out, type);
}

SWA__NEW_TYPE(SWA__AVX_VNNI, swa__row_dots_q2_k_vnni, swa__dots_q2_k_vnni, swa__dot_q2_k_vnni, swa__row_dots_kblock_vnni, SWA_TYPE_Q2_K)
SWA__NEW_TYPE(SWA__AVX_VNNI, swa__row_dots_q3_k_vnni, swa__dots_q3_k_vnni, swa__dot_q3_k_vnni, swa__row_dots_kblock_vnni, SWA_TYPE_Q3_K)
SWA__NEW_TYPE(SWA__AVX_VNNI, swa__row_dots_iq4_xs_vnni, swa__dots_iq4_xs_vnni, swa__dot_iq4_xs_vnni, swa__row_dots_kblock_vnni,
              SWA_TYPE_IQ4_XS)
SWA__NEW_TYPE(SWA__AVX_VNNI, swa__row_dots_q4_k_vnni, swa__dots_q4_k_vnni, swa__dot_q4_k_vnni, swa__row_dots_kmin_vnni, SWA_TYPE_Q4_K)
SWA__NEW_TYPE(SWA__AVX_VNNI, swa__row_dots_q5_k_vnni, swa__dots_q5_k_vnni, swa__dot_q5_k_vnni, swa__row_dots_kmin_vnni, SWA_TYPE_Q5_K)
SWA__DOTS_FROM_ROW_DOTS(SWA__AVX_VNNI, swa__dots_q6_k_vnni, swa__row_dots_q6_k_vnni)
SWA__DOT_FROM_DOTS(SWA__AVX_VNNI, swa__dot_q6_k_vnni, swa__dots_q6_k_vnni)

/* ---- Q4_K's, Q5_K's, Q6_K's and IQ4_XS's products: tokens in the lanes ----
   As the avx512 set's (swa__kgroup_avx512), with 8 tokens to a unit (swa__kpack, W = 8) and 4
   rows' two sub-blocks' chains at a time (16 registers: 8 chains, 4 sums, 2 of tokens): each
   sub-block's sums scaled in integers (vpmulld), so S and M are the dots' integers and meet the
   floats as there. */
typedef struct swa__kunit8 {   /* swa__kpack's unit of 8 tokens */
    int8_t q[4][16][32];
    int32_t pair_sums[4][8];
    int32_t bsum_pairs[8][8];
    float d[8];
} swa__kunit8;

static void swa__kpack_vnni(const uint8_t *xq, size_t x_stride, int64_t n, int64_t n_in, void *out)
{
    swa__kpack(xq, x_stride, n, n_in, out, 8, 0x80);
}

SWA__AVX_VNNI SWA__INLINE void swa__krow_unpack_vnni(const uint8_t *w, uint32_t type, swa__krow *u)
{
    swa__kquant_vnni k;
    int j;
    memset(u->sc, 0, sizeof u->sc);
    memset(u->mins, 0, sizeof u->mins);
    u->dmin = 0.0f;
    if (type == SWA_TYPE_Q4_K || type == SWA_TYPE_Q5_K) {
        const __m128i scales_mins = swa__q4k_scales_avx2(w + 4);   /* sc[0..7], m[0..7] */
        __m256i mins16;
        swa__kmin_unpack_vnni(w, type, &k, &mins16);
        for (j = 0; j < 8; j++) _mm256_storeu_si256((__m256i *)(u->q + 32 * j), k.q[j]);
        _mm256_storeu_si256((__m256i *)u->sc, _mm256_cvtepu8_epi32(scales_mins));
        _mm_storeu_si128((__m128i *)u->mins, _mm_sub_epi16(_mm_setzero_si128(), _mm_cvtepu8_epi16(_mm_srli_si128(scales_mins, 8))));
        u->d = _cvtsh_ss(swa__load_u16(w));
        u->dmin = _cvtsh_ss(swa__load_u16(w + 2));
    } else if (type != SWA_TYPE_Q6_K) {   /* Q2_K, Q3_K, IQ4_XS */
        swa__krow_unpack_kblock(w, type, u);
    } else {   /* Q6_K */
        const __m128i sc8 = _mm_loadu_si128((const __m128i *)(w + 192));
        __m256i sc16;
        swa__q6k_unpack_vnni(w, &k, &sc16);
        for (j = 0; j < 8; j++) _mm256_storeu_si256((__m256i *)(u->q + 32 * j), _mm256_sub_epi8(k.q[j], _mm256_set1_epi8(32)));
        _mm256_storeu_si256((__m256i *)u->sc, _mm256_cvtepi8_epi32(sc8));
        _mm256_storeu_si256((__m256i *)(u->sc + 8), _mm256_cvtepi8_epi32(_mm_srli_si128(sc8, 8)));
        u->d = _cvtsh_ss(swa__load_u16(w + 208));
    }
    swa__krow_offset(u, type);
}

/* 4 unpacked rows (row m's super-block s at u[8 s + m]) against one token group's units xg:
   out[8 m + t]. */
SWA__AVX_VNNI SWA__INLINE void swa__kgroup_vnni(const swa__krow *u, const swa__kunit8 *xg, int64_t nsb, float *out, const uint32_t type)
{
    const int mins = type == SWA_TYPE_Q4_K || type == SWA_TYPE_Q5_K || type == SWA_TYPE_Q2_K;
    const int n_sub = 256 / swa__krow_sub(type), per = 64 / n_sub;
    const __m256i zero = _mm256_setzero_si256();
    float rs[4][8], rm[4][8];
    __m256i acc[4], acc2[4], sv[4];
    int64_t s;
    int m, j, e;
    memset(rs, 0, sizeof rs);
    memset(rm, 0, sizeof rm);
    for (s = 0; s < nsb; s++) {
        const swa__krow *row = u + 8 * s;
        const swa__kunit8 *x = xg + s;
        __m256 ad;
        SWA__UNROLL(4)
        for (m = 0; m < 4; m++) sv[m] = _mm256_set1_epi32(-row[m].offset);
        for (j = 0; j < n_sub; j += 2) {   /* two sub-blocks at once: 8 chains of vpdpbusd */
            const int8_t *b0 = x->q[0][0] + 32 * per * j, *b1 = b0 + 32 * per;
            SWA__UNROLL(8)
            for (e = 0; e < per; e++) {
                const __m256i t0 = _mm256_loadu_si256((const __m256i *)(b0 + 32 * e));
                const __m256i t1 = _mm256_loadu_si256((const __m256i *)(b1 + 32 * e));
                SWA__UNROLL(4)
                for (m = 0; m < 4; m++) {
                    const uint8_t *q = (const uint8_t *)row[m].q + 4 * (per * j + e);
                    acc[m] = _mm256_dpbusd_avx_epi32(e ? acc[m] : zero, t0, _mm256_set1_epi32((int)swa__load_u32(q)));
                    acc2[m] = _mm256_dpbusd_avx_epi32(e ? acc2[m] : zero, t1, _mm256_set1_epi32((int)swa__load_u32(q + 4 * per)));
                }
            }
            SWA__UNROLL(4)
            for (m = 0; m < 4; m++)
                sv[m] = _mm256_add_epi32(_mm256_add_epi32(sv[m], _mm256_mullo_epi32(acc[m], _mm256_set1_epi32(row[m].sc[j]))),
                                         _mm256_mullo_epi32(acc2[m], _mm256_set1_epi32(row[m].sc[j + 1])));
        }
        ad = _mm256_loadu_ps(x->d);
        SWA__UNROLL(4)
        for (m = 0; m < 4; m++) {
            _mm256_storeu_ps(rs[m], _mm256_fmadd_ps(_mm256_mul_ps(_mm256_set1_ps(row[m].d), ad), _mm256_cvtepi32_ps(sv[m]),
                                                    _mm256_loadu_ps(rs[m])));
            if (mins) {   /* Q2_K's 16 mins meet the 16-element sums, the others' 8 the 32-element ones */
                const int32_t *sums = type == SWA_TYPE_Q2_K ? x->bsum_pairs[0] : x->pair_sums[0];
                __m256i mv = _mm256_setzero_si256();
                for (j = 0; j < (type == SWA_TYPE_Q2_K ? 8 : 4); j++)
                    mv = _mm256_dpwssd_avx_epi32(mv, _mm256_loadu_si256((const __m256i *)(sums + 8 * j)), _mm256_set1_epi32(row[m].mins[j]));
                _mm256_storeu_ps(rm[m], _mm256_fmadd_ps(_mm256_mul_ps(_mm256_set1_ps(row[m].dmin), ad), _mm256_cvtepi32_ps(mv),
                                                        _mm256_loadu_ps(rm[m])));
            }
        }
    }
    for (m = 0; m < 4; m++)
        _mm256_storeu_ps(out + 8 * m, mins ? _mm256_add_ps(_mm256_loadu_ps(rs[m]), _mm256_loadu_ps(rm[m])) : _mm256_loadu_ps(rs[m]));
}

/* y[t * ldy + r] = dot(row r, token t) for nr rows and n tokens packed by swa__kpack_vnni. */
SWA__AVX_VNNI SWA__INLINE void swa__gemm_k_vnni(const uint8_t *w, size_t w_stride, int64_t nr, const void *xpack, int64_t n,
                                                int64_t n_in, float *y, int64_t ldy, void *scratch, const uint32_t type)
{
    const int64_t nsb = n_in / 256, bytes = (int64_t)swa_type_block_bytes(type);
    const swa__kunit8 *xu = (const swa__kunit8 *)xpack;
    swa__krow *u0 = (swa__krow *)swa__line_up(scratch);
    float *out = (float *)(u0 + SWA__GEMM_ROWS * nsb);
    int64_t r, g, s, q;
    int m;
    for (r = 0; r < nr; r += SWA__GEMM_ROWS) {
        const int64_t sets = swa__sets(nr, r, 8);
        for (q = 0; q < sets; q++) {
            swa__krow *u = u0 + q * 8 * nsb;
            const int rows = swa__set_rows(nr, r, 8, q);
            for (s = 0; s < nsb; s++)
                for (m = 0; m < 8; m++) {
                    if (m < rows) swa__krow_unpack_vnni(w + (size_t)(r + 8 * q + m) * w_stride + s * bytes, type, u + 8 * s + m);
                    else memset(u + 8 * s + m, 0, sizeof *u);
                }
        }
        for (g = 0; g * 8 < n; g++) {
            for (q = 0; q < sets; q++) {
                const swa__krow *u = u0 + q * 8 * nsb;
                const int rows = swa__set_rows(nr, r, 8, q);
                swa__kgroup_vnni(u, xu + g * nsb, nsb, out, type);
                if (rows > 4) swa__kgroup_vnni(u + 4, xu + g * nsb, nsb, out + 32, type);
                swa__put_group(out, rows, g, 8, n, y, ldy, r + 8 * q);
            }
        }
    }
}

SWA__AVX_VNNI static void swa__gemm_q4_k_vnni(const uint8_t *w, size_t w_stride, int64_t nr, const void *xpack, int64_t n,
                                              int64_t n_in, float *y, int64_t ldy, void *scratch)
{
    swa__gemm_k_vnni(w, w_stride, nr, xpack, n, n_in, y, ldy, scratch, SWA_TYPE_Q4_K);
}

SWA__AVX_VNNI static void swa__gemm_q5_k_vnni(const uint8_t *w, size_t w_stride, int64_t nr, const void *xpack, int64_t n,
                                              int64_t n_in, float *y, int64_t ldy, void *scratch)
{
    swa__gemm_k_vnni(w, w_stride, nr, xpack, n, n_in, y, ldy, scratch, SWA_TYPE_Q5_K);
}

SWA__AVX_VNNI static void swa__gemm_q2_k_vnni(const uint8_t *w, size_t w_stride, int64_t nr, const void *xpack, int64_t n,
                                              int64_t n_in, float *y, int64_t ldy, void *scratch)
{
    swa__gemm_k_vnni(w, w_stride, nr, xpack, n, n_in, y, ldy, scratch, SWA_TYPE_Q2_K);
}

SWA__AVX_VNNI static void swa__gemm_q3_k_vnni(const uint8_t *w, size_t w_stride, int64_t nr, const void *xpack, int64_t n,
                                              int64_t n_in, float *y, int64_t ldy, void *scratch)
{
    swa__gemm_k_vnni(w, w_stride, nr, xpack, n, n_in, y, ldy, scratch, SWA_TYPE_Q3_K);
}

SWA__AVX_VNNI static void swa__gemm_iq4_xs_vnni(const uint8_t *w, size_t w_stride, int64_t nr, const void *xpack, int64_t n,
                                                int64_t n_in, float *y, int64_t ldy, void *scratch)
{
    swa__gemm_k_vnni(w, w_stride, nr, xpack, n, n_in, y, ldy, scratch, SWA_TYPE_IQ4_XS);
}

SWA__AVX_VNNI static void swa__gemm_q6_k_vnni(const uint8_t *w, size_t w_stride, int64_t nr, const void *xpack, int64_t n,
                                              int64_t n_in, float *y, int64_t ldy, void *scratch)
{
    swa__gemm_k_vnni(w, w_stride, nr, xpack, n, n_in, y, ldy, scratch, SWA_TYPE_Q6_K);
}

/* The packed tokens for n tokens of up to n_in columns, and a thread's scratch (8 unpacked rows,
   their accumulators and results, aligned by hand), for either kind of product. */
static void swa__gemm_memory_vnni(int64_t n, int64_t n_in, uint64_t *pack_bytes, uint64_t *scratch_bytes)
{
    uint64_t groups = (uint64_t)(n + 7) / 8, kpack = groups * (uint64_t)(n_in / 256) * sizeof(swa__kunit8);
    uint64_t qpack = groups * (uint64_t)(n_in / 32) * sizeof(swa__qunit8);
    uint64_t kscratch = SWA__GEMM_ROWS * (uint64_t)(n_in / 256) * sizeof(swa__krow);
    uint64_t qscratch = SWA__GEMM_ROWS * (uint64_t)(n_in / 32) * sizeof(swa__qrow);
    *pack_bytes = kpack > qpack ? kpack : qpack;
    *scratch_bytes = (kscratch > qscratch ? kscratch : qscratch) + (8 * SWA__VNNI_ACCS * 8 + 64) * sizeof(float) + 64;
}

#endif /* SWA__HAVE_AVX_VNNI */

/* ==== kernels (AVX-512 + VNNI) ====
   F, BW and VL with VNNI, compiled with target attributes like the AVX2 kernels and chosen at
   run time after the CPU check. They replace the matrix-product kernels; everything else (the
   element-wise kernels, activation quantization, the weighted sum) stays with AVX2, which
   such a CPU also runs. Differences from the reference, and the tolerances tests/test_kernels.c
   holds them to:
   - float tiles keep one 16-lane sum per (row, token) pair with FMA, the row's last columns
     through a masked load: within 1e-5 of the sum of |products|;
   - Q8_0 and Q4_0 take each block's exact integer sum of (unsigned) weights times signed
     activations from vpdpbusd, the offsets' terms (128 or 8 times the block's activations)
     taken off in the integers, and add it times the rounded product of the scales by one FMA,
     block after block, a row in each lane: within 1e-5 of the sum of |block terms|;
   - IQ4_NL and MXFP4 take each block's exact integer sum the same way (their weights made
     unsigned as the AVX2 kernels make them) and scale it in a float lane; the offsets' terms
     (through the activations' block sums) are scaled and taken off in float at the row's end,
     so the sums are exact before scaling but not after the offset: within 1e-5 of the sum of
     |block terms|; the K-quants keep a super-block's
     integers exact (vpdpwssd multiplies the 16-bit pair sums by the scales) and scale them
     with one FMA: within 1e-6.
   A token's result never depends on the other tokens of its tile, as with AVX2. */

#if defined(SWA__HAVE_AVX512)

/* GCC 12's AVX-512 headers give their register casts an undefined upper part that C++ builds
   report as uninitialized (GCC bug 105593) wherever they are inlined. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

/* ---- float rows: F32, F16, BF16 ---- */

/* The sum of 16 lanes (GCC 12's _mm512_reduce_add_ps warns in C++ builds). */
SWA__AVX512 SWA__INLINE float swa__hsum16_avx512(__m512 v)
{
    __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
    return swa__hsum_avx2(_mm256_add_ps(_mm512_castps512_ps256(v), hi));
}

/* 16 floats of a float row from column i, the columns outside mask m read as zeros. */
SWA__AVX512 SWA__INLINE __m512 swa__load16_avx512(const uint8_t *w, int64_t i, __mmask16 m, uint32_t type)
{
    if (type == SWA_TYPE_F32) return _mm512_maskz_loadu_ps(m, (const float *)w + i);
    if (type == SWA_TYPE_F16) return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, (const uint16_t *)w + i));
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, (const uint16_t *)w + i)), 16));
}

/* Up to 4 rows x 6 tokens, sized for AVX-512's 32 registers: per 16 columns the rows are
   widened once (R registers) and each token's vector loaded once and met by every row, into 24
   accumulators: the 3 x 4 tiles AVX2 has registers for give the FMA units too few products per
   load to keep them busy. The columns from the last whole 16 on go through one masked step, so
   a pair meets the same operations whatever its tile: its 16-lane sum, column block after
   column block, then the lanes' tree. R and T are constants after inlining. */
SWA__AVX512 SWA__INLINE void swa__tile_step_avx512(__m512 c[SWA__FLOAT_TILE_ROWS][SWA__FLOAT_TILE_TOKENS],
                                                   const uint8_t *wb, size_t w_stride, const uint8_t *xb,
                                                   size_t x_stride, int64_t i, __mmask16 m, uint32_t type,
                                                   const int R, const int T)
{
    __m512 w[SWA__FLOAT_TILE_ROWS];
    int r, t;
    SWA__UNROLL(8)
    for (r = 0; r < R; r++) w[r] = swa__load16_avx512(wb + (size_t)r * w_stride, i, m, type);
    SWA__UNROLL(8)
    for (t = 0; t < T; t++) {
        /* masked even when whole, so that the compiler loads it once and does not fold it
           into each of the R products */
        const __m512 x = _mm512_maskz_loadu_ps(m, (const float *)(xb + (size_t)t * x_stride) + i);
        SWA__UNROLL(8)
        for (r = 0; r < R; r++) c[r][t] = _mm512_fmadd_ps(w[r], x, c[r][t]);
    }
}

/* A tile over the len columns from wb and xb on, its accumulators carried in acc from the
   columns before (acc[r][t], SWA__FLOAT_TILE_TOKENS to a row); the next tile's rows are fetched
   ahead. */
SWA__AVX512 SWA__INLINE void
swa__tile_avx512(const uint8_t *wb, size_t w_stride, const uint8_t *xb, size_t x_stride, int64_t len,
                 __m512 acc[][SWA__FLOAT_TILE_TOKENS], uint32_t type, const int R, const int T)
{
    __m512 c[SWA__FLOAT_TILE_ROWS][SWA__FLOAT_TILE_TOKENS];
    const size_t elt = (size_t)swa__types[type].block_bytes;   /* block_size 1 */
    int64_t i;
    int r, t;
    SWA__UNROLL(8)
    for (r = 0; r < R; r++)
        SWA__UNROLL(8)
        for (t = 0; t < T; t++) c[r][t] = acc[r][t];
    for (i = 0; i + 16 <= len; i += 16) {
        if ((size_t)i * elt % 64 == 0) swa__prefetch_float_tile(wb, w_stride, R, R, (size_t)i * elt, (size_t)len * elt, T);
        swa__tile_step_avx512(c, wb, w_stride, xb, x_stride, i, (__mmask16)0xffffu, type, R, T);
    }
    if (i < len) swa__tile_step_avx512(c, wb, w_stride, xb, x_stride, i, (__mmask16)((1u << (len - i)) - 1u), type, R, T);
    SWA__UNROLL(8)
    for (r = 0; r < R; r++)
        SWA__UNROLL(8)
        for (t = 0; t < T; t++) acc[r][t] = c[r][t];
}

/* Up to SWA__TILE_MAX_ROWS rows against up to 6 tokens, in tiles of 4 rows. With several
   tokens the columns go in chunks of SWA__FLOAT_CHUNK, each met by every tile before the next:
   the tokens' activations for a chunk (12 KB for 6 tokens) stay in L1 while the rows pass, the
   accumulators kept in acc in between. Met over all the columns at once, each tile of 4 rows
   would read its tokens' activations from L2 again, 6 loads of 64 bytes and 4 of 32 for 24
   FMAs, more than L2 gives a core. One token's rows go whole, one stream at a time. Each lane
   still meets its column blocks in order, so the bits are those of any other tile or chunk. */
SWA__AVX512 SWA__INLINE void swa__dots_float_avx512(const void *w, size_t w_stride, int nr, const void *x, size_t x_stride,
                                                    int nt, int64_t n, float *y, int64_t ldy, uint32_t type)
{
    const int64_t chunk = nt > 1 ? SWA__FLOAT_CHUNK : n;
    const size_t elt = (size_t)swa__types[type].block_bytes;   /* block_size 1 */
    __m512 acc[SWA__TILE_MAX_ROWS][SWA__FLOAT_TILE_TOKENS];
    int64_t i, len;
    int r, t;
    for (r = 0; r < nr; r++)
        for (t = 0; t < nt; t++) acc[r][t] = _mm512_setzero_ps();
    for (i = 0; i < n; i += len) {
        const uint8_t *xb = (const uint8_t *)x + (size_t)i * sizeof(float);
        len = n - i < chunk ? n - i : chunk;
        for (r = 0; r < nr; r += SWA__FLOAT_TILE_ROWS) {
            const uint8_t *wb = (const uint8_t *)w + (size_t)r * w_stride + (size_t)i * elt;
            /* the tile's rows and tokens, constants in the kernel each case picks */
            switch ((nr - r < SWA__FLOAT_TILE_ROWS ? nr - r - 1 : SWA__FLOAT_TILE_ROWS - 1) * SWA__FLOAT_TILE_TOKENS + nt - 1) {
            case 0: swa__tile_avx512(wb, w_stride, xb, x_stride, len, acc + r, type, 1, 1); break;
            case 1: swa__tile_avx512(wb, w_stride, xb, x_stride, len, acc + r, type, 1, 2); break;
            case 2: swa__tile_avx512(wb, w_stride, xb, x_stride, len, acc + r, type, 1, 3); break;
            case 3: swa__tile_avx512(wb, w_stride, xb, x_stride, len, acc + r, type, 1, 4); break;
            case 4: swa__tile_avx512(wb, w_stride, xb, x_stride, len, acc + r, type, 1, 5); break;
            case 5: swa__tile_avx512(wb, w_stride, xb, x_stride, len, acc + r, type, 1, 6); break;
            case 6: swa__tile_avx512(wb, w_stride, xb, x_stride, len, acc + r, type, 2, 1); break;
            case 7: swa__tile_avx512(wb, w_stride, xb, x_stride, len, acc + r, type, 2, 2); break;
            case 8: swa__tile_avx512(wb, w_stride, xb, x_stride, len, acc + r, type, 2, 3); break;
            case 9: swa__tile_avx512(wb, w_stride, xb, x_stride, len, acc + r, type, 2, 4); break;
            case 10: swa__tile_avx512(wb, w_stride, xb, x_stride, len, acc + r, type, 2, 5); break;
            case 11: swa__tile_avx512(wb, w_stride, xb, x_stride, len, acc + r, type, 2, 6); break;
            case 12: swa__tile_avx512(wb, w_stride, xb, x_stride, len, acc + r, type, 3, 1); break;
            case 13: swa__tile_avx512(wb, w_stride, xb, x_stride, len, acc + r, type, 3, 2); break;
            case 14: swa__tile_avx512(wb, w_stride, xb, x_stride, len, acc + r, type, 3, 3); break;
            case 15: swa__tile_avx512(wb, w_stride, xb, x_stride, len, acc + r, type, 3, 4); break;
            case 16: swa__tile_avx512(wb, w_stride, xb, x_stride, len, acc + r, type, 3, 5); break;
            case 17: swa__tile_avx512(wb, w_stride, xb, x_stride, len, acc + r, type, 3, 6); break;
            case 18: swa__tile_avx512(wb, w_stride, xb, x_stride, len, acc + r, type, 4, 1); break;
            case 19: swa__tile_avx512(wb, w_stride, xb, x_stride, len, acc + r, type, 4, 2); break;
            case 20: swa__tile_avx512(wb, w_stride, xb, x_stride, len, acc + r, type, 4, 3); break;
            case 21: swa__tile_avx512(wb, w_stride, xb, x_stride, len, acc + r, type, 4, 4); break;
            case 22: swa__tile_avx512(wb, w_stride, xb, x_stride, len, acc + r, type, 4, 5); break;
            case 23: swa__tile_avx512(wb, w_stride, xb, x_stride, len, acc + r, type, 4, 6); break;
            default: break;
            }
        }
    }
    for (t = 0; t < nt; t++)
        for (r = 0; r < nr; r++) y[t * ldy + r] = swa__hsum16_avx512(acc[r][t]);
}

SWA__AVX512 static void swa__dots_f32_avx512(const void *w, size_t w_stride, int nr, const void *x, size_t x_stride,
                                             int nt, int64_t n, float *y, int64_t ldy)
{
    swa__dots_float_avx512(w, w_stride, nr, x, x_stride, nt, n, y, ldy, SWA_TYPE_F32);
}

SWA__AVX512 static void swa__dots_f16_avx512(const void *w, size_t w_stride, int nr, const void *x, size_t x_stride,
                                             int nt, int64_t n, float *y, int64_t ldy)
{
    swa__dots_float_avx512(w, w_stride, nr, x, x_stride, nt, n, y, ldy, SWA_TYPE_F16);
}

SWA__AVX512 static void swa__dots_bf16_avx512(const void *w, size_t w_stride, int nr, const void *x, size_t x_stride,
                                              int nt, int64_t n, float *y, int64_t ldy)
{
    swa__dots_float_avx512(w, w_stride, nr, x, x_stride, nt, n, y, ldy, SWA_TYPE_BF16);
}

SWA__DOT_FROM_DOTS(SWA__AVX512, swa__dot_f32_avx512, swa__dots_f32_avx512)
SWA__DOT_FROM_DOTS(SWA__AVX512, swa__dot_f16_avx512, swa__dots_f16_avx512)
SWA__DOT_FROM_DOTS(SWA__AVX512, swa__dot_bf16_avx512, swa__dots_bf16_avx512)

/* The weighted sum of F32 or F16 values (see swa__wsum_avx2): C registers of 16 columns a head
   for up to 4 heads stay in registers over a block of keys, so each key's scores are broadcast
   once for 64 columns, not once for 8; m masks the last pass's columns. Keys are added in
   order with FMA, as there. */
SWA__AVX512 SWA__INLINE void swa__wsum_keys_avx512(float *out, int64_t ldo, int nh, const float *p, int64_t ldp,
                                                   const uint8_t *v, size_t v_stride, int64_t j0, int64_t j1, int64_t d,
                                                   __mmask16 m, uint32_t type, const int C)
{
    __m512 s[4][4], x[4];
    int64_t j;
    int h, k;
    SWA__UNROLL(4)
    for (h = 0; h < 4; h++)
        SWA__UNROLL(4)
        for (k = 0; k < C; k++) s[h][k] = h < nh ? _mm512_maskz_loadu_ps(m, out + h * ldo + d + 16 * k) : _mm512_setzero_ps();
    for (j = j0; j < j1; j++) {
        SWA__UNROLL(4)
        for (k = 0; k < C; k++) x[k] = swa__load16_avx512(v + (size_t)j * v_stride, d + 16 * k, m, type);
        SWA__UNROLL(4)
        for (h = 0; h < 4; h++) {
            __m512 ph;
            if (h >= nh) break;
            ph = _mm512_set1_ps(p[h * ldp + j]);
            SWA__UNROLL(4)
            for (k = 0; k < C; k++) s[h][k] = _mm512_fmadd_ps(ph, x[k], s[h][k]);
        }
    }
    SWA__UNROLL(4)
    for (h = 0; h < 4; h++)
        SWA__UNROLL(4)
        for (k = 0; k < C; k++)
            if (h < nh) _mm512_mask_storeu_ps(out + h * ldo + d + 16 * k, m, s[h][k]);
}

/* Over the keys in blocks of swa__wsum_block, as swa__wsum_avx2. */
SWA__AVX512 SWA__INLINE void swa__wsum_avx512(float *out, int64_t ldo, int nh, const float *p, int64_t ldp, const uint8_t *v,
                                              size_t v_stride, int64_t nk, int64_t hd, uint32_t type)
{
    const int64_t block = swa__wsum_block(hd);
    int64_t d, j0;
    for (j0 = 0; j0 < nk; j0 += block) {
        const int64_t j1 = nk - j0 < block ? nk : j0 + block;
        for (d = 0; d + 64 <= hd; d += 64) swa__wsum_keys_avx512(out, ldo, nh, p, ldp, v, v_stride, j0, j1, d, 0xffff, type, 4);
        for (; d < hd; d += 16)
            swa__wsum_keys_avx512(out, ldo, nh, p, ldp, v, v_stride, j0, j1, d,
                                  (__mmask16)(hd - d < 16 ? (1u << (hd - d)) - 1u : 0xffffu), type, 1);
    }
}

SWA__AVX512 static void swa__wsum_f32_avx512(float *out, int64_t ldo, int nh, const float *p, int64_t ldp, const uint8_t *v,
                                             size_t v_stride, int64_t nk, int64_t hd)
{
    swa__wsum_avx512(out, ldo, nh, p, ldp, v, v_stride, nk, hd, SWA_TYPE_F32);
}

SWA__AVX512 static void swa__wsum_f16_avx512(float *out, int64_t ldo, int nh, const float *p, int64_t ldp, const uint8_t *v,
                                             size_t v_stride, int64_t nk, int64_t hd)
{
    swa__wsum_avx512(out, ldo, nh, p, ldp, v, v_stride, nk, hd, SWA_TYPE_F16);
}

/* ---- Blocks of 32 in groups of 8 (for the AMX set's products) ----
   Weight blocks p and p + 4 fill one register in the order of the activations' 64 bytes at
   64 p: [p's first 16 | p+4's first 16 | p's last 16 | p+4's last 16], as the AVX2 kernels lay
   them. The weights are unsigned: Q4_0's nibbles (0..15) as they are, MXFP4's codes plus 12
   (AVX2's table), Q8_0's bytes and IQ4_NL's table values plus 128; sum (w - k) x = sum w x -
   k sum x, with k sum x = sum8 (Q4_0, k = 8), 1.5 sum8 (MXFP4, k = 12) or 16 sum8 (k = 128). */

/* The 8 blocks' f16 scales (at block_bytes strides from w) as floats: two registers hold the
   group's first 128 bytes (Q4_0) and one word permute picks the scales out. */
SWA__AVX512 SWA__INLINE __m256 swa__scales8_avx512(const uint8_t *w, uint32_t type)
{
    if (type == SWA_TYPE_MXFP4) return swa__e8m0_8_avx2(w, 17);
    if (type == SWA_TYPE_Q4_0 || type == SWA_TYPE_IQ4_NL) {   /* blocks of 18 bytes */
        const __m512i at = _mm512_set_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                            63, 54, 45, 36, 27, 18, 9, 0);
        __m512i s = _mm512_permutex2var_epi16(_mm512_loadu_si512(w), at, _mm512_loadu_si512(w + 64));
        return _mm256_cvtph_ps(_mm512_castsi512_si128(s));
    }
    return swa__scales8_avx2(w, 34);
}

SWA__AVX512 SWA__INLINE __m512i swa__pair_avx512(const uint8_t *w, int p, uint32_t type)
{
    if (type != SWA_TYPE_Q8_0) {   /* nibbles, as they are or through a table */
        const int bb = (int)swa__types[type].block_bytes, at = swa__b32_qs_at(type);
        __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(w + bb * p + at))),
                                            _mm_loadu_si128((const __m128i *)(w + bb * (p + 4) + at)), 1);
        __m512i q = _mm512_and_si512(_mm512_inserti64x4(_mm512_zextsi256_si512(v), _mm256_srli_epi16(v, 4), 1),
                                     _mm512_set1_epi8(15));
        if (swa__group_table(type))
            q = _mm512_shuffle_epi8(_mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)swa__group_table(type))), q);
        return swa__signed_quants(type) ? _mm512_xor_si512(q, _mm512_set1_epi8((char)0x80)) : q;
    } else {
        __m256i a = _mm256_loadu_si256((const __m256i *)(w + 34 * p + 2));
        __m256i b = _mm256_loadu_si256((const __m256i *)(w + 34 * (p + 4) + 2));
        __m512i v = _mm512_inserti64x4(_mm512_zextsi256_si512(_mm256_permute2x128_si256(a, b, 0x20)),
                                       _mm256_permute2x128_si256(a, b, 0x31), 1);
        return _mm512_xor_si512(v, _mm512_set1_epi8((char)0x80));
    }
}


/* ---- The blocks of 32 (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4) with 16 rows in the lanes ----
   Kernels that keep each block's sum spread over 8 lanes of its row (as the AVX2 ones do) scale
   it lane by lane: a convert, a permute and an FMA for every vpdpbusd, so that the instruction
   the product is built on gets a small share of the cycles. Here a zmm lane is a row: the tile's
   16 rows' quants for one block are transposed once into 8 registers of 4 bytes a lane (word j:
   elements 4j .. 4j + 3, unsigned: Q4_0's and Q4_1's nibbles as they are, Q5_0's and Q5_1's
   with their fifth bits, MXFP4's through its table plus 12, Q8_0's bytes and IQ4_NL's values
   plus 128), each token's block meets them in 8 vpdpbusd against its words broadcast, starting
   from minus the offset's term (k sum x, swa__offset_of), which leaves every row's exact sum
   S_b of q x in its lane (q as the format has it: Q5_0's less 16, Q4_1's and Q5_1's without
   their m); then one convert and one FMA per block and token serve 16 rows, and for Q4_1 and
   Q5_1 a second FMA adds m times d_x sum x. A (row, token) pair's order is therefore
   acc = fma(S_b, d_w d_x, acc), then acc = fma(m_w, d_x sum_b x, acc) where the type has m
   (each product rounded), block after block from 0, the same whatever the tile's rows and
   tokens, and the same in the one-row dot below: generation and a prompt chunk give the same
   bits. Against the reference (which rounds d_w d_x S_b before adding) it is within the AVX2
   grouped kernels' tolerance. The tile takes up to 12 tokens: the transposition is paid once
   for all of them, and 12 accumulators, 8 registers of quants and the scales fit the 32
   registers. */
#define SWA__LANES 16

/* 16 bytes at offset `at` of the 16 rows at rows[r] as 4 registers, r[m] lane i = bytes 4m ..
   4m + 3 of row i. */
SWA__AVX512 SWA__INLINE void swa__lanes_transpose_avx512(const uint8_t *const *rows, size_t at, __m512i r[4])
{
    const __m512i lo = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29);
    const __m512i hi = _mm512_setr_epi32(2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31);
    const __m512i first = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23);
    const __m512i second = _mm512_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31);
    __m512i z[4], a01, a23, b01, b23;
    int g;
    SWA__UNROLL(4)
    for (g = 0; g < 4; g++) {   /* z[g]: rows 4g .. 4g + 3, one per 128-bit lane */
        __m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(rows[4 * g] + at)));
        v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(rows[4 * g + 1] + at)), 1);
        v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(rows[4 * g + 2] + at)), 2);
        z[g] = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(rows[4 * g + 3] + at)), 3);
    }
    /* a01: word 0 of rows 0-7 then word 1; a23: words 2 and 3; b01, b23 the same for rows 8-15 */
    a01 = _mm512_permutex2var_epi32(z[0], lo, z[1]);
    a23 = _mm512_permutex2var_epi32(z[0], hi, z[1]);
    b01 = _mm512_permutex2var_epi32(z[2], lo, z[3]);
    b23 = _mm512_permutex2var_epi32(z[2], hi, z[3]);
    r[0] = _mm512_permutex2var_epi32(a01, first, b01);
    r[1] = _mm512_permutex2var_epi32(a01, second, b01);
    r[2] = _mm512_permutex2var_epi32(a23, first, b23);
    r[3] = _mm512_permutex2var_epi32(a23, second, b23);
}

/* Q5_0's and Q5_1's fifth bits onto the nibbles in q (as swa__lanes_unpack_avx512 has them):
   byte j of a row's 32-bit word holds elements 8 j .. 8 j + 7's, the low nibble's bits for
   q[2 j] and the high nibble's for q[2 j + 1]. */
SWA__AVX512 SWA__INLINE void swa__lanes_fifth_bits_avx512(const uint8_t *const *rows, size_t at, __m512i q[8])
{
    const __m512i words = _mm512_broadcast_i32x4(_mm_setr_epi32(0, 0x04040404, 0x08080808, 0x0c0c0c0c));
    const __m512i sixteen = _mm512_set1_epi8(16);
    uint32_t h[SWA__LANES];
    __m512i bits;
    int j;
    SWA__UNROLL(16)
    for (j = 0; j < SWA__LANES; j++) h[j] = swa__load_le32(rows[j] + at);
    bits = _mm512_loadu_si512(h);
    SWA__UNROLL(4)
    for (j = 0; j < 4; j++) {   /* byte j of each lane's word in all 4 of its bytes */
        const __m512i v = _mm512_shuffle_epi8(bits, _mm512_add_epi8(words, _mm512_set1_epi8((char)j)));
        q[2 * j] = _mm512_mask_add_epi8(q[2 * j], _mm512_test_epi8_mask(v, _mm512_set1_epi32(0x08040201)), q[2 * j], sixteen);
        q[2 * j + 1] = _mm512_mask_add_epi8(q[2 * j + 1], _mm512_test_epi8_mask(v, _mm512_set1_epi32((int)0x80402010u)),
                                            q[2 * j + 1], sixteen);
    }
}

/* Block b's quants of the 16 rows at rows[r] (a row may repeat, past the tile's last) as 8
   registers, q[j] lane r = elements 4j .. 4j + 3 of row r as unsigned bytes, their 16 scales,
   and (Q4_1, Q5_1) their m in *mw. */
SWA__AVX512 SWA__INLINE __m512 swa__lanes_unpack_avx512(const uint8_t *const *rows, int64_t b,
                                                       __m512i q[8], __m512 *mw, const uint32_t type)
{
    const size_t at = (size_t)b * (size_t)swa__types[type].block_bytes;
    const int8_t *table = swa__group_table(type);
    const __m512i flip = _mm512_set1_epi8(swa__signed_quants(type) ? (char)0x80 : 0);
    __m512i r[4];
    int m;
    swa__lanes_transpose_avx512(rows, at + (size_t)swa__b32_qs_at(type), r);
    if (type != SWA_TYPE_Q8_0) {   /* nibbles, as they are or through a table */
        SWA__UNROLL(4)
        for (m = 0; m < 4; m++) {   /* bytes 4m .. 4m + 3 hold elements 4m .. and 16 + 4m .. */
            q[m] = _mm512_and_si512(r[m], _mm512_set1_epi8(15));
            q[4 + m] = _mm512_and_si512(_mm512_srli_epi16(r[m], 4), _mm512_set1_epi8(15));
        }
        if (table) {   /* the table's values made unsigned once, not each value */
            const __m512i values = _mm512_xor_si512(_mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)table)), flip);
            SWA__UNROLL(8)
            for (m = 0; m < 8; m++) q[m] = _mm512_shuffle_epi8(values, q[m]);
        }
        if (swa__b32_has_qh(type)) swa__lanes_fifth_bits_avx512(rows, at + (size_t)swa__b32_qs_at(type) - 4, q);
    } else {
        SWA__UNROLL(4)
        for (m = 0; m < 4; m++) q[m] = _mm512_xor_si512(r[m], flip);
        swa__lanes_transpose_avx512(rows, at + 18, r);
        SWA__UNROLL(4)
        for (m = 0; m < 4; m++) q[4 + m] = _mm512_xor_si512(r[m], flip);
    }
    if (type == SWA_TYPE_MXFP4) {   /* E8M0 scales */
        float d[SWA__LANES];
        SWA__UNROLL(16)
        for (m = 0; m < SWA__LANES; m++) d[m] = swa__e8m0_half(rows[m][at]);
        return _mm512_loadu_ps(d);
    } else {   /* the f16 scale and what follows it (Q4_1's and Q5_1's m): one 32-bit load a row */
        uint32_t dm[SWA__LANES];
        __m512i v;
        SWA__UNROLL(16)
        for (m = 0; m < SWA__LANES; m++) dm[m] = swa__load_le32(rows[m] + at);
        v = _mm512_loadu_si512(dm);
        if (swa__b32_has_min(type)) *mw = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(v, 16)));
        return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(v));
    }
}

/* One token's block b against the unpacked rows, into acc. */
SWA__AVX512 SWA__INLINE __m512 swa__lanes_step_avx512(const __m512i q[8], __m512 dw, __m512 mw, const swa__q8g *a, int64_t b,
                                                     __m512 acc, const uint32_t type)
{
    const int8_t *lo = swa__q8g_half(a, b, 0), *hi = swa__q8g_half(a, b, 1);
    __m512i s = _mm512_set1_epi32(-swa__offset_of(type, a[b / 8].sum8[b % 8]));
    int j;
    SWA__UNROLL(4)
    for (j = 0; j < 4; j++) {
        s = _mm512_dpbusd_epi32(s, q[j], _mm512_set1_epi32((int)swa__load_u32((const uint8_t *)lo + 4 * j)));
        s = _mm512_dpbusd_epi32(s, q[4 + j], _mm512_set1_epi32((int)swa__load_u32((const uint8_t *)hi + 4 * j)));
    }
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(dw, _mm512_set1_ps(a[b / 8].d[b % 8])), acc);
    return swa__b32_has_min(type) ? _mm512_fmadd_ps(mw, _mm512_set1_ps(swa__block_dsum(a, b)), acc) : acc;
}

/* The 16 rows are 16 streams the hardware prefetcher does not follow: each time a tile's
   column offset enters a new line, the next tile's 16 lines at that offset are fetched into L2
   (a tile later they are read), or with one token on long rows, these rows' lines further on,
   as the float tiles do. */
SWA__AVX512 SWA__INLINE void swa__lanes_prefetch_avx512(const uint8_t *w, size_t w_stride, size_t offset, size_t row_bytes,
                                                       int tokens)
{
    uintptr_t p = (uintptr_t)w + SWA__LANES * w_stride + offset;
    int r;
    if (tokens == 1 && row_bytes >= SWA__PREFETCH_ROWS_FROM) {
        swa__prefetch_rows_ahead(w, w_stride, SWA__LANES, offset);
        return;
    }
    SWA__UNROLL(16)
    for (r = 0; r < SWA__LANES; r++) _mm_prefetch((const char *)(p + (size_t)r * w_stride), _MM_HINT_T1);
}

/* Up to 16 rows x T <= SWA__TILE_MAX_TOKENS tokens (T and the type constants after inlining). */
SWA__AVX512 SWA__INLINE void swa__lanes_tile_avx512(const uint8_t *const *rows, size_t w_stride, int nr,
                                                   const uint8_t *x, size_t x_stride, int64_t n, float *y, int64_t ldy,
                                                   const uint32_t type, const int T)
{
    const size_t block_bytes = (size_t)swa__types[type].block_bytes, row_bytes = (size_t)(n / 32) * block_bytes;
    __m512 acc[SWA__TILE_MAX_TOKENS], dw, mw = _mm512_setzero_ps();
    __m512i q[8];
    int64_t b;
    int t;
    SWA__UNROLL(12)
    for (t = 0; t < T; t++) acc[t] = _mm512_setzero_ps();
    for (b = 0; b < n / 32; b++) {
        const size_t at = (size_t)b * block_bytes;
        if (at % 64 < block_bytes) swa__lanes_prefetch_avx512(rows[0], w_stride, at - at % 64, row_bytes, T);
        dw = swa__lanes_unpack_avx512(rows, b, q, &mw, type);
        SWA__UNROLL(12)
        for (t = 0; t < T; t++)
            acc[t] = swa__lanes_step_avx512(q, dw, mw, (const swa__q8g *)(x + (size_t)t * x_stride), b, acc[t], type);
    }
    SWA__UNROLL(12)
    for (t = 0; t < T; t++) _mm512_mask_storeu_ps(y + t * ldy, (__mmask16)((1u << nr) - 1u), acc[t]);
}

SWA__AVX512 SWA__INLINE void swa__dots_lanes_avx512(const void *w, size_t w_stride, int nr, const void *x, size_t x_stride,
                                                   int nt, int64_t n, float *y, int64_t ldy, const uint32_t type)
{
    const uint8_t *rows[SWA__LANES], *xb = (const uint8_t *)x;
    int r;
    for (r = 0; r < SWA__LANES; r++)   /* lanes past the tile's rows repeat its last */
        rows[r] = (const uint8_t *)w + (size_t)(r < nr ? r : nr - 1) * w_stride;
    switch (nt) {   /* the tokens, a constant in the kernel each case picks */
    case 1: swa__lanes_tile_avx512(rows, w_stride, nr, xb, x_stride, n, y, ldy, type, 1); break;
    case 2: swa__lanes_tile_avx512(rows, w_stride, nr, xb, x_stride, n, y, ldy, type, 2); break;
    case 3: swa__lanes_tile_avx512(rows, w_stride, nr, xb, x_stride, n, y, ldy, type, 3); break;
    case 4: swa__lanes_tile_avx512(rows, w_stride, nr, xb, x_stride, n, y, ldy, type, 4); break;
    case 5: swa__lanes_tile_avx512(rows, w_stride, nr, xb, x_stride, n, y, ldy, type, 5); break;
    case 6: swa__lanes_tile_avx512(rows, w_stride, nr, xb, x_stride, n, y, ldy, type, 6); break;
    case 7: swa__lanes_tile_avx512(rows, w_stride, nr, xb, x_stride, n, y, ldy, type, 7); break;
    case 8: swa__lanes_tile_avx512(rows, w_stride, nr, xb, x_stride, n, y, ldy, type, 8); break;
    case 9: swa__lanes_tile_avx512(rows, w_stride, nr, xb, x_stride, n, y, ldy, type, 9); break;
    case 10: swa__lanes_tile_avx512(rows, w_stride, nr, xb, x_stride, n, y, ldy, type, 10); break;
    case 11: swa__lanes_tile_avx512(rows, w_stride, nr, xb, x_stride, n, y, ldy, type, 11); break;
    default: swa__lanes_tile_avx512(rows, w_stride, nr, xb, x_stride, n, y, ldy, type, 12); break;
    }
}

/* One row and one token in the same order, block by block. */
SWA__AVX512 SWA__INLINE float swa__dot_lanes_avx512(const void *row, const void *x, int64_t n, const uint32_t type)
{
    const uint8_t *w = (const uint8_t *)row;
    const swa__q8g *a = (const swa__q8g *)x;
    const size_t block_bytes = (size_t)swa__types[type].block_bytes;
    __m128 acc = _mm_setzero_ps();
    int64_t b;
    for (b = 0; b < n / 32; b++, w += block_bytes) {
        __m256i q = swa__block_avx2(w, type);
        int32_t s;
        __m128 ds;
        if (swa__signed_quants(type)) q = _mm256_xor_si256(q, _mm256_set1_epi8((char)0x80));
        s = swa__hsum_epi32_avx2(_mm256_dpbusd_epi32(_mm256_setzero_si256(), q, swa__block_x_avx2(a, b))) -
            swa__offset_of(type, a[b / 8].sum8[b % 8]);
        ds = _mm_mul_ss(_mm_set_ss(swa__block_scale_avx2(w, type)), _mm_set_ss(a[b / 8].d[b % 8]));
        acc = _mm_fmadd_ss(_mm_set_ss((float)s), ds, acc);
        if (swa__b32_has_min(type))
            acc = _mm_fmadd_ss(_mm_set_ss(_cvtsh_ss(swa__load_u16(w + 2))), _mm_set_ss(swa__block_dsum(a, b)), acc);
    }
    return _mm_cvtss_f32(acc);
}

/* Each type's tiles and dot: the kernels above with the type a constant. */
#define SWA__LANES_AVX512(stem, type)                                                                                 \
    SWA__AVX512 static void swa__dots_##stem##_lanes_avx512(const void *w, size_t w_stride, int nr, const void *x,  \
                                                            size_t x_stride, int nt, int64_t n, float *y, int64_t ldy) \
    {                                                                                                                 \
        swa__dots_lanes_avx512(w, w_stride, nr, x, x_stride, nt, n, y, ldy, type);                                   \
    }                                                                                                                 \
    SWA__AVX512 static float swa__dot_##stem##_lanes_avx512(const void *row, const void *x, int64_t n)              \
    {                                                                                                                 \
        return swa__dot_lanes_avx512(row, x, n, type);                                                                \
    }
SWA__LANES_AVX512(q4_0, SWA_TYPE_Q4_0)
SWA__LANES_AVX512(q4_1, SWA_TYPE_Q4_1)
SWA__LANES_AVX512(q5_0, SWA_TYPE_Q5_0)
SWA__LANES_AVX512(q5_1, SWA_TYPE_Q5_1)
SWA__LANES_AVX512(q8_0, SWA_TYPE_Q8_0)
SWA__LANES_AVX512(iq4_nl, SWA_TYPE_IQ4_NL)
SWA__LANES_AVX512(mxfp4, SWA_TYPE_MXFP4)
#undef SWA__LANES_AVX512

/* ---- K-quants against swa__q8k super-blocks ----
   A register of weights holds 64 elements in order, as unsigned bytes; maddubs gives the
   16-bit sums of their pairs of products, and vpdpwssd multiplies those by the scales of their
   sub-blocks (spread to the 16-bit lanes by one word permute per register, once per
   super-block) and adds them up in 32-bit lanes: a super-block's integers stay exact. */

/* Index patterns for vpermw: [0 x 16 | 1 x 16] and [0 x 8 | 1 x 8 | 2 x 8 | 3 x 8]. */
static const int16_t swa__spread16[32] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                          1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
static const int16_t swa__spread8[32] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                         2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3};

/* int16 scales s[first + pattern[i]] in lane i. */
SWA__AVX512 SWA__INLINE __m512i swa__spread_avx512(__m512i s, const int16_t *pattern, int first)
{
    return _mm512_permutexvar_epi16(_mm512_add_epi16(_mm512_loadu_si512(pattern), _mm512_set1_epi16((short)first)), s);
}

/* A super-block's 256 weights in 4 registers of 64 and their scales spread to match. */
typedef struct swa__kquant_avx512 {
    __m512i q0, q1, q2, q3, s0, s1, s2, s3;
} swa__kquant_avx512;

/* One token's 256 products, the scales applied, in 8 lanes. */
SWA__AVX512 SWA__INLINE __m256i swa__kquant_sums_avx512(const swa__kquant_avx512 *u, const int8_t *x)
{
    __m512i acc = _mm512_dpwssd_epi32(_mm512_setzero_si512(), _mm512_maddubs_epi16(u->q0, _mm512_loadu_si512(x)), u->s0);
    acc = _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(u->q1, _mm512_loadu_si512(x + 64)), u->s1);
    acc = _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(u->q2, _mm512_loadu_si512(x + 128)), u->s2);
    acc = _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(u->q3, _mm512_loadu_si512(x + 192)), u->s3);
    return _mm256_add_epi32(_mm512_castsi512_si256(acc), _mm512_extracti64x4_epi64(acc, 1));
}

/* Q4_K and Q5_K (layouts at swa__q4k_scales and swa__dot_q5_k_ref): register g holds group
   g, sub-block 2g's low nibbles then 2g + 1's high ones (with Q5_K's fifth bits from qh). The
   mins meet the activations' 16-element sums, and sums and mins share one hadd and one FMA,
   as in the AVX2 kernel. */
typedef struct swa__q4k_avx512 {
    swa__kquant_avx512 k;
    __m256i mins16;   /* -m[j] for bsum[2 j] and bsum[2 j + 1] */
    __m256 d_dmin;    /* [d d dmin dmin] in each 128-bit lane */
} swa__q4k_avx512;

SWA__AVX512 SWA__INLINE __m512i swa__q4k_group_avx512(const uint8_t *w, int g)
{
    __m256i v = _mm256_loadu_si256((const __m256i *)(w + 16 + 32 * g));
    return _mm512_and_si512(_mm512_inserti64x4(_mm512_zextsi256_si512(v), _mm256_srli_epi16(v, 4), 1), _mm512_set1_epi8(15));
}

SWA__AVX512 SWA__INLINE __m512i swa__q5k_group_avx512(const uint8_t *w, int g)
{
    __m256i v = _mm256_loadu_si256((const __m256i *)(w + 48 + 32 * g)), qh = _mm256_loadu_si256((const __m256i *)(w + 16));
    __m512i q = _mm512_inserti64x4(_mm512_zextsi256_si512(v), _mm256_srli_epi16(v, 4), 1);
    __m512i h = _mm512_inserti64x4(_mm512_zextsi256_si512(_mm256_srli_epi16(qh, 2 * g)), _mm256_srli_epi16(qh, 2 * g + 1), 1);
    return _mm512_or_si512(_mm512_and_si512(q, _mm512_set1_epi8(15)), _mm512_slli_epi16(_mm512_and_si512(h, _mm512_set1_epi8(1)), 4));
}

SWA__AVX512 SWA__INLINE void swa__q4k_unpack_avx512(const uint8_t *w, uint32_t type, swa__q4k_avx512 *u)
{
    const __m128i twice = _mm_setr_epi8(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15);
    __m128i scales_mins = swa__q4k_scales_avx2(w + 4);
    __m512i sc16 = _mm512_zextsi256_si512(_mm256_cvtepu8_epi16(scales_mins));
    u->k.q0 = type == SWA_TYPE_Q4_K ? swa__q4k_group_avx512(w, 0) : swa__q5k_group_avx512(w, 0);
    u->k.q1 = type == SWA_TYPE_Q4_K ? swa__q4k_group_avx512(w, 1) : swa__q5k_group_avx512(w, 1);
    u->k.q2 = type == SWA_TYPE_Q4_K ? swa__q4k_group_avx512(w, 2) : swa__q5k_group_avx512(w, 2);
    u->k.q3 = type == SWA_TYPE_Q4_K ? swa__q4k_group_avx512(w, 3) : swa__q5k_group_avx512(w, 3);
    u->k.s0 = swa__spread_avx512(sc16, swa__spread16, 0);
    u->k.s1 = swa__spread_avx512(sc16, swa__spread16, 2);
    u->k.s2 = swa__spread_avx512(sc16, swa__spread16, 4);
    u->k.s3 = swa__spread_avx512(sc16, swa__spread16, 6);
    u->mins16 = _mm256_sub_epi16(_mm256_setzero_si256(), _mm256_cvtepu8_epi16(_mm_shuffle_epi8(scales_mins, twice)));
    u->d_dmin = swa__d_dmin_avx2(swa__load_u32(w));
}

/* Q6_K (layout at swa__q6k_unpack): half h's 64 low-nibble bytes give elements 0..63 of the
   half in their low nibbles and 64..127 in their high ones; the two high bits come from qh,
   2 bits per 32 elements. The quants are 0..63 here and the -32 comes back through the
   activations' 16-element sums. */
typedef struct swa__q6k_avx512 {
    swa__kquant_avx512 k;
    __m256i sc16;     /* the 16 scales as int16, for the offset */
    float d;
} swa__q6k_avx512;

/* Elements 64 j .. 64 j + 63 of a Q6_K super-block as 0..63. */
SWA__AVX512 SWA__INLINE __m512i swa__q6k_quarter_avx512(const uint8_t *w, int j)
{
    const __m512i low4 = _mm512_set1_epi8(15), low2 = _mm512_set1_epi8(3);
    __m512i l = _mm512_loadu_si512(w + 64 * (j / 2));
    __m256i qh = _mm256_loadu_si256((const __m256i *)(w + 128 + 32 * (j / 2)));
    int shift = 4 * (j % 2);   /* quarters 0,1 of the half: qh bits 0-3; 2,3: bits 4-7 */
    __m512i high = _mm512_inserti64x4(_mm512_zextsi256_si512(_mm256_srli_epi16(qh, shift)), _mm256_srli_epi16(qh, shift + 2), 1);
    if (j % 2) l = _mm512_srli_epi16(l, 4);
    return _mm512_or_si512(_mm512_and_si512(l, low4), _mm512_slli_epi16(_mm512_and_si512(high, low2), 4));
}

SWA__AVX512 SWA__INLINE void swa__q6k_unpack_avx512(const uint8_t *w, swa__q6k_avx512 *u)
{
    __m512i s;
    u->k.q0 = swa__q6k_quarter_avx512(w, 0);
    u->k.q1 = swa__q6k_quarter_avx512(w, 1);
    u->k.q2 = swa__q6k_quarter_avx512(w, 2);
    u->k.q3 = swa__q6k_quarter_avx512(w, 3);
    u->sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w + 192)));
    s = _mm512_zextsi256_si512(u->sc16);
    u->k.s0 = swa__spread_avx512(s, swa__spread8, 0);
    u->k.s1 = swa__spread_avx512(s, swa__spread8, 4);
    u->k.s2 = swa__spread_avx512(s, swa__spread8, 8);
    u->k.s3 = swa__spread_avx512(s, swa__spread8, 12);
    u->d = _cvtsh_ss(swa__load_u16(w + 208));
}


/* ---- Q4_K and Q5_K: one order for dots and products ----
   Per super-block, two exact integers: S = sum_j sc_j sum q a over the sub-blocks j, and M =
   -sum_j m_j B_j, B_j being the activations' sum over sub-block j; each is FMA'd into its own
   float lane, S with d * a.d and M with dmin * a.d, and the result is S's lane plus M's. The
   dots reach S and M by the steps above and two more integer adds; the products
   (swa__gemm_k_avx512, and the AMX set's tiles) reach the same integers their own ways, so a
   token's result does not depend on how many others share its batch. */

/* A token's 8 lanes of M's parts. */
SWA__AVX512 SWA__INLINE __m256i swa__kmin_mins_avx512(const swa__q4k_avx512 *u, const swa__q8k *a)
{
    return _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)a->bsum), u->mins16);
}

/* One token's super-block: [S, S, M, M] into [d d dmin dmin] * a.d. */
SWA__AVX512 SWA__INLINE __m128 swa__kmin_step_avx512(const swa__q4k_avx512 *u, const swa__q8k *a, __m128 acc)
{
    __m256i sums = swa__kquant_sums_avx512(&u->k, a->q), mins = swa__kmin_mins_avx512(u, a);
    __m256i parts = _mm256_add_epi32(_mm256_unpacklo_epi64(sums, mins), _mm256_unpackhi_epi64(sums, mins));
    __m128i sm = _mm_add_epi32(_mm256_castsi256_si128(parts), _mm256_extracti128_si256(parts, 1));   /* [s s m m] */
    sm = _mm_add_epi32(sm, _mm_shuffle_epi32(sm, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_fmadd_ps(_mm_mul_ps(_mm256_castps256_ps128(u->d_dmin), _mm_set1_ps(a->d)), _mm_cvtepi32_ps(sm), acc);
}

/* The same for 2-4 tokens at once (a missing token's sums zero), their reductions shared:
   acc = [S0 S1 S2 S3 M0 M1 M2 M3] into [d x 4, dmin x 4] * [a.d of each token] x 2. Written
   out token by token: GCC keeps arrays of registers in memory at -O2. */
SWA__AVX512 SWA__INLINE __m256 swa__kmin_step4_avx512(const swa__q4k_avx512 *u, const swa__q8k *a0, const swa__q8k *a1,
                                                      const swa__q8k *a2, const swa__q8k *a3, int nt, __m256 acc)
{
    const __m256i zero = _mm256_setzero_si256();
    __m256i s0 = swa__kquant_sums_avx512(&u->k, a0->q), m0 = swa__kmin_mins_avx512(u, a0);
    __m256i s1 = swa__kquant_sums_avx512(&u->k, a1->q), m1 = swa__kmin_mins_avx512(u, a1);
    __m256i s2 = nt > 2 ? swa__kquant_sums_avx512(&u->k, a2->q) : zero, m2 = nt > 2 ? swa__kmin_mins_avx512(u, a2) : zero;
    __m256i s3 = nt > 3 ? swa__kquant_sums_avx512(&u->k, a3->q) : zero, m3 = nt > 3 ? swa__kmin_mins_avx512(u, a3) : zero;
    __m128 ad = _mm_setr_ps(a0->d, a1->d, nt > 2 ? a2->d : 0.0f, nt > 3 ? a3->d : 0.0f);
    __m256i s = _mm256_hadd_epi32(_mm256_hadd_epi32(s0, s1), _mm256_hadd_epi32(s2, s3));   /* [lo of t | hi of t] */
    __m256i m = _mm256_hadd_epi32(_mm256_hadd_epi32(m0, m1), _mm256_hadd_epi32(m2, m3));
    s = _mm256_add_epi32(_mm256_permute2x128_si256(s, m, 0x20), _mm256_permute2x128_si256(s, m, 0x31));
    return _mm256_fmadd_ps(_mm256_mul_ps(_mm256_permutevar8x32_ps(u->d_dmin, _mm256_setr_epi32(0, 0, 0, 0, 2, 2, 2, 2)),
                                         _mm256_set_m128(ad, ad)), _mm256_cvtepi32_ps(s), acc);
}

/* A row against up to 4 tokens; generation (one token) in a loop of its own. */
SWA__AVX512 SWA__INLINE void swa__row_dots_kmin_avx512(const void *row, const void *x, size_t stride, int nt, int64_t n,
                                                       float *out, const uint32_t type)
{
    const int unit = (int)swa__types[type].block_bytes;
    const uint8_t *w = (const uint8_t *)row, *xa = (const uint8_t *)x;
    const swa__q8k *a0 = (const swa__q8k *)xa, *a1 = (const swa__q8k *)(xa + stride);
    const swa__q8k *a2 = (const swa__q8k *)(xa + (nt > 2 ? 2 : 0) * stride), *a3 = (const swa__q8k *)(xa + (nt > 3 ? 3 : 0) * stride);
    __m128 c = _mm_setzero_ps();
    __m256 c4 = _mm256_setzero_ps();
    swa__q4k_avx512 u;
    float sums[4];
    int64_t i;
    int t;
    for (i = 0; nt == 1 && i < n / 256; i++, w += unit) {
        swa__prefetch_unit(w, unit);
        swa__q4k_unpack_avx512(w, type, &u);
        c = swa__kmin_step_avx512(&u, a0 + i, c);
    }
    for (i = 0; nt > 1 && i < n / 256; i++, w += unit) {
        swa__prefetch_unit(w, unit);
        swa__q4k_unpack_avx512(w, type, &u);
        c4 = swa__kmin_step4_avx512(&u, a0 + i, a1 + i, a2 + i, a3 + i, nt, c4);
    }
    if (nt == 1) {
        out[0] = _mm_cvtss_f32(_mm_add_ss(c, _mm_movehl_ps(c, c)));   /* S's lane plus M's */
        return;
    }
    _mm_storeu_ps(sums, _mm_add_ps(_mm256_castps256_ps128(c4), _mm256_extractf128_ps(c4, 1)));
    for (t = 0; t < nt; t++) out[t] = sums[t];
}

SWA__NEW_TYPE(SWA__AVX512, swa__row_dots_q4_k_avx512, swa__dots_q4_k_avx512, swa__dot_q4_k_avx512, swa__row_dots_kmin_avx512, SWA_TYPE_Q4_K)
SWA__NEW_TYPE(SWA__AVX512, swa__row_dots_q5_k_avx512, swa__dots_q5_k_avx512, swa__dot_q5_k_avx512, swa__row_dots_kmin_avx512, SWA_TYPE_Q5_K)

/* ---- Q6_K and IQ4_XS: one exact integer a super-block ----
   S = sum_j sc_j sum q a over the super-block's sub-blocks j, FMA'd with d * a.d into one lane
   per token: Q6_K's 16 sub-blocks of q - 32, IQ4_XS's 8 of IQ4_NL values (sc_j its 6-bit
   scale less 32). The products (swa__gemm_k_avx512, and the AMX
   set's tiles) give these same bits. */

/* IQ4_XS (d, scales_h: 2 high bits a sub-block, scales_l: 4 low bits a sub-block, then 16
   bytes a sub-block of 32, its first 16 elements in the low nibbles): the values enter
   vpdpbusd as unsigned bytes, value + 128, and 128 times the activations' sums come off. */
typedef struct swa__iq4xs_avx512 {
    __m512i q[4];      /* elements 64 c .. 64 c + 63, value + 128 */
    __m512i sc[4];     /* sub-block 2 c's scale in lanes 0-7, 2 c + 1's in lanes 8-15 */
    __m256i sc_pairs;  /* scale j as the two int16 of lane j, for bsum[2 j] and bsum[2 j + 1] */
    float d;
} swa__iq4xs_avx512;

/* Super-block w's 8 scales less 32, sc_j in lane j. */
SWA__AVX512 SWA__INLINE __m256i swa__iq4xs_scales_avx512(const uint8_t *w)
{
    const __m256i j = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i lo = _mm256_srlv_epi32(_mm256_set1_epi32((int)swa__load_u32(w + 4)), _mm256_slli_epi32(j, 2));
    const __m256i hi = _mm256_srlv_epi32(_mm256_set1_epi32((int)swa__load_u16(w + 2)), _mm256_slli_epi32(j, 1));
    return _mm256_sub_epi32(_mm256_or_si256(_mm256_and_si256(lo, _mm256_set1_epi32(15)),
                                            _mm256_slli_epi32(_mm256_and_si256(hi, _mm256_set1_epi32(3)), 4)),
                            _mm256_set1_epi32(32));
}

/* Elements 64 c .. 64 c + 63 of super-block w as IQ4_NL values: the nibbles of qs[32 c ..
   32 c + 31], sub-block 2 c's low then high ones, then 2 c + 1's. */
SWA__AVX512 SWA__INLINE __m512i swa__iq4xs_chunk_avx512(const uint8_t *w, int c)
{
    const __m512i z = _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(w + 8 + 32 * c)));
    __m512i v = _mm512_shuffle_i64x2(z, z, _MM_SHUFFLE(1, 1, 0, 0));
    v = _mm512_mask_srli_epi16(v, 0xff00ff00u, v, 4);   /* bytes 16-31 and 48-63: the high nibbles */
    return _mm512_shuffle_epi8(_mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)swa__iq4nl_values)),
                               _mm512_and_si512(v, _mm512_set1_epi8(15)));
}

SWA__AVX512 SWA__INLINE void swa__iq4xs_unpack_avx512(const uint8_t *w, swa__iq4xs_avx512 *u)
{
    const __m256i sc = swa__iq4xs_scales_avx512(w);
    const __m512i sc16 = _mm512_castsi256_si512(sc), half = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
    int c;
    for (c = 0; c < 4; c++) {
        u->q[c] = _mm512_xor_si512(swa__iq4xs_chunk_avx512(w, c), _mm512_set1_epi8((char)0x80));
        u->sc[c] = _mm512_permutexvar_epi32(_mm512_add_epi32(half, _mm512_set1_epi32(2 * c)), sc16);
    }
    u->sc_pairs = _mm256_or_si256(_mm256_and_si256(sc, _mm256_set1_epi32(0xffff)), _mm256_slli_epi32(sc, 16));
    u->d = _cvtsh_ss(swa__load_u16(w));
}

/* Lanes whose sum is S for the token at a. vpdpbusd's lanes 0-7 hold sub-block 2 c's products,
   8-15 sub-block 2 c + 1's: scaled lane by lane, then the halves added. Within int32: a lane
   of a chunk is at most 4 * 241 * 127, times 32, four chunks and two halves. */
SWA__AVX512 SWA__INLINE __m256i swa__iq4xs_parts_avx512(const swa__iq4xs_avx512 *u, const swa__q8k *a)
{
    __m512i t = _mm512_setzero_si512();
    __m256i offset = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)a->bsum), u->sc_pairs);
    int c;
    for (c = 0; c < 4; c++)
        t = _mm512_add_epi32(t, _mm512_mullo_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), u->q[c], _mm512_loadu_si512(a->q + 64 * c)),
                                                   u->sc[c]));
    return _mm256_sub_epi32(_mm256_add_epi32(_mm512_castsi512_si256(t), _mm512_extracti64x4_epi64(t, 1)),
                            _mm256_slli_epi32(offset, 7));
}

/* Q6_K's lanes: S = sum_j sc_j sum (q - 32) a over the 16-element sub-blocks j (the step's 8
   lanes). */
SWA__AVX512 SWA__INLINE __m256i swa__q6k_parts_avx512(const swa__q6k_avx512 *u, const swa__q8k *a)
{
    __m256i offset = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)a->bsum), u->sc16);
    return _mm256_sub_epi32(swa__kquant_sums_avx512(&u->k, a->q), _mm256_slli_epi32(offset, 5));
}

/* Either type's super-block unpacked; type is a constant after inlining, and the other's part
   goes unused. */
typedef struct swa__exact_avx512 {
    swa__q6k_avx512 q6k;
    swa__iq4xs_avx512 iq4xs;
} swa__exact_avx512;

SWA__AVX512 SWA__INLINE float swa__exact_unpack_avx512(const uint8_t *w, uint32_t type, swa__exact_avx512 *u)
{
    if (type == SWA_TYPE_Q6_K) {
        swa__q6k_unpack_avx512(w, &u->q6k);
        return u->q6k.d;
    }
    swa__iq4xs_unpack_avx512(w, &u->iq4xs);
    return u->iq4xs.d;
}

SWA__AVX512 SWA__INLINE __m256i swa__exact_parts_avx512(const swa__exact_avx512 *u, uint32_t type, const swa__q8k *a)
{
    return type == SWA_TYPE_Q6_K ? swa__q6k_parts_avx512(&u->q6k, a) : swa__iq4xs_parts_avx512(&u->iq4xs, a);
}

/* A row against up to 4 tokens; generation (one token) in a loop of its own. */
SWA__AVX512 SWA__INLINE void swa__row_dots_exact_avx512(const void *row, const void *x, size_t stride, int nt, int64_t n,
                                                        float *out, const uint32_t type)
{
    const int unit = (int)swa__types[type].block_bytes;
    const uint8_t *w = (const uint8_t *)row, *xa = (const uint8_t *)x;
    const swa__q8k *a0 = (const swa__q8k *)xa, *a1 = (const swa__q8k *)(xa + stride);
    const swa__q8k *a2 = (const swa__q8k *)(xa + (nt > 2 ? 2 : 0) * stride), *a3 = (const swa__q8k *)(xa + (nt > 3 ? 3 : 0) * stride);
    const __m256i zero = _mm256_setzero_si256();
    __m128 c = _mm_setzero_ps();
    swa__exact_avx512 u;
    float sums[4], d;
    int64_t i;
    int t;
    for (i = 0; nt == 1 && i < n / 256; i++, w += unit) {
        __m256i p;
        __m128i s;
        swa__prefetch_unit(w, unit);
        d = swa__exact_unpack_avx512(w, type, &u);
        p = swa__exact_parts_avx512(&u, type, a0 + i);
        s = _mm_add_epi32(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
        c = _mm_fmadd_ss(_mm_set_ss(d * a0[i].d), _mm_cvtepi32_ps(s), c);
    }
    for (i = 0; nt > 1 && i < n / 256; i++, w += unit) {   /* 2-4 tokens: one reduction, S of token t in lane t */
        __m256i p0, p1, p2, p3, s;
        swa__prefetch_unit(w, unit);
        d = swa__exact_unpack_avx512(w, type, &u);
        p0 = swa__exact_parts_avx512(&u, type, a0 + i);
        p1 = swa__exact_parts_avx512(&u, type, a1 + i);
        p2 = nt > 2 ? swa__exact_parts_avx512(&u, type, a2 + i) : zero;
        p3 = nt > 3 ? swa__exact_parts_avx512(&u, type, a3 + i) : zero;
        s = _mm256_hadd_epi32(_mm256_hadd_epi32(p0, p1), _mm256_hadd_epi32(p2, p3));
        c = _mm_fmadd_ps(_mm_mul_ps(_mm_set1_ps(d), _mm_setr_ps(a0[i].d, a1[i].d, a2[i].d, a3[i].d)),
                         _mm_cvtepi32_ps(_mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1))), c);
    }
    _mm_storeu_ps(sums, c);
    for (t = 0; t < nt; t++) out[t] = sums[t];
}

SWA__NEW_TYPE(SWA__AVX512, swa__row_dots_iq4_xs_avx512, swa__dots_iq4_xs_avx512, swa__dot_iq4_xs_avx512, swa__row_dots_exact_avx512,
              SWA_TYPE_IQ4_XS)

SWA__NEW_TYPE(SWA__AVX512, swa__row_dots_q6_k_avx512, swa__dots_q6_k_avx512, swa__dot_q6_k_avx512, swa__row_dots_exact_avx512,
              SWA_TYPE_Q6_K)

/* Q2_K and Q3_K in the same orders: Q2_K's as Q4_K's (S and M, its 16 mins meeting the
   activations' 16-element sums), Q3_K's as Q6_K's (S alone; its M lane stays 0). The AVX2
   driver's steps give each token's scaled sums in 8 int32 lanes; they are added up exactly
   here, where that driver scaled them in floats lane by lane. */
SWA__AVX512 SWA__INLINE void swa__k16_rows_avx512(const void *row, const void *x, size_t stride, const int nt, int64_t n,
                                                  float *out, const uint32_t type)
{
    const int bytes = (int)swa__types[type].block_bytes;
    const uint8_t *w = (const uint8_t *)row;
    __m256 c = _mm256_setzero_ps();   /* [S lanes of tokens 0-3 | M lanes] */
    __m128 c1 = _mm_setzero_ps();     /* one token: [S S M M] */
    float sums[8];
    int64_t i;
    int t;
    for (i = 0; i < n / 256; i++, w += bytes) {
        const swa__kscales_avx2 k = swa__kscales_unpack_avx2(w, type);
        const swa__q8k *a[SWA__TILE_TOKENS];   /* tokens past nt stand in as token 0, their results unused */
        swa__tile_sums_avx2 sc;
        __m256i m0, m1, m2, m3, sm;
        swa__prefetch_unit(w, bytes);
        for (t = 0; t < SWA__TILE_TOKENS; t++) a[t] = (const swa__q8k *)((const uint8_t *)x + (size_t)(t < nt ? t : 0) * stride) + i;
        sc.t0 = sc.t1 = sc.t2 = sc.t3 = _mm256_setzero_si256();
        sc = swa__kblock_part_avx2(sc, w, 0, &k, a, nt, type);
        sc = swa__kblock_part_avx2(sc, w, 1, &k, a, nt, type);
        sc = swa__kblock_part_avx2(sc, w, 2, &k, a, nt, type);
        sc = swa__kblock_part_avx2(sc, w, 3, &k, a, nt, type);
        sc = swa__kblock_part_avx2(sc, w, 4, &k, a, nt, type);
        sc = swa__kblock_part_avx2(sc, w, 5, &k, a, nt, type);
        sc = swa__kblock_part_avx2(sc, w, 6, &k, a, nt, type);
        sc = swa__kblock_part_avx2(sc, w, 7, &k, a, nt, type);
        m0 = m1 = m2 = m3 = _mm256_setzero_si256();
        if (type == SWA_TYPE_Q2_K) {
            m0 = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)a[0]->bsum), k.neg_mn);
            if (nt > 1) m1 = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)a[1]->bsum), k.neg_mn);
            if (nt > 2) m2 = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)a[2]->bsum), k.neg_mn);
            if (nt > 3) m3 = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)a[3]->bsum), k.neg_mn);
        }
        if (nt == 1) {   /* [S S M M] into [d d dmin dmin] * a.d, as swa__kmin_step_avx512 */
            __m256i parts = _mm256_add_epi32(_mm256_unpacklo_epi64(sc.t0, m0), _mm256_unpackhi_epi64(sc.t0, m0));
            __m128i s1 = _mm_add_epi32(_mm256_castsi256_si128(parts), _mm256_extracti128_si256(parts, 1));
            s1 = _mm_add_epi32(s1, _mm_shuffle_epi32(s1, _MM_SHUFFLE(2, 3, 0, 1)));
            c1 = _mm_fmadd_ps(_mm_mul_ps(_mm256_castps256_ps128(k.d_dmin), _mm_set1_ps(a[0]->d)), _mm_cvtepi32_ps(s1), c1);
            continue;
        }
        sc.t0 = _mm256_hadd_epi32(_mm256_hadd_epi32(sc.t0, sc.t1), _mm256_hadd_epi32(sc.t2, sc.t3));   /* [lo of t | hi of t] */
        m0 = _mm256_hadd_epi32(_mm256_hadd_epi32(m0, m1), _mm256_hadd_epi32(m2, m3));
        sm = _mm256_add_epi32(_mm256_permute2x128_si256(sc.t0, m0, 0x20), _mm256_permute2x128_si256(sc.t0, m0, 0x31));
        {
            const __m128 ad = _mm_setr_ps(a[0]->d, a[1]->d, a[2]->d, a[3]->d);
            c = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_permutevar8x32_ps(k.d_dmin, _mm256_setr_epi32(0, 0, 0, 0, 2, 2, 2, 2)),
                                              _mm256_set_m128(ad, ad)), _mm256_cvtepi32_ps(sm), c);
        }
    }
    if (nt == 1) {
        out[0] = _mm_cvtss_f32(_mm_add_ss(c1, _mm_movehl_ps(c1, c1)));
        return;
    }
    _mm256_storeu_ps(sums, c);
    for (t = 0; t < nt; t++) out[t] = sums[t] + sums[4 + t];   /* S's lane plus M's */
}

/* Generation (one token) compiled apart, without the other tokens' steps. */
SWA__AVX512 SWA__INLINE void swa__row_dots_k16_avx512(const void *row, const void *x, size_t stride, int nt, int64_t n,
                                                      float *out, const uint32_t type)
{
    if (nt == 1) swa__k16_rows_avx512(row, x, stride, 1, n, out, type);
    else swa__k16_rows_avx512(row, x, stride, nt, n, out, type);
}

SWA__NEW_TYPE(SWA__AVX512, swa__row_dots_q2_k_avx512, swa__dots_q2_k_avx512, swa__dot_q2_k_avx512, swa__row_dots_k16_avx512, SWA_TYPE_Q2_K)
SWA__NEW_TYPE(SWA__AVX512, swa__row_dots_q3_k_avx512, swa__dots_q3_k_avx512, swa__dot_q3_k_avx512, swa__row_dots_k16_avx512, SWA_TYPE_Q3_K)

/* ---- Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and IQ4_XS products: tokens in the lanes ----
   A batch's tokens are packed 16 to a unit a super-block (swa__kunit): for each 4 elements,
   the 16 tokens' 4 bytes side by side in one register. vpdpbusd multiplies that register by
   4 bytes of one row broadcast from memory, so one load of tokens serves 8 rows and the rows
   need no transposing: they are unpacked once, 16 at a time, in order (swa__krow), for all the
   tokens. vpdpbusd wants the tokens unsigned: they are packed as a + 128, and the 128 times
   each row's sums this adds (a constant of the row's super-block) comes off. Each sub-block's
   sums are scaled in integers (vpmulld), so the super-block's S, and the mins' M, are the
   integers of the dots and meet the floats as there: the dots' bits exactly. */

/* Super-block s of 16 tokens. */
typedef struct swa__kunit {   /* swa__kpack's unit of 16 tokens */
    int8_t q[4][16][64];        /* quarter k's elements 4 i .. 4 i + 3: token t's at q[k][i][4 t] */
    int32_t pair_sums[4][16];   /* (B_2p, B_2p + 1) as two int16, B_j the sum of 32-element sub-block j */
    int32_t bsum_pairs[8][16];  /* (bsum_2p, bsum_2p + 1), the 16-element sums, as two int16 */
    float d[16];
} swa__kunit;

static void swa__kpack_avx512(const uint8_t *xq, size_t x_stride, int64_t n, int64_t n_in, void *out)
{
    swa__kpack(xq, x_stride, n, n_in, out, 16, 0x80);
}

SWA__AVX512 SWA__INLINE void swa__krow_unpack_avx512(const uint8_t *w, uint32_t type, swa__krow *u)
{
    int k;
    memset(u->sc, 0, sizeof u->sc);
    memset(u->mins, 0, sizeof u->mins);
    u->dmin = 0.0f;
    if (type == SWA_TYPE_Q2_K || type == SWA_TYPE_Q3_K || type == SWA_TYPE_IQ4_XS) {
        swa__krow_unpack_kblock(w, type, u);
    } else if (type == SWA_TYPE_Q6_K) {
        for (k = 0; k < 4; k++) _mm512_storeu_si512(u->q + 64 * k, _mm512_sub_epi8(swa__q6k_quarter_avx512(w, k), _mm512_set1_epi8(32)));
        _mm512_storeu_si512(u->sc, _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(w + 192))));
        u->d = _cvtsh_ss(swa__load_u16(w + 208));
    } else {
        const __m128i scales_mins = swa__q4k_scales_avx2(w + 4);   /* sc[0..7], m[0..7] */
        for (k = 0; k < 4; k++)
            _mm512_storeu_si512(u->q + 64 * k, type == SWA_TYPE_Q4_K ? swa__q4k_group_avx512(w, k) : swa__q5k_group_avx512(w, k));
        _mm256_storeu_si256((__m256i *)u->sc, _mm256_cvtepu8_epi32(scales_mins));
        _mm_storeu_si128((__m128i *)u->mins, _mm_sub_epi16(_mm_setzero_si128(), _mm_cvtepu8_epi16(_mm_srli_si128(scales_mins, 8))));
        u->d = _cvtsh_ss(swa__load_u16(w));
        u->dmin = _cvtsh_ss(swa__load_u16(w + 2));
    }
    swa__krow_offset(u, type);
}

/* 8 unpacked rows (row m's super-block s at u[16 s + m]) against one token group's units xg:
   out[16 m + t]. Integers within int32: a sub-block's sums are at most 32 * 255 * 127, and S
   at most 256 * 255 * 128 * 31 (Q5_K's quants times its scales, 31 * 63, are the largest). */
SWA__AVX512 SWA__INLINE void swa__kgroup_avx512(const swa__krow *u, const swa__kunit *xg, int64_t nsb, float *out, const uint32_t type)
{
    const int mins = type == SWA_TYPE_Q4_K || type == SWA_TYPE_Q5_K || type == SWA_TYPE_Q2_K;
    const int n_sub = 256 / swa__krow_sub(type), per = 64 / n_sub;
    const __m512i zero = _mm512_setzero_si512();
    __m512 rs[8], rm[8];
    __m512i acc[8], acc2[8], sv[8];
    int64_t s;
    int m, j, e;
    SWA__UNROLL(8)
    for (m = 0; m < 8; m++) rs[m] = rm[m] = _mm512_setzero_ps();
    for (s = 0; s < nsb; s++) {
        const swa__krow *row = u + 16 * s;
        const swa__kunit *x = xg + s;
        __m512 ad;
        SWA__UNROLL(8)
        for (m = 0; m < 8; m++) sv[m] = _mm512_set1_epi32(-row[m].offset);
        for (j = 0; j < n_sub; j += 2) {   /* two sub-blocks at once: 16 chains of vpdpbusd */
            const int8_t *b0 = x->q[0][0] + 64 * per * j, *b1 = b0 + 64 * per;   /* their first 4-element groups */
            SWA__UNROLL(8)
            for (e = 0; e < per; e++) {
                const __m512i t0 = _mm512_loadu_si512(b0 + 64 * e), t1 = _mm512_loadu_si512(b1 + 64 * e);
                SWA__UNROLL(8)
                for (m = 0; m < 8; m++) {
                    const uint8_t *q = (const uint8_t *)row[m].q + 4 * (per * j + e);
                    acc[m] = _mm512_dpbusd_epi32(e ? acc[m] : zero, t0, _mm512_set1_epi32((int)swa__load_u32(q)));
                    acc2[m] = _mm512_dpbusd_epi32(e ? acc2[m] : zero, t1, _mm512_set1_epi32((int)swa__load_u32(q + 4 * per)));
                }
            }
            SWA__UNROLL(8)
            for (m = 0; m < 8; m++)
                sv[m] = _mm512_add_epi32(_mm512_add_epi32(sv[m], _mm512_mullo_epi32(acc[m], _mm512_set1_epi32(row[m].sc[j]))),
                                         _mm512_mullo_epi32(acc2[m], _mm512_set1_epi32(row[m].sc[j + 1])));
        }
        ad = _mm512_loadu_ps(x->d);
        SWA__UNROLL(8)
        for (m = 0; m < 8; m++) {
            rs[m] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_set1_ps(row[m].d), ad), _mm512_cvtepi32_ps(sv[m]), rs[m]);
            if (mins) {   /* Q2_K's 16 mins meet the 16-element sums, the others' 8 the 32-element ones */
                const int32_t *sums = type == SWA_TYPE_Q2_K ? x->bsum_pairs[0] : x->pair_sums[0];
                __m512i mv = _mm512_setzero_si512();
                for (j = 0; j < (type == SWA_TYPE_Q2_K ? 8 : 4); j++)
                    mv = _mm512_dpwssd_epi32(mv, _mm512_loadu_si512(sums + 16 * j), _mm512_set1_epi32(row[m].mins[j]));
                rm[m] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_set1_ps(row[m].dmin), ad), _mm512_cvtepi32_ps(mv), rm[m]);
            }
        }
    }
    SWA__UNROLL(8)
    for (m = 0; m < 8; m++) _mm512_storeu_ps(out + 16 * m, mins ? _mm512_add_ps(rs[m], rm[m]) : rs[m]);
}

/* y[t * ldy + r] = dot(row r, token t) for nr rows and n tokens packed by swa__kpack_avx512. */
SWA__AVX512 SWA__INLINE void swa__gemm_k_avx512(const uint8_t *w, size_t w_stride, int64_t nr, const void *xpack, int64_t n,
                                                int64_t n_in, float *y, int64_t ldy, void *scratch, const uint32_t type)
{
    const int64_t nsb = n_in / 256, bytes = (int64_t)swa_type_block_bytes(type);
    const swa__kunit *xu = (const swa__kunit *)xpack;
    swa__krow *u0 = (swa__krow *)swa__line_up(scratch);
    float *out = (float *)(u0 + SWA__GEMM_ROWS * nsb);
    int64_t r, g, s, q;
    int m;
    for (r = 0; r < nr; r += SWA__GEMM_ROWS) {
        const int64_t sets = swa__sets(nr, r, 16);
        for (q = 0; q < sets; q++) {
            swa__krow *u = u0 + q * 16 * nsb;
            const int rows = swa__set_rows(nr, r, 16, q);
            for (s = 0; s < nsb; s++)
                for (m = 0; m < 16; m++) {
                    if (m < rows) swa__krow_unpack_avx512(w + (size_t)(r + 16 * q + m) * w_stride + s * bytes, type, u + 16 * s + m);
                    else memset(u + 16 * s + m, 0, sizeof *u);
                }
        }
        for (g = 0; g * 16 < n; g++) {
            for (q = 0; q < sets; q++) {
                const swa__krow *u = u0 + q * 16 * nsb;
                const int rows = swa__set_rows(nr, r, 16, q);
                swa__kgroup_avx512(u, xu + g * nsb, nsb, out, type);
                if (rows > 8) swa__kgroup_avx512(u + 8, xu + g * nsb, nsb, out + 128, type);
                swa__put_group(out, rows, g, 16, n, y, ldy, r + 16 * q);
            }
        }
    }
}

/* Each type's product: its driver with the type a constant (swa__gemm_q_avx512's types below). */
#define SWA__GEMM_AVX512(name, driver, type)                                                                          \
    SWA__AVX512 static void name(const uint8_t *w, size_t w_stride, int64_t nr, const void *xpack, int64_t n,        \
                                 int64_t n_in, float *y, int64_t ldy, void *scratch)                                 \
    {                                                                                                                 \
        driver(w, w_stride, nr, xpack, n, n_in, y, ldy, scratch, type);                                              \
    }
SWA__GEMM_AVX512(swa__gemm_q4_k_avx512, swa__gemm_k_avx512, SWA_TYPE_Q4_K)
SWA__GEMM_AVX512(swa__gemm_q5_k_avx512, swa__gemm_k_avx512, SWA_TYPE_Q5_K)
SWA__GEMM_AVX512(swa__gemm_q6_k_avx512, swa__gemm_k_avx512, SWA_TYPE_Q6_K)
SWA__GEMM_AVX512(swa__gemm_iq4_xs_avx512, swa__gemm_k_avx512, SWA_TYPE_IQ4_XS)
SWA__GEMM_AVX512(swa__gemm_q2_k_avx512, swa__gemm_k_avx512, SWA_TYPE_Q2_K)
SWA__GEMM_AVX512(swa__gemm_q3_k_avx512, swa__gemm_k_avx512, SWA_TYPE_Q3_K)

/* ---- The blocks of 32's products: tokens in the lanes ----
   As the K-quants' above, and as the AVX2 section's end describes: 16 tokens' block b in a unit
   (swa__qunit), each row's block unpacked once (swa__qrow, SWA__GEMM_ROWS rows at a time in sets
   of 16), two blocks of 8 rows at a time. A
   (row, token) pair adds its blocks in the lanes kernels' order (acc = fma(S_b, d_w d_x, acc),
   then Q4_1's and Q5_1's acc = fma(m_w, d_x sum_b x, acc), block after block from 0): the dots'
   and tiles' bits exactly, without transposing the rows for every 12 tokens. */

typedef struct swa__qunit {   /* swa__qpack_lanes's unit of 16 tokens */
    int8_t q[8][64];   /* the block's elements 4 i .. 4 i + 3: token t's at q[i][4 t] */
    float d[16];
    float dsum[16];
} swa__qunit;

static void swa__qpack_avx512(const uint8_t *xq, size_t x_stride, int64_t n, int64_t n_in, void *out)
{
    swa__qpack_lanes(xq, x_stride, n, n_in, out, 16);
}

/* Blocks b and b + 1 (`pair`; else b alone) of 8 unpacked rows (row[m], row[16 + m]) against
   16 tokens' units x[0] and x[1], into acc[m]; lanes are tokens. */
SWA__AVX512 SWA__INLINE void swa__qstep_avx512(const swa__qrow *row, const swa__qunit *x, int pair, __m512 acc[8],
                                               const uint32_t type)
{
    const __m512 d0 = _mm512_loadu_ps(x[0].d), d1 = pair ? _mm512_loadu_ps(x[1].d) : d0;
    __m512i s0[8], s1[8];
    int m, k;
    SWA__UNROLL(8)
    for (m = 0; m < 8; m++) {
        s0[m] = _mm512_set1_epi32(row[m].neg_offset);
        s1[m] = pair ? _mm512_set1_epi32(row[16 + m].neg_offset) : s0[m];
    }
    SWA__UNROLL(8)
    for (k = 0; k < 8; k++) {
        const __m512i t0 = _mm512_loadu_si512(x[0].q[k]), t1 = _mm512_loadu_si512(x[pair].q[k]);
        SWA__UNROLL(8)
        for (m = 0; m < 8; m++) {
            s0[m] = _mm512_dpbusd_epi32(s0[m], t0, _mm512_set1_epi32((int)swa__load_u32((const uint8_t *)row[m].q + 4 * k)));
            if (pair) s1[m] = _mm512_dpbusd_epi32(s1[m], t1, _mm512_set1_epi32((int)swa__load_u32((const uint8_t *)row[16 + m].q + 4 * k)));
        }
    }
    SWA__UNROLL(8)
    for (m = 0; m < 8; m++) {
        acc[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s0[m]), _mm512_mul_ps(_mm512_set1_ps(row[m].d), d0), acc[m]);
        if (swa__b32_has_min(type)) acc[m] = _mm512_fmadd_ps(_mm512_set1_ps(row[m].m), _mm512_loadu_ps(x[0].dsum), acc[m]);
        if (!pair) continue;
        acc[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s1[m]), _mm512_mul_ps(_mm512_set1_ps(row[16 + m].d), d1), acc[m]);
        if (swa__b32_has_min(type)) acc[m] = _mm512_fmadd_ps(_mm512_set1_ps(row[16 + m].m), _mm512_loadu_ps(x[1].dsum), acc[m]);
    }
}

/* y[t * ldy + r] = dot(row r, token t) for nr rows of a block-of-32 type and n tokens packed
   by swa__qpack_avx512: SWA__GEMM_ROWS rows unpacked at a time, in sets of 16. */
SWA__AVX512 SWA__INLINE void swa__gemm_q_avx512(const uint8_t *w, size_t w_stride, int64_t nr, const void *xpack, int64_t n,
                                                int64_t n_in, float *y, int64_t ldy, void *scratch, const uint32_t type)
{
    const int64_t nbk = n_in / 32, bytes = (int64_t)swa_type_block_bytes(type);
    const swa__qunit *xu = (const swa__qunit *)xpack;
    swa__qrow *u0 = (swa__qrow *)swa__line_up(scratch);
    float *out = (float *)(u0 + SWA__GEMM_ROWS * nbk);
    int64_t r, g, b, q;
    int m, h;
    for (r = 0; r < nr; r += SWA__GEMM_ROWS) {
        const int64_t sets = swa__sets(nr, r, 16);
        for (q = 0; q < sets; q++) {
            swa__qrow *u = u0 + q * 16 * nbk;
            const int rows = swa__set_rows(nr, r, 16, q);
            for (b = 0; b < nbk; b++)
                for (m = 0; m < 16; m++) {
                    if (m < rows) swa__qrow_unpack(w + (size_t)(r + 16 * q + m) * w_stride + b * bytes, type, u + 16 * b + m);
                    else memset(u + 16 * b + m, 0, sizeof *u);
                }
        }
        for (g = 0; g * 16 < n; g++) {
            for (q = 0; q < sets; q++) {
                const swa__qrow *u = u0 + q * 16 * nbk;
                const int rows = swa__set_rows(nr, r, 16, q);
                for (h = 0; h < rows; h += 8) {
                    __m512 acc[8];
                    SWA__UNROLL(8)
                    for (m = 0; m < 8; m++) acc[m] = _mm512_setzero_ps();
                    for (b = 0; b + 1 < nbk; b += 2) swa__qstep_avx512(u + 16 * b + h, xu + g * nbk + b, 1, acc, type);
                    if (b < nbk) swa__qstep_avx512(u + 16 * b + h, xu + g * nbk + b, 0, acc, type);
                    SWA__UNROLL(8)
                    for (m = 0; m < 8; m++) _mm512_storeu_ps(out + 16 * (h + m), acc[m]);
                }
                swa__put_group(out, rows, g, 16, n, y, ldy, r + 16 * q);
            }
        }
    }
}

SWA__GEMM_AVX512(swa__gemm_q8_0_avx512, swa__gemm_q_avx512, SWA_TYPE_Q8_0)
SWA__GEMM_AVX512(swa__gemm_q4_0_avx512, swa__gemm_q_avx512, SWA_TYPE_Q4_0)
SWA__GEMM_AVX512(swa__gemm_q4_1_avx512, swa__gemm_q_avx512, SWA_TYPE_Q4_1)
SWA__GEMM_AVX512(swa__gemm_q5_0_avx512, swa__gemm_q_avx512, SWA_TYPE_Q5_0)
SWA__GEMM_AVX512(swa__gemm_q5_1_avx512, swa__gemm_q_avx512, SWA_TYPE_Q5_1)
SWA__GEMM_AVX512(swa__gemm_iq4_nl_avx512, swa__gemm_q_avx512, SWA_TYPE_IQ4_NL)
SWA__GEMM_AVX512(swa__gemm_mxfp4_avx512, swa__gemm_q_avx512, SWA_TYPE_MXFP4)
#undef SWA__GEMM_AVX512

/* The packed tokens for n tokens of up to n_in columns, and a thread's scratch (16 unpacked
   rows and their results, aligned by hand), for either kind of product. */
static void swa__gemm_memory_avx512(int64_t n, int64_t n_in, uint64_t *pack_bytes, uint64_t *scratch_bytes)
{
    uint64_t groups = (uint64_t)(n + 15) / 16, kpack = groups * (uint64_t)(n_in / 256) * sizeof(swa__kunit);
    uint64_t qpack = groups * (uint64_t)(n_in / 32) * sizeof(swa__qunit);
    uint64_t kscratch = SWA__GEMM_ROWS * (uint64_t)(n_in / 256) * sizeof(swa__krow);
    uint64_t qscratch = SWA__GEMM_ROWS * (uint64_t)(n_in / 32) * sizeof(swa__qrow);
    *pack_bytes = kpack > qpack ? kpack : qpack;
    *scratch_bytes = (kscratch > qscratch ? kscratch : qscratch) + 512 * sizeof(float) + 64;
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif /* SWA__HAVE_AVX512 */

/* ==== kernels (AMX) ====
   The AVX-512 set, with Q8_0 and Q4_0 computed by residue (see swa__block_isum_ref): dots for
   generation and tiles of a few tokens, and matrix products on AMX tiles from
   8 tokens on, all giving the reference order's bits exactly; and Q4_K, Q5_K, Q6_K and IQ4_XS likewise,
   in orders of their own, with products from 16 tokens on. */

#if defined(SWA__HAVE_AMX)

#if defined(__GNUC__) && !defined(__clang__)   /* GCC bug 105593, as in the AVX-512 section */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

/* ---- Q8_0 and Q4_0 by residue: the order the AMX set computes them in ----
   An AMX tile product gives each block's exact integer sum for 16 rows x 16 tokens at once;
   scaling such sums lane by lane, as the AVX-512 dots do, would cost more than the product. So
   the AMX set follows an order its tiles and its 1-token dots can both keep exactly: block b's
   integer sum I_b times s_b = d_w * d_x (rounded to float) goes by FMA into accumulator
   b mod 16, in block order, and the 16 accumulators are added in the tree of the 16-lane sum
   (j + 8, then j + 4, j + 2, j + 1). A (row, token) pair thus gets the same bits from a
   generation dot, a prompt tile and an AMX tile, and a chunk's logits still do not depend on
   its size. These loops are that order's reference. */
SWA__INTERNAL int32_t swa__block_isum_ref(const uint8_t *w, uint32_t type, const swa__q8g *x, int64_t b)
{
    const int8_t *lo = swa__q8g_half(x, b, 0), *hi = swa__q8g_half(x, b, 1);
    int32_t s = 0;
    int j;
    for (j = 0; j < 16; j++) {
        int w_lo = type == SWA_TYPE_Q8_0 ? (int8_t)w[2 + j] : (w[2 + j] & 15) - 8;
        int w_hi = type == SWA_TYPE_Q8_0 ? (int8_t)w[18 + j] : (w[2 + j] >> 4) - 8;
        s += w_lo * lo[j] + w_hi * hi[j];
    }
    return s;
}

/* Blocks [b0, b1) of a row into the 16 accumulators, and their sum: the reference the
   kernels are held to (tests/test_kernels.c). */
SWA__INTERNAL void swa__residue_blocks_ref(const uint8_t *row, uint32_t type, const swa__q8g *x,
                                           int64_t b0, int64_t b1, float acc[16])
{
    const int64_t bytes = swa_type_block_bytes(type);
    int64_t b;
    for (b = b0; b < b1; b++) {
        const uint8_t *w = row + b * bytes;
        float s = swa__f16_to_f32(swa__load_u16(w)) * x[b / 8].d[b % 8];
        acc[b % 16] = fmaf((float)swa__block_isum_ref(w, type, x, b), s, acc[b % 16]);
    }
}

SWA__INTERNAL float swa__residue_sum_ref(const float acc[16])
{
    float b[8], c[4];
    int j;
    for (j = 0; j < 8; j++) b[j] = acc[j] + acc[j + 8];
    for (j = 0; j < 4; j++) c[j] = b[j] + b[j + 4];
    return (c[0] + c[2]) + (c[1] + c[3]);
}

/* ---- dots by residue ----
   16 blocks at a time: the pairs of swa__pair_avx512 (pair p of a group: blocks p and p + 4, a
   128-bit lane per half block) against the activations give 8 registers of partial sums,
   which a transposing reduction turns into the 16 blocks' sums in block order; less the
   unsigned weights' offsets, they are scaled into the 16 accumulators with one FMA. */

/* A group's 4 pair sums to one register: 128-bit lane h * 2 + k holds half h of blocks
   4k .. 4k + 3. */
SWA__AMX SWA__INLINE __m512i swa__group_isums_amx(__m512i s0, __m512i s1, __m512i s2, __m512i s3, uint32_t type)
{
    __m512i a, b;
    if (type == SWA_TYPE_Q4_0) {   /* lanes within 2 * 7620 pack to int16, and a madd adds neighbours */
        const __m512i one = _mm512_set1_epi16(1);
        a = _mm512_madd_epi16(_mm512_packs_epi32(s0, s1), one);
        b = _mm512_madd_epi16(_mm512_packs_epi32(s2, s3), one);
        return _mm512_madd_epi16(_mm512_packs_epi32(a, b), one);
    }
    a = _mm512_add_epi32(_mm512_unpacklo_epi32(s0, s1), _mm512_unpackhi_epi32(s0, s1));
    b = _mm512_add_epi32(_mm512_unpacklo_epi32(s2, s3), _mm512_unpackhi_epi32(s2, s3));
    return _mm512_add_epi32(_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b));
}

/* Two groups' registers to the 16 block sums: the halves added, group g in lanes 8g..8g+7. */
SWA__AMX SWA__INLINE __m512i swa__unit_isums_amx(__m512i g0, __m512i g1)
{
    return _mm512_add_epi32(_mm512_shuffle_i32x4(g0, g1, _MM_SHUFFLE(1, 0, 1, 0)),
                            _mm512_shuffle_i32x4(g0, g1, _MM_SHUFFLE(3, 2, 3, 2)));
}

SWA__AMX SWA__INLINE __m512 swa__join_ps_amx(__m256 lo, __m256 hi)
{
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(lo)), _mm256_castps_pd(hi), 1));
}

/* A unit of 16 weight blocks, unpacked once for the tile's tokens. */
typedef struct swa__unit_amx {
    __m512i pair[8];
    __m512 scale;
} swa__unit_amx;

SWA__AMX SWA__INLINE swa__unit_amx swa__unit_load_amx(const uint8_t *w, uint32_t type)
{
    const int64_t group_bytes = 8 * swa__types[type].block_bytes;
    swa__unit_amx u;
    int p;
    SWA__UNROLL(8)
    for (p = 0; p < 8; p++) u.pair[p] = swa__pair_avx512(w + p / 4 * group_bytes, p % 4, type);
    u.scale = swa__join_ps_amx(swa__scales8_avx512(w, type), swa__scales8_avx512(w + group_bytes, type));
    return u;
}

/* One token's turn on a unit (its groups a[0], a[1]): acc lane j takes block j's term. */
SWA__AMX SWA__INLINE __m512 swa__unit_step_amx(const swa__unit_amx *u, const swa__q8g *a, uint32_t type, __m512 acc)
{
    __m512i s[8], off;
    __m512 scale = _mm512_mul_ps(u->scale, swa__join_ps_amx(_mm256_loadu_ps(a[0].d), _mm256_loadu_ps(a[1].d)));
    int p;
    SWA__UNROLL(8)
    for (p = 0; p < 8; p++)
        s[p] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u->pair[p], _mm512_loadu_si512(a[p / 4].q + 64 * (p % 4)));
    off = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)a[0].sum8)),
                             _mm256_loadu_si256((const __m256i *)a[1].sum8), 1);
    if (type == SWA_TYPE_Q8_0) off = _mm512_slli_epi32(off, 4);   /* 128 sum x = 16 sum8 */
    s[0] = _mm512_sub_epi32(swa__unit_isums_amx(swa__group_isums_amx(s[0], s[1], s[2], s[3], type),
                                                swa__group_isums_amx(s[4], s[5], s[6], s[7], type)), off);
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(s[0]), scale, acc);
}

/* The row's blocks past its last whole unit, one by one into their lanes (FMA on one lane is
   the reference's fmaf), and the sum of the accumulators in the reference's tree. */
SWA__AMX SWA__INLINE float swa__residue_finish_amx(__m512 acc, const uint8_t *row, uint32_t type, const swa__q8g *a,
                                                   int64_t b0, int64_t n)
{
    const int64_t bytes = swa__types[type].block_bytes;
    int64_t b;
    for (b = b0; b < n / 32; b++) {
        const uint8_t *w = row + b * bytes;
        __m256i q = swa__block_avx2(w, type);
        int32_t offset = a[b / 8].sum8[b % 8] * (type == SWA_TYPE_Q4_0 ? 1 : 16);
        __mmask16 lane = (__mmask16)(1u << (b % 16));
        float s = _cvtsh_ss(swa__load_u16(w)) * a[b / 8].d[b % 8];
        if (type == SWA_TYPE_Q8_0) q = _mm256_xor_si256(q, _mm256_set1_epi8((char)0x80));
        q = _mm256_dpbusd_epi32(_mm256_setzero_si256(), q, swa__block_x_avx2(a, b));
        acc = _mm512_mask3_fmadd_ps(_mm512_set1_ps((float)(swa__hsum_epi32_avx2(q) - offset)), _mm512_set1_ps(s), acc, lane);
    }
    return swa__hsum16_avx512(acc);
}

/* A row against up to 4 tokens; generation (one token) in a loop of its own, which prefetches
   and keeps its accumulator in a register. */
SWA__AMX SWA__INLINE void swa__row_dots_residue_amx(const void *row, const void *x, size_t stride, int nt, int64_t n,
                                                    float *out, const uint32_t type)
{
    const uint8_t *w = (const uint8_t *)row;
    const int64_t unit_bytes = 16 * swa__types[type].block_bytes, units = n / 512;
    __m512 acc[SWA__TILE_TOKENS];
    int64_t i;
    int t;
    for (t = 0; t < nt; t++) acc[t] = _mm512_setzero_ps();
    if (nt == 1) {
        __m512 a0 = acc[0];
        for (i = 0; i < units; i++, w += unit_bytes) {
            swa__unit_amx u = swa__unit_load_amx(w, type);
            swa__prefetch_unit(w, (int)unit_bytes);
            a0 = swa__unit_step_amx(&u, (const swa__q8g *)x + 2 * i, type, a0);
        }
        acc[0] = a0;
    } else {
        for (i = 0; i < units; i++, w += unit_bytes) {
            swa__unit_amx u = swa__unit_load_amx(w, type);
            swa__prefetch_unit(w, (int)unit_bytes);   /* a batch of 2-7 reads its rows once too */
            for (t = 0; t < nt; t++)
                acc[t] = swa__unit_step_amx(&u, (const swa__q8g *)((const uint8_t *)x + (size_t)t * stride) + 2 * i, type, acc[t]);
        }
    }
    for (t = 0; t < nt; t++)
        out[t] = swa__residue_finish_amx(acc[t], (const uint8_t *)row, type,
                                         (const swa__q8g *)((const uint8_t *)x + (size_t)t * stride), units * 16, n);
}

SWA__NEW_TYPE(SWA__AMX, swa__row_dots_q8_0_amx, swa__dots_q8_0_amx, swa__dot_q8_0_amx, swa__row_dots_residue_amx, SWA_TYPE_Q8_0)
SWA__NEW_TYPE(SWA__AMX, swa__row_dots_q4_0_amx, swa__dots_q4_0_amx, swa__dot_q4_0_amx, swa__row_dots_residue_amx, SWA_TYPE_Q4_0)

/* ---- Q4_0 and Q8_0 for batches under 8 tokens (and Q4_0's generation): sums without a
   reduction ----
   The dots above leave each block's sum spread over 4 lanes of 8 registers and gather them
   with a transposing reduction, per token. Gathering on the weights instead costs less and
   is done once for all the tokens: a Q4_0 group of 8 blocks (144 bytes) gives two registers
   of its quants' 32-bit words by permutes, T0 with word 0 of blocks 0-7 in lanes 0-7 and word
   1 in lanes 8-15, T1 with words 2 and 3. Their low nibbles are elements 0-15 and their high
   ones 16-31, so four vpdpbusd against activations laid out to match (swa__q8t) leave block
   j's whole sum in lanes j and j + 8 of one register, and two groups' registers fold into
   the 16 blocks' sums in block order: the residue order's lanes, with no reduction per
   token. A Q8_0 group (272 bytes) gives four such registers, two words of each block apiece,
   for four permutes and three blends each. The tokens are laid out once per product by the
   set's pack, which is why these are the types' gemm for fewer than SWA__AMX_FROM tokens
   rather than their dots. Q4_0's words cost less than its dots from one token on, so its
   generation takes them too; Q8_0's cost more than its dots for one token, so they start at 2
   (from 5 tokens on, the dots' tiles of up to 4 would read the rows twice). Figures in
   docs/performance.md. */
#define SWA__AMX_FROM 8   /* tokens from which Q8_0 and Q4_0 take the AMX products */

/* 16 blocks (a residue unit) of one token's activations. */
typedef struct swa__q8t {
    float d[16];
    int32_t sum8[16];
    int8_t q[2][256];   /* block 8 h + j's elements 4 c .. 4 c + 3 at q[h][32 c + 4 j] */
} swa__q8t;

static int64_t swa__q8t_units(int64_t n_in) { return (n_in / 32 + 15) / 16; }

/* n tokens of swa__q8g activations (x_stride bytes apart) as swa__q8t units, zeros past the
   last block. */
static void swa__q8t_pack(const uint8_t *xq, size_t x_stride, int64_t n, int64_t n_in, void *out)
{
    const int64_t units = swa__q8t_units(n_in);
    swa__q8t *u = (swa__q8t *)out;
    int64_t t, b;
    int c;
    memset(out, 0, (size_t)(n * units) * sizeof *u);
    for (t = 0; t < n; t++, u += units) {
        const swa__q8g *a = (const swa__q8g *)(xq + (size_t)t * x_stride);
        for (b = 0; b < n_in / 32; b++) {
            swa__q8t *v = u + b / 16;
            int j = (int)(b % 16);
            v->d[j] = a[b / 8].d[b % 8];
            v->sum8[j] = a[b / 8].sum8[b % 8];
            for (c = 0; c < 8; c++) memcpy(v->q[j / 8] + 32 * c + 4 * (j % 8), swa__q8g_half(a, b, c / 4) + 4 * (c % 4), 4);
        }
    }
}

/* The permutes' indexes. Block j's quants start at byte 18 j + 2 of its group, so its 32-bit
   words are whole words of the bytes from 2 on for even j and from 16 on for odd j: the word
   permute of each pair of loads (bytes 2-129, 16-143) finds the quants' word i of block j at
   9 (j / 2) + j % 2 + i, the same index for both, and a blend takes the odd blocks' lanes
   from the second. Lane L of T0 is word L / 8 of block L % 8; T1's are 2 further on. */
typedef struct swa__q4t_index {
    __m512i words[2], scales;
} swa__q4t_index;

SWA__AMX SWA__INLINE swa__q4t_index swa__q4t_index_amx(void)
{
    swa__q4t_index ix;
    ix.words[0] = _mm512_setr_epi32(0, 1, 9, 10, 18, 19, 27, 28, 1, 2, 10, 11, 19, 20, 28, 29);
    ix.words[1] = _mm512_add_epi32(ix.words[0], _mm512_set1_epi32(2));
    ix.scales = _mm512_setr_epi32(9 << 16, 27 << 16 | 18, 45 << 16 | 36, 63 << 16 | 54, 9 << 16, 27 << 16 | 18, 45 << 16 | 36,
                                  63 << 16 | 54, 0, 0, 0, 0, 0, 0, 0, 0);   /* the f16 scale of block j is word 9 j */
    return ix;
}

/* 16 blocks unpacked: group h's quants as the four registers its activations meet (Q4_0: the
   low nibbles of T0 and T1, then their high nibbles; Q8_0: words 0-1, 2-3, 4-5 and 6-7 of its
   blocks, made unsigned), and the blocks' scales. */
typedef struct swa__words_unit {
    __m512i w[2][4];
    __m512 d;
} swa__words_unit;

SWA__AMX SWA__INLINE swa__words_unit swa__q4t_load_amx(const uint8_t *w, const swa__q4t_index *ix)
{
    const __m512i nibble = _mm512_set1_epi8(15);
    swa__words_unit u;
    __m512i d[2];
    int h, k;
    SWA__UNROLL(8)
    for (h = 0; h < 2; h++) {
        const uint8_t *g = w + 144 * h;
        __m512i e0 = _mm512_loadu_si512(g + 2), e1 = _mm512_loadu_si512(g + 66);
        __m512i o0 = _mm512_loadu_si512(g + 16), o1 = _mm512_loadu_si512(g + 80);
        SWA__UNROLL(8)
        for (k = 0; k < 2; k++) {
            __m512i words = _mm512_mask_blend_epi32(0xAAAA, _mm512_permutex2var_epi32(e0, ix->words[k], e1),
                                                    _mm512_permutex2var_epi32(o0, ix->words[k], o1));
            u.w[h][k] = _mm512_and_si512(words, nibble);
            u.w[h][k + 2] = _mm512_and_si512(_mm512_srli_epi16(words, 4), nibble);
        }
        d[h] = _mm512_permutex2var_epi16(_mm512_loadu_si512(g), ix->scales, _mm512_loadu_si512(g + 64));
    }
    u.d = _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_mask_blend_epi16(0xFF00, d[0], d[1])));
    return u;
}

/* Q8_0: block j of a group (272 bytes) has its quants at byte 34 j + 2, so its word c is word
   17 (j / 2) + c of the bytes from 2 on for even j and from 36 on for odd j, each read as four
   registers. Blocks 0-3 lie in the first two of them and 4-7 in the last two, 32 words on:
   register m's lane L, word 2 m + L / 8 of block L % 8, is one index into either pair, and
   three blends pick the pair and the parity. The odd blocks' last register stops at the
   group's end (a masked load). */
SWA__AMX SWA__INLINE swa__words_unit swa__q8w_load_amx(const uint8_t *w)
{
    const __m512i first = _mm512_setr_epi32(0, 0, 17, 17, 2, 2, 19, 19, 1, 1, 18, 18, 3, 3, 20, 20);
    swa__words_unit u;
    int h, m;
    SWA__UNROLL(8)
    for (h = 0; h < 2; h++) {
        const uint8_t *g = w + 272 * h;
        const __m512i e0 = _mm512_loadu_si512(g + 2), e1 = _mm512_loadu_si512(g + 66);
        const __m512i e2 = _mm512_loadu_si512(g + 130), e3 = _mm512_loadu_si512(g + 194);
        const __m512i o0 = _mm512_loadu_si512(g + 36), o1 = _mm512_loadu_si512(g + 100);
        const __m512i o2 = _mm512_loadu_si512(g + 164), o3 = _mm512_maskz_loadu_epi32(0x07FF, g + 228);
        SWA__UNROLL(8)
        for (m = 0; m < 4; m++) {
            const __m512i ix = _mm512_add_epi32(first, _mm512_set1_epi32(2 * m));
            __m512i even = _mm512_mask_blend_epi32(0xF0F0, _mm512_permutex2var_epi32(e0, ix, e1), _mm512_permutex2var_epi32(e2, ix, e3));
            __m512i odd = _mm512_mask_blend_epi32(0xF0F0, _mm512_permutex2var_epi32(o0, ix, o1), _mm512_permutex2var_epi32(o2, ix, o3));
            u.w[h][m] = _mm512_xor_si512(_mm512_mask_blend_epi32(0xAAAA, even, odd), _mm512_set1_epi8((char)0x80));
        }
    }
    u.d = swa__join_ps_amx(swa__scales8_avx2(w, 34), swa__scales8_avx2(w + 272, 34));
    return u;
}

/* One token's turn on a unit: acc lane j takes block j's term, as in the residue order. */
SWA__AMX SWA__INLINE __m512 swa__words_step_amx(const swa__words_unit *u, const swa__q8t *x, uint32_t type, __m512 acc)
{
    __m512i s[2], sums, off = _mm512_loadu_si512(x->sum8);
    int h, m;
    SWA__UNROLL(8)
    for (h = 0; h < 2; h++) {
        s[h] = _mm512_setzero_si512();
        SWA__UNROLL(8)
        for (m = 0; m < 4; m++) s[h] = _mm512_dpbusd_epi32(s[h], u->w[h][m], _mm512_loadu_si512(x->q[h] + 64 * m));
    }
    sums = _mm512_add_epi32(_mm512_shuffle_i32x4(s[0], s[1], _MM_SHUFFLE(1, 0, 1, 0)),
                            _mm512_shuffle_i32x4(s[0], s[1], _MM_SHUFFLE(3, 2, 3, 2)));
    if (type == SWA_TYPE_Q8_0) off = _mm512_slli_epi32(off, 4);   /* the weights' offset: 128 sum x = 16 sum8 */
    sums = _mm512_sub_epi32(sums, off);                            /* Q4_0's nibbles': 8 sum x = sum8 */
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(sums), _mm512_mul_ps(u->d, _mm512_loadu_ps(x->d)), acc);
}

/* The blocks past the row's last whole unit, one by one into their lanes, and the sum of the
   accumulators in the reference's tree. */
SWA__AMX SWA__INLINE float swa__words_finish_amx(__m512 acc, const uint8_t *row, const swa__q8t *x, int64_t b0, int64_t n_blocks,
                                                 uint32_t type)
{
    const int64_t bytes = swa__types[type].block_bytes;
    int64_t b;
    for (b = b0; b < n_blocks; b++) {
        const uint8_t *w = row + b * bytes;
        const swa__q8t *u = x + b / 16;
        const int j = (int)(b % 16);
        const int8_t *q = u->q[j / 8] + 4 * (j % 8);
        int32_t sum = 0;
        int e;
        if (type == SWA_TYPE_Q8_0)
            for (e = 0; e < 32; e++) sum += (int8_t)w[2 + e] * q[32 * (e / 4) + e % 4];
        else
            for (e = 0, sum = -u->sum8[j]; e < 16; e++)
                sum += (w[2 + e] & 15) * q[32 * (e / 4) + e % 4] + (w[2 + e] >> 4) * q[32 * (4 + e / 4) + e % 4];
        acc = _mm512_mask3_fmadd_ps(_mm512_set1_ps((float)sum), _mm512_set1_ps(_cvtsh_ss(swa__load_u16(w)) * u->d[j]), acc,
                                    (__mmask16)(1u << j));
    }
    return swa__hsum16_avx512(acc);
}

/* One row against NT tokens (x_units units apart): each unit unpacked once, its lines 4 KB
   ahead fetched, the accumulators in registers. */
SWA__AMX SWA__INLINE void swa__words_row_amx(const uint8_t *row, const swa__q8t *x, int64_t x_units, const int NT, int64_t n_in,
                                             const swa__q4t_index *ix, float *y, int64_t ldy, uint32_t type)
{
    const int64_t units = n_in / 512, unit_bytes = 16 * swa__types[type].block_bytes;
    __m512 acc[SWA__AMX_FROM - 1];
    int64_t i;
    int t;
    SWA__UNROLL(8)
    for (t = 0; t < NT; t++) acc[t] = _mm512_setzero_ps();
    for (i = 0; i < units; i++) {
        const uint8_t *w = row + i * unit_bytes;
        swa__words_unit u = type == SWA_TYPE_Q8_0 ? swa__q8w_load_amx(w) : swa__q4t_load_amx(w, ix);
        swa__prefetch_unit(w, (int)unit_bytes);
        SWA__UNROLL(8)
        for (t = 0; t < NT; t++) acc[t] = swa__words_step_amx(&u, x + t * x_units + i, type, acc[t]);
    }
    for (t = 0; t < NT; t++) y[t * ldy] = swa__words_finish_amx(acc[t], row, x + t * x_units, units * 16, n_in / 32, type);
}

/* y[t * ldy + r] = dot(row r, token t) for nr rows and n < SWA__AMX_FROM tokens packed by
   swa__q8t_pack. */
SWA__AMX SWA__INLINE void swa__words_rows_amx(const uint8_t *w, size_t w_stride, int64_t nr, const void *xpack, int64_t n,
                                              int64_t n_in, float *y, int64_t ldy, uint32_t type)
{
    const swa__q8t *x = (const swa__q8t *)xpack;
    const int64_t x_units = swa__q8t_units(n_in);
    const swa__q4t_index ix = swa__q4t_index_amx();
    int64_t r;
    for (r = 0; r < nr; r++) {
        const uint8_t *row = w + (size_t)r * w_stride;
        switch (n) {   /* a loop of its own for each count, its accumulators in registers */
        case 1: swa__words_row_amx(row, x, x_units, 1, n_in, &ix, y + r, ldy, type); break;
        case 2: swa__words_row_amx(row, x, x_units, 2, n_in, &ix, y + r, ldy, type); break;
        case 3: swa__words_row_amx(row, x, x_units, 3, n_in, &ix, y + r, ldy, type); break;
        case 4: swa__words_row_amx(row, x, x_units, 4, n_in, &ix, y + r, ldy, type); break;
        case 5: swa__words_row_amx(row, x, x_units, 5, n_in, &ix, y + r, ldy, type); break;
        case 6: swa__words_row_amx(row, x, x_units, 6, n_in, &ix, y + r, ldy, type); break;
        default: swa__words_row_amx(row, x, x_units, 7, n_in, &ix, y + r, ldy, type); break;
        }
    }
}

/* ---- matrix products on AMX tiles ----
   For 16 weight rows and 16 tokens, tile C (16 x 16 int32) = A (one block of each row: 16 x
   32 int8) times B (the same block of each token, in the tile unit's layout: token t's bytes
   k..k+3 at row k / 4, bytes 4t..4t+3): block b's exact sums I_b at once. With 8 tokens or
   fewer, one product takes two blocks: A holds blocks b and b + 1 of each row (64 bytes), and
   B block b's tokens in columns 0-7 of its first 8 rows and block b + 1's in columns 8-15 of
   the next 8, zeros elsewhere, so that C's lanes 0-7 are block b's sums and 8-15 block b + 1's.
   The rows are unpacked once into scratch (signed bytes, Q4_0's nibbles less 8, and float
   scales); the tokens were packed once per product by swa__amx_pack. Then, accumulator j of
   the residue order at a time (j and j + 1 with two blocks a product), each of its blocks goes
   through the tiles, and C's 16 rows are scaled into 16 registers, the tokens in lanes; the
   16 accumulators' tree gives each row's results for the tokens. */

/* The tile configuration's memory layout (palette 1). */
typedef struct swa__tile_config {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} swa__tile_config;

/* Tile B for one product, and the scale of each of C's lanes on the tokens' side. */
typedef struct swa__amx_unit {
    int8_t q[16][64];
    float d[16];
} swa__amx_unit;

#define SWA__AMX_NARROW 8   /* tokens up to which a product takes two blocks */
/* 16-row groups a product of more than 8 tokens unpacks at once, then meets each token group's
   units with all of them: a chunk's units (1 KB a block for 16 tokens) outgrow L2 when its
   tokens are many, and are then read from farther away once for the groups, not once a group.
   The K-quants' products keep one group: their unpacked rows, 3 bytes an element, would not
   stay in L2 four at a time. */
#define SWA__AMX_GROUPS 4

/* The blocks of a row rounded up to pairs. */
static int64_t swa__amx_blocks(int64_t n_in) { return (n_in / 32 + 1) / 2 * 2; }

/* Floats of one row's block scales in the scratch: a float a block, in whole groups of 8. */
static int64_t swa__amx_scale_stride(int64_t nbk) { return (nbk + 7) / 8 * 8; }

/* Token t's block b (its 32 quants as 8 groups of 4 bytes) into rows row0.. of tile B at
   column col, and its scale into lane col. */
static void swa__amx_put(swa__amx_unit *u, int row0, int64_t col, const swa__q8g *a, int64_t b)
{
    int k;
    for (k = 0; k < 8; k++) memcpy(u->q[row0 + k] + 4 * col, swa__q8g_half(a, b, k / 4) + 4 * (k % 4), 4);
    u->d[col] = a[b / 8].d[b % 8];
}

/* Tokens [0, n) of the activations xq (swa__q8g rows, x_stride bytes apart) in tile units,
   zeros where no token or block is: with more than 8 tokens, unit g * nbk + b holds block b
   of tokens 16 g .. 16 g + 15; with 8 or fewer, unit b / 2 holds blocks b and b + 1, token
   t's in columns 2 t and 2 t + 1. Fewer than SWA__AMX_FROM tokens are laid out for the
   gathered words instead (swa__q8t_pack). */
static void swa__amx_pack(const uint8_t *xq, size_t x_stride, int64_t n, int64_t n_in, void *out)
{
    swa__amx_unit *u = (swa__amx_unit *)out;
    int64_t nbk = n_in / 32, g, b, t;
    if (n < SWA__AMX_FROM) {   /* the products without tiles */
        swa__q8t_pack(xq, x_stride, n, n_in, out);
        return;
    }
    for (g = 0; g * 16 < n; g++)
        for (b = 0; b < nbk; b += n <= SWA__AMX_NARROW ? 2 : 1, u++) {
            memset(u, 0, sizeof *u);
            for (t = 0; t < 16 && g * 16 + t < n; t++) {
                const swa__q8g *a = (const swa__q8g *)(xq + (size_t)(g * 16 + t) * x_stride);
                if (n > SWA__AMX_NARROW) {
                    swa__amx_put(u, 0, t, a, b);
                    continue;
                }
                swa__amx_put(u, 0, 2 * t, a, b);
                if (b + 1 < nbk) swa__amx_put(u, 8, 2 * t + 1, a, b + 1);
            }
        }
}

/* Block b of a row as signed bytes (Q4_0: its nibbles, in order, less 8). */
SWA__AMX SWA__INLINE __m256i swa__amx_block(const uint8_t *row, int64_t b, uint32_t type)
{
    if (type == SWA_TYPE_Q8_0) return swa__block_avx2(row + b * swa__types[type].block_bytes, type);
    return _mm256_sub_epi8(swa__block_avx2(row + b * 18, type), _mm256_set1_epi8(8));
}

/* The block scales of up to 16 rows, as floats: row m's at ds + m * stride, zeros past the
   row's n_blocks and for missing rows. This pass touches every line of the rows first; it
   does not prefetch: swa__amx_ahead has fetched them during the last group's products, and
   fetching them again would only add work. */
SWA__AMX SWA__INLINE void swa__amx_scales(const uint8_t *w, size_t w_stride, int rows, int64_t n_blocks, int64_t stride,
                                          uint32_t type, float *ds)
{
    const int64_t bytes = swa__types[type].block_bytes;
    float d[8];
    int64_t b;
    int m, k;
    for (m = 0; m < 16; m++, ds += stride) {
        const uint8_t *row = w + (size_t)m * w_stride;
        int64_t have = m < rows ? n_blocks : 0;
        for (b = 0; b < stride; b += 8) {
            if (b + 8 <= have) {
                _mm256_storeu_ps(ds + b, swa__scales8_avx512(row + b * bytes, type));
                continue;
            }
            for (k = 0; k < 8; k++) d[k] = b + k < have ? _cvtsh_ss(swa__load_u16(row + (b + k) * bytes)) : 0.0f;
            _mm256_storeu_ps(ds + b, _mm256_loadu_ps(d));
        }
    }
}

/* Up to 16 rows' quants into the scratch, row m's at wq + m * nbk * 32 (nbk a whole number
   of pairs); missing rows and blocks are zeros. */
SWA__AMX SWA__INLINE void swa__amx_unpack_rows(const uint8_t *w, size_t w_stride, int rows, int64_t n_blocks, int64_t nbk,
                                               uint32_t type, int8_t *wq)
{
    int64_t b;
    int m;
    for (m = 0; m < 16; m++, wq += nbk * 32) {
        const uint8_t *row = w + (size_t)m * w_stride;
        int64_t have = m < rows ? n_blocks : 0;
        for (b = 0; b < have; b++) _mm256_storeu_si256((__m256i *)(wq + b * 32), swa__amx_block(row, b, type));
        memset(wq + have * 32, 0, (size_t)(nbk - have) * 32);
    }
}

/* Blocks b and b + 1 of up to 16 rows as tile A of a narrow product (16 rows of 64 bytes),
   zeros for missing rows and past n_blocks. A whole Q4_0 pair takes one 512-bit register:
   its nibbles' bytes twice each, the second copies shifted down. */
SWA__AMX SWA__INLINE void swa__amx_unpack_pair(const uint8_t *w, size_t w_stride, int rows, int64_t b, int64_t n_blocks,
                                               uint32_t type, int8_t *a)
{
    int m, k;
    for (m = 0; m < 16; m++, a += 64) {
        const uint8_t *row = w + (size_t)m * w_stride;
        if (type != SWA_TYPE_Q4_0 || m >= rows || b + 2 > n_blocks) {
            for (k = 0; k < 2; k++)
                _mm256_storeu_si256((__m256i *)(a + 32 * k),
                                    m < rows && b + k < n_blocks ? swa__amx_block(row, b + k, type) : _mm256_setzero_si256());
        } else {
            __m512i v = _mm512_mask_blend_epi64(0xf0, _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(row + b * 18 + 2))),
                                                _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(row + b * 18 + 20))));
            v = _mm512_mask_srli_epi16(v, 0xff00ff00u, v, 4);   /* bytes 16-31 and 48-63: the high nibbles */
            _mm512_storeu_si512(a, _mm512_sub_epi8(_mm512_and_si512(v, _mm512_set1_epi8(15)), _mm512_set1_epi8(8)));
        }
    }
}

/* The lines of the next 16 rows, fetched a few per product while this group's products run,
   so that a group does not begin by waiting on memory. A product's share is spread over the
   scaling of C's 16 rows: issued at once (9 lines for a narrow Q4_0 product of 2048 columns,
   36 for a K-quant's), the prefetches would wait for fill buffers. */
typedef struct swa__amx_ahead {
    const uint8_t *at, *end;
    int lines;   /* per product */
} swa__amx_ahead;

/* Row m's part of a product's share. */
static void swa__amx_fetch_ahead(swa__amx_ahead *f, int m)
{
    int k, lines = ((m + 1) * f->lines) / 16 - (m * f->lines) / 16;
    for (k = 0; k < lines && f->at < f->end; k++, f->at += 64) _mm_prefetch((const char *)f->at, _MM_HINT_T1);
}

/* For rows r .. r + span - 1 of nr (w_stride bytes apart): the next span rows, spread over
   their products. */
static swa__amx_ahead swa__amx_ahead_of(const uint8_t *w, size_t w_stride, int64_t r, int64_t span, int64_t nr,
                                        int64_t products)
{
    const uint8_t *end = w + (size_t)nr * w_stride;
    swa__amx_ahead f;
    f.at = r + span < nr ? w + (size_t)(r + span) * w_stride : end;
    f.end = r + 2 * span < nr ? f.at + (size_t)span * w_stride : end;
    f.lines = (int)(((int64_t)((size_t)span * w_stride / 64) + products - 1) / products);
    return f;
}

/* Line m of the next product's tile B (and with line 0 its scales) into L1, a line per row of
   C scaled: a batch's units (35-96 KB for TinyLlama's rows and 8 tokens) leave L1 between row
   groups, and the tile loads would wait on L2. */
static void swa__amx_fetch_unit(const swa__amx_unit *u, int m)
{
    if (m == 0) _mm_prefetch((const char *)u->d, _MM_HINT_T0);
    _mm_prefetch((const char *)u->q[m], _MM_HINT_T0);
}

/* One product through the tiles (0 C, 1 A, 2 B: b's rows of 64 bytes) into c: 16 rows x 16
   lanes of int32. */
SWA__AMX SWA__INLINE void swa__amx_product(const void *a, int64_t a_stride, const void *b, int32_t *c)
{
    _tile_zero(0);
    _tile_loadd(1, a, a_stride);
    _tile_loadd(2, b, 64);
    _tile_dpbssd(0, 1, 2);
    _tile_stored(0, c, 64);
}

/* 16 unpacked rows (scales ds, stride floats a row) against one token group's units xg:
   acc[(j * 16 + m) * 16 + t] = row m's accumulator j for token t. Block b goes through the
   tiles into c, whose rows are then scaled into 16 registers. */
SWA__AMX SWA__INLINE void swa__amx_group(const int8_t *wq, const float *ds, int64_t stride, const swa__amx_unit *xg,
                                         int64_t n_blocks, int64_t nbk, int32_t *c, float *acc, swa__amx_ahead *ahead)
{
    __m512 r[16];
    int64_t b;
    int m, j;
    if (n_blocks < 16) memset(acc, 0, 16 * 16 * 16 * sizeof(float));   /* accumulators without blocks */
    for (j = 0; j < 16 && j < n_blocks; j++) {
        SWA__UNROLL(16)
        for (m = 0; m < 16; m++) r[m] = _mm512_setzero_ps();
        for (b = j; b < n_blocks; b += 16) {
            const __m512 d = _mm512_loadu_ps(xg[b].d);
            swa__amx_product(wq + b * 32, nbk * 32, xg[b].q, c);
            SWA__UNROLL(16)
            for (m = 0; m < 16; m++) {
                r[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_loadu_si512(c + 16 * m)),
                                       _mm512_mul_ps(_mm512_set1_ps(ds[m * stride + b]), d), r[m]);
                swa__amx_fetch_ahead(ahead, m);
            }
        }
        SWA__UNROLL(16)
        for (m = 0; m < 16; m++) _mm512_storeu_ps(acc + (j * 16 + m) * 16, r[m]);
    }
}

/* In a narrow product's order (pair j's blocks b = j, j + 16, ..., then pair j + 2's), the first
   block of the product after block b's: the next row group's block 0 after the last pair. */
static int64_t swa__amx_next_block(int64_t b, int j, int64_t n_blocks)
{
    if (b + 16 < n_blocks) return b + 16;
    return j + 2 < 16 && j + 2 < n_blocks ? j + 2 : 0;
}

/* The same for a narrow product's at most 8 tokens, in the pairs of accumulators their lanes
   hold: acc[(j / 2 * 16 + m) * 16 + 2 t + (j % 2)]. The rows are read once, so each pair j
   first unpacks its pairs of blocks (every 16th) as tiles A, 1 KB each at a, then runs their
   products: unpacking all 16 rows first would leave them in L2, and unpacking each pair just
   before its product would make the tile load wait for the stores. A pair's two scales are
   one broadcast of 64 bits. */
SWA__AMX SWA__INLINE void swa__amx_narrow(const uint8_t *w, size_t w_stride, int rows, const float *ds, int64_t stride,
                                          const swa__amx_unit *xu, int64_t n_blocks, uint32_t type, int8_t *a, int32_t *c,
                                          float *acc, swa__amx_ahead *ahead)
{
    __m512 r[16];
    int64_t b;
    int m, j;
    if (n_blocks < 16) memset(acc, 0, 8 * 16 * 16 * sizeof(float));   /* pairs without blocks */
    for (j = 0; j < 16 && j < n_blocks; j += 2) {
        SWA__UNROLL(16)
        for (m = 0; m < 16; m++) r[m] = _mm512_setzero_ps();
        for (b = j; b < n_blocks; b += 16) {
            swa__amx_unpack_pair(w, w_stride, rows, b, n_blocks, type, a + (b / 16) * 1024);
        }
        for (b = j; b < n_blocks; b += 16) {
            const __m512 d = _mm512_loadu_ps(xu[b / 2].d);
            const int64_t next = swa__amx_next_block(b, j, n_blocks);
            swa__amx_product(a + (b / 16) * 1024, 64, xu[b / 2].q, c);
            SWA__UNROLL(16)
            for (m = 0; m < 16; m++) {
                const __m512 sw = _mm512_castsi512_ps(_mm512_broadcastq_epi64(_mm_loadu_si64(ds + m * stride + b)));
                r[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_loadu_si512(c + 16 * m)), _mm512_mul_ps(sw, d), r[m]);
                swa__amx_fetch_unit(xu + next / 2, m);
                swa__amx_fetch_ahead(ahead, m);
            }
        }
        SWA__UNROLL(16)
        for (m = 0; m < 16; m++) _mm512_storeu_ps(acc + (j / 2 * 16 + m) * 16, r[m]);
    }
}

/* The 16 accumulators of the residue order summed in the tree of swa__residue_sum_ref: out[16
   m + t] = row m's result for token t. A narrow product's come in pairs (j in the even lanes,
   j + 1 in the odd), so there the first three levels add whole pairs and the last a pair's
   two lanes, leaving token t's result in lane 2 t. */
SWA__AMX SWA__INLINE void swa__amx_tree(const float *acc, int narrow, float *out)
{
    int m, j;
    for (m = 0; m < 16; m++) {
        __m512 b[8];
        if (narrow) {
            for (j = 0; j < 4; j++) b[j] = _mm512_add_ps(_mm512_loadu_ps(acc + (j * 16 + m) * 16), _mm512_loadu_ps(acc + ((j + 4) * 16 + m) * 16));
            b[0] = _mm512_add_ps(_mm512_add_ps(b[0], b[2]), _mm512_add_ps(b[1], b[3]));
            _mm512_storeu_ps(out + m * 16, _mm512_add_ps(b[0], _mm512_movehdup_ps(b[0])));
            continue;
        }
        for (j = 0; j < 8; j++)
            b[j] = _mm512_add_ps(_mm512_loadu_ps(acc + (j * 16 + m) * 16), _mm512_loadu_ps(acc + ((j + 8) * 16 + m) * 16));
        for (j = 0; j < 4; j++) b[j] = _mm512_add_ps(b[j], b[j + 4]);
        _mm512_storeu_ps(out + m * 16, _mm512_add_ps(_mm512_add_ps(b[0], b[2]), _mm512_add_ps(b[1], b[3])));
    }
}

/* y[t * ldy + r] = dot(row r, token t) for nr rows (w_stride bytes apart) and n tokens packed
   by swa__amx_pack. */
SWA__AMX SWA__INLINE void swa__gemm_amx(const uint8_t *w, size_t w_stride, int64_t nr, const void *xpack, int64_t n,
                                        int64_t n_in, float *y, int64_t ldy, void *scratch, const uint32_t type)
{
    const int64_t n_blocks = n_in / 32, nbk = swa__amx_blocks(n_in), stride = swa__amx_scale_stride(nbk);
    const int narrow = n <= SWA__AMX_NARROW;
    const swa__amx_unit *xu = (const swa__amx_unit *)xpack;
    uint8_t *base = (uint8_t *)swa__line_up(scratch);
    int8_t *wq = (int8_t *)base;   /* the unpacked rows, or a narrow product's tiles A */
    float *ds = (float *)(wq + SWA__AMX_GROUPS * 16 * nbk * 32), *acc = ds + SWA__AMX_GROUPS * 16 * stride;
    float *out = acc + 16 * 16 * 16;
    int32_t *c = (int32_t *)(out + 16 * 16);
    swa__tile_config cfg;
    int64_t r, g, t, r0;
    int m, k, groups, rows;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    cfg.rows[0] = 16;                         /* C: 16 rows x 16 lanes of int32 */
    cfg.colsb[0] = 64;
    cfg.rows[1] = 16;                         /* A: 16 rows x 32 bytes (narrow: 64) */
    cfg.colsb[1] = narrow ? 64 : 32;
    cfg.rows[2] = narrow ? 16 : 8;            /* B: 16 columns x 32 bytes (narrow: 64), 4 by 4 */
    cfg.colsb[2] = 64;
    _tile_loadconfig(&cfg);
    for (r = 0; narrow && r < nr; r += 16) {
        const uint8_t *rows16 = w + (size_t)r * w_stride;
        swa__amx_ahead ahead = swa__amx_ahead_of(w, w_stride, r, 16, nr, (n_blocks + 1) / 2);
        rows = nr - r < 16 ? (int)(nr - r) : 16;
        swa__amx_scales(rows16, w_stride, rows, n_blocks, stride, type, ds);
        swa__amx_narrow(rows16, w_stride, rows, ds, stride, xu, n_blocks, type, wq, c, acc, &ahead);
        swa__amx_tree(acc, 1, out);
        for (t = 0; t < n; t++)
            for (m = 0; m < rows; m++) y[t * ldy + r + m] = out[m * 16 + 2 * t];
    }
    for (r0 = 0; !narrow && r0 < nr; r0 += 16 * SWA__AMX_GROUPS) {
        swa__amx_ahead ahead;
        groups = (int)((nr - r0 + 15) / 16 < SWA__AMX_GROUPS ? (nr - r0 + 15) / 16 : SWA__AMX_GROUPS);
        ahead = swa__amx_ahead_of(w, w_stride, r0, 16 * SWA__AMX_GROUPS, nr, groups * n_blocks * ((n + 15) / 16));
        for (k = 0; k < groups; k++) {   /* group k: rows r0 + 16 k .., its quants and scales k groups on */
            r = r0 + 16 * k;
            rows = nr - r < 16 ? (int)(nr - r) : 16;
            swa__amx_scales(w + (size_t)r * w_stride, w_stride, rows, n_blocks, stride, type, ds + k * 16 * stride);
            swa__amx_unpack_rows(w + (size_t)r * w_stride, w_stride, rows, n_blocks, nbk, type, wq + k * 16 * nbk * 32);
        }
        for (g = 0; g * 16 < n; g++)
            for (k = 0; k < groups; k++) {
                r = r0 + 16 * k;
                rows = nr - r < 16 ? (int)(nr - r) : 16;
                swa__amx_group(wq + k * 16 * nbk * 32, ds + k * 16 * stride, stride, xu + g * n_blocks, n_blocks, nbk, c,
                               acc, &ahead);
                swa__amx_tree(acc, 0, out);
                swa__put_group(out, rows, g, 16, n, y, ldy, r);
            }
    }
    _tile_release();
}

SWA__AMX static void swa__gemm_q8_0_amx(const uint8_t *w, size_t w_stride, int64_t nr, const void *xpack, int64_t n,
                                        int64_t n_in, float *y, int64_t ldy, void *scratch)
{
    if (n < SWA__AMX_FROM) swa__words_rows_amx(w, w_stride, nr, xpack, n, n_in, y, ldy, SWA_TYPE_Q8_0);
    else swa__gemm_amx(w, w_stride, nr, xpack, n, n_in, y, ldy, scratch, SWA_TYPE_Q8_0);
}

SWA__AMX static void swa__gemm_q4_0_amx(const uint8_t *w, size_t w_stride, int64_t nr, const void *xpack, int64_t n,
                                        int64_t n_in, float *y, int64_t ldy, void *scratch)
{
    if (n < SWA__AMX_FROM) swa__words_rows_amx(w, w_stride, nr, xpack, n, n_in, y, ldy, SWA_TYPE_Q4_0);
    else swa__gemm_amx(w, w_stride, nr, xpack, n, n_in, y, ldy, scratch, SWA_TYPE_Q4_0);
}


/* ---- Q4_K, Q5_K, Q6_K and IQ4_XS products on the tiles ----
   The tokens' units are swa__kunit's (tile B of a quarter: its 16 rows are the quarter's
   4-element groups, each 16 tokens' 4 bytes), the activations signed as AMX-INT8 takes them.
   Q4_K and Q5_K get S from the tiles in one pass over the super-block if each sub-block's
   scale is put into the weights: sc = lo + 8 hi with lo and hi in 0..7, so q * lo and q * hi
   fit unsigned bytes (31 * 7 at most) and two tiles C, accumulating the super-block's four
   64-deep products of each, give S = C_lo + 8 C_hi; M is one madd per row and 16 tokens for
   each pair of sub-blocks. The rows are unpacked once into this form for all the tokens, 16 a
   group. */

/* Bytes of one unpacked super-block of a row: Q4_K/Q5_K's quants times lo, then times hi;
   Q6_K's times each of its scales' three digits. */
#define SWA__AMX_KROW 768
#define SWA__AMX_KINTS 8   /* integers a row super-block keeps: Q4_K's and Q5_K's 4 min pairs, IQ4_XS's 8 scales */

static void swa__amx_pack_q8k(const uint8_t *xq, size_t x_stride, int64_t n, int64_t n_in, void *out)
{
    swa__kpack(xq, x_stride, n, n_in, out, 16, 0);
}

/* Bytes q times the int16 words s (each q * s below 256). */
SWA__AMX SWA__INLINE __m512i swa__bytes_times_amx(__m512i q, __m512i s)
{
    __m512i even = _mm512_mullo_epi16(_mm512_and_si512(q, _mm512_set1_epi16(0xff)), s);
    return _mm512_or_si512(even, _mm512_slli_epi16(_mm512_mullo_epi16(_mm512_srli_epi16(q, 8), s), 8));
}

/* Row super-block w (Q4_K or Q5_K) unpacked: its quants in order times lo at a, times hi at
   a + 256; its d and dmin; each pair's (-m_2p, -m_2p+1) as two int16. Quarter k of the
   super-block (swa__q4k_group_avx512) is sub-blocks 2k and 2k + 1, words 0-15 and 16-31. */
SWA__AMX SWA__INLINE void swa__amx_kunpack(const uint8_t *w, uint32_t type, uint8_t *a, float *d, float *dmin, int32_t *mins)
{
    const __m128i scales_mins = swa__q4k_scales_avx2(w + 4);   /* sc[0..7], m[0..7] */
    const __m512i sc16 = _mm512_cvtepu8_epi16(_mm256_castsi128_si256(scales_mins));
    int k;
    for (k = 0; k < 4; k++) {
        __m512i q = type == SWA_TYPE_Q4_K ? swa__q4k_group_avx512(w, k) : swa__q5k_group_avx512(w, k);
        __m512i sc = swa__spread_avx512(sc16, swa__spread16, 2 * k);
        _mm512_storeu_si512(a + 64 * k, swa__bytes_times_amx(q, _mm512_and_si512(sc, _mm512_set1_epi16(7))));
        _mm512_storeu_si512(a + 256 + 64 * k, swa__bytes_times_amx(q, _mm512_srli_epi16(sc, 3)));
    }
    *d = _cvtsh_ss(swa__load_u16(w));
    *dmin = _cvtsh_ss(swa__load_u16(w + 2));
    _mm_storeu_si128((__m128i *)mins, _mm_sub_epi16(_mm_setzero_si128(), _mm_cvtepu8_epi16(_mm_srli_si128(scales_mins, 8))));
}

/* 16 unpacked rows (super-block s of row m at wq + (m * nsb + s) * SWA__AMX_KROW, its scales
   at index m * nsb + s) against one token group's units xg: out[16 m + t]. A quarter's two
   products load their tiles A and B in one of two sets, so that the next quarter's loads need
   not wait for this quarter's products. */
SWA__AMX SWA__INLINE void swa__amx_kgroup(const uint8_t *wq, const float *d, const float *dmin, const int32_t *mins,
                                          const swa__kunit *xg, int64_t nsb, int32_t *c, float *out,
                                          swa__amx_ahead *ahead)
{
    const int64_t a_stride = nsb * SWA__AMX_KROW;
    __m512 rs[16], rm[16];
    int64_t s;
    int m, k;
    SWA__UNROLL(16)
    for (m = 0; m < 16; m++) rs[m] = rm[m] = _mm512_setzero_ps();
    for (s = 0; s < nsb; s++) {
        const uint8_t *a = wq + s * SWA__AMX_KROW;
        const __m512 ad = _mm512_loadu_ps(xg[s].d);
        const __m512i p0 = _mm512_loadu_si512(xg[s].pair_sums[0]), p1 = _mm512_loadu_si512(xg[s].pair_sums[1]);
        const __m512i p2 = _mm512_loadu_si512(xg[s].pair_sums[2]), p3 = _mm512_loadu_si512(xg[s].pair_sums[3]);
        _tile_zero(0);
        _tile_zero(1);
        SWA__UNROLL(2)
        for (k = 0; k < 4; k += 2) {   /* quarter k in the first set, k + 1 in the second */
            _tile_loadd(2, a + 64 * k, a_stride);
            _tile_loadd(3, a + 256 + 64 * k, a_stride);
            _tile_loadd(4, xg[s].q[k], 64);
            _tile_dpbusd(0, 2, 4);
            _tile_dpbusd(1, 3, 4);
            _tile_loadd(5, a + 64 * (k + 1), a_stride);
            _tile_loadd(6, a + 256 + 64 * (k + 1), a_stride);
            _tile_loadd(7, xg[s].q[k + 1], 64);
            _tile_dpbusd(0, 5, 7);
            _tile_dpbusd(1, 6, 7);
        }
        _tile_stored(0, c, 64);
        _tile_stored(1, c + 256, 64);
        SWA__UNROLL(16)
        for (m = 0; m < 16; m++) {
            const int64_t at = m * nsb + s;
            __m512i sv = _mm512_add_epi32(_mm512_loadu_si512(c + 16 * m), _mm512_slli_epi32(_mm512_loadu_si512(c + 256 + 16 * m), 3));
            __m512i mv = _mm512_madd_epi16(p0, _mm512_set1_epi32(mins[SWA__AMX_KINTS * at]));
            mv = _mm512_dpwssd_epi32(mv, p1, _mm512_set1_epi32(mins[SWA__AMX_KINTS * at + 1]));
            mv = _mm512_dpwssd_epi32(mv, p2, _mm512_set1_epi32(mins[SWA__AMX_KINTS * at + 2]));
            mv = _mm512_dpwssd_epi32(mv, p3, _mm512_set1_epi32(mins[SWA__AMX_KINTS * at + 3]));
            rs[m] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_set1_ps(d[at]), ad), _mm512_cvtepi32_ps(sv), rs[m]);
            rm[m] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_set1_ps(dmin[at]), ad), _mm512_cvtepi32_ps(mv), rm[m]);
            swa__amx_fetch_ahead(ahead, m);
        }
    }
    SWA__UNROLL(16)
    for (m = 0; m < 16; m++) _mm512_storeu_ps(out + 16 * m, _mm512_add_ps(rs[m], rm[m]));
}

/* Signed bytes q times the int16 words e (each product within a signed byte). */
SWA__AMX SWA__INLINE __m512i swa__signed_bytes_times_amx(__m512i q, __m512i e)
{
    __m512i even = _mm512_mullo_epi16(_mm512_srai_epi16(_mm512_slli_epi16(q, 8), 8), e);
    __m512i odd = _mm512_mullo_epi16(_mm512_srai_epi16(q, 8), e);
    return _mm512_or_si512(_mm512_and_si512(even, _mm512_set1_epi16(0xff)), _mm512_slli_epi16(odd, 8));
}

/* Row super-block w of Q6_K unpacked: q - 32 in order times digit k of its sub-block's scale
   at a + 256 k, and its d. The scales' balanced base-7 digits, sc = e0 + 7 e1 + 49 e2 with
   each e in -3..3, come from x = sc + 129 in 1..256: e0 = x mod 7 - 3 and sc - e0 = 7 (x / 7 -
   18), and so on (x / 7 as a multiply by 9363 / 65536, exact below 2^13). */
SWA__AMX SWA__INLINE void swa__amx_q6k_unpack(const uint8_t *w, uint8_t *a, float *d)
{
    const __m256i seven = _mm256_set1_epi16(7), inv7 = _mm256_set1_epi16(9363), three = _mm256_set1_epi16(3);
    __m256i x = _mm256_add_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w + 192))), _mm256_set1_epi16(129));
    __m256i q1 = _mm256_mulhi_epu16(x, inv7), x2 = _mm256_add_epi16(q1, _mm256_set1_epi16(6)), q2 = _mm256_mulhi_epu16(x2, inv7);
    __m512i e[3];
    int k, i;
    e[0] = _mm512_zextsi256_si512(_mm256_sub_epi16(_mm256_sub_epi16(x, _mm256_mullo_epi16(q1, seven)), three));
    e[1] = _mm512_zextsi256_si512(_mm256_sub_epi16(_mm256_sub_epi16(x2, _mm256_mullo_epi16(q2, seven)), three));
    e[2] = _mm512_zextsi256_si512(_mm256_sub_epi16(q2, three));
    for (k = 0; k < 4; k++) {
        __m512i q = _mm512_sub_epi8(swa__q6k_quarter_avx512(w, k), _mm512_set1_epi8(32));
        for (i = 0; i < 3; i++)
            _mm512_storeu_si512(a + 256 * i + 64 * k, swa__signed_bytes_times_amx(q, swa__spread_avx512(e[i], swa__spread8, 4 * k)));
    }
    *d = _cvtsh_ss(swa__load_u16(w + 208));
}

/* The same as swa__amx_kgroup for Q6_K: three tiles C, one a digit, accumulate a super-block's
   four quarters, and S = C0 + 7 (C1 + 7 C2). */
SWA__AMX SWA__INLINE void swa__amx_q6k_group(const uint8_t *wq, const float *d, const swa__kunit *xg, int64_t nsb,
                                             int32_t *c, float *out, swa__amx_ahead *ahead)
{
    const int64_t a_stride = nsb * SWA__AMX_KROW;
    __m512 r[16];
    int64_t s;
    int m, k;
    SWA__UNROLL(16)
    for (m = 0; m < 16; m++) r[m] = _mm512_setzero_ps();
    for (s = 0; s < nsb; s++) {
        const uint8_t *a = wq + s * SWA__AMX_KROW;
        const __m512 ad = _mm512_loadu_ps(xg[s].d);
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        for (k = 0; k < 4; k++) {
            _tile_loadd(3, a + 64 * k, a_stride);
            _tile_loadd(4, a + 256 + 64 * k, a_stride);
            _tile_loadd(5, a + 512 + 64 * k, a_stride);
            _tile_loadd(6, xg[s].q[k], 64);
            _tile_dpbssd(0, 3, 6);
            _tile_dpbssd(1, 4, 6);
            _tile_dpbssd(2, 5, 6);
        }
        _tile_stored(0, c, 64);
        _tile_stored(1, c + 256, 64);
        _tile_stored(2, c + 512, 64);
        SWA__UNROLL(16)
        for (m = 0; m < 16; m++) {
            __m512i c2 = _mm512_loadu_si512(c + 512 + 16 * m);
            __m512i t = _mm512_add_epi32(_mm512_loadu_si512(c + 256 + 16 * m), _mm512_sub_epi32(_mm512_slli_epi32(c2, 3), c2));
            __m512i sv = _mm512_add_epi32(_mm512_loadu_si512(c + 16 * m), _mm512_sub_epi32(_mm512_slli_epi32(t, 3), t));
            r[m] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_set1_ps(d[m * nsb + s]), ad), _mm512_cvtepi32_ps(sv), r[m]);
            swa__amx_fetch_ahead(ahead, m);
        }
    }
    SWA__UNROLL(16)
    for (m = 0; m < 16; m++) _mm512_storeu_ps(out + 16 * m, r[m]);
}

/* Row super-block w of IQ4_XS unpacked: its values in order at a, its 8 scales (less 32) at
   sc, its d. */
SWA__AMX SWA__INLINE void swa__amx_iq4xs_unpack(const uint8_t *w, uint8_t *a, int32_t *sc, float *d)
{
    int c;
    for (c = 0; c < 4; c++) _mm512_storeu_si512(a + 64 * c, swa__iq4xs_chunk_avx512(w, c));
    _mm256_storeu_si256((__m256i *)sc, swa__iq4xs_scales_avx512(w));
    *d = _cvtsh_ss(swa__load_u16(w));
}

/* The same as swa__amx_kgroup for IQ4_XS, whose 6-bit scales times its values leave a byte:
   each 32-element sub-block is a product of its own (tiles as in Q8_0's, swa__gemm_amx), its C
   scaled by the rows' scales in integers, and S FMA'd once a super-block as the vector dots do
   (swa__row_dots_exact_avx512). The float accumulators stay in out. */
SWA__AMX SWA__INLINE void swa__amx_iq4xs_group(const uint8_t *wq, const float *d, const int32_t *sc, const swa__kunit *xg,
                                               int64_t nsb, int32_t *c, float *out, swa__amx_ahead *ahead)
{
    const int64_t a_stride = nsb * SWA__AMX_KROW;
    __m512i sv[16];
    int64_t s;
    int m, j;
    SWA__UNROLL(16)
    for (m = 0; m < 16; m++) _mm512_storeu_ps(out + 16 * m, _mm512_setzero_ps());
    for (s = 0; s < nsb; s++) {
        const __m512 ad = _mm512_loadu_ps(xg[s].d);
        SWA__UNROLL(16)
        for (m = 0; m < 16; m++) sv[m] = _mm512_setzero_si512();
        for (j = 0; j < 8; j++) {
            swa__amx_product(wq + s * SWA__AMX_KROW + 32 * j, a_stride, xg[s].q[j / 2][8 * (j % 2)], c);
            SWA__UNROLL(16)
            for (m = 0; m < 16; m++) {
                sv[m] = _mm512_add_epi32(sv[m], _mm512_mullo_epi32(_mm512_loadu_si512(c + 16 * m),
                                                                   _mm512_set1_epi32(sc[(m * nsb + s) * SWA__AMX_KINTS + j])));
                if (j == 0) swa__amx_fetch_ahead(ahead, m);
            }
        }
        SWA__UNROLL(16)
        for (m = 0; m < 16; m++)
            _mm512_storeu_ps(out + 16 * m, _mm512_fmadd_ps(_mm512_mul_ps(_mm512_set1_ps(d[m * nsb + s]), ad),
                                                           _mm512_cvtepi32_ps(sv[m]), _mm512_loadu_ps(out + 16 * m)));
    }
}

/* A thread's scratch for n_in columns: 16 unpacked rows and their scales, the results and
   three tiles C, aligned by hand. */
static uint64_t swa__amx_kscratch(int64_t n_in)
{
    uint64_t nsb = (uint64_t)(n_in / 256);
    return 16 * nsb * (SWA__AMX_KROW + 2 * sizeof(float) + SWA__AMX_KINTS * sizeof(int32_t)) + (256 + 3 * 256) * 4 + 64;
}

/* y[t * ldy + r] = dot(row r, token t) for nr Q4_K, Q5_K, Q6_K or IQ4_XS rows and n tokens
   packed by swa__amx_pack_q8k. */
SWA__AMX SWA__INLINE void swa__gemm_k_amx(const uint8_t *w, size_t w_stride, int64_t nr, const void *xpack, int64_t n,
                                             int64_t n_in, float *y, int64_t ldy, void *scratch, const uint32_t type)
{
    const int64_t nsb = n_in / 256, bytes = (int64_t)swa_type_block_bytes(type);
    const swa__kunit *xu = (const swa__kunit *)xpack;
    uint8_t *wq = (uint8_t *)swa__line_up(scratch);
    float *out = (float *)(wq + 16 * nsb * SWA__AMX_KROW), *d = out + 256, *dmin = d + 16 * nsb;
    int32_t *c = (int32_t *)(dmin + 16 * nsb), *mins = c + 3 * 256;
    swa__tile_config cfg;
    int64_t r, g, s;
    int m, i;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (i = 0; i < 8; i++) {   /* every tile 16 rows of 64 bytes (see the group functions) */
        cfg.rows[i] = 16;
        cfg.colsb[i] = 64;
    }
    if (type == SWA_TYPE_IQ4_XS) {   /* a sub-block's product: A 16 rows x 32 bytes, B 8 rows x 64 */
        cfg.colsb[1] = 32;
        cfg.rows[2] = 8;
    }
    _tile_loadconfig(&cfg);
    for (r = 0; r < nr; r += 16) {
        const uint8_t *rows16 = w + (size_t)r * w_stride;
        int rows = nr - r < 16 ? (int)(nr - r) : 16;
        swa__amx_ahead ahead = swa__amx_ahead_of(w, w_stride, r, 16, nr, nsb * ((n + 15) / 16));
        for (m = 0; m < 16; m++)
            for (s = 0; s < nsb; s++) {
                int64_t at = m * nsb + s;
                if (m >= rows) {   /* a missing row: zeros */
                    memset(wq + at * SWA__AMX_KROW, 0, SWA__AMX_KROW);
                    d[at] = dmin[at] = 0.0f;
                    memset(mins + SWA__AMX_KINTS * at, 0, SWA__AMX_KINTS * sizeof(int32_t));
                } else if (type == SWA_TYPE_Q6_K) {
                    swa__amx_q6k_unpack(rows16 + (size_t)m * w_stride + s * bytes, wq + at * SWA__AMX_KROW, d + at);
                } else if (type == SWA_TYPE_IQ4_XS) {
                    swa__amx_iq4xs_unpack(rows16 + (size_t)m * w_stride + s * bytes, wq + at * SWA__AMX_KROW,
                                          mins + SWA__AMX_KINTS * at, d + at);
                } else {
                    swa__amx_kunpack(rows16 + (size_t)m * w_stride + s * bytes, type, wq + at * SWA__AMX_KROW, d + at,
                                     dmin + at, mins + SWA__AMX_KINTS * at);
                }
            }
        for (g = 0; g * 16 < n; g++) {
            if (type == SWA_TYPE_Q6_K) swa__amx_q6k_group(wq, d, xu + g * nsb, nsb, c, out, &ahead);
            else if (type == SWA_TYPE_IQ4_XS) swa__amx_iq4xs_group(wq, d, mins, xu + g * nsb, nsb, c, out, &ahead);
            else swa__amx_kgroup(wq, d, dmin, mins, xu + g * nsb, nsb, c, out, &ahead);
            swa__put_group(out, rows, g, 16, n, y, ldy, r);
        }
    }
    _tile_release();
}

SWA__AMX static void swa__gemm_q4_k_amx(const uint8_t *w, size_t w_stride, int64_t nr, const void *xpack, int64_t n,
                                        int64_t n_in, float *y, int64_t ldy, void *scratch)
{
    swa__gemm_k_amx(w, w_stride, nr, xpack, n, n_in, y, ldy, scratch, SWA_TYPE_Q4_K);
}

SWA__AMX static void swa__gemm_q5_k_amx(const uint8_t *w, size_t w_stride, int64_t nr, const void *xpack, int64_t n,
                                        int64_t n_in, float *y, int64_t ldy, void *scratch)
{
    swa__gemm_k_amx(w, w_stride, nr, xpack, n, n_in, y, ldy, scratch, SWA_TYPE_Q5_K);
}

SWA__AMX static void swa__gemm_q6_k_amx(const uint8_t *w, size_t w_stride, int64_t nr, const void *xpack, int64_t n,
                                        int64_t n_in, float *y, int64_t ldy, void *scratch)
{
    swa__gemm_k_amx(w, w_stride, nr, xpack, n, n_in, y, ldy, scratch, SWA_TYPE_Q6_K);
}

SWA__AMX static void swa__gemm_iq4_xs_amx(const uint8_t *w, size_t w_stride, int64_t nr, const void *xpack, int64_t n,
                                          int64_t n_in, float *y, int64_t ldy, void *scratch)
{
    swa__gemm_k_amx(w, w_stride, nr, xpack, n, n_in, y, ldy, scratch, SWA_TYPE_IQ4_XS);
}

/* Packed tokens for n tokens of up to n_in columns, and a thread's scratch, for either kind
   of product: Q8_0/Q4_0 (16 unpacked rows and their scales, the 16 accumulators' registers,
   the tree's results and tile C, aligned by hand) or the K-quants (swa__amx_kscratch). */
static void swa__amx_memory(int64_t n, int64_t n_in, uint64_t *pack_bytes, uint64_t *scratch_bytes)
{
    uint64_t blocks = (uint64_t)swa__amx_blocks(n_in + 31), wide = (uint64_t)(n + 15) / 16 * blocks;
    uint64_t kpack = (uint64_t)(n + 15) / 16 * (uint64_t)(n_in / 256) * sizeof(swa__kunit), kscratch = swa__amx_kscratch(n_in);
    uint64_t small = (uint64_t)(n < SWA__AMX_FROM ? n : SWA__AMX_FROM - 1) * (uint64_t)swa__q8t_units(n_in + 31) * sizeof(swa__q8t);
    uint64_t avx512_pack, avx512_scratch;   /* IQ4_NL's and MXFP4's products are the avx512 set's */
    swa__gemm_memory_avx512(n, n_in, &avx512_pack, &avx512_scratch);
    *pack_bytes = (wide > blocks / 2 ? wide : blocks / 2) * sizeof(swa__amx_unit);
    if (small > *pack_bytes) *pack_bytes = small;
    *scratch_bytes = SWA__AMX_GROUPS * (16 * blocks * 32 + 16 * (uint64_t)swa__amx_scale_stride((int64_t)blocks) * sizeof(float)) +
                     (16 * 16 * 16 + 16 * 16 + 16 * 16) * sizeof(float) + 64;
    if (kpack > *pack_bytes) *pack_bytes = kpack;
    if (avx512_pack > *pack_bytes) *pack_bytes = avx512_pack;
    if (kscratch > *scratch_bytes) *scratch_bytes = kscratch;
    if (avx512_scratch > *scratch_bytes) *scratch_bytes = avx512_scratch;
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif /* SWA__HAVE_AMX */

/* ==== kernels (NEON) ====
   Chosen at compile time on AArch64. The same contracts as the AVX2 kernels: float dots keep
   4 x 4 partial sums with FMA (1e-5 of the sum of |products|); Q8_0 and Q4_0 add each block's
   exact integer sum in float lanes (1e-5); the K-quants reduce each super-block's integers
   exactly, then do the reference's float steps; quantization and the F16 conversion round to
   nearest even like the reference: bit-identical. Integer dots use the dot-product extension
   when the compiler targets it (__ARM_FEATURE_DOTPROD) and widening multiplies otherwise. */

#if defined(SWA__HAVE_NEON)

/* Sum of a[i] * b[i] over 16 signed bytes, as four int32 lanes. */
static inline int32x4_t swa__dot16_neon(int32x4_t acc, int8x16_t a, int8x16_t b)
{
#if defined(__ARM_FEATURE_DOTPROD)
    return vdotq_s32(acc, a, b);
#else
    int16x8_t p = vmull_s8(vget_low_s8(a), vget_low_s8(b));
    p = vmlal_s8(p, vget_high_s8(a), vget_high_s8(b));
    return vpadalq_s16(acc, p);
#endif
}

static inline float32x4_t swa__load_f16_neon(const uint16_t *p)
{
    return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p)));
}

static inline float32x4_t swa__load_bf16_neon(const uint16_t *p)
{
    return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p), 16));
}

/* Float rows against up to 4 tokens: each 16 weights are widened once and meet every token,
   which keeps the four accumulators the 1-token call has (the same code with nt = 1): 16 of
   the 32 vector registers. */
#define SWA__FLOAT_STEP_NEON(k, A, nt, xb, stride, i, w0, w1, w2, w3)                              \
    if ((nt) > (k)) {                                                                               \
        const float *v = (const float *)((xb) + (size_t)(k) * (stride)) + (i);                      \
        A##0 = vfmaq_f32(A##0, w0, vld1q_f32(v));                                                   \
        A##1 = vfmaq_f32(A##1, w1, vld1q_f32(v + 4));                                               \
        A##2 = vfmaq_f32(A##2, w2, vld1q_f32(v + 8));                                               \
        A##3 = vfmaq_f32(A##3, w3, vld1q_f32(v + 12));                                              \
    }
#define SWA__FLOAT_TAIL_NEON(k, A, LOAD, SCALAR, nt, xb, stride, i, w, n, out)                      \
    if ((nt) > (k)) {                                                                               \
        const float *v = (const float *)((xb) + (size_t)(k) * (stride));                            \
        float sum;                                                                                  \
        int64_t j = (i);                                                                            \
        for (; j + 4 <= (n); j += 4) A##0 = vfmaq_f32(A##0, LOAD((w) + j), vld1q_f32(v + j));       \
        sum = vaddvq_f32(vaddq_f32(vaddq_f32(A##0, A##1), vaddq_f32(A##2, A##3)));                  \
        for (; j < (n); j++) sum += SCALAR((w)[j]) * v[j];                                          \
        (out)[k] = sum;                                                                             \
    }

#define SWA__DOTS_FLOAT_NEON(dots, dot, T, LOAD, SCALAR)                                            \
    static void dots##_row(const void *row, const void *x, size_t stride, int nt, int64_t n, float *out) \
    {                                                                                               \
        const T *w = (const T *)row;                                                                \
        const uint8_t *xb = (const uint8_t *)x;                                                    \
        float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0; \
        float32x4_t c0 = a0, c1 = a0, c2 = a0, c3 = a0, d0 = a0, d1 = a0, d2 = a0, d3 = a0;         \
        int64_t i = 0;                                                                              \
        for (; i + 16 <= n; i += 16) {                                                              \
            float32x4_t w0 = LOAD(w + i), w1 = LOAD(w + i + 4), w2 = LOAD(w + i + 8), w3 = LOAD(w + i + 12); \
            SWA__FLOAT_STEP_NEON(0, a, nt, xb, stride, i, w0, w1, w2, w3)                           \
            SWA__FLOAT_STEP_NEON(1, b, nt, xb, stride, i, w0, w1, w2, w3)                           \
            SWA__FLOAT_STEP_NEON(2, c, nt, xb, stride, i, w0, w1, w2, w3)                           \
            SWA__FLOAT_STEP_NEON(3, d, nt, xb, stride, i, w0, w1, w2, w3)                           \
        }                                                                                           \
        SWA__FLOAT_TAIL_NEON(0, a, LOAD, SCALAR, nt, xb, stride, i, w, n, out)                      \
        SWA__FLOAT_TAIL_NEON(1, b, LOAD, SCALAR, nt, xb, stride, i, w, n, out)                      \
        SWA__FLOAT_TAIL_NEON(2, c, LOAD, SCALAR, nt, xb, stride, i, w, n, out)                      \
        SWA__FLOAT_TAIL_NEON(3, d, LOAD, SCALAR, nt, xb, stride, i, w, n, out)                      \
    }                                                                                               \
    SWA__DOTS_FROM_ROW_DOTS(, dots, dots##_row)                                                    \
    SWA__DOT_FROM_DOTS(, dot, dots)

#define SWA__LOAD_F32_NEON(p) vld1q_f32(p)
SWA__DOTS_FLOAT_NEON(swa__dots_f32_neon, swa__dot_f32_neon, float, SWA__LOAD_F32_NEON, SWA__SCALAR_F32)
SWA__DOTS_FLOAT_NEON(swa__dots_f16_neon, swa__dot_f16_neon, uint16_t, swa__load_f16_neon, swa__f16_to_f32)
SWA__DOTS_FLOAT_NEON(swa__dots_bf16_neon, swa__dot_bf16_neon, uint16_t, swa__load_bf16_neon, swa__bf16_to_f32)

/* Q8_0 and Q4_0 rows against up to 4 tokens: the weight block is unpacked once and meets each
   token's block in its own accumulator, with the steps the 1-token call takes. */

/* One block's 32 weights, elements 0..15 and 16..31: Q8_0's as stored; Q4_0's low nibbles then
   its high ones, minus 8. */
SWA__INLINE void swa__block_neon(const uint8_t *w, uint32_t type, int8x16_t *q0, int8x16_t *q1)
{
    uint8x16_t raw;
    if (type == SWA_TYPE_Q8_0) {
        *q0 = vld1q_s8((const int8_t *)w + 2);
        *q1 = vld1q_s8((const int8_t *)w + 18);
        return;
    }
    raw = vld1q_u8(w + 2);
    *q0 = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(raw, vdupq_n_u8(15))), vdupq_n_s8(8));
    *q1 = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(raw, 4)), vdupq_n_s8(8));
}

/* Block b (weights q0, q1, scale dw) against one token's activations a, into its accumulator. */
SWA__INLINE float32x4_t swa__block_step_neon(float32x4_t acc, const swa__q8g *a, int64_t b, int8x16_t q0, int8x16_t q1,
                                             float dw)
{
    int32x4_t s = swa__dot16_neon(swa__dot16_neon(vdupq_n_s32(0), q0, vld1q_s8(swa__q8g_half(a, b, 0))),
                                  q1, vld1q_s8(swa__q8g_half(a, b, 1)));
    return vfmaq_n_f32(acc, vcvtq_f32_s32(s), dw * a[b / 8].d[b % 8]);
}

SWA__INLINE void swa__row_dots_blocks_neon(const void *row, const void *x, size_t stride, int nt, int64_t n, float *out,
                                           const uint32_t type)
{
    const uint8_t *w = (const uint8_t *)row, *xa = (const uint8_t *)x;
    const int64_t bytes = swa__types[type].block_bytes;
    float32x4_t c0 = vdupq_n_f32(0.0f), c1 = c0, c2 = c0, c3 = c0;
    int64_t b;
    for (b = 0; b < n / 32; b++, w += bytes) {
        int8x16_t q0, q1;
        float dw = swa__f16_to_f32(swa__load_u16(w));
        swa__block_neon(w, type, &q0, &q1);
        c0 = swa__block_step_neon(c0, (const swa__q8g *)xa, b, q0, q1, dw);
        if (nt > 1) c1 = swa__block_step_neon(c1, (const swa__q8g *)(xa + stride), b, q0, q1, dw);
        if (nt > 2) c2 = swa__block_step_neon(c2, (const swa__q8g *)(xa + 2 * stride), b, q0, q1, dw);
        if (nt > 3) c3 = swa__block_step_neon(c3, (const swa__q8g *)(xa + 3 * stride), b, q0, q1, dw);
    }
    out[0] = vaddvq_f32(c0);
    if (nt > 1) out[1] = vaddvq_f32(c1);
    if (nt > 2) out[2] = vaddvq_f32(c2);
    if (nt > 3) out[3] = vaddvq_f32(c3);
}

/* K-quant rows against up to 4 tokens: a super-block's scales and quants are unpacked once,
   into 16 vectors in element order, and meet each token's quants with the steps the 1-token
   call takes (the 1-token call is this with nt = 1). */

/* One token's term for a Q4_K or Q5_K super-block unpacked into q (sub-block j in q[2 j] and
   q[2 j + 1], quants 0..31) with its scales, mins, d and dmin. */
static float swa__k_term_neon(const int8x16_t *q, const uint8_t *sc, const uint8_t *m, float d, float dmin,
                              const swa__q8k *a)
{
    int32x4_t acc = vdupq_n_s32(0);  /* scaled sums, lane by lane: one reduction at the end */
    int32_t summ = 0;
    int j;
    for (j = 0; j < 8; j++) {
        int32x4_t s = swa__dot16_neon(swa__dot16_neon(vdupq_n_s32(0), q[2 * j], vld1q_s8(a->q + 32 * j)),
                                      q[2 * j + 1], vld1q_s8(a->q + 32 * j + 16));
        acc = vmlaq_n_s32(acc, s, sc[j]);
        summ += m[j] * (a->bsum[2 * j] + a->bsum[2 * j + 1]);
    }
    return a->d * (d * (float)vaddvq_s32(acc) - dmin * (float)summ);
}

static void swa__row_dots_q4_k_neon(const void *row, const void *x, size_t stride, int nt, int64_t n, float *out)
{
    const uint8_t *w = (const uint8_t *)row;
    float sum[SWA__TILE_TOKENS] = {0.0f};
    int64_t i;
    int t, g;
    for (i = 0; i < n / 256; i++, w += 144) {
        const float d = swa__f16_to_f32(swa__load_u16(w)), dmin = swa__f16_to_f32(swa__load_u16(w + 2));
        uint8_t sc[8], m[8];
        int8x16_t q[16];                 /* sub-block j in q[2 j], q[2 j + 1] */
        swa__q4k_scales(w + 4, sc, m);
        for (g = 0; g < 4; g++) {        /* group g: sub-block 2 g in the low nibbles, 2 g + 1 high */
            uint8x16_t r0 = vld1q_u8(w + 16 + 32 * g), r1 = vld1q_u8(w + 32 + 32 * g);
            q[4 * g] = vreinterpretq_s8_u8(vandq_u8(r0, vdupq_n_u8(15)));
            q[4 * g + 1] = vreinterpretq_s8_u8(vandq_u8(r1, vdupq_n_u8(15)));
            q[4 * g + 2] = vreinterpretq_s8_u8(vshrq_n_u8(r0, 4));
            q[4 * g + 3] = vreinterpretq_s8_u8(vshrq_n_u8(r1, 4));
        }
        for (t = 0; t < nt; t++)
            sum[t] += swa__k_term_neon(q, sc, m, d, dmin, (const swa__q8k *)((const uint8_t *)x + (size_t)t * stride) + i);
    }
    for (t = 0; t < nt; t++) out[t] = sum[t];
}

/* Q5_K: Q4_K's nibbles with the fifth bits put beside them, bit j of qh[l] for element l of
   sub-block j. With qh shifted right by 2 g, group g's bits are bits 0 and 1: vsli puts bit 0,
   shifted up, above a low nibble; vsri puts a high nibble, shifted down, below bit 1 moved to 4. */
static void swa__row_dots_q5_k_neon(const void *row, const void *x, size_t stride, int nt, int64_t n, float *out)
{
    const uint8_t *w = (const uint8_t *)row;
    const uint8x16_t one = vdupq_n_u8(1), two = vdupq_n_u8(2);
    float sum[SWA__TILE_TOKENS] = {0.0f};
    int64_t i;
    int t, g;
    for (i = 0; i < n / 256; i++, w += 176) {
        const float d = swa__f16_to_f32(swa__load_u16(w)), dmin = swa__f16_to_f32(swa__load_u16(w + 2));
        uint8_t sc[8], m[8];
        int8x16_t q[16];                 /* sub-block j in q[2 j], q[2 j + 1] */
        uint8x16_t h0 = vld1q_u8(w + 16), h1 = vld1q_u8(w + 32);   /* qh of elements 0..15, 16..31 */
        swa__q4k_scales(w + 4, sc, m);
        for (g = 0; g < 4; g++, h0 = vshrq_n_u8(h0, 2), h1 = vshrq_n_u8(h1, 2)) {
            uint8x16_t r0 = vld1q_u8(w + 48 + 32 * g), r1 = vld1q_u8(w + 64 + 32 * g);
            q[4 * g] = vreinterpretq_s8_u8(vsliq_n_u8(r0, vandq_u8(h0, one), 4));
            q[4 * g + 1] = vreinterpretq_s8_u8(vsliq_n_u8(r1, vandq_u8(h1, one), 4));
            q[4 * g + 2] = vreinterpretq_s8_u8(vsriq_n_u8(vshlq_n_u8(vandq_u8(h0, two), 3), r0, 4));
            q[4 * g + 3] = vreinterpretq_s8_u8(vsriq_n_u8(vshlq_n_u8(vandq_u8(h1, two), 3), r1, 4));
        }
        for (t = 0; t < nt; t++)
            sum[t] += swa__k_term_neon(q, sc, m, d, dmin, (const swa__q8k *)((const uint8_t *)x + (size_t)t * stride) + i);
    }
    for (t = 0; t < nt; t++) out[t] = sum[t];
}

/* Q6_K: element e's quant is 4 bits of ql and 2 of qh, 0..63, less 32; e / 16 picks its scale. */
static void swa__row_dots_q6_k_neon(const void *row, const void *x, size_t stride, int nt, int64_t n, float *out)
{
    const uint8_t *w = (const uint8_t *)row;
    const uint8x16_t low4 = vdupq_n_u8(15), low2 = vdupq_n_u8(3);
    const int8x16_t m32 = vdupq_n_s8(32);
    float sum[SWA__TILE_TOKENS] = {0.0f};
    int64_t i;
    int t, h, part, j;
    for (i = 0; i < n / 256; i++, w += 210) {
        const int8_t *sc = (const int8_t *)(w + 192);
        const float d = swa__f16_to_f32(swa__load_u16(w + 208));
        int8x16_t q[16];                 /* elements 16 j .. 16 j + 15 */
        for (h = 0; h < 2; h++)
            for (part = 0; part < 2; part++) {          /* 16 of the 32 columns at a time */
                const uint8_t *ql = w + 64 * h + 16 * part, *qh = w + 128 + 32 * h + 16 * part;
                uint8x16_t l0 = vld1q_u8(ql), l1 = vld1q_u8(ql + 32), hb = vld1q_u8(qh);
                int k0 = 8 * h + part;   /* columns k = 0..3 land 32 k elements apart: 2 vectors */
                q[k0] = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(vandq_u8(l0, low4), vshlq_n_u8(vandq_u8(hb, low2), 4))), m32);
                q[k0 + 2] = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(vandq_u8(l1, low4),
                                                                  vshlq_n_u8(vandq_u8(vshrq_n_u8(hb, 2), low2), 4))), m32);
                q[k0 + 4] = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(l0, 4),
                                                                  vshlq_n_u8(vandq_u8(vshrq_n_u8(hb, 4), low2), 4))), m32);
                q[k0 + 6] = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(l1, 4), vshlq_n_u8(vshrq_n_u8(hb, 6), 4))), m32);
            }
        for (t = 0; t < nt; t++) {
            const swa__q8k *a = (const swa__q8k *)((const uint8_t *)x + (size_t)t * stride) + i;
            int32x4_t acc = vdupq_n_s32(0);  /* scaled sums, lane by lane: one reduction at the end */
            for (j = 0; j < 16; j++)
                acc = vmlaq_n_s32(acc, swa__dot16_neon(vdupq_n_s32(0), q[j], vld1q_s8(a->q + 16 * j)), sc[j]);
            sum[t] += d * a->d * (float)vaddvq_s32(acc);
        }
    }
    for (t = 0; t < nt; t++) out[t] = sum[t];
}

SWA__DOTS_FROM_ROW_DOTS(, swa__dots_q4_k_neon, swa__row_dots_q4_k_neon)
SWA__DOTS_FROM_ROW_DOTS(, swa__dots_q5_k_neon, swa__row_dots_q5_k_neon)
SWA__DOTS_FROM_ROW_DOTS(, swa__dots_q6_k_neon, swa__row_dots_q6_k_neon)
SWA__DOT_FROM_DOTS(, swa__dot_q4_k_neon, swa__dots_q4_k_neon)
SWA__DOT_FROM_DOTS(, swa__dot_q5_k_neon, swa__dots_q5_k_neon)
SWA__DOT_FROM_DOTS(, swa__dot_q6_k_neon, swa__dots_q6_k_neon)

/* Q4_1, Q5_0, Q5_1, IQ4_NL and MXFP4 rows against up to 4 tokens, a block at a time: its quants
   unpacked once into two vectors (elements 0..15, 16..31; the table types by table lookup), each
   token's exact integer sum meeting
   d * dx in float lanes, and Q4_1's and Q5_1's offset meeting the block's activation sum. */
static inline uint8x16_t swa__bits_to_bytes_neon(uint32_t bits, int half)   /* bits 16 half .. +15 */
{
    static const uint8_t spread[2][16] = {{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1},
                                          {2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3}};
    static const uint8_t bit[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    uint8x16_t v = vqtbl1q_u8(vreinterpretq_u8_u32(vdupq_n_u32(bits)), vld1q_u8(spread[half]));
    return vtstq_u8(v, vld1q_u8(bit));
}

static inline void swa__b32_quants_neon(const uint8_t *b, uint32_t type, int8x16_t *q0, int8x16_t *q1)
{
    const uint8x16_t raw = vld1q_u8(b + swa__b32_qs_at(type));
    uint8x16_t lo = vandq_u8(raw, vdupq_n_u8(15)), hi = vshrq_n_u8(raw, 4);
    if (swa__b32_table(type)) {
        const int8x16_t table = vld1q_s8(swa__b32_table(type));
        *q0 = vqtbl1q_s8(table, lo);
        *q1 = vqtbl1q_s8(table, hi);
        return;
    }
    if (swa__b32_has_qh(type)) {
        uint32_t qh = swa__load_le32(b + swa__b32_qs_at(type) - 4);
        lo = vorrq_u8(lo, vandq_u8(swa__bits_to_bytes_neon(qh, 0), vdupq_n_u8(16)));
        hi = vorrq_u8(hi, vandq_u8(swa__bits_to_bytes_neon(qh, 1), vdupq_n_u8(16)));
    }
    *q0 = vreinterpretq_s8_u8(lo);
    *q1 = vreinterpretq_s8_u8(hi);
    if (type == SWA_TYPE_Q5_0) {
        *q0 = vsubq_s8(*q0, vdupq_n_s8(16));
        *q1 = vsubq_s8(*q1, vdupq_n_s8(16));
    }
}

static inline void swa__row_dots_b32_neon(const void *row, const void *x, size_t stride, int nt, int64_t n, float *out,
                                          const uint32_t type)
{
    const uint8_t *w = (const uint8_t *)row, *xa = (const uint8_t *)x;
    const int bytes = swa__b32_bytes(type), has_min = swa__b32_has_min(type);
    float32x4_t acc[SWA__TILE_TOKENS];
    float mins[SWA__TILE_TOKENS] = {0.0f, 0.0f, 0.0f, 0.0f};
    int64_t b;
    int t;
    for (t = 0; t < SWA__TILE_TOKENS; t++) acc[t] = vdupq_n_f32(0.0f);
    for (b = 0; b < n / 32; b++, w += bytes) {
        const float d = swa__b32_scale(type, w), m = has_min ? swa__f16_to_f32(swa__load_u16(w + 2)) : 0.0f;
        int8x16_t q0, q1;
        swa__b32_quants_neon(w, type, &q0, &q1);
        for (t = 0; t < nt; t++) {
            const swa__q8g *a = (const swa__q8g *)(xa + (size_t)t * stride);
            const float dx = a[b / 8].d[b % 8];
            int32x4_t s = swa__dot16_neon(swa__dot16_neon(vdupq_n_s32(0), q0, vld1q_s8(swa__q8g_half(a, b, 0))),
                                          q1, vld1q_s8(swa__q8g_half(a, b, 1)));
            acc[t] = vfmaq_n_f32(acc[t], vcvtq_f32_s32(s), d * dx);
            if (has_min) mins[t] += m * dx * (float)(a[b / 8].sum8[b % 8] / 8);
        }
    }
    for (t = 0; t < nt; t++) out[t] = vaddvq_f32(acc[t]) + mins[t];
}

/* Q2_K, Q3_K and IQ4_XS rows: a super-block unpacked once for the tile's tokens into 16 vectors
   of quants in element order, with the scalar unpackers' scales and mins per 16 elements; each
   token's scaled sums reduce once, then the reference's float steps. */
static inline void swa__kblock_quants_neon(const uint8_t *w, uint32_t type, int8x16_t *q)
{
    int h, j, p;
    if (type == SWA_TYPE_IQ4_XS) {
        const int8x16_t table = vld1q_s8(swa__iq4nl_values);
        for (j = 0; j < 8; j++) {
            const uint8x16_t raw = vld1q_u8(w + 8 + 16 * j);
            q[2 * j] = vqtbl1q_s8(table, vandq_u8(raw, vdupq_n_u8(15)));
            q[2 * j + 1] = vqtbl1q_s8(table, vshrq_n_u8(raw, 4));
        }
        return;
    }
    for (h = 0; h < 2; h++)
        for (p = 0; p < 2; p++) {
            const uint8x16_t raw = vld1q_u8(w + (type == SWA_TYPE_Q2_K ? 16 : 32) + 32 * h + 16 * p), hm = vld1q_u8(w + 16 * p);
            for (j = 0; j < 4; j++) {
                uint8x16_t v = vandq_u8(vshlq_u8(raw, vdupq_n_s8((int8_t)(-2 * j))), vdupq_n_u8(3));
                if (type == SWA_TYPE_Q3_K) {   /* the hmask bit set adds 4 back */
                    uint8x16_t bit = vandq_u8(vshlq_u8(hm, vdupq_n_s8((int8_t)(-(4 * h + j)))), vdupq_n_u8(1));
                    v = vsubq_u8(vorrq_u8(v, vshlq_n_u8(bit, 2)), vdupq_n_u8(4));
                }
                q[8 * h + 2 * j + p] = vreinterpretq_s8_u8(v);
            }
        }
}

static inline void swa__row_dots_kblock_neon(const void *row, const void *x, size_t stride, int nt, int64_t n, float *out,
                                             const uint32_t type)
{
    const uint8_t *w = (const uint8_t *)row;
    const int bytes = (int)swa__types[type].block_bytes;
    float sum[SWA__TILE_TOKENS] = {0.0f, 0.0f, 0.0f, 0.0f};
    int64_t i;
    int t, g;
    for (i = 0; i < n / 256; i++, w += bytes) {
        swa__kunpacked s;
        int8x16_t q[16];
        if (type == SWA_TYPE_Q2_K) swa__q2k_scales(w, &s);
        else if (type == SWA_TYPE_Q3_K) swa__q3k_scales(w, &s);
        else swa__iq4xs_scales(w, &s);
        swa__kblock_quants_neon(w, type, q);
        for (t = 0; t < nt; t++) {
            const swa__q8k *a = (const swa__q8k *)((const uint8_t *)x + (size_t)t * stride) + i;
            int32x4_t acc = vdupq_n_s32(0);
            int32_t summ = 0;
            for (g = 0; g < 16; g++) {
                acc = vmlaq_n_s32(acc, swa__dot16_neon(vdupq_n_s32(0), q[g], vld1q_s8(a->q + 16 * g)), s.sc[g]);
                summ += s.mn[g] * a->bsum[g];
            }
            sum[t] += a->d * (s.d * (float)vaddvq_s32(acc) - s.dmin * (float)summ);
        }
    }
    for (t = 0; t < nt; t++) out[t] = sum[t];
}

/* The types whose NEON kernels come from SWA__NEW_TYPE (see SWA__AVX2_TYPES). */
#define SWA__NEON_TYPES(X)                                                                              \
    X(swa__row_dots_q8_0_neon, swa__dots_q8_0_neon, swa__dot_q8_0_neon, swa__row_dots_blocks_neon, SWA_TYPE_Q8_0) \
    X(swa__row_dots_q4_0_neon, swa__dots_q4_0_neon, swa__dot_q4_0_neon, swa__row_dots_blocks_neon, SWA_TYPE_Q4_0) \
    X(swa__row_dots_q4_1_neon, swa__dots_q4_1_neon, swa__dot_q4_1_neon, swa__row_dots_b32_neon, SWA_TYPE_Q4_1) \
    X(swa__row_dots_q5_0_neon, swa__dots_q5_0_neon, swa__dot_q5_0_neon, swa__row_dots_b32_neon, SWA_TYPE_Q5_0) \
    X(swa__row_dots_q5_1_neon, swa__dots_q5_1_neon, swa__dot_q5_1_neon, swa__row_dots_b32_neon, SWA_TYPE_Q5_1) \
    X(swa__row_dots_iq4_nl_neon, swa__dots_iq4_nl_neon, swa__dot_iq4_nl_neon, swa__row_dots_b32_neon, SWA_TYPE_IQ4_NL) \
    X(swa__row_dots_mxfp4_neon, swa__dots_mxfp4_neon, swa__dot_mxfp4_neon, swa__row_dots_b32_neon, SWA_TYPE_MXFP4) \
    X(swa__row_dots_q2_k_neon, swa__dots_q2_k_neon, swa__dot_q2_k_neon, swa__row_dots_kblock_neon, SWA_TYPE_Q2_K) \
    X(swa__row_dots_q3_k_neon, swa__dots_q3_k_neon, swa__dot_q3_k_neon, swa__row_dots_kblock_neon, SWA_TYPE_Q3_K) \
    X(swa__row_dots_iq4_xs_neon, swa__dots_iq4_xs_neon, swa__dot_iq4_xs_neon, swa__row_dots_kblock_neon, SWA_TYPE_IQ4_XS)
#define SWA__NEW_TYPE_NEON(row_dots, dots, dot, driver, type) SWA__NEW_TYPE(, row_dots, dots, dot, driver, type)
SWA__NEON_TYPES(SWA__NEW_TYPE_NEON)
#undef SWA__NEW_TYPE_NEON

static float swa__amax_neon(const float *x, int64_t n)
{
    float32x4_t m = vdupq_n_f32(0.0f);
    int64_t k;
    for (k = 0; k < n; k += 4) m = vmaxq_f32(m, vabsq_f32(vld1q_f32(x + k)));
    return vmaxvq_f32(m);
}

/* 32 floats times id, rounded to nearest even, saturated to bytes (|q| <= 127 anyway). */
static void swa__round32_neon(const float *x, float id, int8_t *q)
{
    int k;
    for (k = 0; k < 32; k += 8) {
        int32x4_t a = vcvtnq_s32_f32(vmulq_n_f32(vld1q_f32(x + k), id));
        int32x4_t b = vcvtnq_s32_f32(vmulq_n_f32(vld1q_f32(x + k + 4), id));
        vst1_s8(q + k, vqmovn_s16(vcombine_s16(vqmovn_s32(a), vqmovn_s32(b))));
    }
}

static void swa__quantize_q8_neon(const float *x, void *out, int64_t n)
{
    swa__q8 *b = (swa__q8 *)out;
    int64_t i;
    for (i = 0; i < n; i += 32, b++, x += 32) {
        float amax = swa__amax_neon(x, 32);
        b->d = amax / 127.0f;
        swa__round32_neon(x, amax > 0.0f ? 127.0f / amax : 0.0f, b->q);
    }
}

static void swa__quantize_q8k_neon(const float *x, void *out, int64_t n)
{
    swa__q8k *b = (swa__q8k *)out;
    int64_t i;
    int k;
    for (i = 0; i < n; i += 256, b++, x += 256) {
        float amax = swa__amax_neon(x, 256), id = amax > 0.0f ? 127.0f / amax : 0.0f;
        b->d = amax / 127.0f;
        for (k = 0; k < 256; k += 32) swa__round32_neon(x + k, id, b->q + k);
        for (k = 0; k < 16; k++) b->bsum[k] = (int16_t)vaddlvq_s8(vld1q_s8(b->q + 16 * k));
    }
}

static void swa__store_f16_neon(const float *x, void *row, int64_t n)
{
    uint16_t *out = (uint16_t *)row;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1_u16(out + i, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(x + i))));
    for (; i < n; i++) out[i] = swa__f32_to_f16(x[i]);
}

static void swa__axpy_f32_neon(float *y, float a, const void *x, int64_t n)
{
    const float *v = (const float *)x;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vfmaq_n_f32(vld1q_f32(y + i), vld1q_f32(v + i), a));
    for (; i < n; i++) y[i] += a * v[i];
}

static void swa__axpy_f16_neon(float *y, float a, const void *x, int64_t n)
{
    const uint16_t *v = (const uint16_t *)x;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vfmaq_n_f32(vld1q_f32(y + i), swa__load_f16_neon(v + i), a));
    for (; i < n; i++) y[i] += a * swa__f16_to_f32(v[i]);
}

static void swa__axpy_q8_0_neon(float *y, float a, const void *x, int64_t n)
{
    const uint8_t *b = (const uint8_t *)x;
    int64_t i;
    int k;
    for (i = 0; i < n; i += 32, b += 34) {
        float s = a * swa__f16_to_f32(swa__load_u16(b));
        for (k = 0; k < 32; k += 8) {
            int16x8_t q = vmovl_s8(vld1_s8((const int8_t *)b + 2 + k));
            float *o = y + i + k;
            vst1q_f32(o, vfmaq_n_f32(vld1q_f32(o), vcvtq_f32_s32(vmovl_s16(vget_low_s16(q))), s));
            vst1q_f32(o + 4, vfmaq_n_f32(vld1q_f32(o + 4), vcvtq_f32_s32(vmovl_s16(vget_high_s16(q))), s));
        }
    }
}

SWA__WSUM_FROM_AXPY(swa__wsum_f32_neon, swa__axpy_f32_neon)
SWA__WSUM_FROM_AXPY(swa__wsum_f16_neon, swa__axpy_f16_neon)
SWA__WSUM_FROM_AXPY(swa__wsum_q8_0_neon, swa__axpy_q8_0_neon)

/* exp(x) for 4 floats: the AVX2 version's method and constants. */
static inline float32x4_t swa__exp_neon(float32x4_t x)
{
    float32x4_t n, r, y;
    x = vmaxq_f32(vminq_f32(x, vdupq_n_f32(88.3762626647949f)), vdupq_n_f32(-87.3365478515625f));
    n = vrndmq_f32(vfmaq_f32(vdupq_n_f32(0.5f), x, vdupq_n_f32(1.44269504088896341f)));
    r = vfmsq_f32(x, n, vdupq_n_f32(0.693359375f));
    r = vfmsq_f32(r, n, vdupq_n_f32(-2.12194440e-4f));
    y = vdupq_n_f32(1.9875691500e-4f);
    y = vfmaq_f32(vdupq_n_f32(1.3981999507e-3f), y, r);
    y = vfmaq_f32(vdupq_n_f32(8.3334519073e-3f), y, r);
    y = vfmaq_f32(vdupq_n_f32(4.1665795894e-2f), y, r);
    y = vfmaq_f32(vdupq_n_f32(1.6666665459e-1f), y, r);
    y = vfmaq_f32(vdupq_n_f32(5.0000001201e-1f), y, r);
    y = vfmaq_f32(vaddq_f32(r, vdupq_n_f32(1.0f)), y, vmulq_f32(r, r));
    return vmulq_f32(y, vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(n), vdupq_n_s32(127)), 23)));
}

static void swa__rmsnorm_neon(float *out, const float *x, const float *w, int64_t n, float eps)
{
    float32x4_t acc = vdupq_n_f32(0.0f);
    float ss, scale;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) acc = vfmaq_f32(acc, vld1q_f32(x + i), vld1q_f32(x + i));
    ss = vaddvq_f32(acc);
    for (; i < n; i++) ss += x[i] * x[i];
    scale = 1.0f / sqrtf(ss / (float)n + eps);
    for (i = 0; i + 4 <= n; i += 4) vst1q_f32(out + i, vmulq_f32(vmulq_n_f32(vld1q_f32(x + i), scale), vld1q_f32(w + i)));
    for (; i < n; i++) out[i] = x[i] * scale * w[i];
}

/* vld2 splits four pairs into their first and second halves, vst2 puts them back. */
static void swa__rope_neon(float *v, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float *cs)
{
    int64_t h, i;
    for (h = 0; h < n_heads; h++, v += head_dim) {
        for (i = 0; i + 8 <= n_rot; i += 8) {
            float32x4x2_t x = vld2q_f32(v + i), t = vld2q_f32(cs + i), o;
            o.val[0] = vfmsq_f32(vmulq_f32(x.val[0], t.val[0]), x.val[1], t.val[1]);
            o.val[1] = vfmaq_f32(vmulq_f32(x.val[1], t.val[0]), x.val[0], t.val[1]);
            vst2q_f32(v + i, o);
        }
        for (; i < n_rot; i += 2) {
            float c = cs[i], s = cs[i + 1], x0 = v[i], x1 = v[i + 1];
            v[i] = x0 * c - x1 * s;
            v[i + 1] = x0 * s + x1 * c;
        }
    }
}

static void swa__softmax_neon(float *x, int64_t n)
{
    float32x4_t m = vdupq_n_f32(-INFINITY), acc = vdupq_n_f32(0.0f);
    float max, sum;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) m = vmaxq_f32(m, vld1q_f32(x + i));
    max = vmaxvq_f32(m);
    for (; i < n; i++) if (x[i] > max) max = x[i];
    for (i = 0; i + 4 <= n; i += 4) {
        float32x4_t e = swa__exp_neon(vsubq_f32(vld1q_f32(x + i), vdupq_n_f32(max)));
        vst1q_f32(x + i, e);
        acc = vaddq_f32(acc, e);
    }
    sum = vaddvq_f32(acc);
    for (; i < n; i++) sum += (x[i] = expf(x[i] - max));
    for (i = 0; i + 4 <= n; i += 4) vst1q_f32(x + i, vmulq_n_f32(vld1q_f32(x + i), 1.0f / sum));
    for (; i < n; i++) x[i] /= sum;
}

static void swa__swiglu_neon(float *gate, const float *up, int64_t n)
{
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        float32x4_t g = vld1q_f32(gate + i);
        float32x4_t silu = vdivq_f32(g, vaddq_f32(vdupq_n_f32(1.0f), swa__exp_neon(vnegq_f32(g))));
        vst1q_f32(gate + i, vmulq_f32(silu, vld1q_f32(up + i)));
    }
    for (; i < n; i++) gate[i] = gate[i] / (1.0f + expf(-gate[i])) * up[i];
}

static void swa__geglu_neon(float *gate, const float *up, int64_t n)
{
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        float32x4_t g = vld1q_f32(gate + i);
        float32x4_t t = vmulq_f32(vmulq_n_f32(g, -1.5957691216057308f), vfmaq_f32(vdupq_n_f32(1.0f), vmulq_n_f32(g, 0.044715f), g));
        float32x4_t gelu = vdivq_f32(g, vaddq_f32(vdupq_n_f32(1.0f), swa__exp_neon(t)));
        vst1q_f32(gate + i, vmulq_f32(gelu, vld1q_f32(up + i)));
    }
    for (; i < n; i++) gate[i] = gate[i] / (1.0f + expf(SWA__GELU_EXPONENT(gate[i]))) * up[i];
}

#undef SWA__FLOAT_STEP_NEON
#undef SWA__FLOAT_TAIL_NEON
#undef SWA__DOTS_FLOAT_NEON
#undef SWA__LOAD_F32_NEON

#endif /* SWA__HAVE_NEON */

/* The function-writing macros every kernel section shared. */
#undef SWA__WSUM_FROM_AXPY
#undef SWA__SCALAR_F32
#undef SWA__DOT_FROM_DOTS
#undef SWA__DOTS_FROM_ROW_DOTS
#undef SWA__NEW_TYPE
#undef SWA__GELU_EXPONENT

/* ==== kernels: dispatch ====
   A context fills its table once, at create time: the scalar reference for everything, then
   each instruction set, up to the one asked for, overrides the kernels it has. */

#if defined(SWA__HAVE_AVX2)
/* cpuid leaf 7's registers, or zeros on a CPU without it. */
static void swa__cpuid7(unsigned sub, unsigned r[4])
{
    r[0] = r[1] = r[2] = r[3] = 0;
    if (__get_cpuid_max(0, NULL) >= 7) __cpuid_count(7, sub, r[0], r[1], r[2], r[3]);
}

#if defined(SWA__HAVE_AMX)
/* Linux gives a process the 8 KB of tile state only when it asks (arch_prctl
   ARCH_REQ_XCOMP_PERM for XTILEDATA, feature 18); a tile instruction before that faults. The
   call is made directly: glibc declares syscall() only under feature macros the host may not
   have defined, and asking again is harmless. */
static int swa__amx_permitted(void)
{
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(158L), "D"(0x1023L), "S"(18L) : "rcx", "r11", "memory");
    return ret == 0;
}
#endif

/* The x86 instruction sets this CPU and its OS run and this build has, as a bit mask of
   SWA_KERNELS_* values.
   cpuid tells what the CPU has, xgetbv what the OS saves on a context switch (YMM for AVX2,
   and the opmask and ZMM state for AVX-512): a CPU can have them while its OS does not enable
   them. AVX-512 here means F, BW and VL with VNNI (Ice Lake, Zen 4 and later). */
static unsigned swa__cpu_kernels(void)
{
    unsigned a, b, c, d, lo, hi, leaf7[4], leaf7_1[4], found = 1u << SWA_KERNELS_REF;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return found;
    if (!(c & (1u << 27)) || !(c & (1u << 28)) || !(c & (1u << 12)) || !(c & (1u << 29)))
        return found;                                   /* OSXSAVE, AVX, FMA, F16C */
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void)hi;
    if ((lo & 6) != 6) return found;                    /* XMM and YMM state */
    swa__cpuid7(0, leaf7);
    if (leaf7[0] >= 1) swa__cpuid7(1, leaf7_1);
    else leaf7_1[0] = leaf7_1[1] = leaf7_1[2] = leaf7_1[3] = 0;
    if (!(leaf7[1] & (1u << 5))) return found;          /* AVX2 */
    found |= 1u << SWA_KERNELS_AVX2;
#if defined(SWA__HAVE_AVX_VNNI)
    if (leaf7_1[0] & (1u << 4)) found |= 1u << SWA_KERNELS_AVX_VNNI;
#endif
#if defined(SWA__HAVE_AVX512)
    if ((lo & 0xe0) == 0xe0 && (leaf7[1] & (1u << 16)) && (leaf7[1] & (1u << 30)) && (leaf7[1] & (1u << 31)) &&
        (leaf7[2] & (1u << 11)))                        /* opmask/ZMM state, F, BW, VL, VNNI */
        found |= 1u << SWA_KERNELS_AVX512;
#endif
#if defined(SWA__HAVE_AMX)
    if ((found & (1u << SWA_KERNELS_AVX512)) && (leaf7[3] & (1u << 24)) && (leaf7[3] & (1u << 25)) &&
        (lo & (3u << 17)) == (3u << 17) && swa__amx_permitted())
        found |= 1u << SWA_KERNELS_AMX;                 /* AMX-TILE, AMX-INT8, tile state */
#endif
    return found;
}
#elif defined(SWA__HAVE_NEON)
static unsigned swa__cpu_kernels(void) { return 1u << SWA_KERNELS_REF | 1u << SWA_KERNELS_NEON; }
#else
static unsigned swa__cpu_kernels(void) { return 1u << SWA_KERNELS_REF; }
#endif

/* The reference: every type's scalar kernels from its descriptor row, and the scalar
   element-wise kernels. */
static void swa__kernels_ref(swa__kernels *k)
{
    uint32_t t;
    for (t = 0; t < SWA__N_TYPES; t++) {
        k->type[t].dot = swa__types[t].dot;
        k->type[t].tile_rows = SWA__TILE_ROWS;
        k->type[t].tile_tokens = SWA__TILE_TOKENS;
        k->type[t].wsum = swa__types[t].wsum;
        k->type[t].store = swa__types[t].store;
    }
    k->quantize_q8 = swa__quantize_q8_ref;
    k->quantize_q8k = swa__quantize_q8k_ref;
    k->rmsnorm = swa__rmsnorm_ref;
    k->rope = swa__rope_ref;
    k->softmax = swa__softmax_ref;
    k->swiglu = swa__swiglu_ref;
    k->geglu = swa__geglu_ref;
}

/* What AVX2 has, over the reference. */
static void swa__kernels_avx2(swa__kernels *k)
{
#if defined(SWA__HAVE_AVX2)
    /* the types made by SWA__NEW_TYPE, from their list */
#define SWA__ENTER(row_dots_fn, dots_fn, dot_fn, driver_fn, id) \
    k->type[id].dot = dot_fn;                                  \
    k->type[id].dots = dots_fn;
    SWA__AVX2_TYPES(SWA__ENTER)
#undef SWA__ENTER
    k->type[SWA_TYPE_F32].dot = swa__dot_f32_avx2;
    k->type[SWA_TYPE_F32].dots = swa__dots_f32_avx2;
    k->type[SWA_TYPE_F16].dot = swa__dot_f16_avx2;
    k->type[SWA_TYPE_F16].dots = swa__dots_f16_avx2;
    k->type[SWA_TYPE_BF16].dot = swa__dot_bf16_avx2;
    k->type[SWA_TYPE_BF16].dots = swa__dots_bf16_avx2;
    k->type[SWA_TYPE_F16].widen = swa__widen_f16_avx2;
    k->type[SWA_TYPE_BF16].widen = swa__widen_bf16_avx2;
    k->type[SWA_TYPE_F32].dots_rows = k->type[SWA_TYPE_F16].dots_rows = k->type[SWA_TYPE_BF16].dots_rows =
        SWA__FLOAT_ROWS_AVX2;
    k->type[SWA_TYPE_Q4_K].dot = swa__dot_q4_k_avx2;
    k->type[SWA_TYPE_Q4_K].dots = swa__dots_q4_k_avx2;
    k->type[SWA_TYPE_Q5_K].dot = swa__dot_q5_k_avx2;
    k->type[SWA_TYPE_Q5_K].dots = swa__dots_q5_k_avx2;
    k->type[SWA_TYPE_Q6_K].dot = swa__dot_q6_k_avx2;
    k->type[SWA_TYPE_Q6_K].dots = swa__dots_q6_k_avx2;
    k->type[SWA_TYPE_F32].wsum = swa__wsum_f32_avx2;
    k->type[SWA_TYPE_F16].wsum = swa__wsum_f16_avx2;
    k->type[SWA_TYPE_Q8_0].wsum = swa__wsum_q8_0_avx2;
    k->type[SWA_TYPE_F16].store = swa__store_f16_avx2;
    k->quantize_q8 = swa__quantize_q8_avx2;
    k->quantize_q8k = swa__quantize_q8k_avx2;
    k->rmsnorm = swa__rmsnorm_avx2;
    k->rope = swa__rope_avx2;
    k->softmax = swa__softmax_avx2;
    k->swiglu = swa__swiglu_avx2;
    k->geglu = swa__geglu_avx2;
#endif
    (void)k;
}

/* A VNNI set's quantized types: their dots, tiles, products (from 16 tokens on) and the
   packing of a batch's tokens the products read. */
typedef struct swa__quantized_kernels {
    uint32_t type;
    swa__dot_fn dot;
    swa__dots_fn dots;
    swa__gemm_fn gemm;
    swa__pack_fn pack;
} swa__quantized_kernels;

SWA__UNUSED static void swa__set_quantized(swa__kernels *k, const swa__quantized_kernels *q, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        swa__type_kernels *t = &k->type[q[i].type];
        t->dot = q[i].dot;
        t->dots = q[i].dots;
        t->gemm = q[i].gemm;
        t->pack = q[i].pack;
        t->gemm_from = 16;
    }
}

/* What AVX-VNNI has, over AVX2. */
static void swa__kernels_vnni(swa__kernels *k)
{
#if defined(SWA__HAVE_AVX_VNNI)
    static const swa__quantized_kernels quantized[] = {
#define SWA__VNNI_TYPE(stem, type, pack) {type, swa__dot_##stem##_vnni, swa__dots_##stem##_vnni, swa__gemm_##stem##_vnni, pack}
        SWA__VNNI_TYPE(q8_0, SWA_TYPE_Q8_0, swa__qpack_vnni),     SWA__VNNI_TYPE(q4_0, SWA_TYPE_Q4_0, swa__qpack_vnni),
        SWA__VNNI_TYPE(q4_1, SWA_TYPE_Q4_1, swa__qpack_vnni),     SWA__VNNI_TYPE(q5_0, SWA_TYPE_Q5_0, swa__qpack_vnni),
        SWA__VNNI_TYPE(q5_1, SWA_TYPE_Q5_1, swa__qpack_vnni),     SWA__VNNI_TYPE(iq4_nl, SWA_TYPE_IQ4_NL, swa__qpack_vnni),
        SWA__VNNI_TYPE(mxfp4, SWA_TYPE_MXFP4, swa__qpack_vnni),   SWA__VNNI_TYPE(q4_k, SWA_TYPE_Q4_K, swa__kpack_vnni),
        SWA__VNNI_TYPE(q5_k, SWA_TYPE_Q5_K, swa__kpack_vnni),     SWA__VNNI_TYPE(q6_k, SWA_TYPE_Q6_K, swa__kpack_vnni),
        SWA__VNNI_TYPE(iq4_xs, SWA_TYPE_IQ4_XS, swa__kpack_vnni), SWA__VNNI_TYPE(q2_k, SWA_TYPE_Q2_K, swa__kpack_vnni),
        SWA__VNNI_TYPE(q3_k, SWA_TYPE_Q3_K, swa__kpack_vnni),
#undef SWA__VNNI_TYPE
    };
    swa__set_quantized(k, quantized, sizeof quantized / sizeof quantized[0]);
    k->gemm_memory = swa__gemm_memory_vnni;
#endif
    (void)k;
}

/* What AVX-512 has, over AVX2. */
static void swa__kernels_avx512(swa__kernels *k)
{
#if defined(SWA__HAVE_AVX512)
    static const swa__quantized_kernels quantized[] = {
#define SWA__LANES_TYPE(stem, type) {type, swa__dot_##stem##_lanes_avx512, swa__dots_##stem##_lanes_avx512, swa__gemm_##stem##_avx512, swa__qpack_avx512}
#define SWA__KQUANT_TYPE(stem, type) {type, swa__dot_##stem##_avx512, swa__dots_##stem##_avx512, swa__gemm_##stem##_avx512, swa__kpack_avx512}
        SWA__LANES_TYPE(q8_0, SWA_TYPE_Q8_0),   SWA__LANES_TYPE(q4_0, SWA_TYPE_Q4_0),     SWA__LANES_TYPE(q4_1, SWA_TYPE_Q4_1),
        SWA__LANES_TYPE(q5_0, SWA_TYPE_Q5_0),   SWA__LANES_TYPE(q5_1, SWA_TYPE_Q5_1),     SWA__LANES_TYPE(iq4_nl, SWA_TYPE_IQ4_NL),
        SWA__LANES_TYPE(mxfp4, SWA_TYPE_MXFP4), SWA__KQUANT_TYPE(q2_k, SWA_TYPE_Q2_K),    SWA__KQUANT_TYPE(q3_k, SWA_TYPE_Q3_K),
        SWA__KQUANT_TYPE(q4_k, SWA_TYPE_Q4_K),  SWA__KQUANT_TYPE(q5_k, SWA_TYPE_Q5_K),    SWA__KQUANT_TYPE(q6_k, SWA_TYPE_Q6_K),
        SWA__KQUANT_TYPE(iq4_xs, SWA_TYPE_IQ4_XS),
#undef SWA__LANES_TYPE
#undef SWA__KQUANT_TYPE
    };
    size_t i;
    k->type[SWA_TYPE_F32].dot = swa__dot_f32_avx512;
    k->type[SWA_TYPE_F32].dots = swa__dots_f32_avx512;
    k->type[SWA_TYPE_F16].dot = swa__dot_f16_avx512;
    k->type[SWA_TYPE_F16].dots = swa__dots_f16_avx512;
    k->type[SWA_TYPE_BF16].dot = swa__dot_bf16_avx512;
    k->type[SWA_TYPE_BF16].dots = swa__dots_bf16_avx512;
    k->type[SWA_TYPE_F16].widen = k->type[SWA_TYPE_BF16].widen = NULL;   /* its own tiles, not the avx2 set's */
    k->type[SWA_TYPE_F32].tile_rows = k->type[SWA_TYPE_F16].tile_rows = k->type[SWA_TYPE_BF16].tile_rows =
        SWA__FLOAT_TILE_ROWS;
    k->type[SWA_TYPE_F32].dots_rows = k->type[SWA_TYPE_F16].dots_rows = k->type[SWA_TYPE_BF16].dots_rows =
        SWA__TILE_MAX_ROWS;
    k->type[SWA_TYPE_F32].tile_tokens = k->type[SWA_TYPE_F16].tile_tokens = k->type[SWA_TYPE_BF16].tile_tokens =
        SWA__FLOAT_TILE_TOKENS;
    swa__set_quantized(k, quantized, sizeof quantized / sizeof quantized[0]);
    for (i = 0; i < sizeof quantized / sizeof quantized[0]; i++)
        if (quantized[i].pack == swa__qpack_avx512) {   /* the lanes kernels' tiles */
            k->type[quantized[i].type].tile_rows = SWA__LANES;
            k->type[quantized[i].type].tile_tokens = SWA__TILE_MAX_TOKENS;
        }
    k->gemm_memory = swa__gemm_memory_avx512;
    k->type[SWA_TYPE_F32].wsum = swa__wsum_f32_avx512;
    k->type[SWA_TYPE_F16].wsum = swa__wsum_f16_avx512;
#endif
    (void)k;
}

/* What AMX has, over AVX-512. */
static void swa__kernels_amx(swa__kernels *k)
{
#if defined(SWA__HAVE_AMX)
    k->type[SWA_TYPE_Q8_0].dot = swa__dot_q8_0_amx;
    k->type[SWA_TYPE_Q8_0].dots = swa__dots_q8_0_amx;
    k->type[SWA_TYPE_Q8_0].gemm = swa__gemm_q8_0_amx;
    k->type[SWA_TYPE_Q4_0].dot = swa__dot_q4_0_amx;
    k->type[SWA_TYPE_Q4_0].dots = swa__dots_q4_0_amx;
    /* the avx512 set's tiles are its lanes kernels' */
    k->type[SWA_TYPE_Q8_0].tile_rows = k->type[SWA_TYPE_Q4_0].tile_rows = SWA__TILE_ROWS;
    k->type[SWA_TYPE_Q8_0].tile_tokens = k->type[SWA_TYPE_Q4_0].tile_tokens = SWA__TILE_TOKENS;
    k->type[SWA_TYPE_Q4_0].gemm = swa__gemm_q4_0_amx;
    k->type[SWA_TYPE_Q8_0].gemm_from = 2;   /* below SWA__AMX_FROM, swa__words_rows_amx */
    k->type[SWA_TYPE_Q4_0].gemm_from = 1;   /* below SWA__AMX_FROM, swa__words_rows_amx */
    /* the K-quants' and IQ4_XS's dots are the avx512 set's, in the tiles' order; IQ4_NL and
       MXFP4 keep all the avx512 set's kernels, its products and their packing included */
    k->type[SWA_TYPE_Q4_K].gemm = swa__gemm_q4_k_amx;
    k->type[SWA_TYPE_Q5_K].gemm = swa__gemm_q5_k_amx;
    k->type[SWA_TYPE_Q6_K].gemm = swa__gemm_q6_k_amx;
    k->type[SWA_TYPE_IQ4_XS].gemm = swa__gemm_iq4_xs_amx;
    k->type[SWA_TYPE_Q8_0].pack = k->type[SWA_TYPE_Q4_0].pack = swa__amx_pack;
    k->type[SWA_TYPE_Q4_K].pack = k->type[SWA_TYPE_Q5_K].pack = k->type[SWA_TYPE_Q6_K].pack =
        k->type[SWA_TYPE_IQ4_XS].pack = swa__amx_pack_q8k;
    k->gemm_memory = swa__amx_memory;
#endif
    (void)k;
}

/* What NEON has, over the reference. */
static void swa__kernels_neon(swa__kernels *k)
{
#if defined(SWA__HAVE_NEON)
    /* the types made by SWA__NEW_TYPE, from their list */
#define SWA__ENTER(row_dots_fn, dots_fn, dot_fn, driver_fn, id) \
    k->type[id].dot = dot_fn;                                  \
    k->type[id].dots = dots_fn;
    SWA__NEON_TYPES(SWA__ENTER)
#undef SWA__ENTER
    k->type[SWA_TYPE_F32].dot = swa__dot_f32_neon;
    k->type[SWA_TYPE_F32].dots = swa__dots_f32_neon;
    k->type[SWA_TYPE_F16].dot = swa__dot_f16_neon;
    k->type[SWA_TYPE_F16].dots = swa__dots_f16_neon;
    k->type[SWA_TYPE_BF16].dot = swa__dot_bf16_neon;
    k->type[SWA_TYPE_BF16].dots = swa__dots_bf16_neon;
    k->type[SWA_TYPE_Q4_K].dot = swa__dot_q4_k_neon;
    k->type[SWA_TYPE_Q4_K].dots = swa__dots_q4_k_neon;
    k->type[SWA_TYPE_Q5_K].dot = swa__dot_q5_k_neon;
    k->type[SWA_TYPE_Q5_K].dots = swa__dots_q5_k_neon;
    k->type[SWA_TYPE_Q6_K].dot = swa__dot_q6_k_neon;
    k->type[SWA_TYPE_Q6_K].dots = swa__dots_q6_k_neon;
    k->type[SWA_TYPE_F32].wsum = swa__wsum_f32_neon;
    k->type[SWA_TYPE_F16].wsum = swa__wsum_f16_neon;
    k->type[SWA_TYPE_Q8_0].wsum = swa__wsum_q8_0_neon;
    k->type[SWA_TYPE_F16].store = swa__store_f16_neon;
    k->quantize_q8 = swa__quantize_q8_neon;
    k->quantize_q8k = swa__quantize_q8k_neon;
    k->rmsnorm = swa__rmsnorm_neon;
    k->rope = swa__rope_neon;
    k->softmax = swa__softmax_neon;
    k->swiglu = swa__swiglu_neon;
    k->geglu = swa__geglu_neon;
#endif
    (void)k;
}

/* The instruction sets, each with the set it starts from: a context's table is the
   reference's, then each set down the chain to the one asked for (ref -> avx2 -> avx512 -> amx)
   overrides the kernels it has. Rows go from narrowest to widest: SWA_KERNELS_BEST is the last
   one the CPU runs. A set this build does not compile has an empty setup, and swa__cpu_kernels
   never reports it. */
typedef struct swa__kernel_set {
    int32_t id;                         /* SWA_KERNELS_* */
    const char *name;
    int32_t parent;                     /* SWA_KERNELS_* it inherits from; BEST (0): none */
    void (*setup)(swa__kernels *k);     /* its own kernels, over its parent's */
} swa__kernel_set;

#define SWA__N_KERNEL_SETS 6
static const swa__kernel_set swa__kernel_sets[SWA__N_KERNEL_SETS] = {
    {SWA_KERNELS_REF, "ref", SWA_KERNELS_BEST, swa__kernels_ref},
    {SWA_KERNELS_AVX2, "avx2", SWA_KERNELS_REF, swa__kernels_avx2},
    {SWA_KERNELS_AVX_VNNI, "avx-vnni", SWA_KERNELS_AVX2, swa__kernels_vnni},
    {SWA_KERNELS_AVX512, "avx512", SWA_KERNELS_AVX2, swa__kernels_avx512},
    {SWA_KERNELS_AMX, "amx", SWA_KERNELS_AVX512, swa__kernels_amx},
    {SWA_KERNELS_NEON, "neon", SWA_KERNELS_REF, swa__kernels_neon},
};

static const swa__kernel_set *swa__kernel_set_find(int32_t id)
{
    int i;
    for (i = 0; i < SWA__N_KERNEL_SETS; i++)
        if (swa__kernel_sets[i].id == id) return &swa__kernel_sets[i];
    return NULL;
}

SWADEF const char *swa_kernels_name(int32_t kernels)
{
    const swa__kernel_set *set = swa__kernel_set_find(kernels);
    return kernels == SWA_KERNELS_BEST ? "best" : set ? set->name : NULL;
}

SWADEF int32_t swa_kernels_from_name(const char *name)
{
    int i;
    if (name && !strcmp(name, "best")) return SWA_KERNELS_BEST;
    for (i = 0; name && i < SWA__N_KERNEL_SETS; i++)
        if (!strcmp(name, swa__kernel_sets[i].name)) return swa__kernel_sets[i].id;
    return -1;
}

/* The instruction set `asked` (a SWA_KERNELS_* value) resolves to on this CPU: BEST is the
   widest it runs; -1 when it does not run the one asked for. */
SWA__INTERNAL int32_t swa__kernels_resolve(int32_t asked)
{
    unsigned have = swa__cpu_kernels();
    int i;
    if (asked == SWA_KERNELS_BEST) {
        for (i = SWA__N_KERNEL_SETS - 1; !(have & (1u << swa__kernel_sets[i].id)); i--) {}
        return swa__kernel_sets[i].id;
    }
    return swa__kernel_set_find(asked) && (have & (1u << asked)) ? asked : -1;
}

/* Bytes of weight rows per block of a prompt's tiles. A block stays in L2 while every token
   passes over it in tiles, and each pass reads its tokens' activations again from farther
   away: the more rows a block has, the fewer times they come. Quantized rows are narrow and
   meet activations of about a byte a column, so 64 KB of them is already many rows a pass.
   Float rows meet 4 bytes a column, and 64 KB of a wide matrix would be 2 rows (Llama's
   ffn_down): their blocks take half the core's L2, at least 256 KB (as where the CPU does not
   say) and at most 1 MB. The block changes no result, only where the rows are read from. */
#define SWA__ROW_BLOCK 65536
#define SWA__ROW_BLOCK_FLOAT_MIN (256u << 10)
#define SWA__ROW_BLOCK_FLOAT_MAX (1u << 20)
static size_t swa__float_block(void)
{
    size_t half = 0;
#if defined(SWA__HAVE_AVX2)
    unsigned a, b, c, d;
    if (__get_cpuid(0x80000006u, &a, &b, &c, &d)) half = (size_t)(c >> 16) << 9;   /* ECX[31:16]: L2 KB */
#endif
    return half < SWA__ROW_BLOCK_FLOAT_MIN ? SWA__ROW_BLOCK_FLOAT_MIN : half > SWA__ROW_BLOCK_FLOAT_MAX ? SWA__ROW_BLOCK_FLOAT_MAX : half;
}

SWA__INTERNAL void swa__kernels_setup(swa__kernels *k, int32_t level)   /* level: a resolved value */
{
    const swa__kernel_set *chain[SWA__N_KERNEL_SETS], *set = swa__kernel_set_find(level);
    int n = 0;
    size_t float_block = swa__float_block();
    uint32_t t;
    SWA_ASSERT(set);
    memset(k, 0, sizeof *k);
    k->name = set->name;
    for (; set; set = swa__kernel_set_find(set->parent)) chain[n++] = set;
    while (n > 0) chain[--n]->setup(k);
    for (t = 0; t < SWA__N_TYPES; t++) k->type[t].block_bytes = swa__act_kind(t) == SWA__ACT_F32 ? float_block : SWA__ROW_BLOCK;
}

#if defined(SWA__HAVE_AVX2)
#undef SWA__AVX2_TYPES
#endif
#if defined(SWA__HAVE_NEON)
#undef SWA__NEON_TYPES
#endif

#endif /* SWA__IMPLEMENTED */
#endif /* SWA_IMPLEMENTATION */

/*
------------------------------------------------------------------------------
MIT License

Copyright (c) 2026 the swa.h authors

Permission is hereby granted, free of charge, to any person obtaining a copy of
this software and associated documentation files (the "Software"), to deal in
the Software without restriction, including without limitation the rights to
use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies
of the Software, and to permit persons to whom the Software is furnished to do
so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
------------------------------------------------------------------------------
*/
