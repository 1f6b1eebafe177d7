/* Compiled as C89 by the warning matrix (Makefile, compile_warnings), which expects exactly one
   error: the #error in swa.h that says C99 is needed, and nothing of the header after it. */
#define SWA_IMPLEMENTATION
#include "swa.h"

int main(void)
{
    return 0;
}
