/* profile.h - constants of the heapscope profile file (.hsp).
 *
 * Shared by the collector's writer (src/format/pf_writer.c) and the
 * analyser's reader (src/format/pf_reader.c).  docs/FORMAT.md is the full
 * specification; this header only names its numbers.
 *
 * Layout:  header (16 bytes)  then  record*
 *   header : "HEAPSCP\0" u16 major  u16 minor  u32 flags      (little endian)
 *   record : u32 type  u32 length  u8 payload[length]  u32 check
 *            check = XXH32 of the payload seeded with the type (2.x, 3.x);
 *                    FNV-1a 32 over the 4 type bytes then the payload (1.x).
 *            A type with PF_REC_ZSTD set (3.x) holds one zstd frame whose
 *            content is the payload of (type & ~PF_REC_ZSTD).
 * Payload integers are LEB128 varints (unsigned, or zigzag for signed).
 *
 * Versioning: bump PF_VERSION_MAJOR when an existing record changes meaning
 * or layout (old readers must refuse the file); bump PF_VERSION_MINOR when
 * fields are appended to a record or a record type is added (old readers
 * skip unknown records and ignore trailing payload bytes).
 */
#ifndef HEAPSCOPE_PROFILE_H
#define HEAPSCOPE_PROFILE_H

#define PF_MAGIC "HEAPSCP"        /* 7 chars + NUL = 8 bytes */
#define PF_MAGIC_LEN 8
#define PF_HEADER_SIZE 16
#define PF_VERSION_MAJOR 3        /* 3: NODES and STACKS as deltas; zstd records */
#define PF_VERSION_MINOR 0
#define PF_VERSION_MAJOR_OLDEST 1 /* 1.x: FNV-1a checks (1.1: TOTALS gained `untracked`);
                                   2.x: XXH32 checks; both: absolute NODES and STACKS */

/* Largest payload a reader accepts for one record (bytes). */
#define PF_MAX_RECORD (1u << 30)

/* Record type bit (3.x): the payload is compressed, one zstd frame that
 * states its content size, at most PF_MAX_INFLATED bytes.  The check is of
 * the stored (compressed) bytes, seeded with the type as stored. */
#define PF_REC_ZSTD 0x80000000u
#define PF_MAX_INFLATED (64u << 20)

enum pf_record_type {
    PF_REC_INFO = 1,          /* process and settings; first record */
    PF_REC_MODULE_LOAD = 2,   /* a module mapped into the process */
    PF_REC_MODULE_UNLOAD = 3, /* a module unmapped (dlclose) */
    PF_REC_NODES = 4,         /* call-tree nodes: (parent node, return address) */
    PF_REC_STACKS = 5,        /* stack id -> leaf node */
    PF_REC_COUNTERS = 6,      /* per (stack, size) cumulative counters */
    PF_REC_SAMPLES = 7,       /* heap/RSS timeline samples */
    PF_REC_TOTALS = 8,        /* process-wide totals, peak, diagnostics */
    PF_REC_END = 9,           /* the profile is complete (process exited) */
    PF_REC_MESSAGE = 10,      /* a warning the collector wants reported */
};

/* INFO.unwinder */
enum pf_unwinder {
    PF_UNWIND_FP = 0,        /* frame-pointer walk */
    PF_UNWIND_DWARF = 1,     /* heapscope's cached DWARF CFI unwinder */
    PF_UNWIND_LIBUNWIND = 2, /* libunwind unw_backtrace, no cache of ours */
};

/* INFO.flags */
#define PF_INFO_FORKED 0x1u   /* this process is a fork child of ppid */
#define PF_INFO_EXECED 0x2u   /* this image was exec'd by a profiled image */

/* STACKS flags */
#define PF_STACK_TRUNCATED 0x1u /* the depth cap cut the stack */

/* TOTALS.flags */
#define PF_TOTALS_FINAL 0x1u    /* written at process exit */
#define PF_TOTALS_SEALED 0x2u   /* the last: a seccomp filter forbids writing more */

/* END.reason */
enum pf_end_reason {
    PF_END_EXIT = 0,   /* exit() / return from main */
    PF_END_EXEC = 1,   /* the image was replaced by exec */
};

/* Sizes above PF_EXACT_SIZE_MAX are kept in buckets of 16 per power of two. */
#define PF_EXACT_SIZE_MAX 8192u

/* A profile's file name when HEAPSCOPE_OUTPUT does not give one (%e: the
 * program's name, %p: its pid), in the directory the program started in. */
#define PF_DEFAULT_OUTPUT "heapscope.%e.%p.hsp"

#endif
