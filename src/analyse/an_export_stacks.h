/* an_export_stacks.h - helpers several export writers share: a table that
 * interns strings (function names, frame keys, pprof's string table) and
 * gives each a dense index in first-seen order, so that writers can number
 * shared frames, functions and locations deterministically. */
#ifndef AN_EXPORT_STACKS_H
#define AN_EXPORT_STACKS_H

#include <stddef.h>
#include <stdint.h>

typedef struct an_xintern {
    char **strs;           /* strs[i] is the string with index i */
    size_t n, cap;
    uint32_t *hash;        /* open addressing: index + 1, 0 = empty */
    size_t hash_cap;       /* a power of two */
} an_xintern_t;

/* The index of `s` (len bytes, any content), adding a copy when new.
 * Returns the index, or UINT32_MAX when out of memory. *added (may be
 * NULL) is set to 1 when the string was new. */
uint32_t an_xintern_add(an_xintern_t *t, const char *s, size_t len, int *added);
/* Same for a NUL-terminated string (NULL counts as ""). */
uint32_t an_xintern_str(an_xintern_t *t, const char *s);
void an_xintern_free(an_xintern_t *t);

/* The base name of a path ("" for NULL). */
const char *an_export_basename(const char *path);

#endif
