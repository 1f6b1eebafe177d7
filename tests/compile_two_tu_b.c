/* Declarations only: everything links against the implementation in compile_two_tu_a.c. */
#include "swa.h"
#include <stdio.h>
#include <string.h>

int check_from_other_unit(void)
{
    if (strcmp(swa_status_str(SWA_ERR_FORMAT), "SWA_ERR_FORMAT") != 0) return 1;
    printf("compile_two_tu: ok\n");
    return 0;
}
