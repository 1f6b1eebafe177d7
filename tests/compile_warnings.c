/* The header must compile without a warning under the strict set the Makefile's warning check
   passes (-Wshadow -Wconversion -Wstrict-prototypes -Wmissing-prototypes and the usual ones),
   with -Werror, whatever the including file defines first: this file defines no feature macro. */
#define SWA_IMPLEMENTATION
#include "swa.h"
#include <stdio.h>
#include <string.h>

int main(void)
{
    swa_error err;
    swa_model *m = NULL;
    if (swa_model_load("/nonexistent.gguf", &m, &err) != SWA_ERR_IO || m) {
        printf("compile_warnings: a missing file must be SWA_ERR_IO\n");
        return 1;
    }
    printf("compile_warnings: ok (swa.h %s)\n", swa_version());
    return 0;
}
