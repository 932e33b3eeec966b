/* cw.h - shared types of the core walker (`heapscope core`, prefix cw_).
 *
 * The walker reads an address space (an ELF core file or a stopped live
 * process, both turned into the same list of segments by cw_elf.c and
 * cw_live.c), finds glibc malloc's state in it (cw_glibc.c), walks every
 * arena, heap and mmapped chunk (cw_arena.c), classifies free chunks from
 * the allocator's lists (cw_bins.c), and derives the reports: summary and
 * mallinfo2 (cw_report_*.c), fragmentation (cw_frag.c) and leak candidates
 * (cw_mark.c).  Everything read from the target is untrusted: every read is
 * bounds-checked through cw_mem_read() and no input is asserted on.
 */
#ifndef CW_H
#define CW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CW_SEG_R 4
#define CW_SEG_W 2
#define CW_SEG_X 1

/* One mapping of the target: [start, end), `data` holds the first `datalen`
 * bytes of it (0 when the core did not dump it). */
typedef struct cw_seg {
    uint64_t start, end;
    const uint8_t *data;
    uint64_t datalen;
    int flags;          /* CW_SEG_R|W|X */
    const char *path;   /* mapped file (from NT_FILE or /proc/PID/maps), or NULL */
    uint64_t file_ofs;  /* offset of `start` in that file */
    int role;           /* CW_ROLE_*: what the walk found there (roots or not) */
} cw_seg_t;

enum { CW_ROLE_OTHER, CW_ROLE_HEAP, CW_ROLE_MMAPPED };

/* x86-64 user_regs_struct order, as in NT_PRSTATUS and PTRACE_GETREGS. */
#define CW_NREGS 27
#define CW_REG_RSP 19
#define CW_REG_RIP 16
#define CW_REG_FSBASE 21

typedef struct cw_thread {
    int tid;
    uint64_t regs[CW_NREGS];
} cw_thread_t;

typedef struct cw_core {
    uint8_t *buf;       /* the core file (own_buf 1: malloc'd, 2: mmapped) */
    size_t len;
    int own_buf;
    int no_files;       /* 1: never open a file the core names (symbols, libc's
                         * version): set by the fuzzer, whose cores name
                         * arbitrary paths */
    int live;           /* 1: read from a stopped process (segments own their data) */
    int pid;
    cw_seg_t *segs;     /* sorted by start, not overlapping */
    size_t nsegs;
    cw_thread_t *threads;
    size_t nthreads;
    char **paths;       /* strings the segments point to (owned) */
    size_t npaths;
    uint64_t auxv_phdr, auxv_entry, auxv_base; /* AT_PHDR, AT_ENTRY, AT_BASE */
    int has_nt_file;
    int proc_pid;       /* NT_PRPSINFO's pr_pid, or the live pid; 0 unknown */
    int signo;          /* the signal that made the core (NT_SIGINFO, else the
                         * first thread's pr_cursig); 0 none or live */
    char command[81];   /* NT_PRPSINFO's pr_psargs, or /proc/PID/cmdline */
} cw_core_t;

/* cw_mem.c: the address-space abstraction over segments. */
const cw_seg_t *cw_mem_seg(const cw_core_t *c, uint64_t addr);
int cw_mem_read(const cw_core_t *c, uint64_t addr, void *out, size_t n);
int cw_mem_u64(const cw_core_t *c, uint64_t addr, uint64_t *out);
uint64_t cw_mem_next_dumped(const cw_core_t *c, uint64_t addr);
uint64_t cw_mem_avail(const cw_core_t *c, uint64_t addr);
int cw_mem_add_seg(cw_core_t *c, const cw_seg_t *s);
void cw_mem_sort(cw_core_t *c);
const char *cw_mem_intern(cw_core_t *c, const char *path);
void cw_core_close(cw_core_t *c);

/* cw_elf.c: an ELF core in memory or in a file. */
int cw_core_open_mem(const void *buf, size_t len, cw_core_t **out, char *err, size_t errsz);
int cw_core_open_file(const char *path, cw_core_t **out, char *err, size_t errsz);

