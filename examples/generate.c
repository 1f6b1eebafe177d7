/* swa-generate: text generation and chat with swa.h.

   swa-generate -m MODEL.gguf -p "Once upon a time" [-n 256] [--temp 0.8] ...
   swa-generate -m MODEL.gguf --chat [--no-jinja | --chat-template NAME | --chat-template-file FILE] [--system TEXT]
   swa-generate -m MODEL.gguf -p "Once upon a time" --parallel 4 -s 42

   The prompt is echoed, then the continuation streams to stdout; a model summary and the
   speeds go to stderr.

   Every input (the prompt file, --ids, a saved state) is read and checked, and every output
   file opened, before the model is loaded. Exit status: 0 when the run completed, 1 on an
   error (no statistics line then), 2 for bad usage, 130 when Ctrl-C stopped it. Ctrl-C stops
   loading, the prompt and generation within one layer, through the library's progress and
   abort callbacks, and prints the timings; a second Ctrl-C ends the program at once. In a
   chat it ends the answer and returns to the prompt, and at the prompt it ends the chat.
   Every write to stdout is checked: a closed pipe or a full disk ends the run with status 1.

   --parallel N evaluates the prompt once, forks it into N sequences of one context and samples
   them together, a token of each per forward pass; continuation i, sampled with seed + i, is
   printed under a header line exactly as a single run with that seed prints it.

   On a terminal, loading and a prompt that take longer than a second show one line of progress
   on stderr, wiped when done (tools/common/progress.h); --no-progress or --log-disable turn it off.

   This file uses swa.h, tools/common/interrupt.h, progress.h and safe_write.h and the C library
   only (POSIX or Win32 for files and signals), so that it can be copied as the start of a
   program. */
#define _POSIX_C_SOURCE 200809L
#include "swa.h"
#include "tools/common/interrupt.h"
#include "tools/common/progress.h"
#include "tools/common/safe_write.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#if defined(_WIN32)
#include <io.h>
#include <windows.h>
#else
#include <unistd.h>
#endif

#define PROG "swa-generate"
enum { EXIT_USAGE = 2, EXIT_INTERRUPTED = 130 };   /* besides 0 (complete) and 1 (an error) */

#define MAX_BIAS 256   /* --logit-bias flags */

typedef struct options {
    const char *model, *prompt, *prompt_file, *ids, *dump_logits, *save_state, *load_state;
    const char *chat_template, *system;   /* --chat-template NAME, --system TEXT */
    const char *chat_template_file;       /* --chat-template-file FILE */
    int32_t *prompt_ids;          /* --ids, parsed */
    size_t n_prompt_ids;
    char *text;                   /* the prompt: -p, or the bytes of the -f file (NUL-terminated) */
    size_t text_len;
    char *state;                  /* --load-state, read whole */
    const char *grammar, *grammar_file;   /* --grammar TEXT, --grammar-file FILE */
    const char *json_schema, *json_schema_file;   /* -j/--json-schema TEXT, --json-schema-file FILE */
    char *grammar_text;           /* either one's text, read whole */
    size_t grammar_len;
    size_t state_size;
    long n_predict;               /* -1: until end-of-sequence */
    long parallel;                /* --parallel N; 0: one sequence, printed as it streams */
    int no_bos, chat, seed_given, no_mmap, verbose_prompt, no_jinja;
    int no_progress, log_disable;  /* --no-progress; --log-disable: that, and no summary or timings */
    swa_ctx_config cfg;
    swa_sampler_config sampling;
    int32_t bias_id[MAX_BIAS];    /* --logit-bias ID(+/-)BIAS, in the order given */
    float bias[MAX_BIAS];
    size_t n_bias;
    int lookup;                   /* --lookup: drafts from the text so far */
    const char *model_draft;      /* -md FILE: drafts from a small model of the same vocabulary */
    float draft_p_min;            /* --draft-p-min: a draft ends after a token less likely; -1 until given */
    long draft_max, draft_min, ngram_min, ngram_max;   /* --draft-max, --draft-min, --lookup-ngram-min/max; */
                                                       /* 0 until given or defaulted by spec_fits() */
} options;

typedef struct timings {
    double prompt_s, gen_s;
    long n_prompt, n_gen;
    long n_verify, n_drafted, n_accepted;   /* speculative decoding */
} timings;

static void usage(FILE *f)
{
    int32_t i;
    fprintf(f,
        "usage: swa-generate -m MODEL.gguf [-p TEXT | -f FILE | --ids 1,2,3] [options]\n"
        "       swa-generate -m MODEL.gguf -i\n"
        "  -m FILE              GGUF model (llama, gemma2, gemma3, phi3, qwen2, qwen3, qwen3moe)\n"
        "  -p TEXT              prompt text\n"
        "  -f FILE              read the prompt from a file, byte for byte\n"
        "  --ids LIST           prompt as comma-separated token ids, used as given\n"
        "  --no-bos             do not put BOS before the prompt\n"
        "  -n N                 tokens to generate (default 256; -1 = until end of sequence,\n"
        "                       which with a window may be forever; 0 = evaluate the prompt only)\n"
        "  -i, --chat           interactive chat in the model's template (tokenizer.chat_template);\n"
        "                       -p gives the first message; generation stops at the template's\n"
        "                       end-of-turn token or EOS, or after -n tokens\n"
        "  --jinja              render the model's template with swa.h's Jinja engine, as\n"
        "                       transformers does (the default); a template it refuses falls back\n"
        "                       to the template's family, with a warning\n"
        "  --no-jinja           write the model's template's family's format instead\n"
        "  --chat-template NAME chat in this template family instead (for models without one)\n"
        "  --chat-template-file FILE\n"
        "                       chat in the Jinja template of this file instead\n"
        "  --system TEXT        a system message before the first turn\n"
        "  --verbose-prompt     print each chat turn's text, as evaluated, to stderr\n"
        "  -s SEED              sampling seed (default: from the clock, printed)\n");
    fprintf(f,   /* in parts: C99 compilers need take only 4095 characters in one literal */
        "  --temp T             temperature (default 0.8; 0 = greedy)\n"
        "  --top-k N            keep the N most likely tokens (default 40; 0 = off)\n"
        "  --top-p P            nucleus sampling (default 0.95; 1 = off)\n"
        "  --min-p P            drop tokens below P x the best (default 0.05; 0 = off)\n"
        "  --repeat-penalty R   penalise recent tokens (default 1.0 = off)\n"
        "  --repeat-last-n N    tokens the penalties look at (default 64)\n"
        "  --presence-penalty P subtract P from each recent token's logit once (-2..2; 0 = off)\n"
        "  --frequency-penalty F subtract F per occurrence among the recent tokens (-2..2; 0 = off)\n"
        "  --logit-bias ID+B    add B (or ID-B: subtract) to token ID's logit; ID-inf bans it (repeatable)\n"
        "  --grammar TEXT       constrain the output to a GBNF grammar (llama.cpp's syntax, rule root;\n"
        "                       docs/grammar.md): only tokens that can continue it are sampled, and\n"
        "                       generation ends where it is complete; with -i, each answer. Not\n"
        "                       with --ids; the repetition penalty then does not count the prompt's\n"
        "                       tokens\n"
        "  --grammar-file FILE  the same, the grammar read from FILE\n"
        "  -j, --json-schema TEXT  the same, the grammar of a JSON Schema (llama.cpp's conversion;\n"
        "                       docs/grammar.md): the output is JSON the schema describes\n"
        "  --json-schema-file FILE  the same, the schema read from FILE\n"
        "  -t N                 threads, 0..256 (default 0: every online CPU)\n"
        "  -w N                 sliding window for every layer (default: the model's)\n"
        "  -c N                 cache size for layers without a window (default min(trained, 4096))\n"
        "  -b N                 prompt tokens per forward pass (default 64)\n"
        "  --kv TYPE            key/value cache type: f16 (default), f32, or q8_0 (about half of f16)\n"
        "  --kv-f32             the same as --kv f32\n"
        "  --no-mmap            read the model into memory instead of mapping it (faster in some VMs)\n"
        "  --no-progress        no progress line on stderr (drawn only on a terminal, for work over a second)\n"
        "  --log-disable        no progress line, model summary or timings on stderr (warnings and errors stay)\n"
        "  --dump-logits FILE   float32 logits, one row of n_vocab per evaluated position\n"
        "  --save-state FILE    at the end, save the context (its rings, a few MB at most with a\n"
        "                       window) and the last sampled token, to continue later\n"
        "  --load-state FILE    continue from a saved state: the prompt, if any, is appended to it\n"
        "  --parallel N         sample N continuations of the prompt (1..256) in one batched run:\n"
        "                       the prompt is evaluated once and forked; continuation i uses seed\n"
        "                       SEED+i and is printed, after a line \"--- continuation i+1 of N, seed\n"
        "                       SEED+i ---\", as a run with -s SEED+i prints it. Not with -i,\n"
        "                       --save-state, --load-state, --dump-logits or -n 0\n"
        "  --sinks N            attention sinks on layers without a window: keep the first N\n"
        "                       positions and a ring of the last n_ctx-N, so generation goes on\n"
        "                       past -c (an approximation of the model; exact until -c is reached)\n");
    fprintf(f,
        "  --lookup             speculative decoding with drafts looked up in the text so far (the\n"
        "                       prompt and the output): the same text as without, faster where the\n"
        "                       output repeats the input (docs/speculative.md). Stories only\n"
        "  -md, --model-draft FILE  speculative decoding with drafts from a small model of the same\n"
        "                       vocabulary (greedy, -t threads too)\n"
        "  --draft-max N        tokens drafted per step, 1..256 (default 16)\n"
        "  --draft-min N        verify drafts of at least N tokens only (default 0)\n"
        "  --draft-p-min P      -md: a draft ends after a token the draft model gives less than P\n"
        "                       (default 0.75)\n"
        "  --lookup-ngram-min N, --lookup-ngram-max N  the n-grams --lookup matches (default 1..4)\n"
        "  -h, --help           this help\n"
        "  --version            the program's name and version\n"
        "exit status: 0 complete, 1 error, 2 bad usage, 130 stopped by Ctrl-C\n"
        "chat template families:");
    for (i = 0; swa_chat_template_at(i); i++) fprintf(f, " %s", swa_chat_template_name(swa_chat_template_at(i)));
    fprintf(f, "\n");
}

/* Bad usage: one line on stderr that ends by pointing at --help; returns 0. */
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, PROG ": ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see " PROG " --help)\n");
    return 0;
}

static int bad_value(const char *flag, const char *val, const char *want)
{
    return usage_error("%s wants %s, got \"%s\"", flag, want, val);
}

