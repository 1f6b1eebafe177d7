/* With SWA_NO_STDIO the library uses no FILE *: every stdio name that touches a stream is
   poisoned (GCC and clang) between <stdio.h>, which the library still includes for snprintf,
   and the implementation, so that one use of them fails the build. The snapshot file calls
   are not declared (this file's own static swa_state_save_file would clash with the
   declaration); a model still loads from its path, and a snapshot goes to a buffer and back. */
#include <stdio.h>
#include <string.h>

static void report(const char *what) { printf("compile_no_stdio: %s\n", what); }

#pragma GCC poison FILE fopen freopen fdopen tmpfile fclose fflush fread fwrite fgetc fgets fputc fputs puts
#pragma GCC poison fprintf vfprintf printf vprintf fscanf scanf fseek ftell rewind remove rename perror putchar
#define SWA_NO_STDIO
#define SWA_IMPLEMENTATION
#include "swa.h"

static int swa_state_save_file(void) { return 0; }
static int swa_state_load_file(void) { return 0; }

/* The prompt on sequence 0, a snapshot of it, one more token; then the snapshot restored and
   the same token again: the same logits. */
static const char *round_trip(const swa_model *m, swa_error *err)
{
    static float first[32000];
    static unsigned char snap[1 << 20];
    const int32_t prompt[] = {1, 10, 20, 30, 40}, next = 50;
    const size_t n_vocab = (size_t)swa_model_hparams(m)->n_vocab;
    const float *logits;
    swa_ctx *c = NULL;
    size_t size = 0;
    const char *why = NULL;
    if (n_vocab > 32000) return "the model's vocabulary is larger than this test's buffer";
    if (swa_ctx_create(m, NULL, &c, err) != SWA_OK) return err->msg;
    if (swa_ctx_eval(c, prompt, 5, &logits, err) != SWA_OK || swa_state_save(c, 0, snap, sizeof snap, &size, err) != SWA_OK ||
        swa_ctx_eval(c, &next, 1, &logits, err) != SWA_OK) {
        why = err->msg;
    } else {
        memcpy(first, logits, n_vocab * sizeof(float));
        if (swa_state_load(c, 0, snap, size, err) != SWA_OK || swa_ctx_eval(c, &next, 1, &logits, err) != SWA_OK)
            why = err->msg;
        else if (swa_ctx_pos(c) != 6 || memcmp(first, logits, n_vocab * sizeof(float)) != 0)
            why = "a restored snapshot did not give the same logits";
    }
    swa_ctx_free(c);
    return why;
}

int main(void)
{
    swa_model *m = NULL;
    swa_error err;
    const char *why;
    if (swa_model_load("examples/models/swa-stories.gguf", &m, &err) != SWA_OK) {
        report(err.msg);
        return 1;
    }
    why = round_trip(m, &err);
    swa_model_free(m);
    report(why ? why : "ok");
    return why != NULL || swa_state_save_file() + swa_state_load_file() != 0;
}
