/* pf_pack.h - compress a finished profile in place: every record of
 * PF_PACK_MIN bytes or more becomes one zstd frame (format 3.x,
 * docs/FORMAT.md, "Compressed records").
 *
 * `heapscope run` does it once the program has exited.  The collector
 * writes its records plain: linking zstd into every profiled process would
 * add ~0.4 MB to its resident set (the library's pages), and compressing
 * at exit would add to its run time. */
#ifndef PF_PACK_H
#define PF_PACK_H

#include <stddef.h>

#define PF_PACK_MIN 256u /* smaller payloads stay as they are */
#define PF_PACK_LEVEL 3  /* zstd's default: cc1plus's 1.5 MB profile 3.5x smaller,
                          * binary-trees' 1.4 MB 20x */
#define PF_PACK_THREAD_MIN (256u << 10) /* a larger profile is packed in two
                                         * threads, each half of its records */

enum {
    PF_PACKED = 0, /* the file was rewritten, compressed */
    PF_PACK_LEFT = 1, /* left as it is: not final, not 3.x, already
                       * compressed, or nothing got smaller */
};

/* Compress the profile at path: read it, check that its records are
 * whole and that it is final (its process exited: no later snapshot will
 * replace it), keep each compressed record only if it inflates back to its
 * payload, check the copy's records, write it to PATH.pack.tmp and rename
 * it over path.  Returns PF_PACKED, PF_PACK_LEFT (also for a profile whose
 * records are not whole: the reader will say why), or a negative PF_E*
 * code with a message in err[errsz] when packing itself failed (the file
 * is then as it was). */
int pf_pack_file(const char *path, char *err, size_t errsz);

#endif