static int parse_long(const char *flag, const char *s, long lo, long hi, long *out)
{
    char *end;
    long v;
    char want[96];
    errno = 0;
    v = strtol(s, &end, 10);
    snprintf(want, sizeof want, "a number in %ld..%ld", lo, hi);
    if (errno || end == s || *end || v < lo || v > hi) return bad_value(flag, s, want);
    *out = v;
    return 1;
}

static int parse_float(const char *flag, const char *s, float lo, float hi, float *out)
{
    char *end;
    double v = strtod(s, &end);
    char want[96];
    snprintf(want, sizeof want, "a number in %g..%g", (double)lo, (double)hi);
    if (end == s || *end || !(v >= lo && v <= hi)) return bad_value(flag, s, want);
    *out = (float)v;
    return 1;
}

/* --logit-bias ID(+/-)BIAS as llama.cpp spells it: 15043+1, 15043-1.5, 15043-inf (a ban). */
static int parse_bias(options *o, const char *s)
{
    char *end;
    long id;
    double b = 0;
    char sign;
    errno = 0;
    id = strtol(s, &end, 10);
    if (errno || end == s || id < 0 || id > INT32_MAX || (*end != '+' && *end != '-'))
        return bad_value("--logit-bias", s, "TOKEN_ID+BIAS or TOKEN_ID-BIAS, e.g. 15043+1 or 15043-inf");
    sign = *end++;
    if (!strchr("0123456789.iI", *end) || !*end) end = (char *)"?";   /* no second sign, no space */
    else b = strtod(end, &end);
    if (*end || b != b)
        return bad_value("--logit-bias", s, "TOKEN_ID+BIAS or TOKEN_ID-BIAS, e.g. 15043+1 or 15043-inf");
    if (o->n_bias == MAX_BIAS) return bad_value("--logit-bias", s, "at most 256 biases");
    o->bias_id[o->n_bias] = (int32_t)id;
    o->bias[o->n_bias++] = (float)(sign == '-' ? -b : b);
    return 1;
}

#define MAX_PARALLEL 256   /* --parallel: more sequences than any batch needs, fewer than memory allows */

/* One flag with its value; 0 on a bad value. */
static int parse_flag(options *o, const char *a, const char *val)
{
    long v;
    if (!strcmp(a, "-m")) o->model = val;
    else if (!strcmp(a, "-p")) o->prompt = val;
    else if (!strcmp(a, "-f")) o->prompt_file = val;
    else if (!strcmp(a, "--ids")) o->ids = val;
    else if (!strcmp(a, "--dump-logits")) o->dump_logits = val;
    else if (!strcmp(a, "--system")) o->system = val;
    else if (!strcmp(a, "--chat-template-file")) o->chat_template_file = val;
    else if (!strcmp(a, "--chat-template")) {
        if (!swa_chat_template_by_name(val)) return bad_value(a, val, "a family listed in --help");
        o->chat_template = val;
    }
    else if (!strcmp(a, "--save-state")) o->save_state = val;
    else if (!strcmp(a, "--grammar")) o->grammar = val;
    else if (!strcmp(a, "--grammar-file")) o->grammar_file = val;
    else if (!strcmp(a, "-j") || !strcmp(a, "--json-schema")) o->json_schema = val;
    else if (!strcmp(a, "--json-schema-file")) o->json_schema_file = val;
    else if (!strcmp(a, "--load-state")) o->load_state = val;
    else if (!strcmp(a, "-n")) return parse_long(a, val, -1, LONG_MAX, &o->n_predict);
    else if (!strcmp(a, "-s")) {
        char *end;
        errno = 0;
        o->sampling.seed = strtoull(val, &end, 10);
        if (errno || end == val || *end || *val == '-') return bad_value(a, val, "a non-negative integer");
        o->seed_given = 1;
    }
    else if (!strcmp(a, "--temp")) return parse_float(a, val, 0.0f, 100.0f, &o->sampling.temperature);
    else if (!strcmp(a, "--top-k")) { if (!parse_long(a, val, 0, 1 << 30, &v)) return 0; o->sampling.top_k = (int32_t)v; }
    else if (!strcmp(a, "--top-p")) return parse_float(a, val, 0.0f, 1.0f, &o->sampling.top_p);
    else if (!strcmp(a, "--min-p")) return parse_float(a, val, 0.0f, 1.0f, &o->sampling.min_p);
    else if (!strcmp(a, "--repeat-penalty")) return parse_float(a, val, 0.0f, 100.0f, &o->sampling.repeat_penalty);
    else if (!strcmp(a, "--presence-penalty")) return parse_float(a, val, -2.0f, 2.0f, &o->sampling.presence_penalty);
    else if (!strcmp(a, "--frequency-penalty")) return parse_float(a, val, -2.0f, 2.0f, &o->sampling.frequency_penalty);
    else if (!strcmp(a, "--logit-bias")) return parse_bias(o, val);
    else if (!strcmp(a, "--repeat-last-n")) { if (!parse_long(a, val, 1, 1 << 20, &v)) return 0; o->sampling.repeat_last_n = (int32_t)v; }
    else if (!strcmp(a, "-t")) { if (!parse_long(a, val, 0, 256, &v)) return 0; o->cfg.n_threads = (int32_t)v; }
    else if (!strcmp(a, "-w")) { if (!parse_long(a, val, 1, INT32_MAX, &v)) return 0; o->cfg.window = (int32_t)v; }
    else if (!strcmp(a, "-c")) { if (!parse_long(a, val, 1, INT32_MAX, &v)) return 0; o->cfg.n_ctx = (int32_t)v; }
    else if (!strcmp(a, "-b")) { if (!parse_long(a, val, 1, 1 << 20, &v)) return 0; o->cfg.n_batch = (int32_t)v; }
    else if (!strcmp(a, "--parallel")) return parse_long(a, val, 1, MAX_PARALLEL, &o->parallel);
    else if (!strcmp(a, "--sinks")) { if (!parse_long(a, val, 0, INT32_MAX, &v)) return 0; o->cfg.n_sink = (int32_t)v; }
    else if (!strcmp(a, "-md") || !strcmp(a, "--model-draft")) o->model_draft = val;
    else if (!strcmp(a, "--draft-max") || !strcmp(a, "--draft") || !strcmp(a, "--draft-n"))
        return parse_long(a, val, 1, 256, &o->draft_max);
    else if (!strcmp(a, "--draft-min") || !strcmp(a, "--draft-n-min")) return parse_long(a, val, 0, 256, &o->draft_min);
    else if (!strcmp(a, "--draft-p-min")) return parse_float(a, val, 0.0f, 1.0f, &o->draft_p_min);
    else if (!strcmp(a, "--lookup-ngram-min")) return parse_long(a, val, 1, 64, &o->ngram_min);
    else if (!strcmp(a, "--lookup-ngram-max")) return parse_long(a, val, 1, 64, &o->ngram_max);
    else if (!strcmp(a, "--kv")) {
        if ((o->cfg.kv_type = swa_kv_type_from_name(val)) < 0) return bad_value(a, val, "f16, f32 or q8_0");
    }
    else return usage_error("unknown flag %s", a);
    return 1;
}

/* "1,2,3" -> ids; returns the count, 0 on a malformed list. */
static size_t parse_ids(const char *s, int32_t **out)
{
    size_t n = 1, k;
    const char *p;
    for (p = s; *p; p++) n += *p == ',';
    if (!(*out = (int32_t *)malloc(n * sizeof(int32_t)))) return 0;
    for (p = s, k = 0; k < n; k++) {
        char *end;
        long v;
        errno = 0;
        v = strtol(p, &end, 10);
        if (errno || end == p || v < 0 || v > INT32_MAX || (*end != ',' && *end != '\0')) {
            usage_error("--ids: bad token id at \"%s\"", p);
            return 0;
        }
        (*out)[k] = (int32_t)v;
        p = end + (*end == ',');
    }
    return n;
}

/* --parallel samples stories from one evaluated prompt: a chat, a saved state (one sequence),
   a logits dump (whose rows would interleave the sequences) and -n 0 (nothing to sample) are
   refused. One step decodes a token of every sequence in one forward pass, so -b is raised to
   N when below it. */
static int parallel_fits(options *o)
{
    const char *other = o->chat ? "-i" : o->save_state ? "--save-state" : o->load_state ? "--load-state"
                      : o->dump_logits ? "--dump-logits" : o->n_predict == 0 ? "-n 0" : NULL;
    int32_t n_batch = o->cfg.n_batch ? o->cfg.n_batch : swa_ctx_config_default(NULL).n_batch;
    if (other) return usage_error("--parallel samples several stories from one prompt; it does not go with %s", other);
    if (n_batch < o->parallel) o->cfg.n_batch = (int32_t)o->parallel;
    o->cfg.n_seq = (int32_t)o->parallel;
    return 1;
}

/* Speculative decoding verifies drafts on a story's one sequence, rewinding what is not accepted:
   -i, --parallel, --dump-logits (a row per evaluated position) and --sinks (rings that cannot go
   back) are refused. The rings keep draft-max - 1 slots more to rewind. */
static int spec_fits(options *o)
{
    const char *other = o->chat ? "-i" : o->parallel ? "--parallel" : o->dump_logits ? "--dump-logits"
                      : o->cfg.n_sink ? "--sinks" : NULL;
    if (!o->model_draft && o->draft_p_min >= 0) return usage_error("--draft-p-min needs --model-draft");
    if (!o->lookup && !o->model_draft) {
        if (o->draft_max || o->draft_min || o->ngram_min || o->ngram_max)
            return usage_error("--draft-max, --draft-min and --lookup-ngram-min/max need --lookup or --model-draft");
        return 1;
    }
    if (o->lookup && o->model_draft) return usage_error("give one of --lookup and --model-draft");
    if (other) return usage_error("%s does not go with %s", o->lookup ? "--lookup" : "--model-draft", other);
    if (o->model_draft && (o->ngram_min || o->ngram_max))
        return usage_error("--lookup-ngram-min/max are for --lookup, not --model-draft");
    if (!o->draft_max) o->draft_max = 16;   /* llama.cpp's defaults */
    if (o->draft_p_min < 0) o->draft_p_min = 0.75f;
    if (!o->ngram_min) o->ngram_min = 1;
    if (!o->ngram_max) o->ngram_max = o->ngram_min > 4 ? o->ngram_min : 4;
    if (o->ngram_min > o->ngram_max)
        return usage_error("--lookup-ngram-min %ld is above --lookup-ngram-max %ld", o->ngram_min, o->ngram_max);
    if (o->cfg.n_rewind < o->draft_max - 1) o->cfg.n_rewind = (int32_t)o->draft_max - 1;
    return 1;
}

/* The stream's state after everything was written to it: 0 when all of it got out, 1 after
   printing why not. */
