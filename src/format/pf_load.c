/* pf_load.c - see pf_load.h.  pf_load_who reads the 16-byte header, the
 * first record's type and length, then that record's payload and check
 * (docs/FORMAT.md, "Framing" and "INFO"): a run's directory may hold
 * profiles of hundreds of MB, and naming the family of a `heapscope run`
 * (cli_family.c) needs only who wrote each. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "common/ut_varint.h"
#include "format/pf_check.h"
#include "format/pf_le.h"
#include "format/pf_load.h"
#include "format/pf_reader.h"
#include "heapscope/profile.h"

/* Read all of fd into a malloc'd buffer.  Returns 0 or an errno value. */
static int read_fd(int fd, uint8_t **buf, size_t *len)
{
    struct stat st;
    size_t cap = 1 << 16, n = 0;
    if (fstat(fd, &st) != 0)
        return errno;
    if (S_ISDIR(st.st_mode))
        return EISDIR;
    /* a device (/dev/zero, /dev/full) would be read forever: files and
     * pipes only */
    if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
        return ENODEV;
    if (S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size < SIZE_MAX - 1)
        cap = (size_t)st.st_size + 1;
    uint8_t *b = malloc(cap);
    if (!b)
        return ENOMEM;
    for (;;) {
        if (n == cap) {
            if (cap > SIZE_MAX / 2) {
                free(b);
                return EFBIG;
            }
            uint8_t *nb = realloc(b, cap * 2);
            if (!nb) {
                free(b);
                return ENOMEM;
            }
            b = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, b + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(b);
            return e;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    *buf = b;
    *len = n;
    return 0;
}

int pf_load_file(const char *path, uint8_t **buf, size_t *len, char *err, size_t errsz)
{
    *buf = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errsz)
            snprintf(err, errsz, "cannot open the profile: %s", strerror(errno));
        return PF_EIO;
    }
    int e = read_fd(fd, buf, len);
    close(fd);
    if (e) {
        if (errsz)
            snprintf(err, errsz, "cannot read the profile: %s",
                     e == ENODEV ? "a device, not a file or a pipe" : strerror(e));
        return e == ENOMEM ? PF_ENOMEM : PF_EIO;
    }
    return PF_OK;
}

/* pread all of len bytes at off: 0, or -1 (error, or the file ends). */
static int pread_all(int fd, void *buf, size_t len, off_t off)
{
    for (size_t done = 0; done < len;) {
        ssize_t r = pread(fd, (char *)buf + done, len - done, off + (off_t)done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        done += (size_t)r;
    }
    return 0;
}

/* The INFO payload pl[n] (inflated), its first three fields into *who. */
static int decode_who(const uint8_t *pl, size_t n, pf_load_who_t *who)
{
    const uint8_t *p = pl, *end = pl + n;
    return ut_varint_get(&p, end, &who->pid) || ut_varint_get(&p, end, &who->ppid) ||
                   ut_varint_get(&p, end, &who->start_real_ns)
               ? -1
               : 0;
}

int pf_load_inflate(ZSTD_DCtx *d, const uint8_t *pl, size_t len, uint8_t **out,
                    size_t *outlen, unsigned long long *size, const char **why)
{
    unsigned long long n = *size = ZSTD_getFrameContentSize(pl, len);
    if (n == ZSTD_CONTENTSIZE_ERROR)
        return PF_INFLATE_NOT_FRAME;
    if (n == ZSTD_CONTENTSIZE_UNKNOWN)
        return PF_INFLATE_NO_SIZE;
    if (n > PF_MAX_INFLATED)
        return PF_INFLATE_TOO_BIG;
    uint8_t *b = malloc(n ? (size_t)n : 1);
    if (!b)
        return PF_INFLATE_NOMEM;
    size_t got = ZSTD_decompressDCtx(d, b, (size_t)n, pl, len);
    if (ZSTD_isError(got) || got != n) {
        *why = ZSTD_isError(got) ? ZSTD_getErrorName(got) : "shorter than it states";
        free(b);
        return PF_INFLATE_BAD;
    }
    *out = b;
    *outlen = (size_t)n;
    return PF_INFLATED;
}

/* The stored INFO record (type, payload pl[n], already checked) into
 * *who, inflating it first if it is compressed. */
static int stored_who(uint32_t type, const uint8_t *pl, size_t n, pf_load_who_t *who)
{
    if (!(type & PF_REC_ZSTD))
        return decode_who(pl, n, who);
    ZSTD_DCtx *d = ZSTD_createDCtx();
    uint8_t *raw = NULL;
    size_t got;
    unsigned long long size;
    const char *why;
    int rc = d && pf_load_inflate(d, pl, n, &raw, &got, &size, &why) == PF_INFLATED
                 ? decode_who(raw, got, who)
                 : -1;
    free(raw);
    ZSTD_freeDCtx(d);
    return rc;
}

int pf_load_who(const char *path, pf_load_who_t *who)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return -1;
    struct stat st;
    uint8_t head[PF_HEADER_SIZE + 8];
    uint8_t *pl = NULL;
    int rc = -1;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || pread_all(fd, head, sizeof head, 0) ||
        memcmp(head, PF_MAGIC, PF_MAGIC_LEN))
        goto out;
    unsigned major = pf_le16(head + PF_MAGIC_LEN);
    uint32_t type = pf_le32(head + PF_HEADER_SIZE), n = pf_le32(head + PF_HEADER_SIZE + 4);
    if (major < PF_VERSION_MAJOR_OLDEST || major > PF_VERSION_MAJOR ||
        (type & ~PF_REC_ZSTD) != PF_REC_INFO || ((type & PF_REC_ZSTD) && major < 3) ||
        n > PF_MAX_RECORD || (uint64_t)st.st_size < sizeof head + (uint64_t)n + 4)
        goto out;
    pl = malloc((size_t)n + 4);
    if (!pl || pread_all(fd, pl, (size_t)n + 4, (off_t)sizeof head) ||
        pf_le32(pl + n) != pf_check(major, type, pl, n))
        goto out;
    rc = stored_who(type, pl, n, who);
out:
    free(pl);
    close(fd);
    return rc;
}
