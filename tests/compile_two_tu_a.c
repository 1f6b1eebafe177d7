/* Two translation units: this one holds the implementation, the other only declarations. The
   header is included twice here to show the guards let the implementation through once. */
#include "swa.h"
#define SWA_IMPLEMENTATION
#include "swa.h"
#include "swa.h"

int check_from_other_unit(void);

int main(void)
{
    return check_from_other_unit();
}
