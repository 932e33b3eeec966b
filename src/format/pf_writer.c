/* pf_writer.c - see pf_writer.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/ut_varint.h"
#include "format/pf_check.h"
#include "format/pf_le.h"
#include "format/pf_writer.h"
#include "heapscope/profile.h"

static int buf_reserve(pf_buf_t *b, size_t more)
{
    if (b->failed)
        return -1;
    if (b->len + more <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more)
        cap *= 2;
    /* a new mapping and a copy, not mremap: ThreadSanitizer does not see
     * mremap, and would take the moved pages for whatever used that
     * address before (tests/tsan) */
    void *d = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (d == MAP_FAILED) {
        b->failed = 1;
        return -1;
    }
    if (b->data) {
        memcpy(d, b->data, b->len);
        munmap(b->data, b->cap);
    }
    b->data = d;
    b->cap = cap;
    return 0;
}

void pf_buf_reset(pf_buf_t *b)
{
    b->len = 0;
    b->failed = 0;
}

void pf_buf_free(pf_buf_t *b)
{
    if (b->data)
        munmap(b->data, b->cap);
    memset(b, 0, sizeof *b);
}

void pf_buf_u_grow(pf_buf_t *b, uint64_t v)
{
    if (buf_reserve(b, UT_VARINT_MAX) == 0)
        b->len += ut_varint_put(b->data + b->len, v);
}

void pf_buf_s(pf_buf_t *b, int64_t v)
{
    pf_buf_u(b, ut_zigzag(v));
}

void pf_buf_bytes(pf_buf_t *b, const void *p, size_t n)
{
    pf_buf_u(b, n);
    if (n && buf_reserve(b, n) == 0) {
        memcpy(b->data + b->len, p, n);
        b->len += n;
    }
}

void pf_buf_str(pf_buf_t *b, const char *s)
{
    pf_buf_bytes(b, s ? s : "", s ? strlen(s) : 0);
}

static void out_flush(pf_out_t *o)
{
    size_t off = 0;
    while (off < o->len && !o->err) {
        ssize_t n = write(o->fd, o->buf + off, o->len - off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            o->err = errno;
        } else if (n == 0) {
            o->err = EIO;
        } else {
            off += (size_t)n;
        }
    }
    o->len = 0;
}

static void out_put(pf_out_t *o, const void *p, size_t n)
{
    const uint8_t *s = p;
    while (n && !o->err) {
        if (o->len == PF_OUT_BUF)
            out_flush(o);
        size_t k = PF_OUT_BUF - o->len;
        if (k > n)
            k = n;
        memcpy(o->buf + o->len, s, k);
        o->len += k;
        s += k;
        n -= k;
    }
}

void pf_out_begin(pf_out_t *o, int fd)
{
    o->fd = fd;
    o->err = 0;
    o->len = 0;
    uint8_t h[PF_HEADER_SIZE] = {0};
    memcpy(h, PF_MAGIC, PF_MAGIC_LEN);
    h[8] = PF_VERSION_MAJOR;
    h[10] = PF_VERSION_MINOR;
    out_put(o, h, sizeof h);
}

void pf_out_record(pf_out_t *o, uint32_t type, const pf_buf_t *b)
{
    if (b->failed) {
        if (!o->err)
            o->err = ENOMEM;
        return;
    }
    uint8_t head[8], tail[4];
    pf_put_le32(head, type);
    pf_put_le32(head + 4, (uint32_t)b->len);
    pf_put_le32(tail, pf_check(PF_VERSION_MAJOR, type, b->data, b->len));
    out_put(o, head, sizeof head);
    out_put(o, b->data, b->len);
    out_put(o, tail, sizeof tail);
}

int pf_out_end(pf_out_t *o)
{
    out_flush(o);
    return o->err;
}
