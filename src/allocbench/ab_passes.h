/* ab_passes.h - the optional extra runs of a workload: under strace for
 * memory system calls (ab_syscalls.c) and under heapscope's collector for
 * fragmentation (ab_frag.c).  Separate runs, so neither distorts the timed
 * one. */
#ifndef AB_PASSES_H
#define AB_PASSES_H

#include <stddef.h>

#include "allocbench/ab.h"

/* Run w under `strace -f -c -e trace=brk,mmap,munmap,madvise` with a
 * preloaded, and set r->brk, mmap, munmap, madvise (counts over the whole
 * process tree).  Returns 0, or -1 with a message (no strace, run failed). */
int ab_syscalls_count(const ab_ctx_t *ctx, const ab_workload_t *w, const ab_alloc_t *a,
                      ab_result_t *r, char *err, size_t errsz);

/* Count lines of `strace -c` output text into r (0 for a call not listed).
 * Returns 0, or -1 if text has no summary table. */
int ab_syscalls_parse(const char *text, ab_result_t *r);

/* Run w under `heapscope run` with a preloaded after the collector, read
 * the profile's peak of live bytes and the RSS of the timeline sample
 * nearest that peak, and set r->peak_live_bytes, rss_at_peak_kb and
 * fragmentation = r->peak_rss_kb (of the timed run, which must have filled
 * it) / live bytes at peak; see ab_frag.c for why.  0, or -1 with err. */
int ab_frag_measure(const ab_ctx_t *ctx, const ab_workload_t *w, const ab_alloc_t *a,
                    ab_result_t *r, char *err, size_t errsz);

/* From `heapscope report --json` text, the peak (bytes) and the RSS (bytes)
 * of the timeline sample nearest the peak's time (rss_peak if there is no
 * timeline).  0, or -1 if the fields are missing. */
int ab_frag_parse(const char *json, double *peak_bytes, double *rss_bytes);

#endif