static int flush_checked(FILE *f, const char *what)
{
    if (fflush(f) == 0 && !ferror(f)) return 0;
    fprintf(stderr, PROG ": cannot write to %s: %s\n", what, strerror(errno ? errno : EIO));
    return 1;
}

/* -1 to go on, or the exit status: 0 after --help or --version, 2 for bad usage. */
static int parse_args(int argc, char **argv, options *o)
{
    int i;
    memset(o, 0, sizeof *o);
    o->n_predict = 256;
    o->draft_p_min = -1.0f;
    o->sampling.temperature = 0.8f;
    o->sampling.top_k = 40;
    o->sampling.top_p = 0.95f;
    o->sampling.min_p = 0.05f;
    o->sampling.repeat_penalty = 1.0f;
    o->sampling.repeat_last_n = 64;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return flush_checked(stdout, "standard output"); }
        if (!strcmp(a, "--version")) {
            printf("%s %d.%d.%d\n", PROG, SWA_VERSION_MAJOR, SWA_VERSION_MINOR, SWA_VERSION_PATCH);
            return flush_checked(stdout, "standard output");
        }
        else if (!strcmp(a, "--no-bos")) o->no_bos = 1;
        else if (!strcmp(a, "--kv-f32")) o->cfg.kv_type = SWA_KV_F32;
        else if (!strcmp(a, "--no-mmap")) o->no_mmap = 1;
        else if (!strcmp(a, "-i") || !strcmp(a, "--chat")) o->chat = 1;
        else if (!strcmp(a, "--verbose-prompt")) o->verbose_prompt = 1;
        else if (!strcmp(a, "--jinja")) o->no_jinja = 0;
        else if (!strcmp(a, "--no-jinja")) o->no_jinja = 1;
        else if (!strcmp(a, "--no-progress")) o->no_progress = 1;
        else if (!strcmp(a, "--log-disable")) o->no_progress = o->log_disable = 1;
        else if (!strcmp(a, "--lookup")) o->lookup = 1;
        else if (a[0] != '-' || a[1] == '\0') return usage_error("unexpected argument \"%s\"", a), EXIT_USAGE;
        else if (i + 1 >= argc) {
            if (strstr(" -m -p -f --ids --dump-logits --save-state --load-state -n -s --temp --top-k --top-p --min-p "
                       "--repeat-penalty --repeat-last-n --presence-penalty --frequency-penalty --logit-bias -t -w -c -b --kv --system --chat-template --chat-template-file --parallel --sinks "
                       "--grammar --grammar-file -j --json-schema --json-schema-file "
                       "-md --model-draft --draft-max --draft --draft-n --draft-min --draft-n-min --draft-p-min --lookup-ngram-min "
                       "--lookup-ngram-max ", a))
                return usage_error("%s needs a value", a), EXIT_USAGE;
            return usage_error("unknown flag %s", a), EXIT_USAGE;
        }
        else if (!parse_flag(o, a, argv[++i])) return EXIT_USAGE;
    }
    if (!o->model) return usage_error("-m MODEL is required"), EXIT_USAGE;
    if (!!o->prompt + !!o->prompt_file + !!o->ids > 1) return usage_error("give one of -p, -f and --ids"), EXIT_USAGE;
    if (o->ids && !(o->n_prompt_ids = parse_ids(o->ids, &o->prompt_ids))) return EXIT_USAGE;
    if ((o->chat_template || o->chat_template_file || o->system) && !o->chat)
        return usage_error("--chat-template, --chat-template-file and --system need -i"), EXIT_USAGE;
    if (!!o->chat_template + !!o->chat_template_file > 1) return usage_error("give one of --chat-template and --chat-template-file"), EXIT_USAGE;
    if (o->chat_template_file && o->no_jinja) return usage_error("--chat-template-file is a Jinja template: not with --no-jinja"), EXIT_USAGE;
    if (!!o->grammar + !!o->grammar_file + !!o->json_schema + !!o->json_schema_file > 1)
        return usage_error("give one of --grammar, --grammar-file, --json-schema and --json-schema-file"), EXIT_USAGE;
    if ((o->grammar || o->grammar_file || o->json_schema || o->json_schema_file) && o->ids)
        return usage_error("--grammar and --json-schema constrain text: not with --ids"), EXIT_USAGE;
    if (o->chat && (o->save_state || o->load_state))
        return usage_error("--save-state and --load-state are for stories, not -i"), EXIT_USAGE;
    if (o->parallel && !parallel_fits(o)) return EXIT_USAGE;
    if (!spec_fits(o)) return EXIT_USAGE;
    if (!o->seed_given) o->sampling.seed = (uint64_t)time(NULL);
    return -1;
}

/* The whole file, NUL-terminated (the bytes are what *size says: a NUL inside is kept); NULL
   after printing why: it cannot be opened or read (a directory cannot be read), or memory
   runs out. */
