// llamacpp-bench: llama-bench's prompt and generation tests on a llama.cpp tree that has no
// llama-bench (the December 2025 one vendored in ollama), through its llama.h. Not built by the
// Makefile: tools/bench/build-llamacpp.sh builds it beside that llama.cpp, outside this repository.
//
//   llamacpp-bench -m MODEL.gguf [-p 512] [-n 128] [-t 2] [-r 5] [-fa 0|1] [-d DEPTH] [-ub 512] [-c N_CTX]
//                  [-swa-full 0|1] [-o md|jsonl] [-v]
//
// As llama-bench does: one warm-up run per test, then -r timed runs; a prompt test evaluates -p
// random tokens in batches of -ub from an empty cache (after -d tokens of depth when given), a
// generation test -n tokens one at a time after the depth. "-o jsonl" prints llama-bench's JSON
// lines (the fields tools/bench/sidebyside.sh reads: n_prompt, n_gen, samples_ts, avg_ts,
// build_commit), so that script runs either program. -c sets the context (default: what the
// tests need) and -v lets llama.cpp's log through to stderr, with the sizes of its cache.
// -swa-full 0 keeps only the window (plus a batch) in windowed layers, as llama.cpp's programs do
// by default (common.h); the library's own default, which this program keeps, is 1: full size.
#include "llama.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#ifndef PEER_COMMIT
#define PEER_COMMIT "unknown"   // the build script names the tree
#endif

static void usage()
{
    fprintf(stderr, "usage: llamacpp-bench -m MODEL.gguf [-p 512] [-n 128] [-t 2] [-r 5] [-fa 0|1] [-d DEPTH] "
                    "[-ub 512] [-c N_CTX] [-swa-full 0|1] [-o md|jsonl] [-v]\n");
    exit(2);
}

static double now_s()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Evaluates n tokens from position pos in batches of at most ub; false on failure.
static bool eval(llama_context *ctx, std::vector<llama_token> &tok, int pos, int n, int ub)
{
    llama_batch b = llama_batch_init(ub, 0, 1);
    for (int i = 0; i < n; i += ub) {
        int k = std::min(ub, n - i);
        b.n_tokens = k;
        for (int j = 0; j < k; j++) {
            b.token[j] = tok[(size_t)(i + j) % tok.size()];
            b.pos[j] = pos + i + j;
            b.n_seq_id[j] = 1;
            b.seq_id[j][0] = 0;
            b.logits[j] = i + j == n - 1;
        }
        if (llama_decode(ctx, b) != 0) { llama_batch_free(b); return false; }
    }
    llama_synchronize(ctx);
    llama_batch_free(b);
    return true;
}

int main(int argc, char **argv)
{
    const char *model = nullptr, *out = "md";
    int pp = 512, tg = 128, threads = 2, reps = 5, fa = 0, depth = 0, ub = 512, n_ctx = 0, swa_full = -1;
    bool verbose = false;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "-v" || a == "--verbose") { verbose = true; continue; }
        if (i + 1 >= argc) usage();
        const char *v = argv[++i];
        if (a == "-m") model = v;
        else if (a == "-p" || a == "--n-prompt") pp = atoi(v);
        else if (a == "-n" || a == "--n-gen") tg = atoi(v);
        else if (a == "-t" || a == "--threads") threads = atoi(v);
        else if (a == "-r" || a == "--repetitions") reps = atoi(v);
        else if (a == "-fa" || a == "--flash-attn") fa = atoi(v);
        else if (a == "-d" || a == "--n-depth") depth = atoi(v);
        else if (a == "-ub" || a == "--ubatch-size") ub = atoi(v);
        else if (a == "-c" || a == "--ctx-size") n_ctx = atoi(v);
        else if (a == "-swa-full" || a == "--swa-full") swa_full = atoi(v);
        else if (a == "-o" || a == "--output") out = v;
        else usage();
    }
    if (!model || pp < 0 || tg < 0 || threads < 1 || reps < 1 || depth < 0 || ub < 1 || n_ctx < 0 || pp + tg == 0) usage();

    if (!verbose) llama_log_set([](ggml_log_level, const char *, void *) {}, nullptr);
    llama_backend_init();
    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    llama_model *m = llama_model_load_from_file(model, mp);
    if (!m) { fprintf(stderr, "llamacpp-bench: cannot load %s\n", model); return 1; }
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = (uint32_t)std::max(n_ctx, depth + std::max(pp, tg) + 1);
    cp.n_batch = (uint32_t)std::max(ub, pp);
    cp.n_ubatch = (uint32_t)ub;
    cp.n_threads = cp.n_threads_batch = threads;
    cp.flash_attn_type = fa ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
    cp.no_perf = true;
    if (swa_full >= 0) cp.swa_full = swa_full != 0;
    llama_context *ctx = llama_init_from_model(m, cp);
    if (!ctx) { fprintf(stderr, "llamacpp-bench: cannot make a context\n"); return 1; }

    const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(m));
    std::mt19937 rng(1234);
    std::vector<llama_token> tok(std::max(1, std::max(depth, pp)));
    for (auto &t : tok) t = (llama_token)(rng() % (unsigned)n_vocab);
    char desc[256];
    llama_model_desc(m, desc, sizeof desc);

    if (!strcmp(out, "md")) {
        printf("| model | threads | fa | test | t/s |\n| --- | ---: | ---: | --- | ---: |\n");
    }
    for (int test = 0; test < 2; test++) {
        const int n = test == 0 ? pp : tg;
        if (n == 0) continue;
        std::vector<double> ts;
        for (int r = -1; r < reps; r++) {   // r = -1: the warm-up
            llama_memory_clear(llama_get_memory(ctx), false);
            if (depth && !eval(ctx, tok, 0, depth, ub)) { fprintf(stderr, "llamacpp-bench: decode failed\n"); return 1; }
            double t0 = now_s();
            bool ok = true;
            if (test == 0) ok = eval(ctx, tok, depth, n, ub);
            else for (int i = 0; i < n && ok; i++) ok = eval(ctx, tok, depth + i, 1, 1);
            double t = now_s() - t0;
            if (!ok) { fprintf(stderr, "llamacpp-bench: decode failed\n"); return 1; }
            if (r >= 0) ts.push_back(n / t);
        }
        double avg = 0;
        for (double x : ts) avg += x;
        avg /= ts.size();
        char name[64];
        snprintf(name, sizeof name, "%s%d%s", test == 0 ? "pp" : "tg", n, depth ? (" @ d" + std::to_string(depth)).c_str() : "");
        if (!strcmp(out, "jsonl")) {
            printf("{\"build_commit\": \"%s\", \"model_type\": \"%s\", \"n_threads\": %d, \"flash_attn\": %s, "
                   "\"n_prompt\": %d, \"n_gen\": %d, \"n_depth\": %d, \"avg_ts\": %f, \"samples_ts\": [",
                   PEER_COMMIT, desc, threads, fa ? "true" : "false", test == 0 ? n : 0, test == 0 ? 0 : n, depth, avg);
            for (size_t i = 0; i < ts.size(); i++) printf("%s%f", i ? ", " : "", ts[i]);
            printf("]}\n");
        } else {
            printf("| %s | %d | %d | %s | %.2f |\n", desc, threads, fa, name, avg);
        }
        fflush(stdout);
    }
    llama_free(ctx);
    llama_model_free(m);
    llama_backend_free();
    return 0;
}
