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

/* The bytes of the file at `path` (a regular file or a pipe) into a
 * malloc'd *buf[*len].  PF_OK, or PF_EIO / PF_ENOMEM (pf_reader.h) with a
 * message in err[errsz]. */
int pf_load_file(const char *path, uint8_t **buf, size_t *len, char *err, size_t errsz);

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
