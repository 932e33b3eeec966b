/* an_mprof.c - placeholder until the mprof tables land (see an_mprof.h). */
#include "analyse/an_mprof.h"

int an_mprof_print(an_report_t *r, FILE *out, int json)
{
    (void)r;
    (void)json;
    fprintf(out, "heapscope: the mprof tables are not built yet\n");
    return PF_EIO;
}
