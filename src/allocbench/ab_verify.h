/* ab_verify.h - did a run use the allocator it claims? */
#ifndef AB_VERIFY_H
#define AB_VERIFY_H

#include <sys/types.h>

#include "allocbench/ab.h"

/* The environment variable naming the checker's output file. */
#define AB_VERIFY_ENV "HEAPSCOPE_AB_VERIFY"

/* Path of one of our helper libraries, `file` (e.g.
 * "libheapscope-abcheck.so"): $ENVVAR if set, else next to our binary
 * (../lib, ../lib/heapscope) or in the install libdir.  0, or -1 if not
 * found. */
int ab_verify_find_lib(const char *file, const char *envvar, char *out, size_t cap);

/* The checker: ab_verify_find_lib for libheapscope-abcheck.so and
 * $HEAPSCOPE_ABCHECK_LIB. */
int ab_verify_find_checker(char *out, size_t cap);

/* Read the checker's lines from `path`, take the one of process `pid` (or
 * the first), and set r->malloc_from and r->verified (1: malloc came from
 * a->path, the same file after resolving links; 0: from another object;
 * -1: no line, e.g. a static program). */
void ab_verify_read(const char *path, pid_t pid, const ab_alloc_t *a, ab_result_t *r);

#endif
