/* ab_run.h - starting programs for `heapscope bench`: the timed run of a
 * workload under an allocator, and capturing a helper command's output. */
#ifndef AB_RUN_H
#define AB_RUN_H

#include "allocbench/ab.h"

/* Run `w` with allocator `a` preloaded (plus the checker of ctx), wait for
 * it with wait4 and fill the time, RSS, fault, rss_after_free and
 * verification fields of `r` (the others are left alone).  The workload's
 * stdout goes to a file in ctx->tmpdir and is parsed; stderr is inherited.
 * Returns 0, or -1 with a message in err (cannot start it, killed, or
 * non-zero exit status). */
int ab_run_timed(const ab_ctx_t *ctx, const ab_workload_t *w, const ab_alloc_t *a, ab_result_t *r,
                 char *err, size_t errsz);

/* Run argv (PATH searched) with `env_preload` as LD_PRELOAD if not NULL,
 * stdout into a malloc'ed NUL-terminated buffer *out (caller frees),
 * stderr to /dev/null unless keep_stderr.  Returns the exit status (0..255),
 * 128+signal, or -1 if it could not be started. */
int ab_capture(char *const argv[], const char *env_preload, int keep_stderr, char **out);

/* The value after `key` (e.g. "rss_after_free_kb=") in text, or -1. */
long ab_find_long(const char *text, const char *key);

#endif
