/* cw_report.h - helpers shared by the text and JSON reports. */
#ifndef CW_REPORT_H
#define CW_REPORT_H
#include "cw.h"

typedef struct cw_leakgroup {
    int kind;            /* CW_LEAK_DIRECT or CW_LEAK_INDIRECT */
    uint64_t size;       /* chunk size */
    uint64_t first_word; /* first 8 bytes of user memory */
    uint64_t count, bytes, example;
    char label[256];     /* "vtable for C" or "" */
} cw_leakgroup_t;

void cw_report_classes(const cw_walk_t *w, int ai, uint64_t n[CW_NCLASS], uint64_t b[CW_NCLASS]);
size_t cw_report_leakgroups(const cw_walk_t *w, cw_leakgroup_t **out);
#endif
