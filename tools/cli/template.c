/* swa-template: render a chat template as transformers' apply_chat_template(..., tokenize=False)
   does, with swa.h's Jinja engine.

   swa-template (-m MODEL.gguf | --template-file FILE) --messages FILE.json [--tools FILE.json]
                [--no-generation-prompt] [--bos-token S] [--eos-token S] [--kwargs JSON]

   The rendered prompt goes to stdout exactly (no newline added). bos_token and eos_token are
   the model's tokens (with a template file: <s> and </s>) unless given. Exit status: 0 on
   success, 1 when a file cannot be read or the template fails (its message on stderr: what
   raise_exception said, or jinja2's error), 2 for bad usage. */
#define _POSIX_C_SOURCE 200809L
#include "swa.h"
#define PROG "swa-template"
#include "tools/common/tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: swa-template (-m MODEL.gguf | --template-file FILE) --messages FILE.json [--tools FILE.json]\n"
               "                    [--no-generation-prompt] [--bos-token S] [--eos-token S] [--kwargs JSON]\n"
               "  -m FILE                  GGUF file whose tokenizer.chat_template is rendered (weights not read)\n"
               "  --template-file FILE     a Jinja template file instead\n"
               "  --messages FILE          the conversation: a JSON array of messages (- for stdin)\n"
               "  --tools FILE             a JSON array of tools (default: none)\n"
               "  --no-generation-prompt   add_generation_prompt false (default true)\n"
               "  --bos-token S, --eos-token S\n"
               "                           the template's bos_token and eos_token (default: the model's\n"
               "                           tokens; with --template-file, <s> and </s>)\n"
               "  --kwargs JSON            further variables, a JSON object: '{\"enable_thinking\": false}'\n"
               "  -h, --help               this help; --version: the program's name and version\n"
               "  The prompt goes to stdout as rendered, without a newline added.\n"
               "  Exit status: 0 complete, 1 error (the template's message on stderr), 2 bad usage.\n");
}

/* The template and the default tokens of a GGUF file */
static swa_jinja *model_template(const char *path, const char **bos, const char **eos)
{
    swa_gguf *g = NULL;
    swa_vocab *v = NULL;
    swa_jinja *t = NULL;
    swa_error err;
    if (swa_gguf_open(path, &g, &err) != SWA_OK || swa_jinja_of(g, &t, &err) != SWA_OK) fail("%s: %s", path, err.msg);
    if (swa_vocab_load(g, &v, NULL) == SWA_OK) {   /* the tokens as strings outlive the file: copy them */
        static char bos_buf[256], eos_buf[256];
        if (swa_vocab_bos(v) >= 0) {
            swa_str s = swa_vocab_piece(v, swa_vocab_bos(v));
            snprintf(bos_buf, sizeof bos_buf, "%.*s", (int)s.len, s.ptr);
            *bos = bos_buf;
        }
        if (swa_vocab_eos(v) >= 0) {
            swa_str s = swa_vocab_piece(v, swa_vocab_eos(v));
            snprintf(eos_buf, sizeof eos_buf, "%.*s", (int)s.len, s.ptr);
            *eos = eos_buf;
        }
        swa_vocab_free(v);
    }
    swa_gguf_close(g);
    return t;
}

int main(int argc, char **argv)
{
    const char *model = NULL, *tfile = NULL, *mfile = NULL, *tools_file = NULL, *bos = NULL, *eos = NULL, *kwargs = NULL;
    int gen = 1, i;
    char *src, *out = NULL;
    size_t len, out_len;
    swa_jinja *t;
    swa_jinja_chat chat;
    swa_error err;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        help_or_version(a, usage);
        if (!strcmp(a, "--no-generation-prompt")) { gen = 0; continue; }
        if (i + 1 >= argc) usage_fail("%s needs a value", a);
        if (!strcmp(a, "-m")) model = argv[++i];
        else if (!strcmp(a, "--template-file")) tfile = argv[++i];
        else if (!strcmp(a, "--messages")) mfile = argv[++i];
        else if (!strcmp(a, "--tools")) tools_file = argv[++i];
        else if (!strcmp(a, "--bos-token")) bos = argv[++i];
        else if (!strcmp(a, "--eos-token")) eos = argv[++i];
        else if (!strcmp(a, "--kwargs")) kwargs = argv[++i];
        else usage_fail("unknown flag %s", a);
    }
    if (!!model + !!tfile != 1) usage_fail("give one of -m MODEL and --template-file FILE");
    if (!mfile) usage_fail("--messages FILE is required");
    memset(&chat, 0, sizeof chat);
    if (model) {
        const char *model_bos = NULL, *model_eos = NULL;
        t = model_template(model, &model_bos, &model_eos);
        chat.bos_token = bos ? bos : model_bos;
        chat.eos_token = eos ? eos : model_eos;
    } else {
        if (!(src = read_all(tfile, &len))) return 1;
        if (swa_jinja_parse(src, len, &t, &err) != SWA_OK) fail("%s: %s", tfile, err.msg);
        free(src);
        chat.bos_token = bos ? bos : "<s>";
        chat.eos_token = eos ? eos : "</s>";
    }
    if (!(chat.messages = read_all(mfile, &len))) return 1;
    if (tools_file && !(chat.tools = read_all(tools_file, &len))) return 1;
    chat.kwargs = kwargs;
    chat.add_generation_prompt = gen;
    if (swa_jinja_apply(t, &chat, &out, &out_len, &err) != SWA_OK) fail("%s", err.msg);
    fwrite(out, 1, out_len, stdout);
    stdout_flush();
    swa_jinja_text_free(out);
    free((char *)chat.messages);
    free((char *)chat.tools);
    swa_jinja_free(t);
    return 0;
}
