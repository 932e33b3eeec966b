/* pf_read_int.h - state shared by the reader's files (pf_reader.c and
 * pf_read_*.c); not for use outside src/format.
 *
 *   pf_reader.c          open/parse entry points, header, record framing
 *   pf_read_cursor.c     bounded payload decoding and error messages
 *   pf_read_info.c       INFO, TOTALS, END, MESSAGE
 *   pf_read_modules.c    MODULE_LOAD/UNLOAD and the live module map
 *   pf_read_tree.c       NODES, STACKS and frame walking
 *   pf_read_counters.c   COUNTERS, SAMPLES
 *   pf_read_finish.c     sorting and linking once all records are read
 */
#ifndef PF_READ_INT_H
#define PF_READ_INT_H

#include <stddef.h>
#include <stdint.h>

#include "format/pf_read_map.h"
#include "format/pf_reader.h"

/* A record decoder returns PF_OK, a negative PF_E*, or PF_STOP when the
 * rest of the file is to be ignored (truncation after INFO). */
#define PF_STOP 1

typedef struct pf_parse {
    pf_profile_t *prof;
    char *err;
    size_t errsz;
    const uint8_t *base;   /* the whole file */
    size_t size;
    uint64_t rec_no;       /* 1-based number of the current record, 0: header */
    size_t rec_off;        /* file offset of the current record */
    uint32_t rec_type;
    size_t cap_modules, cap_nodes, cap_stacks, cap_counters, cap_samples, cap_messages;
    uint32_t *active;      /* indexes of loaded modules, sorted by start */
    size_t n_active, cap_active;
    pf_map_t stack_ids;    /* stack id -> index in prof->stacks */
    pf_map_t counter_keys; /* (stack id, size_lo) -> index in prof->counters */
    uint64_t total_frames; /* sum of stack depths */
    int seen_info;
    int uses_stack0;       /* a COUNTERS entry names stack 0 */
    struct ZSTD_DCtx_s *zstd; /* made at the first compressed record, for all of them */
} pf_parse_t;

/* A bounded view of one payload. */
typedef struct pf_cur {
    const uint8_t *p;
    const uint8_t *end;
    pf_parse_t *ps;
} pf_cur_t;

/* Record an error: formats "record N (TYPE) at offset O: <msg>", plus
 * " [file:line]" of the reader for PF_ECORRUPT and PF_ENOMEM,
 * into ps->err and returns rc. */
int pf_read_fail(pf_parse_t *ps, int rc, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
#define PF_CORRUPT(ps, ...) pf_read_fail((ps), PF_ECORRUPT, __FILE__, __LINE__, __VA_ARGS__)
#define PF_NOMEM(ps) pf_read_fail((ps), PF_ENOMEM, __FILE__, __LINE__, "out of memory")

/* The current record ends the readable part.  Returns PF_STOP after INFO
 * (the profile is flagged truncated) or PF_ETRUNCATED before it. */
int pf_read_truncate(pf_parse_t *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Grow an array so it holds `need` elements.  Returns the (maybe moved)
 * array, or NULL when out of memory or on size overflow (the old array is
 * still valid then). */
void *pf_read_grow(void *arr, size_t *cap, size_t need, size_t elsz);

/* Payload decoding; each returns PF_OK or PF_ECORRUPT naming `field`. */
int pf_cur_u(pf_cur_t *c, const char *field, uint64_t *out);
/* A count of entries each at least `min_bytes` long: must fit the rest. */
int pf_cur_count(pf_cur_t *c, const char *field, size_t min_bytes, uint64_t *out);
/* A str field as a new NUL-terminated copy (NUL bytes inside become '?'). */
int pf_cur_str(pf_cur_t *c, const char *field, char **out);
/* A bytes field as a new copy (NULL when empty). */
int pf_cur_bytes(pf_cur_t *c, const char *field, uint8_t **out, size_t *len);

/* Record decoders, one per type. */
int pf_read_info(pf_cur_t *c);
int pf_read_totals(pf_cur_t *c);
int pf_read_end(pf_cur_t *c);
int pf_read_message(pf_cur_t *c);
int pf_read_module_load(pf_cur_t *c);
int pf_read_module_unload(pf_cur_t *c);
int pf_read_nodes(pf_cur_t *c);
int pf_read_stacks(pf_cur_t *c);
int pf_read_counters(pf_cur_t *c);
int pf_read_samples(pf_cur_t *c);

/* Index of the loaded module containing ip, -1 when none. */
int32_t pf_read_module_find(const pf_parse_t *ps, uint64_t ip);

/* After the last record: sort, link counters to stacks, set `final`. */
int pf_read_finish(pf_parse_t *ps);

#endif
