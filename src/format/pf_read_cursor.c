/* pf_read_cursor.c - bounded decoding of record payloads and the reader's
 * error messages.
 *
 * Every read from a payload goes through a pf_cur_t, which never looks past
 * the payload end.  Counts are checked against the bytes left before the
 * caller allocates anything for them.  Errors name the record, its type,
 * the file offset and the field, and end with the reader's file:line.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ut_grow.h"
#include "common/ut_varint.h"
#include "format/pf_read_int.h"

/* basename of __FILE__ for the "[file:line]" suffix */
static const char *pf_read_base(const char *file)
{
    const char *s = strrchr(file, '/');
    return s ? s + 1 : file;
}

/* "record 7 (NODES) at offset 312: " or "" outside any record. */
static void pf_read_where(const pf_parse_t *ps, char *buf, size_t sz)
{
    if (!ps->rec_no) {
        buf[0] = '\0';
        return;
    }
    snprintf(buf, sz, "record %llu (%s) at offset %zu: ", (unsigned long long)ps->rec_no,
             pf_reader_type_name(ps->rec_type), ps->rec_off);
}

int pf_read_fail(pf_parse_t *ps, int rc, const char *file, int line, const char *fmt, ...)
{
    char where[96], msg[PF_ERRMSG_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pf_read_where(ps, where, sizeof where);
    if (!ps->errsz)
        return rc;
    if (rc == PF_ECORRUPT || rc == PF_ENOMEM)
        snprintf(ps->err, ps->errsz, "%s%s%s [%s:%d]", rc == PF_ECORRUPT ? "corrupt profile: " : "",
                 where, msg, pf_read_base(file), line);
    else
        snprintf(ps->err, ps->errsz, "%s%s", where, msg);
    return rc;
}

int pf_read_truncate(pf_parse_t *ps, const char *fmt, ...)
{
    char where[96], msg[PF_ERRMSG_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pf_read_where(ps, where, sizeof where);
    if (!ps->seen_info) {
        if (ps->errsz)
            snprintf(ps->err, ps->errsz, "profile is truncated before its INFO record: %s%s", where,
                     msg);
        return PF_ETRUNCATED;
    }
    ps->prof->truncated = 1;
    /* Cut to fit: the reason is for people, its end matters least. */
    snprintf(ps->prof->truncated_why, sizeof ps->prof->truncated_why, "%s%.*s", where,
             (int)(sizeof ps->prof->truncated_why - 1 - strlen(where)), msg);
    return PF_STOP;
}

void *pf_read_grow(void *arr, size_t *cap, size_t need, size_t elsz)
{
    return ut_grow(&arr, cap, need, elsz) == 0 ? arr : NULL;
}

static size_t pf_cur_off(const pf_cur_t *c)
{
    return (size_t)(c->p - c->ps->base);
}

int pf_cur_u(pf_cur_t *c, const char *field, uint64_t *out)
{
    if (ut_varint_get(&c->p, c->end, out) == 0)
        return PF_OK;
    /* Tell an over-long varint from a payload that simply ran out. */
    const uint8_t *s = c->p;
    while (s < c->end && (*s & 0x80) && s - c->p < UT_VARINT_MAX)
        s++;
    if (s - c->p >= UT_VARINT_MAX || s < c->end)
        return PF_CORRUPT(c->ps, "varint overflow: field '%s' at offset %zu does not fit in 64 bits",
                          field, pf_cur_off(c));
    return PF_CORRUPT(c->ps, "payload ends inside field '%s' (offset %zu)", field, pf_cur_off(c));
}

int pf_cur_count(pf_cur_t *c, const char *field, size_t min_bytes, uint64_t *out)
{
    int rc = pf_cur_u(c, field, out);
    if (rc)
        return rc;
    size_t left = (size_t)(c->end - c->p);
    if (*out > left / min_bytes)
        return PF_CORRUPT(c->ps, "%s %llu is more than the %zu payload bytes left can hold", field,
                          (unsigned long long)*out, left);
    return PF_OK;
}

/* Length prefix of a str/bytes field, checked against the bytes left. */
static int pf_cur_len(pf_cur_t *c, const char *field, size_t *len)
{
    uint64_t n;
    int rc = pf_cur_u(c, field, &n);
    if (rc)
        return rc;
    size_t left = (size_t)(c->end - c->p);
    if (n > left)
        return PF_CORRUPT(c->ps, "field '%s' has length %llu but only %zu payload bytes are left",
                          field, (unsigned long long)n, left);
    *len = (size_t)n;
    return PF_OK;
}

int pf_cur_str(pf_cur_t *c, const char *field, char **out)
{
    size_t len = 0;
    int rc = pf_cur_len(c, field, &len);
    if (rc)
        return rc;
    char *s = malloc(len + 1);
    if (!s)
        return PF_NOMEM(c->ps);
    for (size_t i = 0; i < len; i++)
        s[i] = c->p[i] ? (char)c->p[i] : '?';
    s[len] = '\0';
    c->p += len;
    *out = s;
    return PF_OK;
}

int pf_cur_bytes(pf_cur_t *c, const char *field, uint8_t **out, size_t *len)
{
    int rc = pf_cur_len(c, field, len);
    if (rc)
        return rc;
    *out = NULL;
    if (*len) {
        *out = malloc(*len);
        if (!*out)
            return PF_NOMEM(c->ps);
        memcpy(*out, c->p, *len);
    }
    c->p += *len;
    return PF_OK;
}
