// llamacpp-grammar: swa-grammar-bench's measurement on llama.cpp's grammar sampler, through its
// llama.h: what a grammar adds to sampling a token, on the same vocabulary files, grammar text
// and document. Not built by the Makefile: it links a llama.cpp build outside this repository,
//
//   L=/path/to/llama.cpp   # a CMake build in $L/build (build/bin/libllama.so)
//   g++ -std=c++17 -O2 -I$L/include -I$L/ggml/include tools/bench/llamacpp_grammar.cpp
//       -L$L/build/bin -Wl,-rpath,$L/build/bin -lllama -lggml -lggml-base -o /tmp/llamacpp-grammar
//   (one command)
//
//   llamacpp-grammar --grammar FILE --doc FILE [--reps N] VOCAB.gguf ...
//
// Each vocabulary is loaded alone (vocab_only: sampling reads no weights). The document is cut
// into the vocabulary's pieces as swa-grammar-bench cuts it (at each place the longest piece,
// the first of the longest; control and unknown tokens never), and each of those tokens is
// sampled in turn from random logits (normal, sigma 2) in which its logit is raised by 30: by
// llama.cpp's default chain (top-k 40, top-p 0.95, min-p 0.05, temperature 0.8, a draw) alone,
// and with llama_sampler_init_grammar in two ways: "grammar first", the grammar applied to the
// whole vocabulary before the chain (as swa.h's sampler does it), and "check after", the way
// common_sampler_sample samples by default: the chain first, then the grammar applied to the
// chosen token alone, and the whole vocabulary only when it refuses it (never, on a document
// the grammar accepts and these logits). Each sampler is then given the token (accept). The
// times per token are the best of --reps passes (default 3); printed as swa-grammar-bench
// prints them, microseconds, mean / median / worst over the document's tokens.
#include "llama.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

static double now_s()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

[[noreturn]] static void die(const char *what, const char *detail)
{
    fprintf(stderr, "llamacpp-grammar: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

static std::string read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) die("cannot open", path);
    std::string s;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
    fclose(f);
    return s;
}

// The document as tokens: at each place the first of the longest pieces that match there.
static std::vector<llama_token> cut(const llama_vocab *v, const std::string &doc)
{
    int nv = llama_vocab_n_tokens(v);
    std::vector<std::string> piece((size_t)nv);
    char buf[256];
    for (int id = 0; id < nv; id++) {
        int attr = llama_vocab_get_attr(v, id);
        if (attr & (LLAMA_TOKEN_ATTR_CONTROL | LLAMA_TOKEN_ATTR_UNKNOWN)) continue;
        int k = llama_token_to_piece(v, id, buf, sizeof buf, 0, false);
        if (k > 0) piece[(size_t)id].assign(buf, (size_t)k);
    }
    std::vector<llama_token> ids;
    for (size_t at = 0; at < doc.size();) {
        int best = -1;
        size_t best_len = 0;
        for (int id = 0; id < nv; id++) {
            const std::string &p = piece[(size_t)id];
            if (p.size() <= best_len || p.size() > doc.size() - at || doc.compare(at, p.size(), p) != 0) continue;
            best = id;
            best_len = p.size();
        }
        if (best < 0) die("no piece of the vocabulary matches the document", nullptr);
        ids.push_back(best);
        at += best_len;
    }
    return ids;
}

static llama_sampler *chain_new()
{
    llama_sampler *c = llama_sampler_chain_init(llama_sampler_chain_default_params());
    llama_sampler_chain_add(c, llama_sampler_init_top_k(40));
    llama_sampler_chain_add(c, llama_sampler_init_top_p(0.95f, 1));
    llama_sampler_chain_add(c, llama_sampler_init_min_p(0.05f, 1));
    llama_sampler_chain_add(c, llama_sampler_init_temp(0.8f));
    llama_sampler_chain_add(c, llama_sampler_init_dist(42));
    return c;
}

enum { PLAIN, FIRST, AFTER, N_WAYS };

// One token sampled one way from logits; returns the token.
static llama_token sample(int way, llama_sampler *chain, llama_sampler *grammar, const std::vector<float> &logits,
                          std::vector<llama_token_data> &cur)
{
    for (size_t i = 0; i < logits.size(); i++) cur[i] = llama_token_data{(llama_token)i, logits[i], 0.0f};
    llama_token_data_array a = {cur.data(), cur.size(), -1, false};
    if (way == FIRST) llama_sampler_apply(grammar, &a);
    llama_sampler_apply(chain, &a);
    llama_token id = a.data[a.selected].id;
    if (way == AFTER) {
        llama_token_data one = {id, 1.0f, 0.0f};
        llama_token_data_array b = {&one, 1, -1, false};
        llama_sampler_apply(grammar, &b);
        if (one.logit == -INFINITY) {            // refused: the whole vocabulary, grammar first
            for (size_t i = 0; i < logits.size(); i++) cur[i] = llama_token_data{(llama_token)i, logits[i], 0.0f};
            a = {cur.data(), cur.size(), -1, false};
            llama_sampler_apply(grammar, &a);
            llama_sampler_apply(chain, &a);
            id = a.data[a.selected].id;
        }
    }
    llama_sampler_accept(chain, id);
    if (way != PLAIN) llama_sampler_accept(grammar, id);
    return id;
}

