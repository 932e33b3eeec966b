/* pf_pack.c - see pf_pack.h.  The records are copied in order; each
 * payload of PF_PACK_MIN bytes or more is replaced by its zstd frame, with
 * PF_REC_ZSTD set in its type and the check recomputed over the stored
 * bytes, where that is smaller and inflates back to the payload, byte for
 * byte.  So the copy holds the same records: a reader, which inflates a
 * compressed record before it parses it, reads the same profile.  Only the
 * framing is walked, before and after (every record whole, its check
 * right): parsing the profile twice, as the first version did, took 0.11 s
 * and 56 MB for binary-trees' 1.4 MB profile, twice as long as the
 * program. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "format/pf_check.h"
#include "format/pf_le.h"
#include "format/pf_load.h"
#include "format/pf_pack.h"
#include "format/pf_reader.h"
#include "heapscope/profile.h"

/* What a walk of the records of a file finds (docs/FORMAT.md,
 * "Framing"). */
typedef struct framing {
    int whole;      /* this format's header; every record within the file,
                     * its check right; the last one ending at its end */
    int final;      /* an END record: its process exited */
    int compressed; /* a record with PF_REC_ZSTD */
    size_t records;
} framing_t;

static framing_t walk(const uint8_t *b, size_t len)
{
    framing_t f = {0, 0, 0, 0};
    if (len < PF_HEADER_SIZE || memcmp(b, PF_MAGIC, PF_MAGIC_LEN) ||
        pf_le16(b + PF_MAGIC_LEN) != PF_VERSION_MAJOR)
        return f;
    for (size_t off = PF_HEADER_SIZE; off < len;) {
        if (len - off < 12)
            return f;
        uint32_t type = pf_le32(b + off), n = pf_le32(b + off + 4);
        if (n > len - off - 12 || pf_le32(b + off + 8 + n) !=
                                      pf_check(PF_VERSION_MAJOR, type, b + off + 8, n))
            return f;
        f.final |= type == PF_REC_END;
        f.compressed |= (type & PF_REC_ZSTD) != 0;
        f.records++;
        off += 12 + (size_t)n;
    }
    f.whole = 1;
    return f;
}

/* Copy the records in[len] (whole, checked, of a 3.x file) into out,
 * with large payloads compressed; each frame is inflated again into
 * scratch (len bytes) and kept only if it gives the payload back, byte for
 * byte.  Returns the length written: at most len, since a payload is kept
 * compressed only if that is smaller. */
static size_t pack_records(ZSTD_CCtx *z, ZSTD_DCtx *d, const uint8_t *in, size_t len,
                           uint8_t *out, uint8_t *scratch, unsigned *packed)
{
    size_t o = 0;
    for (size_t off = 0; off + 12 <= len;) {
        uint32_t type = pf_le32(in + off), n = pf_le32(in + off + 4);
        const uint8_t *pl = in + off + 8;
        size_t zn = 0;
        if (n >= PF_PACK_MIN && !(type & PF_REC_ZSTD) && n <= PF_MAX_INFLATED) {
            zn = ZSTD_compressCCtx(z, out + o + 8, len - o - 12, pl, n, PF_PACK_LEVEL);
            if (ZSTD_isError(zn) || zn >= n ||
                ZSTD_decompressDCtx(d, scratch, n, out + o + 8, zn) != n ||
                memcmp(scratch, pl, n))
                zn = 0;
        }
        if (zn) {
            type |= PF_REC_ZSTD;
            (*packed)++;
        } else {
            memcpy(out + o + 8, pl, n);
        }
        uint32_t stored = zn ? (uint32_t)zn : n;
        pf_put_le32(out + o, type);
        pf_put_le32(out + o + 4, stored);
        pf_put_le32(out + o + 8 + stored, pf_check(PF_VERSION_MAJOR, type, out + o + 8, stored));
        o += 12 + (size_t)stored;
        off += 12 + (size_t)n;
    }
    return o;
}

/* One run of whole records, packed by one thread into its own buffer. */
typedef struct pack_part {
    const uint8_t *in;
    size_t len;
    uint8_t *out; /* malloc'd, len bytes; NULL if out of memory */
    size_t n;     /* bytes written to out */
    unsigned packed;
} pack_part_t;

/* pthread body: pack part->in into part->out, with contexts of its own
 * (one each way for all of its records: ZSTD_decompress would make and
 * free one per record). */
static void *pack_part(void *arg)
{
    pack_part_t *part = arg;
    part->out = malloc(part->len ? part->len : 1);
    uint8_t *scratch = malloc(part->len ? part->len : 1);
    ZSTD_CCtx *z = ZSTD_createCCtx();
    ZSTD_DCtx *d = ZSTD_createDCtx();
    if (part->out && scratch && z && d) {
        part->n = pack_records(z, d, part->in, part->len, part->out, scratch, &part->packed);
    } else {
        free(part->out);
        part->out = NULL;
    }
    ZSTD_freeCCtx(z);
    ZSTD_freeDCtx(d);
    free(scratch);
    return NULL;
}