static char *read_file_bytes(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, cap = 0, got;
    if (!f) { fprintf(stderr, PROG ": cannot open %s: %s\n", path, strerror(errno)); return NULL; }
    do {
        if (n + 4096 + 1 > cap) {
            char *p = (char *)realloc(buf, cap = 2 * cap + 8192);
            if (!p) {
                fprintf(stderr, PROG ": out of memory reading %s\n", path);
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = p;
        }
        n += got = fread(buf + n, 1, cap - n - 1, f);
    } while (got > 0);
    if (ferror(f)) {
        fprintf(stderr, PROG ": cannot read %s: %s\n", path, strerror(errno ? errno : EIO));
        free(buf);
        fclose(f);
        return NULL;
    }
    buf[n] = '\0';
    fclose(f);
    *size = n;
    return buf;
}

/* ---- output files ----
   --dump-logits and --save-state write through tools/common/safe_write.h: a new file beside the
   destination, renamed over it only when complete and on the disk, so that a failed or killed
   run leaves the destination as it was; an output that is one of the inputs is refused. */

/* ---- Ctrl-C ----
   The first SIGINT sets the flag, which the loops and the library's callbacks read; the second
   removes the unfinished output files and ends the program at once, by the signal's default
   action. POSIX: installed with sigaction, without SA_RESTART, so that a read from the
   terminal (a chat's prompt) returns at the first. */
static void on_sigint(int sig)
{
    if (!interrupted()) {
        set_interrupted(1);
#if defined(_WIN32)
        signal(sig, on_sigint);   /* the C runtime resets a handler to the default as it calls it */
#endif
        return;
    }
    sw_remove_unfinished();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* ---- standard output ----
   Every write is checked and flushed (the text streams token by token): after the first that
   fails (a closed pipe with SIGPIPE ignored, a full disk) nothing more is written, the run
   stops and ends with status 1. */
static int stdout_errno;   /* the first write error; 0: none */

static int put_out(const void *p, size_t n)
{
    if (stdout_errno) return 0;
    errno = 0;
    if ((n && fwrite(p, 1, n, stdout) != n) || fflush(stdout) != 0) {
        stdout_errno = errno ? errno : EIO;
        return 0;
    }
    return 1;
}

static int put_str(const char *s) { return put_out(s, strlen(s)); }

static int contains_nocase(swa_str s, const char *needle)
{
    size_t i, j, n = strlen(needle);
    for (i = 0; i + n <= s.len; i++) {
        for (j = 0; j < n && tolower((unsigned char)s.ptr[i + j]) == needle[j]; j++) {}
        if (j == n) return 1;
    }
    return 0;
}

/* llama.cpp's converter never writes the window of Mistral 7B v0.1, which was trained with one. */
static void hint_missing_window(const swa_model *m, const swa_ctx *c, const char *path)
{
    const swa_gguf *g = swa_model_gguf(m);
    int64_t k = swa_gguf_kv_find(g, "general.name");
    swa_gguf_value v = swa_gguf_kv_value(g, k);
    swa_str name;
    if (k < 0 || swa_gguf_value_str(&v, &name) != SWA_OK) { name.ptr = path; name.len = strlen(path); }
    if (swa_ctx_window(c, 0) == 0 && contains_nocase(name, "mistral") &&
        (contains_nocase(name, "v0.1") || contains_nocase(name, "0.1")))
        fprintf(stderr, "hint: Mistral 7B v0.1 was trained with a 4096-token sliding window this file does not record; "
                        "pass -w 4096 or write it with: swa-inspect %s --set-window 4096 OUT.gguf\n", path);
}

/* A size in the unit that reads: bytes, KiB, MiB or GiB. */
static const char *human_size(size_t bytes, char *buf, size_t cap)
{
    double b = (double)bytes;
    if (bytes < 1024) snprintf(buf, cap, "%zu bytes", bytes);
    else if (b < 1024.0 * 1024.0) snprintf(buf, cap, "%.1f KiB", b / 1024.0);
    else if (b < 1024.0 * 1024.0 * 1024.0) snprintf(buf, cap, "%.2f MiB", b / (1024.0 * 1024.0));
    else snprintf(buf, cap, "%.2f GiB", b / (1024.0 * 1024.0 * 1024.0));
    return buf;
}

static void print_summary(const swa_model *m, const swa_ctx *c, const options *o)
{
    char total[32], w_size[32], g_size[32];
    const swa_hparams *hp = swa_model_hparams(m);
    swa_ctx_config cfg = swa_ctx_config_get(c);
    int32_t w = swa_ctx_window(c, 0), l, n_windowed = 0, largest = 0;
    size_t windowed = 0, global = 0;
    char attention[96], parts[96] = "", seqs[48] = "";
    for (l = 0; l < hp->n_layer; l++) {
        int32_t wl = swa_ctx_window(c, l);
        n_windowed += wl > 0;
        if (wl > largest) largest = wl;
    }
    if (n_windowed == hp->n_layer && largest == w) snprintf(attention, sizeof attention, "window %d", w);
    else if (n_windowed == 0) snprintf(attention, sizeof attention, "full attention over %d positions", cfg.n_ctx);
    else snprintf(attention, sizeof attention, "%d windowed layers (up to %d), %d global over %d positions", n_windowed,
                  largest, hp->n_layer - n_windowed, cfg.n_ctx);
    swa_ctx_cache_split(m, &cfg, &windowed, &global);
    if (cfg.n_seq > 1) snprintf(seqs, sizeof seqs, " for %d sequences", cfg.n_seq);
    if (windowed && global)
        snprintf(parts, sizeof parts, " (windowed %s + global %s)", human_size(windowed, w_size, sizeof w_size),
                 human_size(global, g_size, sizeof g_size));
    fprintf(stderr, "swa-generate: %s, %d layers, %d heads (%d kv), embd %d, vocab %d, %s; %s; cache %s%s %s%s; "
                    "%d threads, %s kernels; seed %llu; model %s\n",
            hp->arch, hp->n_layer, hp->n_head, hp->n_kv_head, hp->n_embd, hp->n_vocab, swa_type_name(hp->weight_type),
            attention, human_size(swa_ctx_cache_bytes(c), total, sizeof total), parts, swa_kv_type_name(cfg.kv_type), seqs,
            cfg.n_threads, swa_ctx_kernels(c), (unsigned long long)o->sampling.seed,
            swa_load_path_name(swa_model_load_path(m)));
}

/* A growing string; on allocation failure it keeps what it had and sets failed. */
typedef struct text_buf {
    char *s;
    size_t len, cap;
    int failed;
} text_buf;

static void text_append(text_buf *b, const char *p, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = 2 * (b->len + n + 1);
        char *q = (char *)realloc(b->s, cap);
        if (!q) { b->failed = 1; return; }
        b->s = q;
        b->cap = cap;
    }
    memcpy(b->s + b->len, p, n);
    b->len += n;
    b->s[b->len] = '\0';
}

typedef struct session {
    const options *o;
    swa_ctx *ctx;
    const swa_vocab *vocab;       /* NULL: print ids */
    swa_sampler *sampler;
    swa_grammar *grammar;         /* --grammar: the sampler's (and each --parallel branch's) */
    FILE *dump;
    float *rows;                  /* [n_batch][n_vocab] for --dump-logits */
    size_t n_vocab;
    const float *logits;          /* of the last evaluated token */
    int32_t pending;              /* sampled (or the prompt's last) but not evaluated yet; -1: none */
    timings t;
    const swa_chat_template *chat_template;   /* -i: the family (for its end of turn; it formats without jinja) */
    swa_jinja *jinja;             /* -i: the Jinja template that formats the chat; NULL: the family does */
    int32_t eot;                  /* the template's end-of-turn token; -1: none, EOS only */
    text_buf *reply;              /* when not NULL, generate() appends the text it prints */
    int full_attention;           /* a layer keeps every position, up to n_ctx, without sinks */
    progress pg;                  /* the prompt's progress line, while one is evaluated */
    swa_spec *verifier;           /* --lookup, -md: speculative decoding */
    swa_drafter *drafter;         /* -md */
    int drafts_off;               /* the draft model's context is full: no more drafts */
} session;

/* Evaluate tokens batch by batch, dumping logits when asked; *done counts the tokens evaluated
   before any error. The sampler is shown the prompt's tokens (`seen`); those it chose itself it
   has recorded already. */
static swa_status eval_tokens(session *s, const int32_t *tok, size_t n, int seen, size_t *done, swa_error *err)
{
    size_t step = (size_t)swa_ctx_config_get(s->ctx).n_batch, i;
    swa_status st = SWA_OK;
    for (*done = 0; *done < n && st == SWA_OK; *done += step) {
        size_t len = n - *done < step ? n - *done : step;
        if (s->dump) {
            if ((st = swa_ctx_eval_all(s->ctx, tok + *done, len, s->rows, err)) != SWA_OK) break;
            if (fwrite(s->rows, sizeof(float), len * s->n_vocab, s->dump) != len * s->n_vocab) {
                snprintf(err->msg, sizeof err->msg, "cannot write %s: %s", s->o->dump_logits, strerror(errno ? errno : EIO));
                st = err->code = SWA_ERR_IO;
                break;
            }
            s->logits = s->rows + (len - 1) * s->n_vocab;
        } else {
            st = swa_ctx_eval(s->ctx, tok + *done, len, &s->logits, err);
        }
        if (st != SWA_OK) break;
        progress_show(&s->pg, (double)(*done + len), (double)n, "tokens", "prompt");
    }
    if (*done > n) *done = n;
    for (i = 0; seen && !s->grammar && i < *done; i++) swa_sampler_accept(s->sampler, tok[i]);   /* the grammar is the reply's */
    return st;
}

/* Whether n more tokens fit in the context; if not, say so with the flags that would make them
   fit. Only a full-attention layer without sinks has an end (n_ctx positions); windowed layers
   and sinks go on for ever. */
static int prompt_fits(const session *s, size_t n)
{
    int64_t pos = swa_seq_pos(s->ctx, 0), need = pos + (int64_t)n;
    int32_t n_ctx = swa_ctx_config_get(s->ctx).n_ctx;
    char before[96] = "";
    if (!s->full_attention || need <= n_ctx) return 1;
    if (pos > 0) snprintf(before, sizeof before, " after the %lld positions already evaluated", (long long)pos);
    fprintf(stderr, PROG ": the prompt is %zu tokens%s, and the context holds %d positions (-c %d): give -c %lld or more, "
                    "or -w N for a sliding window of N positions on every layer, or --sinks N\n",
            n, before, n_ctx, n_ctx, (long long)need);
    return 0;
}

/* The timings count only what was evaluated. An evaluation stopped by Ctrl-C is no error. */
static int feed_prompt(session *s, const int32_t *tok, size_t n)
{
    double t0;
    swa_error err;
    size_t done;
    swa_status st;
    if (!prompt_fits(s, n)) return 0;
    t0 = progress_clock();
    progress_start(&s->pg, !s->o->no_progress);
    st = eval_tokens(s, tok, n, 1, &done, &err);
    progress_end(&s->pg);
    s->t.prompt_s += progress_clock() - t0;
    s->t.n_prompt += (long)done;
    if (st != SWA_OK && !(st == SWA_ERR_ABORTED && interrupted())) fprintf(stderr, "\n" PROG ": %s\n", err.msg);
    return st == SWA_OK;
}

/* Feed back one generated token: 1, or -1 when a full-attention context has no room left
   (generation ends there, which is no error), or 0 on error or Ctrl-C. */
static int generate_step(session *s, int32_t tok)
{
    swa_error err;
    size_t done;
    swa_status st = eval_tokens(s, &tok, 1, 0, &done, &err);
    if (st == SWA_OK) return 1;
    if (st == SWA_ERR_CONTEXT_FULL) {
        fprintf(stderr, "\n" PROG ": the context is full (%d positions); generation stops here\n",
                swa_ctx_config_get(s->ctx).n_ctx);
        return -1;
    }
    if (!(st == SWA_ERR_ABORTED && interrupted())) fprintf(stderr, "\n" PROG ": %s\n", err.msg);
    return 0;
}

/* Print a generated piece of text (and keep it for a chat's reply); 0 when stdout failed. */
static int emit(session *s, const char *text, size_t n)
{
    if (s->reply) text_append(s->reply, text, n);
    return put_out(text, n);
}

/* ---- speculative decoding: --lookup, -md ---- */

/* Print one generated token as generate() does: 0 at the end of the story (EOS, the template's
   end; it stays pending), -1 when stdout failed, else 1. */
static int spec_emit(session *s, swa_decoder *dec, int32_t tok)
{
    char text[256];
    size_t n;
    s->pending = tok;
    if (s->vocab && (tok == swa_vocab_eos(s->vocab) || tok == s->eot)) return 0;
    if (s->vocab) n = swa_decoder_push(dec, tok, text, sizeof text);
    else n = (size_t)snprintf(text, sizeof text, "%s%d", s->t.n_gen ? " " : "", tok);
    if (!emit(s, text, n)) return -1;
    s->t.n_gen++;
    return 1;
}

/* A draft of at most k tokens to follow hist[0..n) (ending with the token to verify after). */
static swa_status spec_draft(session *s, const int32_t *hist, size_t n, int32_t k, int32_t *buf, swa_draft *d,
                             swa_error *err)
{
    const options *o = s->o;
    swa_status st;
    memset(d, 0, sizeof *d);
    d->token = buf;
    if (k <= 0 || k < o->draft_min || s->drafts_off) return SWA_OK;
    if (s->drafter) st = swa_drafter_draft(s->drafter, hist, n, k, d, err);
    else st = swa_spec_lookup(hist, n, (int32_t)o->ngram_min, (int32_t)o->ngram_max, buf, k, &d->n, err);
    if (st == SWA_ERR_CONTEXT_FULL) {   /* the target may go on: without drafts */
        fprintf(stderr, "\n" PROG ": the draft model's context is full (%s); generation goes on without drafts\n",
                err->msg);
        s->drafts_off = 1;
        memset(d, 0, sizeof *d);
        d->token = buf;
        return SWA_OK;
    }
    if (st == SWA_OK && d->n < o->draft_min) d->n = 0;
    return st;
}

/* The longest draft worth verifying now: within --draft-max, the tokens -n still allows after
   `last`, and the room a full-attention context has left. */
static int32_t spec_room(const session *s, long n_predict, long printed)
{
    long k = s->o->draft_max;
    if (n_predict >= 0 && n_predict - printed - 1 < k) k = n_predict - printed - 1;
    if (s->full_attention) {
        long room = (long)swa_ctx_config_get(s->ctx).n_ctx - (long)swa_seq_pos(s->ctx, 0) - 1;
        if (room < k) k = room;
    }
    return k > 0 ? (int32_t)k : 0;
}

/* Verify a draft after `last` and print what was accepted; *last becomes the target's next
   token (not evaluated). 1 to go on, 0 at the story's end (*ended) or after -n, -1 on error. */
static int spec_step(session *s, swa_decoder *dec, int32_t **hist, size_t *n_hist, int32_t *last, long n_predict,
                     int *ended)
{
    int32_t buf[256], out[257], n_out = 0, j;
    swa_draft d;
    swa_error err;
    swa_status st = spec_draft(s, *hist, *n_hist, spec_room(s, n_predict, s->t.n_gen), buf, &d, &err);
    if (st == SWA_OK) st = swa_spec_verify(s->verifier, s->ctx, 0, s->sampler, *last, &d, out, &n_out, &err);
    if (st == SWA_ERR_CONTEXT_FULL) {
        fprintf(stderr, "\n" PROG ": the context is full (%d positions); generation stops here\n",
                swa_ctx_config_get(s->ctx).n_ctx);
        return 0;
    }
    if (st != SWA_OK) {
        if (!(st == SWA_ERR_ABORTED && interrupted())) fprintf(stderr, "\n" PROG ": %s\n", err.msg);
        return -1;
    }
    s->t.n_verify++;
    s->t.n_drafted += d.n;
    s->t.n_accepted += n_out - 1;
    for (j = 0; j < n_out; j++) {
        int r;
        (*hist)[(*n_hist)++] = out[j];
        if ((r = spec_emit(s, dec, out[j])) <= 0) {
            /* the end came inside the draft: the sequence keeps what precedes it, as without drafts */
            if (r == 0 && j < n_out - 1) (void)swa_seq_rewind(s->ctx, 0, n_out - 1 - j, NULL);
            *ended = r == 0;
            return r;
        }
    }
    *last = out[n_out - 1];
    return n_predict >= 0 && s->t.n_gen >= n_predict ? 0 : 1;
}

/* generate() with speculative decoding: the same tokens at temperature 0, the same distribution
   above it; the text so far (for --lookup and the draft model) starts with the prompt. */
static int generate_spec(session *s, const int32_t *prompt, size_t n_prompt, long n_predict, int *ended)
{
    size_t cap = n_prompt + (size_t)(n_predict >= 0 ? n_predict : 1024) + 258, n_hist = n_prompt;
    int32_t *hist = (int32_t *)malloc(cap * sizeof(int32_t)), last = -1;
    swa_decoder dec;
    char text[256];
    double t0 = progress_clock();
    int r = 1;
    *ended = 0;
    if (!hist) return fprintf(stderr, PROG ": out of memory\n"), 0;
    if (n_prompt) memcpy(hist, prompt, n_prompt * sizeof(int32_t));
    swa_decoder_init(&dec, s->vocab);
    dec.at_start = 0;
    if (n_predict != 0) {
        hist[n_hist++] = last = swa_sampler_sample(s->sampler, s->logits);
        r = spec_emit(s, &dec, last);
        *ended = r == 0;
    }
    while (r > 0 && (n_predict < 0 || s->t.n_gen < n_predict) && !interrupted()) {
        if (cap - n_hist < 258) {   /* room for a step's tokens */
            int32_t *more = (int32_t *)realloc(hist, 2 * cap * sizeof(int32_t));
            if (!more) { fprintf(stderr, PROG ": out of memory\n"); r = -1; break; }
            hist = more;
            cap *= 2;
        }
        r = spec_step(s, &dec, &hist, &n_hist, &last, n_predict, ended);
    }
    if (s->vocab && !emit(s, text, swa_decoder_flush(&dec, text, sizeof text))) r = -1;
    s->t.gen_s += progress_clock() - t0;
    free(hist);
    return r >= 0;
}

/* Sample, print and feed back up to n_predict tokens (-1: no limit). Returns 0 on error or
   when Ctrl-C stopped an evaluation (the sampled token stays pending); *ended says whether
   end-of-sequence was sampled. */
static int generate(session *s, long n_predict, int *ended)
{
    swa_decoder dec;
    char text[256];
    double t0 = progress_clock();
    long i;
    int ok = 1;
    *ended = 0;
    swa_decoder_init(&dec, s->vocab);
    dec.at_start = 0;   /* the prompt is already printed: keep every space */
    for (i = 0; (n_predict < 0 || i < n_predict) && !interrupted(); i++) {
        int32_t tok = swa_sampler_sample(s->sampler, s->logits);
        size_t n;
        s->pending = tok;   /* not evaluated yet: a saved story goes on from it */
        if (s->vocab && (tok == swa_vocab_eos(s->vocab) || tok == s->eot)) { *ended = 1; break; }
        if (s->vocab) n = swa_decoder_push(&dec, tok, text, sizeof text);
        else n = (size_t)snprintf(text, sizeof text, "%s%d", i ? " " : "", tok);
        if (!emit(s, text, n)) { ok = 0; break; }
        s->t.n_gen++;
        /* The last token needs no evaluation, unless a chat goes on from it. */
        if (((n_predict >= 0 && i + 1 == n_predict) || interrupted()) && !s->reply) break;
        if (!(ok = generate_step(s, tok))) break;
        s->pending = -1;
        if (ok < 0) {                  /* a full context: generation ends here, no error */
            ok = 1;
            break;
        }
    }
    if (s->vocab && !emit(s, text, swa_decoder_flush(&dec, text, sizeof text))) ok = 0;
    s->t.gen_s += progress_clock() - t0;
    return ok;
}

/* --parallel: one continuation of the prompt, in sequence `seq` of the context. */
static int attach_grammar(const options *o, swa_sampler *sampler, const swa_vocab *v, swa_grammar **g);

typedef struct branch {
    swa_sampler *sampler;         /* seeded with the seed + seq */
    swa_decoder dec;
    text_buf out;                 /* what a single run with that seed prints on stdout */
    const float *logits;          /* where its next token is sampled from */
    long n_gen;
    int done;
} branch;

/* A branch's block on stdout: a header line, then the single run's output. */
static int print_branch(const session *s, branch *b, int seq)
{
    char head[128];
    snprintf(head, sizeof head, "--- continuation %d of %ld, seed %llu ---\n", seq + 1, s->o->parallel,
             (unsigned long long)(s->o->sampling.seed + (uint64_t)seq));
    return put_str(head) && put_out(b->out.s ? b->out.s : "", b->out.len);
}

/* The branch is finished: its last bytes and the single run's closing newline. */
static void close_branch(const session *s, branch *b)
{
    char text[256];
    if (s->vocab) text_append(&b->out, text, swa_decoder_flush(&b->dec, text, sizeof text));
    text_append(&b->out, "\n", 1);
    b->done = 1;
}

/* Sample a token for each unfinished branch and queue the ones to evaluate, as generate()
   does for one: end-of-sequence is not printed, the -n-th token not evaluated. */
static size_t sample_branches(session *s, branch *br, int32_t *tok, int32_t *seq)
{
    long n_predict = s->o->n_predict;
    size_t n = 0;
    int i;
    for (i = 0; i < (int)s->o->parallel; i++) {
        branch *b = &br[i];
        char text[256];
        int32_t t;
        if (b->done) continue;
        if (interrupted()) { close_branch(s, b); continue; }
        t = swa_sampler_sample(b->sampler, b->logits);
        if (s->vocab && t == swa_vocab_eos(s->vocab)) { close_branch(s, b); continue; }
        if (s->vocab) text_append(&b->out, text, swa_decoder_push(&b->dec, t, text, sizeof text));
        else text_append(&b->out, text, (size_t)snprintf(text, sizeof text, "%s%d", b->n_gen ? " " : "", t));
        b->n_gen++;
        s->t.n_gen++;
        if (n_predict >= 0 && b->n_gen == n_predict) { close_branch(s, b); continue; }
        tok[n] = t;
        seq[n++] = i;
    }
    return n;
}

/* The branches forked from the prompt in sequence 0 (its last logits in s->logits), generated
   together: one swa_ctx_decode of a token per unfinished branch per step. Each is printed as
   soon as it and every branch before it are finished. */
static int generate_parallel(session *s, const int32_t *prompt, size_t n_prompt, const char *echo, size_t echo_len)
{
    int n_seq = (int)s->o->parallel, i, printed = 0, ok = 0;
    branch *br = (branch *)calloc((size_t)n_seq, sizeof *br);
    float *first = (float *)malloc(s->n_vocab * sizeof(float));
    float *rows = (float *)malloc((size_t)n_seq * s->n_vocab * sizeof(float));
    int32_t *tok = (int32_t *)malloc((size_t)n_seq * sizeof(int32_t)), *seq = (int32_t *)malloc((size_t)n_seq * sizeof(int32_t));
    double t0 = progress_clock();
    swa_error err;
    if (!br || !first || !rows || !tok || !seq) { fprintf(stderr, "swa-generate: out of memory for %d sequences\n", n_seq); goto out; }
    memcpy(first, s->logits, s->n_vocab * sizeof(float));   /* the context's copy lasts until its next call */
    for (i = 0; i < n_seq; i++) {
        swa_sampler_config sc = s->o->sampling;
        size_t k;
        sc.seed += (uint64_t)i;
        if (swa_sampler_create(&sc, (int32_t)s->n_vocab, &br[i].sampler, &err) != SWA_OK ||
            swa_sampler_set_logit_bias(br[i].sampler, s->o->bias_id, s->o->bias, s->o->n_bias, &err) != SWA_OK ||
            (i > 0 && swa_seq_copy(s->ctx, 0, i, &err) != SWA_OK)) {
            fprintf(stderr, "swa-generate: %s\n", err.msg);
            goto out;
        }
        if (s->grammar && !attach_grammar(s->o, br[i].sampler, s->vocab, &s->grammar)) goto out;
        for (k = 0; !s->grammar && k < n_prompt; k++) swa_sampler_accept(br[i].sampler, prompt[k]);
        swa_decoder_init(&br[i].dec, s->vocab);
        br[i].dec.at_start = 0;   /* after the prompt: keep every space */
        br[i].logits = first;
        text_append(&br[i].out, echo, echo_len);
    }
    for (ok = 1; printed < n_seq;) {
        swa_batch batch;
        swa_status st;
        batch.n = sample_branches(s, br, tok, seq);
        batch.token = tok;
        batch.seq = seq;
        batch.logits = NULL;   /* each sequence's one token */
        if (batch.n > 0 && (st = swa_ctx_decode(s->ctx, &batch, rows, &err)) != SWA_OK) {
            if (st == SWA_ERR_CONTEXT_FULL)   /* a full context ends generation, no error; nor does Ctrl-C */
                fprintf(stderr, "\n" PROG ": the context is full (%d positions); generation stops here\n",
                        swa_ctx_config_get(s->ctx).n_ctx);
            else if (!(st == SWA_ERR_ABORTED && interrupted())) {
                fprintf(stderr, "\n" PROG ": %s\n", err.msg);
                ok = 0;
            }
            batch.n = 0;
        }
        for (i = 0; i < (int)batch.n; i++) br[seq[i]].logits = rows + (size_t)i * s->n_vocab;
        if (batch.n == 0)   /* every branch is finished, or none can go on */
            for (i = 0; i < n_seq; i++) if (!br[i].done) close_branch(s, &br[i]);
        for (; printed < n_seq && br[printed].done; printed++) {
            if (br[printed].out.failed) { fprintf(stderr, PROG ": out of memory for the text\n"); ok = 0; }
            if (!print_branch(s, &br[printed], printed)) { ok = 0; goto out; }
        }
    }
out:
    s->t.gen_s += progress_clock() - t0;
    for (i = 0; br && i < n_seq; i++) {
        swa_sampler_free(br[i].sampler);
        free(br[i].out.s);
    }
    free(br); free(first); free(rows); free(tok); free(seq);
    return ok;
}

/* --save-state / --load-state: "SWAG", a version, the pending token, then the library's
   snapshot of the context. The pending token is the one sampled last (or the prompt's last):
   its logits are where the story goes on, so it is evaluated when the story resumes. */
#define STATE_MAGIC "SWAG"
#define STATE_VERSION 1

/* Write the state into out (opened before the run) and put it in place. */
static int save_state(const session *s, sw_file *out)
{
    size_t size = swa_state_size(s->ctx, 0), head = 12;
    uint8_t *buf = (uint8_t *)malloc(head + size);
    uint32_t version = STATE_VERSION;
    swa_error err;
    int ok = 0;
    if (!buf) fprintf(stderr, PROG ": no memory for a state of %zu bytes\n", size);
    else {
        memcpy(buf, STATE_MAGIC, 4);
        memcpy(buf + 4, &version, 4);
        memcpy(buf + 8, &s->pending, 4);
        if (swa_state_save(s->ctx, 0, buf + head, size, NULL, &err) != SWA_OK) fprintf(stderr, PROG ": %s\n", err.msg);
        else if (fwrite(buf, 1, head + size, out->f) != head + size)
            fprintf(stderr, PROG ": cannot write %s: %s\n", s->o->save_state, strerror(errno ? errno : EIO));
        else if (sw_commit(out) != 0) fprintf(stderr, PROG ": %s\n", out->error);
        else ok = 1;
    }
    if (!ok) sw_abort(out);
    free(buf);
    return ok;
}

/* --load-state, read whole before the model is loaded: a plausible header (the magic, our
   version, a token id), or NULL after saying why. The library checks the rest as it restores. */
static char *read_state(const char *path, size_t *size)
{
    char *buf = read_file_bytes(path, size);
    uint32_t version;
    int32_t pending;
    if (!buf) return NULL;
    if (*size < 12 || memcmp(buf, STATE_MAGIC, 4) != 0) fprintf(stderr, PROG ": %s is not a saved state\n", path);
    else if (memcpy(&version, buf + 4, 4), version != STATE_VERSION)
        fprintf(stderr, PROG ": %s: state version %u, want %d\n", path, version, STATE_VERSION);
    else if (memcpy(&pending, buf + 8, 4), pending < 0) fprintf(stderr, PROG ": %s: bad token %d\n", path, pending);
    else return buf;
    free(buf);
    return NULL;
}

/* Restore the context from the state read by read_state and return the pending token, -1 on
   error. */
static int32_t load_state(session *s)
{
    const char *path = s->o->load_state;
    int32_t pending;
    swa_error err;
    memcpy(&pending, s->o->state + 8, 4);
    if ((size_t)pending >= s->n_vocab) {
        fprintf(stderr, PROG ": %s: bad token %d (the vocabulary has %zu)\n", path, pending, s->n_vocab);
        return -1;
    }
    if (swa_state_load(s->ctx, 0, s->o->state + 12, s->o->state_size - 12, &err) != SWA_OK) {
        fprintf(stderr, PROG ": %s: %s\n", path, err.msg);
        return -1;
    }
    return pending;
}

/* Tokenize len bytes of text (a NUL among them is a byte like any other, as in swa-tokenize);
   BOS first when asked. The ids in *out (malloc'd), their count in *n; 0 after printing why.
   A guess at the count first, then exactly what the size query asks for (a space can take
   three byte tokens). */
static int tokenize(const swa_vocab *v, const char *text, size_t len, int flags, int32_t **out, size_t *n)
{
    size_t cap = len + 2;
    swa_error err;
    swa_status st;
    *n = 0;
    if (!(*out = (int32_t *)malloc(cap * sizeof(int32_t)))) {
        fprintf(stderr, PROG ": out of memory for %zu tokens\n", cap);
        return 0;
    }
    st = swa_tokenize(v, text, len, flags, *out, cap, n, &err);
    if (st == SWA_ERR_BUFFER_TOO_SMALL) {
        int32_t *more = (int32_t *)realloc(*out, *n * sizeof(int32_t));
        if (!more) { fprintf(stderr, PROG ": out of memory for %zu tokens\n", *n); return 0; }
        *out = more;
        st = swa_tokenize(v, text, len, flags, *out, *n, n, &err);
    }
    if (st != SWA_OK) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        return 0;
    }
    return 1;
}

