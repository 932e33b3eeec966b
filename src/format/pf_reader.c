/* pf_reader.c - entry points of the profile reader: load the file
 * (pf_load.c), check the 16-byte header, walk the record framing and hand each payload to its
 * decoder (pf_read_*.c).
 *
 * Framing (docs/FORMAT.md):
 *   offset 0   magic[8] "HEAPSCP\0"
 *   offset 8   u16 major, u16 minor, u32 flags          (little endian)
 *   offset 16  record*: u32 type, u32 length, payload[length], u32 check
 *              check = XXH32 of the payload seeded with the type (2.x, 3.x),
 *                      FNV-1a 32 over the 4 type bytes, then the payload (1.x)
 * A record that runs past the end of the file or fails its check ends the
 * readable part (truncated profile); anything else that is wrong is an
 * error.  In 3.x a type with PF_REC_ZSTD set holds a zstd frame, inflated
 * here (at most PF_MAX_INFLATED bytes) before its decoder sees it.  The
 * loop advances by at least 12 bytes per record, so it ends.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "common/ut_varint.h"
#include "format/pf_check.h"
#include "format/pf_le.h"
#include "format/pf_load.h"
#include "format/pf_read_int.h"
#include "heapscope/profile.h"

#define PF_RECORD_OVERHEAD 12u /* type, length, check */

const char *pf_reader_type_name(uint32_t type)
{
    static const char *const names[] = {
        "?", "INFO", "MODULE_LOAD", "MODULE_UNLOAD", "NODES", "STACKS",
        "COUNTERS", "SAMPLES", "TOTALS", "END", "MESSAGE",
    };
    return type >= 1 && type < sizeof names / sizeof names[0] ? names[type] : "unknown";
}

/* Check magic, version and size of the header.  Returns PF_OK or an error
 * with its message in ps->err. */
static int pf_read_header(pf_parse_t *ps)
{
    const uint8_t *b = ps->base;
    size_t n = ps->size;
    if (n == 0)
        return pf_read_fail(ps, PF_EEMPTY, __FILE__, __LINE__,
                            "the file is empty: the program has not written a profile yet");
    if (memcmp(b, PF_MAGIC, n < PF_MAGIC_LEN ? n : PF_MAGIC_LEN) != 0)
        return pf_read_fail(ps, PF_ENOTPROFILE, __FILE__, __LINE__,
                            "not a heapscope profile (the file does not start with \"%s\")",
                            PF_MAGIC);
    if (n < PF_HEADER_SIZE)
        return pf_read_fail(ps, PF_ETRUNCATED, __FILE__, __LINE__,
                            "profile is truncated inside its %d-byte header (%zu bytes)",
                            PF_HEADER_SIZE, n);
    pf_profile_t *p = ps->prof;
    p->major = (uint16_t)pf_le16(b + 8);
    p->minor = (uint16_t)pf_le16(b + 10);
    p->header_flags = pf_le32(b + 12);
    if (p->major < PF_VERSION_MAJOR_OLDEST || p->major > PF_VERSION_MAJOR)
        return pf_read_fail(ps, PF_EVERSION, __FILE__, __LINE__,
                            "profile format version %u.%u is not supported: this heapscope reads "
                            "versions %d.x to %d.x (up to %d.%d)",
                            (unsigned)p->major, (unsigned)p->minor, PF_VERSION_MAJOR_OLDEST,
                            PF_VERSION_MAJOR, PF_VERSION_MAJOR, PF_VERSION_MINOR);
    return PF_OK;
}

/* Decode one payload of a known type.  Unknown types are skipped. */
static int pf_read_dispatch(pf_parse_t *ps, uint32_t type, const uint8_t *pl, size_t len)
{
    pf_cur_t c = {pl, pl + len, ps};
    switch (type) {
    case PF_REC_INFO: return pf_read_info(&c);
    case PF_REC_MODULE_LOAD: return pf_read_module_load(&c);
    case PF_REC_MODULE_UNLOAD: return pf_read_module_unload(&c);
    case PF_REC_NODES: return pf_read_nodes(&c);
    case PF_REC_STACKS: return pf_read_stacks(&c);
    case PF_REC_COUNTERS: return pf_read_counters(&c);
    case PF_REC_SAMPLES: return pf_read_samples(&c);
    case PF_REC_TOTALS: return pf_read_totals(&c);
    case PF_REC_END: return pf_read_end(&c);
    case PF_REC_MESSAGE: return pf_read_message(&c);
    default: ps->prof->skipped++; return PF_OK;
    }
}

/* Inflate the zstd frame pl[len] of a compressed record into a malloc'd
 * *out[*outlen].  Returns PF_OK or an error (the check matched, so a bad
 * frame was written so: the file is corrupt, not torn). */
