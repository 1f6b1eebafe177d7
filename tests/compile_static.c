/* With SWA_STATIC every public function is static to this file. */
#define SWA_STATIC
#define SWA_IMPLEMENTATION
#include "swa.h"
#include <stdio.h>
#include <string.h>

int main(void)
{
    if (strcmp(swa_type_name(SWA_TYPE_Q8_0), "Q8_0") != 0 || swa_type_block_bytes(SWA_TYPE_Q4_0) != 18) {
        printf("compile_static: type table is wrong\n");
        return 1;
    }
    printf("compile_static: ok\n");
    return 0;
}