/* The conversation so far, as the template formats it. */
typedef struct conversation {
    swa_chat_message *msgs;
    size_t n, cap;
} conversation;

static int conversation_add(conversation *c, const char *role, const char *content)
{
    char *copy = (char *)malloc(strlen(content) + 1);
    if (!copy) return 0;
    strcpy(copy, content);
    if (c->n == c->cap) {
        size_t cap = 2 * c->cap + 8;
        swa_chat_message *m = (swa_chat_message *)realloc(c->msgs, cap * sizeof *m);
        if (!m) { free(copy); return 0; }
        c->msgs = m;
        c->cap = cap;
    }
    c->msgs[c->n].role = role;
    c->msgs[c->n++].content = copy;
    return 1;
}

static void conversation_free(conversation *c)
{
    size_t i;
    for (i = 0; i < c->n; i++) free((char *)c->msgs[i].content);
    free(c->msgs);
}

/* s as a JSON string (quotes included) appended to b */
static void json_string(text_buf *b, const char *s)
{
    char esc[8];
    text_append(b, "\"", 1);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') { esc[0] = '\\'; esc[1] = (char)ch; text_append(b, esc, 2); }
        else if (ch < 0x20) { snprintf(esc, sizeof esc, "\\u%04x", ch); text_append(b, esc, 6); }
        else text_append(b, s, 1);
    }
    text_append(b, "\"", 1);
}

