/* an_frames.h - the printable frames of one stack: raw return addresses
 * from the reader, minus heapscope's own frames, expanded by the
 * symboliser into functions, inlined calls and source lines. */
#ifndef AN_FRAMES_H
#define AN_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "analyse/an_symbols.h"
#include "format/pf_reader.h"

typedef struct an_frame {
    const char *function;  /* "??" when unknown */
    const char *file;      /* NULL when unknown */
    uint32_t line;         /* 0 when unknown */
    int inlined;           /* inlined into the next frame */
    uint64_t address;      /* absolute return address */
    int32_t module;        /* index into prof->modules, -1 when none */
} an_frame_t;

/* A reusable buffer of frames. */
typedef struct an_frames {
    an_frame_t *v;
    size_t n, cap;
    pf_frame_t *raw;       /* PF_READ_MAX_DEPTH scratch frames */
} an_frames_t;

/* Fill f with the frames of stack `st`, innermost first (the caller of the
 * allocation function).  Leading frames inside libheapscope*.so are
 * dropped.  Returns PF_OK or PF_ENOMEM. */
int an_frames_get(an_frames_t *f, const pf_profile_t *p, an_symbols_t *syms,
                  const pf_stack_t *st);

/* 1 when the module's file name starts with "libheapscope". */
int an_frames_is_own(const pf_profile_t *p, int32_t module);

void an_frames_free(an_frames_t *f);

#endif
