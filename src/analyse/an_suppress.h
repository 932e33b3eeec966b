/* an_suppress.h - leak suppressions in LeakSanitizer's format, plus the
 * built-in ones for allocations the C and C++ runtimes keep on purpose
 * until exit, so that a clean program reports no leaks.
 *
 * A suppression file has one rule per line, `leak:PATTERN`; blank lines
 * and lines starting with '#' are ignored.  As in LSan, PATTERN is matched
 * against every frame's function name, module file name and source file
 * name; `*` matches any run of characters, a leading `^` / trailing `$`
 * anchor the match, and without anchors the pattern may match anywhere
 * (a substring).  One matching frame suppresses the whole stack. */
#ifndef AN_SUPPRESS_H
#define AN_SUPPRESS_H

#include <stddef.h>

#include "analyse/an_frames.h"

typedef struct an_suppress_rule {
    char *pattern;
    int builtin;           /* one of an_suppress_builtins */
    unsigned long hits;    /* stacks it suppressed */
} an_suppress_rule_t;

typedef struct an_suppress {
    an_suppress_rule_t *v;
    size_t n, cap;
} an_suppress_t;

/* Add the built-in rules (skipped with --no-default-suppressions).
 * Returns 0 or PF_ENOMEM. */
int an_suppress_add_builtins(an_suppress_t *s);

/* Read the rules of the file at `path`.  Returns 0; PF_EIO when it cannot
 * be read, PF_ECORRUPT for a line that is not `leak:PATTERN`, with the
 * reason (file:line) in err[errsz]; PF_ENOMEM. */
int an_suppress_load(an_suppress_t *s, const char *path, char *err, size_t errsz);

/* LSan's template match of `pattern` against `str` (see above). */
int an_suppress_match(const char *pattern, const char *str);

/* The first rule that matches a frame of fr, or NULL.  Counts the hit. */
an_suppress_rule_t *an_suppress_stack(an_suppress_t *s, const pf_profile_t *p,
                                      const an_frames_t *fr);

void an_suppress_free(an_suppress_t *s);

#endif