/* A token's piece as stored, NUL-terminated in buf (cut to fit) */
static const char *piece_text(const swa_vocab *v, int32_t id, char *buf, size_t cap)
{
    swa_str p = swa_vocab_piece(v, id);
    snprintf(buf, cap, "%.*s", (int)p.len, p.ptr);
    return buf;
}

/* The conversation rendered by the Jinja template (malloc'd), or NULL after printing why.
   bos_token and eos_token are the vocabulary's. */
static char *format_jinja(const session *s, const conversation *c, int add_generation_prompt, size_t *len)
{
    text_buf msgs = {NULL, 0, 0, 0};
    char bos[256], eos[256], *out = NULL, *copy = NULL;
    swa_jinja_chat chat;
    swa_error err;
    size_t i;
    text_append(&msgs, "[", 1);
    for (i = 0; i < c->n; i++) {
        text_append(&msgs, i ? ", {\"role\": " : "{\"role\": ", i ? 11 : 9);
        json_string(&msgs, c->msgs[i].role);
        text_append(&msgs, ", \"content\": ", 13);
        json_string(&msgs, c->msgs[i].content);
        text_append(&msgs, "}", 1);
    }
    text_append(&msgs, "]", 1);
    if (msgs.failed) {
        fprintf(stderr, PROG ": out of memory formatting the chat\n");
        free(msgs.s);
        return NULL;
    }
    memset(&chat, 0, sizeof chat);
    chat.messages = msgs.s;
    chat.add_generation_prompt = add_generation_prompt;
    if (swa_vocab_bos(s->vocab) >= 0) chat.bos_token = piece_text(s->vocab, swa_vocab_bos(s->vocab), bos, sizeof bos);
    if (swa_vocab_eos(s->vocab) >= 0) chat.eos_token = piece_text(s->vocab, swa_vocab_eos(s->vocab), eos, sizeof eos);
    if (swa_jinja_apply(s->jinja, &chat, &out, len, &err) != SWA_OK) fprintf(stderr, PROG ": chat template: %s\n", err.msg);
    else if (!(copy = (char *)malloc(*len + 1))) fprintf(stderr, PROG ": out of memory formatting the chat\n");
    else memcpy(copy, out, *len + 1);
    swa_jinja_text_free(out);
    free(msgs.s);
    return copy;
}

/* The whole conversation in the template's format (malloc'd), or NULL after printing why. */
static char *format_chat(const session *s, const conversation *c, int add_generation_prompt, size_t *len)
{
    swa_error err;
    char *text = NULL;
    if (s->jinja) return format_jinja(s, c, add_generation_prompt, len);
    if (swa_chat_format(s->chat_template, c->msgs, c->n, add_generation_prompt, NULL, 0, len, &err) == SWA_ERR_BUFFER_TOO_SMALL &&
        (text = (char *)malloc(*len + 1)) != NULL &&
        swa_chat_format(s->chat_template, c->msgs, c->n, add_generation_prompt, text, *len + 1, len, &err) == SWA_OK)
        return text;
    fprintf(stderr, "swa-generate: %s\n", text ? err.msg : "out of memory formatting the chat");
    free(text);
    return NULL;
}

/* Where the next turn's text starts in the formatting of a conversation that ends with the
   model's answer, whose first `from` bytes were evaluated before the answer: at the end-of-turn
   marker that closes the answer. The answer itself was evaluated token by token as it was
   sampled; the marker and whatever the template writes after it (a newline in chatml) were not.
   A format that writes no end-of-turn text after an answer (chatglm's <|user|> opens the next
   turn) starts the next turn where the answer, as the template wrote it, ends. */
static size_t answer_end(const session *s, const char *closed, size_t len, size_t from, const char *reply)
{
    const char *eot = s->eot >= 0 ? swa_chat_template_eot(s->chat_template) : "";
    size_t n = strlen(eot), i, r = strlen(reply);
    for (i = len >= n ? len - n + 1 : 0; n > 0 && i-- > from;)
        if (!memcmp(closed + i, eot, n)) return i;
    while (r > 0 && isspace((unsigned char)reply[0])) reply++, r--;   /* the template may trim it */
    while (r > 0 && isspace((unsigned char)reply[r - 1])) r--;
    for (i = len >= r ? len - r + 1 : 0; r > 0 && i-- > from;)
        if (!memcmp(closed + i, reply, r)) return i + r;
    return len;
}

/* Evaluate the part of the conversation's text that the context has not seen yet. */
static int feed_text(session *s, const char *text, int first)
{
    int flags = SWA_TOKENIZE_SPECIAL | (first && !s->o->no_bos && swa_vocab_add_bos(s->vocab) ? SWA_TOKENIZE_ADD_BOS : 0);
    char bos[256];
    int32_t *tok;
    if (s->jinja && swa_vocab_bos(s->vocab) >= 0) {   /* a template that writes BOS itself gets no second one */
        const char *b = piece_text(s->vocab, swa_vocab_bos(s->vocab), bos, sizeof bos);
        if (*b && !strncmp(text, b, strlen(b))) flags &= ~SWA_TOKENIZE_ADD_BOS;
    }
    size_t n;
    int ok = tokenize(s->vocab, text, strlen(text), flags, &tok, &n) && feed_prompt(s, tok, n);
    if (s->o->verbose_prompt) fprintf(stderr, "[turn: \"%s\", %zu tokens]\n", text, n);
    free(tok);
    return ok;
}

/* 1 unless the grammar stopped the answer (a limit, or a vocabulary that cannot go on), which
   is said; the chat ends there, as a story does. */
static int grammar_held(const session *s)
{
    swa_error err;
    if (swa_sampler_status(s->sampler, &err) == SWA_OK) return 1;
    fprintf(stderr, PROG ": %s\n", err.msg);
    return 0;
}

/* Each line of stdin is a user message. The conversation is formatted whole with the template
   every turn, and only what follows the text already evaluated is tokenized and evaluated.
   Ctrl-C while a turn is evaluated ends the chat; while the answer is generated it ends the
   answer after the token in hand (each is evaluated whole, for the next turn goes on from it)
   and returns to the prompt; at the prompt it ends the chat. */
