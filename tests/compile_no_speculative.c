/* With SWA_NO_SPECULATIVE speculative decoding compiles out (this file's own static
   swa_spec_create would clash with its declaration): the sampler still samples, and its
   distribution is still there. */
#define SWA_NO_SPECULATIVE
#define SWA_IMPLEMENTATION
#include "swa.h"
#include "tests/compile_sampler_check.h"

static int swa_spec_create(void) { return 0; }

int main(void)
{
    return sampler_still_samples("compile_no_speculative") || swa_spec_create();
}
