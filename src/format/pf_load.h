/* pf_load.h - a profile's bytes from its file: all of them (for the reader
 * and for packing), or the first fields of its INFO record alone (for
 * telling which process wrote it without parsing the rest).
 *
 * Its own small library (hs_pack, with pf_pack.c) so that the launcher,
 * which links no analysis library, can compress and find a run's profiles
 * itself (docs/ARCHITECTURE.md, "heapscope run"). */
#ifndef PF_LOAD_H
#define PF_LOAD_H

#include <stddef.h>
#include <stdint.h>
#include <zstd.h>

/* The bytes of the file at `path` (a regular file or a pipe) into a
 * malloc'd *buf[*len].  PF_OK, or PF_EIO / PF_ENOMEM (pf_reader.h) with a
 * message in err[errsz]. */
int pf_load_file(const char *path, uint8_t **buf, size_t *len, char *err, size_t errsz);

/* Why a compressed record's payload did not inflate (pf_load_inflate). */
enum pf_load_inflate_rc {
    PF_INFLATED = 0,
    PF_INFLATE_NOT_FRAME,  /* not a zstd frame */
    PF_INFLATE_NO_SIZE,    /* the frame does not state its content size */
    PF_INFLATE_TOO_BIG,    /* it states more than PF_MAX_INFLATED bytes */
    PF_INFLATE_NOMEM,
    PF_INFLATE_BAD,        /* the frame does not inflate to the size it states */
};

/* Inflate the zstd frame pl[len] of a compressed record (format 3.x,
 * PF_REC_ZSTD) into a malloc'd *out[*outlen], with the context d.
 * Returns PF_INFLATED, or why not (nothing to free then); *size is the
 * content size the frame states, and *why zstd's reason for
 * PF_INFLATE_BAD, for a message.  The reader and pf_load_who both inflate
 * through it. */
int pf_load_inflate(ZSTD_DCtx *d, const uint8_t *pl, size_t len, uint8_t **out,
                    size_t *outlen, unsigned long long *size, const char **why);

/* Who wrote a profile: the first fields of its INFO record. */
typedef struct pf_load_who {
    uint64_t pid, ppid;
    uint64_t start_real_ns; /* CLOCK_REALTIME when its process started */
} pf_load_who_t;

/* Read the header and the first record of the regular file at path into
 * *who.  0 when it is a profile of a version this heapscope reads whose
 * first record is a whole INFO with its check right (compressed or not)
 * and those fields decode; -1 otherwise (not a profile, cut inside its
 * INFO, unreadable).  Reads the INFO's bytes only, however large the
 * file.  Example:
 *   pf_load_who_t w;
 *   if (pf_load_who("prof.hsp.123", &w) == 0) printf("pid %llu\n", (unsigned long long)w.pid); */
int pf_load_who(const char *path, pf_load_who_t *who);

#endif
