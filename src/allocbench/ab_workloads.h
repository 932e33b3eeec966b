/* ab_workloads.h - the bundled workloads: where they are, which exist. */
#ifndef AB_WORKLOADS_H
#define AB_WORKLOADS_H

#include <stddef.h>

/* The directory of the wl-* programs: $HEAPSCOPE_BENCH_DIR, ../bench next
 * to our binary (the build tree), or PREFIX/libexec/heapscope.  Returns 0
 * with the directory in out, or -1 if none exists. */
int ab_workloads_dir(char *out, size_t cap);

/* Names (without "wl-") of the executable wl-* files in dir, sorted, in a
 * malloc'ed array of malloc'ed strings; *n is their count.  Returns 0 or -1. */
int ab_workloads_list(const char *dir, char ***names, size_t *n);

/* Free what ab_workloads_list returned. */
void ab_workloads_free(char **names, size_t n);

#endif