/* cw_live.c: a live process, stopped while its memory is copied. */
int cw_core_open_pid(int pid, cw_core_t **out, char *err, size_t errsz);

/* cw_syms.c: symbols of mapped files (libelf), looked up by name or address;
 * every function fails (-1) without opening anything when c->no_files. */
int cw_syms_lookup(const cw_core_t *c, const char *path, const char *name, uint64_t *value);
int cw_syms_name_at(const cw_core_t *c, const char *path, uint64_t value, char *name, size_t namesz);
int cw_syms_bias(const cw_core_t *c, const char *path, uint64_t *bias);
int cw_syms_core_build_id(const cw_core_t *c, const char *path, char *id, size_t idsz);
int cw_syms_file_matches(const cw_core_t *c, const char *path);
void cw_demangle_vtable(const char *sym, char *out, size_t outsz);

/* Chunk classes. */
typedef enum cw_class {
    CW_INUSE, CW_TCACHE, CW_FASTBIN, CW_UNSORTED, CW_SMALLBIN, CW_LARGEBIN,
    CW_TOP, CW_TCACHE_STRUCT, CW_MMAPPED, CW_NCLASS
} cw_class_t;
const char *cw_class_name(cw_class_t k);

enum { CW_LEAK_NONE, CW_LEAK_REACHABLE, CW_LEAK_DIRECT, CW_LEAK_INDIRECT };

typedef struct cw_chunk {
    uint64_t addr;      /* chunk header address; malloc returned addr + 16 */
    uint64_t size;      /* chunksize() */
    uint8_t cls;        /* cw_class_t */
    uint8_t leak;       /* CW_LEAK_* (after cw_mark_run) */
    int16_t arena;      /* index in walk->arenas, -1 for mmapped chunks */
    int32_t heap;       /* index in walk->heaps, -1 for mmapped chunks */
} cw_chunk_t;

typedef struct cw_heap {
    uint64_t start, end;   /* memory the allocator owns ([sbrk_base, top end) or heap_info..+size) */
    uint64_t first;        /* first chunk */
    int arena;
} cw_heap_t;

typedef struct cw_arena {
    uint64_t addr, top, topsize, system_mem, max_system_mem, next;
    uint32_t mutex;     /* glibc's lll lock: 0 free, 1 held, 2 held and waited for */
    /* int_mallinfo's figures, computed from the lists like glibc does */
    uint64_t avail, fastavail;
    uint64_t nblocks, nfastblocks;
} cw_arena_t;

/* Layout facts of the glibc found (see cw_glibc.c for the per-version table). */
typedef struct cw_layout {
    uint64_t main_arena, mp;      /* addresses, 0 when not found */
    int glibc_major, glibc_minor; /* libc's version string; 0 when unknown */
    int version_from;             /* CW_VERSION_* */
    int found_by_symbols;         /* 1: libc symbols; 0: structure heuristics */
    int heap_info_size;           /* 32 (<= 2.34) or 48 (2.35+, pagesize field) */
    int mp_hp_fields;             /* 1: mp_ has thp/hp fields (2.35+) */
    int tcache;                   /* tcache_perthread_struct found */
    int safe_linking;             /* 1 mangled, 0 plain, -1 unknown (no free list entry) */
    uint64_t sbrk_base;
    int64_t n_mmaps, max_n_mmaps;
    uint64_t mmapped_mem, max_mmapped_mem;
    int have_mp;
} cw_layout_t;

typedef struct cw_walk {
    const cw_core_t *core;
    cw_layout_t lay;
    cw_arena_t *arenas; size_t narenas;
    cw_heap_t *heaps; size_t nheaps;
    cw_chunk_t *chunks; size_t nchunks, capchunks;  /* sorted by addr */
    char **problems; size_t nproblems;
    uint64_t mmapped_found_bytes; size_t mmapped_found;
} cw_walk_t;