/* The end of the record at or after the middle of in[len] (whole
 * records): where the second part starts. */
static size_t middle(const uint8_t *in, size_t len)
{
    size_t off = 0;
    while (off + 12 <= len && off < len / 2)
        off += 12 + (size_t)pf_le32(in + off + 4);
    return off;
}

/* Pack the records of in[len] (after the header) in two parts, the second
 * in a thread of its own when the file is large enough to gain from it:
 * compressing and inflating back binary-trees' 1.4 MB takes ~3 ms, and
 * once the program has exited both cores are free.  Returns the length
 * written to out (len bytes), or 0 when out of memory. */
static size_t pack_parts(const uint8_t *in, size_t len, uint8_t *out, unsigned *packed)
{
    size_t mid = len >= PF_PACK_THREAD_MIN ? middle(in, len) : len;
    pack_part_t part[2] = {{in, mid, NULL, 0, 0}, {in + mid, len - mid, NULL, 0, 0}};
    pthread_t th;
    int threaded = part[1].len && pthread_create(&th, NULL, pack_part, &part[1]) == 0;
    pack_part(&part[0]);
    if (threaded)
        pthread_join(th, NULL);
    else if (part[1].len)
        pack_part(&part[1]);
    size_t o = 0;
    int ok = part[0].out && (part[1].out || !part[1].len);
    for (int i = 0; i < 2; i++) {
        if (ok && part[i].n) {
            memcpy(out + o, part[i].out, part[i].n);
            o += part[i].n;
        }
        *packed += part[i].packed;
        free(part[i].out);
    }
    return ok ? o : 0;
}

/* pf_pack_file on the bytes in[len]: *out (malloc'd, *outlen bytes) is
 * the compressed profile when PF_PACKED is returned, NULL otherwise. */
static int pack_bytes(const uint8_t *in, size_t len, uint8_t **out, size_t *outlen, char *err,
                      size_t errsz)
{
    *out = NULL;
    *outlen = 0;
    /* only a whole, final file of this writer's format, not yet packed;
     * one that does not read is left for the reader to say why */
    framing_t f = walk(in, len);
    if (!f.whole || !f.final || f.compressed)
        return PF_PACK_LEFT;
    /* a payload is kept compressed only if smaller: never more than len */
    uint8_t *buf = malloc(len);
    unsigned packed = 0;
    size_t n = buf ? pack_parts(in + PF_HEADER_SIZE, len - PF_HEADER_SIZE,
                                buf + PF_HEADER_SIZE, &packed)
                   : 0;
    if (!n) {
        free(buf);
        if (errsz)
            snprintf(err, errsz, "out of memory");
        return PF_ENOMEM;
    }
    memcpy(buf, in, PF_HEADER_SIZE);
    n += PF_HEADER_SIZE;
    if (!packed || n >= len) {
        free(buf);
        return PF_PACK_LEFT;
    }
    framing_t g = walk(buf, n);
    if (!g.whole || !g.final || g.records != f.records) {
        /* our own output: a bug, said as one */
        free(buf);
        if (errsz)
            snprintf(err, errsz, "the compressed profile's records are not whole");
        return PF_ECORRUPT;
    }
    *out = buf;
    *outlen = n;
    return PF_PACKED;
}

int pf_pack_file(const char *path, char *err, size_t errsz)
{
    uint8_t *in, *out;
    size_t len, n;
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return PF_PACK_LEFT; /* gone, or a FIFO or device: nothing to rewrite */
    int rc = pf_load_file(path, &in, &len, err, errsz);
    if (rc)
        return rc;
    rc = pack_bytes(in, len, &out, &n, err, errsz);
    free(in);
    if (rc != PF_PACKED)
        return rc;
    char tmp[4200];
    if (snprintf(tmp, sizeof tmp, "%s.pack.tmp", path) >= (int)sizeof tmp) {
        free(out);
        if (errsz)
            snprintf(err, errsz, "the profile's path is too long");
        return PF_EIO;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, st.st_mode & 07777);
    int e = fd < 0 ? errno : 0;
    for (size_t done = 0; !e && done < n;) {
        ssize_t w = write(fd, out + done, n - done);
        if (w > 0)
            done += (size_t)w;
        else if (w == 0)
            e = EIO;
        else if (errno != EINTR)
            e = errno;
    }
    if (fd >= 0 && close(fd) != 0 && !e)
        e = errno;
    if (!e && rename(tmp, path) != 0)
        e = errno;
    free(out);
    if (e) {
        if (fd >= 0)
            unlink(tmp);
        if (errsz)
            snprintf(err, errsz, "cannot write the compressed profile %s: %s", tmp, strerror(e));
        return PF_EIO;
    }
    return PF_PACKED;
}