static int pf_read_inflate(pf_parse_t *ps, const uint8_t *pl, uint32_t len, uint8_t **out,
                           size_t *outlen)
{
    /* one context for all the records: ZSTD_decompress makes and frees
     * one per call (as pf_pack.c found) */
    if (!ps->zstd && !(ps->zstd = ZSTD_createDCtx()))
        return PF_NOMEM(ps);
    unsigned long long n;
    const char *why = "";
    switch (pf_load_inflate(ps->zstd, pl, len, out, outlen, &n, &why)) {
    case PF_INFLATED:
        return PF_OK;
    case PF_INFLATE_NOT_FRAME:
        return PF_CORRUPT(ps, "the compressed payload is not a zstd frame");
    case PF_INFLATE_NO_SIZE:
        return PF_CORRUPT(ps, "the compressed payload's zstd frame does not state its size");
    case PF_INFLATE_TOO_BIG:
        return PF_CORRUPT(ps, "the compressed payload inflates to %llu bytes, above the limit of %u",
                          n, PF_MAX_INFLATED);
    case PF_INFLATE_NOMEM:
        return PF_NOMEM(ps);
    default:
        return PF_CORRUPT(ps, "the compressed payload does not inflate: %s", why);
    }
}

/* Walk the records after the header.  Returns PF_OK (also when the file
 * turned out truncated after INFO) or an error. */
static int pf_read_records(pf_parse_t *ps)
{
    size_t off = PF_HEADER_SIZE;
    while (off < ps->size) {
        size_t left = ps->size - off;
        ps->rec_no++;
        ps->rec_off = off;
        ps->rec_type = 0;
        if (left < 8)
            return pf_read_truncate(ps, "only %zu bytes of the 8-byte record header remain", left);
        uint32_t type = pf_le32(ps->base + off), len = pf_le32(ps->base + off + 4);
        ps->rec_type = type;
        if ((uint64_t)len + PF_RECORD_OVERHEAD > left)
            return pf_read_truncate(ps, "its %u-byte payload and check run past the end of the file "
                                        "(%zu bytes left)",
                                    len, left - 8);
        if (len > PF_MAX_RECORD)
            return PF_CORRUPT(ps, "payload length %u is above the limit of %u", len, PF_MAX_RECORD);
        const uint8_t *pl = ps->base + off + 8;
        uint32_t want = pf_le32(pl + len);
        uint32_t got = pf_check(ps->prof->major, type, pl, len);
        if (want != got)
            return pf_read_truncate(ps, "bad checksum (stored 0x%08x, computed 0x%08x)", want, got);
        uint8_t *inflated = NULL;
        size_t plen = len;
        if (ps->prof->major >= 3 && (type & PF_REC_ZSTD)) {
            type &= ~PF_REC_ZSTD;
            ps->rec_type = type;
            int rc = pf_read_inflate(ps, pl, len, &inflated, &plen);
            if (rc)
                return rc;
            pl = inflated;
            ps->prof->compressed++;
        }
        if (ps->rec_no == 1 && type != PF_REC_INFO) {
            free(inflated);
            return PF_CORRUPT(ps, "the first record is %s (type %u), not INFO",
                              pf_reader_type_name(type), type);
        }
        int rc = pf_read_dispatch(ps, type, pl, plen);
        free(inflated);
        if (rc)
            return rc;
        ps->prof->records++;
        off += PF_RECORD_OVERHEAD + len;
    }
    if (!ps->seen_info) {
        ps->rec_no = 0;
        return pf_read_fail(ps, PF_ETRUNCATED, __FILE__, __LINE__,
                            "profile is truncated before its INFO record: the file has only its "
                            "header");
    }
    return PF_OK;
}

int pf_reader_parse(const uint8_t *data, size_t len, pf_profile_t **out, char *err, size_t errsz)
{
    *out = NULL;
    if (errsz)
        err[0] = '\0';
    pf_profile_t *p = calloc(1, sizeof *p);
    if (!p) {
        if (errsz)
            snprintf(err, errsz, "out of memory");
        return PF_ENOMEM;
    }
    pf_parse_t ps;
    memset(&ps, 0, sizeof ps);
    ps.prof = p;
    ps.err = err;
    ps.errsz = errsz;
    ps.base = data;
    ps.size = len;
    pf_map_init(&ps.stack_ids);
    pf_map_init(&ps.counter_keys);
    int rc = pf_read_header(&ps);
    if (!rc)
        rc = pf_read_records(&ps);
    if (rc == PF_STOP)
        rc = PF_OK;
    if (!rc)
        rc = pf_read_finish(&ps);
    pf_map_free(&ps.stack_ids);
    pf_map_free(&ps.counter_keys);
    free(ps.active);
    ZSTD_freeDCtx(ps.zstd);
    if (rc) {
        pf_reader_free(p);
        return rc;
    }
    *out = p;
    return PF_OK;
}

int pf_reader_open(const char *path, pf_profile_t **out, char *err, size_t errsz)
{
    *out = NULL;
    uint8_t *buf;
    size_t len;
    int rc = pf_load_file(path, &buf, &len, err, errsz);
    if (rc)
        return rc;
    rc = pf_reader_parse(buf, len, out, err, errsz);
    free(buf);
    return rc;
}

void pf_reader_free(pf_profile_t *p)
{
    if (!p)
        return;
    free(p->info.exe);
    for (uint32_t i = 0; i < p->info.argc; i++)
        free(p->info.argv[i]);
    free(p->info.argv);
    free(p->info.allocator);
    for (size_t i = 0; i < p->n_modules; i++) {
        free(p->modules[i].path);
        free(p->modules[i].build_id);
    }
    free(p->modules);
    free(p->nodes);
    free(p->stacks);
    free(p->counters);
    free(p->samples);
    for (size_t i = 0; i < p->n_messages; i++)
        free(p->messages[i]);
    free(p->messages);
    free(p);
}
