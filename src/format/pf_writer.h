/* pf_writer.h - writing a profile file (docs/FORMAT.md): payloads are built
 * in a growable pf_buf_t, then framed into records by pf_out_t, a buffered
 * writer over a file descriptor.  Used by the collector from its writer
 * thread and at exit; the buffers come from mmap, never from the profiled
 * program's allocator (where they would land in its arenas and its peak). */
#ifndef PF_WRITER_H
#define PF_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "common/ut_varint.h"

typedef struct pf_buf {
    uint8_t *data;
    size_t len, cap;
    int failed; /* an allocation failed; the buffer is incomplete */
} pf_buf_t;

void pf_buf_reset(pf_buf_t *b);
void pf_buf_free(pf_buf_t *b);
void pf_buf_u_grow(pf_buf_t *b, uint64_t v);            /* pf_buf_u's slow path */

/* Append an unsigned varint: inline while the buffer has room (a profile
 * of many stacks writes millions of them at exit). */
static inline void pf_buf_u(pf_buf_t *b, uint64_t v)
{
    if (b->len + UT_VARINT_MAX > b->cap)
        pf_buf_u_grow(b, v);
    else
        b->len += ut_varint_put(b->data + b->len, v);
}
void pf_buf_s(pf_buf_t *b, int64_t v);                  /* zigzag varint */
void pf_buf_bytes(pf_buf_t *b, const void *p, size_t n); /* length + bytes */
void pf_buf_str(pf_buf_t *b, const char *s);             /* NULL writes "" */

#define PF_OUT_BUF 65536

typedef struct pf_out {
    int fd;
    int err;    /* first errno of a failed write, 0 if none */
    size_t len;
    uint8_t buf[PF_OUT_BUF];
} pf_out_t;

/* Start a file on fd: writes the 16-byte header. */
void pf_out_begin(pf_out_t *o, int fd);
/* Append one record with the payload of b. */
void pf_out_record(pf_out_t *o, uint32_t type, const pf_buf_t *b);
/* Flush the buffer; returns 0 or the first errno met. */
int pf_out_end(pf_out_t *o);

#endif
