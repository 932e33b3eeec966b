/* an_report.h - state shared by the `heapscope report` outputs (text and
 * JSON): the profile, its model, the symboliser and a frame buffer. */
#ifndef AN_REPORT_H
#define AN_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "analyse/an_frames.h"
#include "analyse/an_model.h"
#include "analyse/an_symbols.h"
#include "format/pf_reader.h"

typedef struct an_report {
    const char *path;
    pf_profile_t *prof;
    an_model_t model;
    an_symbols_t *syms;
    an_frames_t frames;
    size_t top;            /* stacks per text section */
} an_report_t;

/* Read the profile at `path` and prepare model and symboliser.  Returns
 * PF_OK, or a PF_E* code with the reason in err[errsz]; either way
 * an_report_close() releases what was set up. */
int an_report_load(an_report_t *r, const char *path, char *err, size_t errsz);

/* Symbolise the stacks order[0..n) so that their module warnings are
 * known, and append those warnings to the model (once per module). */
int an_report_presymbolise(an_report_t *r, const size_t *order, size_t n);

/* Stacks by bytes allocated (descending, then id) in a new array
 * *order[n_stats] that the caller frees, with the first `nsym` of them
 * symbolised.  Returns PF_OK or PF_ENOMEM (then *order is NULL). */
int an_report_prepare(an_report_t *r, size_t nsym, size_t **order);
void an_report_close(an_report_t *r);

/* The outputs.  Return 0, or PF_ENOMEM / PF_EIO (write error). */
int an_report_text(an_report_t *r, FILE *out);
int an_report_json(an_report_t *r, FILE *out);

/* "frame pointers", "DWARF", "libunwind" or "unknown (N)" */
const char *an_report_unwinder(uint64_t u);

#endif