/* cw_glibc.c */
enum { CW_VERSION_UNKNOWN, CW_VERSION_MEMORY, CW_VERSION_FILE };
#define CW_GLIBC_MIN 30 /* 2.30: uint16_t tcache counts; the layouts below hold to 2.41 */
#define CW_GLIBC_MAX 41 /* 2.42 reworked the tcache */
const char *cw_glibc_path(const cw_core_t *c);
int cw_glibc_version(const cw_core_t *c, int *major, int *minor);
int cw_glibc_locate(const cw_core_t *c, cw_layout_t *lay, int use_symbols, char *err, size_t errsz);
#define CW_MSTATE_SIZE 2200   /* sizeof(struct malloc_state), glibc 2.27..2.41 */
#define CW_MS_FLAGS 4
#define CW_MS_FASTBINS 16
#define CW_MS_TOP 96
#define CW_MS_LASTREM 104
#define CW_MS_BINS 112
#define CW_MS_NEXT 2160
#define CW_MS_SYSMEM 2184
#define CW_MS_MAXSYSMEM 2192
#define CW_NFASTBINS 10
#define CW_NBINS 128
#define CW_HEAP_MAX (64ull << 20)  /* HEAP_MAX_SIZE on x86-64 (2 * DEFAULT_MMAP_THRESHOLD_MAX) */
#define CW_TCACHE_STRUCT_CHUNK 0x290 /* 2.30+: uint16_t counts[64] + entries[64] + header */
#define CW_TCACHE_BINS 64

/* cw_chunks.c */
int cw_chunks_add(cw_walk_t *w, uint64_t addr, uint64_t size, cw_class_t k, int arena, int heap);
void cw_chunks_sort(cw_walk_t *w);
cw_chunk_t *cw_chunks_find(const cw_walk_t *w, uint64_t addr);
cw_chunk_t *cw_chunks_containing(const cw_walk_t *w, uint64_t addr);
void cw_walk_problem(cw_walk_t *w, const char *fmt, ...);

/* cw_arena.c: the whole walk (arenas, heaps, chunks, mmapped chunks, bins). */
int cw_walk_run(const cw_core_t *c, int use_symbols, cw_walk_t **out, char *err, size_t errsz);
void cw_walk_free(cw_walk_t *w);

/* cw_bins.c: free lists and tcache over the physical chunks already walked. */
void cw_bins_classify(cw_walk_t *w);
uint64_t cw_bins_reveal(const cw_walk_t *w, uint64_t pos, uint64_t v);

/* cw_frag.c */
typedef struct cw_frag {
    uint64_t free_by_class[CW_NCLASS];
    uint64_t total_free, largest_free, inuse_bytes, footprint;
    uint64_t hist[40];  /* free chunks (top excluded) by floor(log2(size)) */
    uint64_t hist_bytes[40];
    /* per heap: free bytes below the topmost in-use chunk, and that chunk */
    uint64_t *pinned_bytes, *pin_addr, *pin_size;
} cw_frag_t;
void cw_frag_compute(const cw_walk_t *w, cw_frag_t *f);
void cw_frag_free(cw_frag_t *f);

/* cw_mark.c */
typedef struct cw_leaks {
    size_t direct, indirect, reachable;
    uint64_t direct_bytes, indirect_bytes;
} cw_leaks_t;
void cw_mark_run(cw_walk_t *w, cw_leaks_t *out);
void cw_mark_label(const cw_walk_t *w, uint64_t first_word, char *out, size_t outsz);

/* cw_report_*.c */
enum { CW_VIEW_SUMMARY = 1, CW_VIEW_FRAG = 2, CW_VIEW_LEAKS = 4, CW_VIEW_CHUNKS = 8 };
typedef struct cw_mallinfo {
    uint64_t arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost;
} cw_mallinfo_t;
void cw_report_mallinfo(const cw_walk_t *w, cw_mallinfo_t *mi);
void cw_report_text(FILE *out, cw_walk_t *w, int views, const cw_frag_t *f, const cw_leaks_t *l);
void cw_report_json(FILE *out, cw_walk_t *w, int views, const cw_frag_t *f, const cw_leaks_t *l);

#endif