static int chat(session *s)
{
    conversation c = {NULL, 0, 0};
    text_buf reply = {NULL, 0, 0, 0};
    const char *first = s->o->text;
    char line[8192], *text = NULL;
    size_t done = 0, len;                      /* bytes of the formatted text evaluated */
    int ok = 0, ended;
    if (s->o->system && !conversation_add(&c, "system", s->o->system)) goto out;
    for (;;) {
        if (first) {
            len = strlen(first);
            if (len >= sizeof line) {
                fprintf(stderr, PROG ": the first turn is longer than %zu bytes\n", sizeof line - 1);
                goto out;
            }
            snprintf(line, sizeof line, "%s", first);
            if (len && line[len - 1] == '\n') line[len - 1] = '\0';   /* a file's last newline */
            first = NULL;
        } else {
            fprintf(stderr, "> ");
            set_interrupted(0);
            if (!fgets(line, sizeof line, stdin)) { ok = !interrupted(); goto out; }
            line[strcspn(line, "\n")] = '\0';
            if (!line[0]) continue;
        }
        if (!conversation_add(&c, "user", line) || !(text = format_chat(s, &c, 1, &len))) goto out;
        if (len < done || !feed_text(s, text + done, done == 0)) goto out;
        done = len;
        free(text);
        text = NULL;
        reply.len = 0;
        if (reply.s) reply.s[0] = '\0';
        s->reply = &reply;
        swa_ctx_set_abort(s->ctx, NULL, NULL);
        swa_sampler_restart_grammar(s->sampler);   /* each answer matches the grammar whole */
        ok = generate(s, s->o->n_predict, &ended) && put_str("\n") && grammar_held(s);
        swa_ctx_set_abort(s->ctx, interrupt_abort, NULL);
        s->reply = NULL;
        if (!ok || reply.failed || !conversation_add(&c, "assistant", reply.s ? reply.s : "")) { ok = 0; goto out; }
        ok = 0;
        if (!(text = format_chat(s, &c, 0, &len))) goto out;
        done = answer_end(s, text, len, done, reply.s ? reply.s : "");
        free(text);
        text = NULL;
    }
out:
    free(text);
    free(reply.s);
    conversation_free(&c);
    return ok;
}

/* The end of a turn: the family's marker when the vocabulary has it as a token, else EOS only
   (a warning says so). */
static void choose_eot(session *s, const char *what)
{
    const swa_chat_template *t = s->chat_template;
    s->eot = t ? swa_chat_template_eot_token(t, s->vocab) : -1;
    if (s->eot >= 0)
        fprintf(stderr, PROG ": chat template %s, turns end at %s\n", what, swa_chat_template_eot(t));
    else
        fprintf(stderr, PROG ": warning: chat template %s, but %s%s%s: answers end at end-of-sequence or after -n tokens\n",
                what, t ? "the vocabulary has no " : "its end-of-turn marker is not known", t ? swa_chat_template_eot(t) : "",
                t ? " token to end a turn with" : "");
}

/* The template the chat is written in: --chat-template NAME (a family), --chat-template-file
   FILE (Jinja), else the model's template through the Jinja engine (unless --no-jinja), else
   its family, else Mistral's [INST] format (llama2), which swa-generate used before it read
   templates. The family, when known, also gives the end-of-turn token. 0 after printing why. */
static int choose_template(session *s, const swa_model *m, const options *o)
{
    char what[600];
    swa_error err;
    swa_status st;
    if (o->chat_template) {
        s->chat_template = swa_chat_template_by_name(o->chat_template);
        choose_eot(s, o->chat_template);
        return 1;
    }
    if (o->chat_template_file) {
        size_t len;
        char *src = read_file_bytes(o->chat_template_file, &len);
        if (!src) return 0;
        st = swa_jinja_parse(src, len, &s->jinja, &err);
        if (st == SWA_OK && swa_chat_template_detect(src, len, &s->chat_template, NULL) != SWA_OK) s->chat_template = NULL;
        free(src);
        if (st != SWA_OK) { fprintf(stderr, PROG ": %s: %s\n", o->chat_template_file, err.msg); return 0; }
        snprintf(what, sizeof what, "%s (Jinja)", o->chat_template_file);
        choose_eot(s, what);
        return 1;
    }
    if ((st = swa_model_chat_template(m, &s->chat_template, &err)) == SWA_ERR_NOT_FOUND) {
        s->chat_template = swa_chat_template_by_name("llama2");
        fprintf(stderr, PROG ": the model has no chat template; using llama2 ([INST] ... [/INST]), "
                        "--chat-template chooses another\n");
        choose_eot(s, "llama2");
        return 1;
    }
    if (st != SWA_OK) s->chat_template = NULL;
    if (!o->no_jinja && swa_jinja_of(swa_model_gguf(m), &s->jinja, &err) == SWA_OK) {
        snprintf(what, sizeof what, "of the model (Jinja%s%s)", s->chat_template ? "; family " : "",
                 s->chat_template ? swa_chat_template_name(s->chat_template) : "");
        choose_eot(s, what);
        return 1;
    }
    if (!s->chat_template) {
        fprintf(stderr, PROG ": %s (with --chat-template NAME; the names are in --help)\n", err.msg);
        return 0;
    }
    if (!o->no_jinja)
        fprintf(stderr, PROG ": warning: the model's chat template is not rendered: %s; the %s family's format is used\n",
                err.msg, swa_chat_template_name(s->chat_template));
    choose_eot(s, swa_chat_template_name(s->chat_template));
    return 1;
}

/* The prompt, after the pending token of a loaded state. With -n 0 and --save-state the last
   token stays pending, for the story to go on from it later. */
static int feed_story(session *s, const int32_t *prompt, size_t n)
{
    int32_t *all = (int32_t *)malloc((n + 1) * sizeof(int32_t));
    size_t k = 0;
    int ok;
    if (!all) return 0;
    if (s->pending >= 0) all[k++] = s->pending;
    if (n) memcpy(all + k, prompt, n * sizeof(int32_t));   /* prompt is NULL when a loaded story has none */
    k += n;
    s->pending = -1;
    if (s->o->save_state && s->o->n_predict == 0 && k > 0) s->pending = all[--k];
    ok = k > 0 ? feed_prompt(s, all, k) : s->pending >= 0;
    free(all);
    return ok;
}

static int run(session *s)
{
    const options *o = s->o;
    int32_t *prompt = NULL;
    size_t n = 0, echo_len = 0;
    const char *echo = "";
    int ended, ok;
    if (o->chat) return chat(s);
    if (o->load_state && (s->pending = load_state(s)) < 0) return 0;
    if (o->ids) {
        n = o->n_prompt_ids;
        prompt = o->prompt_ids;
    } else {
        const char *p = o->text ? o->text : "";
        size_t len = o->text ? o->text_len : 0;
        if (!o->load_state || len) {   /* a loaded story goes on without BOS, with or without a prompt */
            int bos = !o->load_state && !o->no_bos && swa_vocab_add_bos(s->vocab);
            if (!tokenize(s->vocab, p, len, bos ? SWA_TOKENIZE_ADD_BOS : 0, &prompt, &n)) { free(prompt); return 0; }
            if (n == 0 && !o->load_state) {
                fprintf(stderr, PROG ": the prompt is empty (and no BOS is put before it): nothing to go on from\n");
                free(prompt);
                return 0;
            }
        }
        echo = p;
        echo_len = len;
    }
    if (o->parallel) ok = n > 0 && feed_story(s, prompt, n) && generate_parallel(s, prompt, n, echo, echo_len);
    else {
        /* the prompt echoed once evaluated, so that its progress line, on a terminal, wipes none of it */
        ok = feed_story(s, prompt, n) && put_out(echo, echo_len) &&
             (s->verifier ? generate_spec(s, prompt, n, o->n_predict, &ended) : generate(s, o->n_predict, &ended));
        if (ok && o->n_predict != 0) ok = put_str("\n");
    }
    if (prompt != o->prompt_ids) free(prompt);
    return ok;
}

/* ---- main: inputs, outputs, model, run ---- */

/* The prompt (-p, or -f read whole) and a saved state, read and checked before the model is
   loaded. A NUL byte in the file is passed to the tokenizer as swa-tokenize passes it; a chat
   message is text, so a chat refuses it, naming its offset. */
static int schema_grammar(options *o);

static int read_inputs(options *o)
{
    if (o->prompt_file) {
        if (!(o->text = read_file_bytes(o->prompt_file, &o->text_len))) return 0;
        if (o->chat && strlen(o->text) != o->text_len) {
            fprintf(stderr, PROG ": %s: a NUL byte at offset %zu; a chat message is text\n", o->prompt_file, strlen(o->text));
            return 0;
        }
    } else if (o->prompt) {
        o->text_len = strlen(o->prompt);
        if (!(o->text = (char *)malloc(o->text_len + 1))) return 0;
        memcpy(o->text, o->prompt, o->text_len + 1);
    }
    if (o->load_state && !(o->state = read_state(o->load_state, &o->state_size))) return 0;
    if (o->grammar_file && !(o->grammar_text = read_file_bytes(o->grammar_file, &o->grammar_len))) return 0;
    if ((o->json_schema || o->json_schema_file) && !schema_grammar(o)) return 0;
    if (o->grammar) {
        o->grammar_len = strlen(o->grammar);
        if (!(o->grammar_text = (char *)malloc(o->grammar_len + 1))) return 0;
        memcpy(o->grammar_text, o->grammar, o->grammar_len + 1);
    }
    return 1;
}

/* The grammar of --json-schema or --json-schema-file into o->grammar_text; 0 after saying why not. */
static int schema_grammar(options *o)
{
    const char *what = o->json_schema_file ? o->json_schema_file : "--json-schema";
    char *schema = (char *)o->json_schema;
    size_t len = schema ? strlen(schema) : 0;
    swa_error err;
    if (o->json_schema_file && !(schema = read_file_bytes(o->json_schema_file, &len))) return 0;
    if (swa_json_schema_to_grammar(schema, len, &o->grammar_text, &err) != SWA_OK) {
        fprintf(stderr, PROG ": %s: %s\n", what, err.msg);
        o->grammar_text = NULL;
    } else {
        o->grammar_len = strlen(o->grammar_text);
        o->grammar_file = what;                   /* names the grammar in later messages */
    }
    if (o->json_schema_file) free(schema);
    return o->grammar_text != NULL;
}

/* The grammar of --grammar or --grammar-file, parsed and attached to sampler; 0 after saying
   why not (with the line and column of a grammar's error). */