struct stats { double mean, med, worst; };

static stats summarise(std::vector<double> t)
{
    stats s = {0, 0, 0};
    for (double x : t) { s.mean += x / (double)t.size(); s.worst = std::max(s.worst, x); }
    std::sort(t.begin(), t.end());
    size_t n = t.size();
    s.med = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
    return s;
}

static void bench(const char *path, const std::string &gbnf, const std::string &doc, int reps)
{
    llama_model_params mp = llama_model_default_params();
    mp.vocab_only = true;
    llama_model *m = llama_model_load_from_file(path, mp);
    if (!m) { fprintf(stderr, "llamacpp-grammar: %s: cannot load (skipped)\n", path); return; }
    const llama_vocab *v = llama_model_get_vocab(m);
    int nv = llama_vocab_n_tokens(v);
    std::vector<llama_token> ids = cut(v, doc);
    size_t n = ids.size();
    std::vector<float> logits((size_t)nv);
    std::vector<llama_token_data> cur((size_t)nv);
    std::vector<std::vector<double>> best(N_WAYS, std::vector<double>(n, 1e30));
    double attach = 1e30;
    for (int r = 0; r < reps; r++) {
        llama_sampler *chain[N_WAYS], *grammar[N_WAYS] = {nullptr, nullptr, nullptr};
        for (int w = 0; w < N_WAYS; w++) {
            chain[w] = chain_new();
            if (w == PLAIN) continue;
            double t0 = now_s();
            grammar[w] = llama_sampler_init_grammar(v, gbnf.c_str(), "root");
            if (!grammar[w]) die("llama.cpp refuses the grammar", nullptr);
            attach = std::min(attach, now_s() - t0);
        }
        std::mt19937_64 rng(7);
        std::normal_distribution<float> gauss(0.0f, 2.0f);
        for (size_t i = 0; i < n; i++) {
            for (int j = 0; j < nv; j++) logits[(size_t)j] = gauss(rng);
            logits[(size_t)ids[i]] += 30.0f;
            for (int w = 0; w < N_WAYS; w++) {
                double t0 = now_s();
                llama_token got = sample(w, chain[w], grammar[w], logits, cur);
                best[(size_t)w][i] = std::min(best[(size_t)w][i], now_s() - t0);
                if (got != ids[i]) {
                    fprintf(stderr, "llamacpp-grammar: token %zu: way %d chose %d, not %d\n", i, w, got, ids[i]);
                    exit(1);
                }
            }
        }
        for (int w = 0; w < N_WAYS; w++) {
            llama_sampler_free(chain[w]);
            if (grammar[w]) llama_sampler_free(grammar[w]);
        }
    }
    stats s[N_WAYS], d[N_WAYS];
    for (int w = 0; w < N_WAYS; w++) {
        std::vector<double> diff(n);
        for (size_t i = 0; i < n; i++) diff[i] = std::max(0.0, best[(size_t)w][i] - best[PLAIN][i]);
        s[w] = summarise(best[(size_t)w]);
        d[w] = summarise(diff);
    }
    printf("| %s | %d | %zu | %.2f | %.1f / %.1f / %.1f | %.1f / %.1f / %.1f | %.1f / %.1f / %.1f "
           "| %.1f / %.1f / %.1f | %.1f / %.1f / %.1f |\n",
           path, nv, n, attach * 1e3, s[PLAIN].mean * 1e6, s[PLAIN].med * 1e6, s[PLAIN].worst * 1e6,
           s[FIRST].mean * 1e6, s[FIRST].med * 1e6, s[FIRST].worst * 1e6, d[FIRST].mean * 1e6, d[FIRST].med * 1e6,
           d[FIRST].worst * 1e6, s[AFTER].mean * 1e6, s[AFTER].med * 1e6, s[AFTER].worst * 1e6, d[AFTER].mean * 1e6,
           d[AFTER].med * 1e6, d[AFTER].worst * 1e6);
    fflush(stdout);
    llama_model_free(m);
}

static void quiet(ggml_log_level level, const char *text, void *data)
{
    (void)data;
    if (level == GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

int main(int argc, char **argv)
{
    const char *grammar_path = nullptr, *doc_path = nullptr;
    int reps = 3, i;
    for (i = 1; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "--grammar") && i + 1 < argc) grammar_path = argv[++i];
        else if (!strcmp(argv[i], "--doc") && i + 1 < argc) doc_path = argv[++i];
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else break;
    }
    if (!grammar_path || !doc_path || i >= argc || reps < 1) {
        fprintf(stderr, "usage: llamacpp-grammar --grammar FILE --doc FILE [--reps N] VOCAB.gguf ...\n");
        return 2;
    }
    llama_log_set(quiet, nullptr);
    llama_backend_init();
    std::string gbnf = read_all(grammar_path), doc = read_all(doc_path);
    printf("Per token, microseconds (mean / median / worst of the document's tokens; best of %d passes), "
           "grammar %s:\n\n", reps, grammar_path);
    printf("| vocabulary | tokens | document tokens | attach ms | chain alone | grammar first | its added time "
           "| check after | its added time |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (; i < argc; i++) bench(argv[i], gbnf, doc, reps);
    llama_backend_free();
    return 0;
}