static int attach_grammar(const options *o, swa_sampler *sampler, const swa_vocab *v, swa_grammar **g)
{
    swa_error err;
    if (!o->grammar_text) return 1;
    if (!*g && swa_grammar_parse(o->grammar_text, o->grammar_len, NULL, g, &err) != SWA_OK) {
        fprintf(stderr, PROG ": %s: %s\n", o->grammar_file ? o->grammar_file : "--grammar", err.msg);
        return 0;
    }
    if (swa_sampler_set_grammar(sampler, *g, v, &err) != SWA_OK) {
        fprintf(stderr, PROG ": %s\n", err.msg);
        return 0;
    }
    return 1;
}

/* The vocabulary size from the file's tensor table (token_embd.weight's rows), for checking
   --ids before the weights are read; 0 when it cannot tell (the load then says why). */
static int64_t peek_vocab_size(const char *path)
{
    swa_gguf *g;
    swa_error err;
    int64_t n = 0, i;
    if (swa_gguf_open(path, &g, &err) != SWA_OK) return 0;
    if ((i = swa_gguf_tensor_find(g, "token_embd.weight")) >= 0) n = swa_gguf_tensor_at(g, i)->ne[1];
    swa_gguf_close(g);
    return n;
}

static int check_ids(const options *o, int64_t n_vocab)
{
    size_t i;
    for (i = 0; n_vocab > 0 && i < o->n_prompt_ids; i++)
        if (o->prompt_ids[i] >= n_vocab) {
            fprintf(stderr, PROG ": --ids: token %d (the %zu%s) is not below the vocabulary's %lld\n", o->prompt_ids[i],
                    i + 1, i == 0 ? "st" : i == 1 ? "nd" : i == 2 ? "rd" : "th", (long long)n_vocab);
            return 0;
        }
    return 1;
}

/* The output files, opened (created beside their destinations) before anything runs: a path
   that cannot be written fails now, not after the generation. */
static int open_outputs(const options *o, sw_file *dump, sw_file *save)
{
    const char *inputs[3];
    inputs[0] = o->model;
    inputs[1] = o->prompt_file;
    inputs[2] = o->load_state;
    if (o->dump_logits && sw_open(dump, o->dump_logits, inputs, 3) != 0) {
        fprintf(stderr, PROG ": %s\n", dump->error);
        return 0;
    }
    /* the loaded state is not an input here: it was read whole, and a story may be saved over it */
    if (o->save_state && sw_open(save, o->save_state, inputs, 2) != 0) {
        fprintf(stderr, PROG ": %s\n", save->error);
        if (o->dump_logits) sw_abort(dump);
        return 0;
    }
    return 1;
}

/* --lookup or -md: the verifier, and the draft model in a context of its own with the target's
   threads, batch, cache type and -c. 0 after saying why not. */
static int start_spec(session *s, const swa_model *target, const swa_model_params *mp, swa_model **draft)
{
    const options *o = s->o;
    swa_ctx_config dc;
    swa_error err;
    memset(&dc, 0, sizeof dc);
    dc.n_threads = o->cfg.n_threads;
    dc.n_batch = o->cfg.n_batch;
    dc.kv_type = o->cfg.kv_type;
    dc.n_ctx = o->cfg.n_ctx;
    if (swa_spec_create((int32_t)s->n_vocab, (int32_t)o->draft_max, &s->verifier, &err) != SWA_OK ||
        (o->model_draft && (swa_model_load_with(o->model_draft, mp, draft, &err) != SWA_OK ||
                            swa_drafter_create(*draft, target, &dc, NULL, (int32_t)o->draft_max, &s->drafter, &err) != SWA_OK ||
                            swa_drafter_set_p_min(s->drafter, o->draft_p_min, &err) != SWA_OK))) {
        if (!(err.code == SWA_ERR_ABORTED && interrupted()))
            fprintf(stderr, PROG ": %s%s%s\n", o->model_draft ? o->model_draft : "", o->model_draft ? ": " : "", err.msg);
        return 0;
    }
    return 1;
}

/* Settings that run but are probably not what was meant. */
static void warn_settings(const swa_model *m, const options *o)
{
    const swa_hparams *hp = swa_model_hparams(m);
    if (o->cfg.window > 0 && hp->window > 0 && o->cfg.window > hp->window)
        fprintf(stderr, PROG ": warning: -w %d is wider than the window of %d the model was trained with; "
                        "it attends to positions it never learned to use\n", o->cfg.window, hp->window);
    else if (o->cfg.window > 0 && hp->window == 0 && hp->n_ctx_train > 0 && o->cfg.window > hp->n_ctx_train)
        fprintf(stderr, PROG ": warning: -w %d is wider than the %d positions the model was trained on\n", o->cfg.window,
                hp->n_ctx_train);
}

int main(int argc, char **argv)
{
    options o;
    session s;
    swa_model *model = NULL, *draft = NULL;
    swa_model_params mp = swa_model_params_default();
    swa_error err;
    swa_status loaded;
    progress_loading load;
    sw_file dump, save;
    int rc, l;
    memset(&s, 0, sizeof s);
    memset(&dump, 0, sizeof dump);
    memset(&save, 0, sizeof save);
    s.pending = -1;
    if ((rc = parse_args(argc, argv, &o)) >= 0) { free(o.prompt_ids); return rc; }
    rc = 1;
    s.o = &o;
    catch_sigint(on_sigint, 0);
    if (o.cfg.n_threads > swa_cpu_count())
        fprintf(stderr, PROG ": warning: -t %d is more threads than the %d CPUs online: each step waits for threads that "
                        "share a CPU (-t 0 uses every CPU)\n", o.cfg.n_threads, swa_cpu_count());
    if (!read_inputs(&o) || (o.ids && !check_ids(&o, peek_vocab_size(o.model))) || !open_outputs(&o, &dump, &save))
        goto done;
    mp.resident = o.no_mmap;
    load.stop = interrupted;
    loaded = progress_load_model(o.model, &mp, &load, !o.no_progress, &model, &err);
    if (loaded != SWA_OK ||
        swa_ctx_create(model, &o.cfg, &s.ctx, &err) != SWA_OK ||
        swa_sampler_create(&o.sampling, swa_model_hparams(model)->n_vocab, &s.sampler, &err) != SWA_OK ||
        swa_sampler_set_logit_bias(s.sampler, o.bias_id, o.bias, o.n_bias, &err) != SWA_OK) {
        if (!(err.code == SWA_ERR_ABORTED && interrupted())) fprintf(stderr, PROG ": %s\n", err.msg);
        goto done;
    }
    swa_ctx_set_abort(s.ctx, interrupt_abort, NULL);
    s.n_vocab = (size_t)swa_model_hparams(model)->n_vocab;
    for (l = 0; l < swa_model_hparams(model)->n_layer; l++)
        if (swa_ctx_window(s.ctx, l) == 0 && swa_ctx_config_get(s.ctx).n_sink == 0) s.full_attention = 1;
    if (!check_ids(&o, (int64_t)s.n_vocab)) goto done;
    if ((o.lookup || o.model_draft) && !start_spec(&s, model, &mp, &draft)) goto done;
    if (swa_model_vocab(model, &s.vocab, &err) != SWA_OK && !o.ids) {
        fprintf(stderr, PROG ": %s (use --ids to give token ids)\n", err.msg);
        goto done;
    }
    if (o.ids) s.vocab = NULL;
    if (!attach_grammar(&o, s.sampler, s.vocab, &s.grammar)) goto done;
    if (o.chat && !s.vocab) { fprintf(stderr, PROG ": --chat needs a vocabulary\n"); goto done; }
    s.eot = -1;
    if (o.chat && !choose_template(&s, model, &o)) goto done;
    if (!o.log_disable) print_summary(model, s.ctx, &o);
    warn_settings(model, &o);
    hint_missing_window(model, s.ctx, o.model);
    if (o.dump_logits) {
        if (!(s.rows = (float *)malloc(s.n_vocab * (size_t)swa_ctx_config_get(s.ctx).n_batch * sizeof(float)))) {
            fprintf(stderr, PROG ": out of memory\n");
            goto done;
        }
        s.dump = dump.f;
    }
    rc = run(&s) ? 0 : 1;
    if (rc == 0 && swa_sampler_status(s.sampler, &err) != SWA_OK) {   /* the grammar stopped generation */
        fprintf(stderr, "\n" PROG ": %s\n", err.msg);
        rc = 1;
    }
    if (stdout_errno == 0 && flush_checked(stdout, "standard output")) stdout_errno = EIO;
    if (stdout_errno && !(stdout_errno == EINTR && interrupted())) {
        fprintf(stderr, "\n" PROG ": cannot write to standard output: %s\n", strerror(stdout_errno));
        rc = 1;
        goto done;
    }
    if (interrupted()) {
        fprintf(stderr, "\n" PROG ": interrupted\n");
        rc = EXIT_INTERRUPTED;
    }
    if (rc == 1) goto done;            /* the error said what happened; no statistics */
    if (rc == 0 && o.save_state && !save_state(&s, &save)) {
        rc = 1;
        goto done;
    }
    if (rc == 0 && o.dump_logits && sw_commit(&dump) != 0) {
        fprintf(stderr, PROG ": %s\n", dump.error);
        rc = 1;
        goto done;
    }
    if (!o.log_disable) {
        fprintf(stderr, "prompt: %ld tokens, %.1f tokens/s; generation: %ld tokens, %.1f tokens/s\n", s.t.n_prompt,
                s.t.prompt_s > 0 ? (double)s.t.n_prompt / s.t.prompt_s : 0.0, s.t.n_gen,
                s.t.gen_s > 0 ? (double)s.t.n_gen / s.t.gen_s : 0.0);
        if (s.verifier)
            fprintf(stderr, "speculative: %ld verifications, %ld tokens drafted, %ld accepted (%.1f%%), %.2f tokens per "
                            "verification\n", s.t.n_verify, s.t.n_drafted, s.t.n_accepted,
                    s.t.n_drafted ? 100.0 * (double)s.t.n_accepted / (double)s.t.n_drafted : 0.0,
                    s.t.n_verify ? (double)(s.t.n_accepted + s.t.n_verify) / (double)s.t.n_verify : 0.0);
    }
done:
    if (rc != 0 && interrupted() && !model) {
        fprintf(stderr, PROG ": interrupted\n");
        rc = EXIT_INTERRUPTED;
    }
    if (dump.f) sw_abort(&dump);    /* not committed: the destination stays as it was */
    if (save.f) sw_abort(&save);
    free(s.rows);
    free(o.prompt_ids);
    free(o.text);
    free(o.state);
    swa_jinja_free(s.jinja);
    swa_sampler_free(s.sampler);
    swa_grammar_free(s.grammar);
    free(o.grammar_text);
    swa_ctx_free(s.ctx);
    swa_spec_free(s.verifier);
    swa_drafter_free(s.drafter);
    swa_model_free(draft);
    swa_model_free(model);
    return rc;
}
