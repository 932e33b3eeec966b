/* pf_reader.h - read and validate a heapscope profile (.hsp) into memory.
 *
 * The reader is the only code that looks at profile bytes on the analyser
 * side.  Profiles are untrusted input: every count is checked against the
 * bytes that remain before anything is allocated from it, node parents must
 * point backwards (so no cycle is possible), and every failure returns an
 * `int rc` plus a message naming the record number and file offset.
 *
 * The model keeps the file's information almost one to one:
 *   info      INFO record
 *   modules   MODULE_LOAD records in file order (= load order), with the
 *             MODULE_UNLOAD time when one followed
 *   nodes     the call tree; node id N is nodes[N - 1].  Each node carries
 *             the module its return address belonged to at the position of
 *             its NODES record (docs/FORMAT.md, "MODULE_UNLOAD")
 *   stacks    sorted by id; frames via pf_reader_stack_frames()
 *   counters  sorted by (stack id, size_lo); a later COUNTERS entry for the
 *             same (stack id, size_lo) replaced the earlier one
 *   samples, totals, end, messages
 *
 * A record that runs past the end of the file or fails its check ends the
 * readable part: what came before is kept and `truncated` is set (with the
 * reason in `truncated_why`).  That is only an error when it happens before
 * the INFO record.
 *
 * Limits this reader adds to the format (documented for the writer):
 *   PF_READ_MAX_DEPTH          frames per stack
 *   PF_READ_MAX_FRAMES         frames summed over all stacks
 *   PF_READ_MAX_ACTIVE_MODULES modules loaded at the same time
 */
#ifndef PF_READER_H
#define PF_READER_H

#include <stddef.h>
#include <stdint.h>

/* Return codes of the reader (0 = success). */
enum pf_rc {
    PF_OK = 0,
    PF_EIO = -1,        /* the file cannot be opened or read */
    PF_ENOTPROFILE = -2, /* wrong magic */
    PF_EVERSION = -3,   /* another major version */
    PF_EEMPTY = -4,     /* zero-length file: not written yet */
    PF_ETRUNCATED = -5, /* truncated before the INFO record */
    PF_ECORRUPT = -6,   /* structurally invalid content */
    PF_ENOMEM = -7,     /* out of memory */
};

#define PF_READ_MAX_DEPTH 4096u
#define PF_READ_MAX_FRAMES (1u << 27)
#define PF_READ_MAX_ACTIVE_MODULES 65536u
#define PF_ERRMSG_SIZE 320

typedef struct pf_info {
    uint64_t pid;
    uint64_t ppid;
    uint64_t start_real_ns;
    uint64_t start_mono_ns;
    uint64_t flags;        /* PF_INFO_* */
    char *exe;
    uint32_t argc;
    char **argv;           /* argc strings */
    uint64_t unwinder;     /* enum pf_unwinder */
    uint64_t max_depth;
    uint64_t interval_ms;
    uint64_t sample_ms;
    uint64_t peak_slack;
    char *allocator;
} pf_info_t;

typedef struct pf_module {
    uint64_t id;           /* module_id, strictly increasing in the array */
    uint64_t t_load;
    uint64_t t_unload;     /* valid when `unloaded` */
    int unloaded;
    uint64_t load_bias;
    uint64_t start;
    uint64_t end;
    char *path;
    uint8_t *build_id;     /* NULL when build_id_len is 0 */
    size_t build_id_len;
} pf_module_t;

typedef struct pf_node {
    uint32_t parent;       /* node id, 0 for a root */
    uint32_t depth;        /* 1 for a root */
    int32_t module;        /* index into modules, -1 when in none */
    uint64_t ip;           /* absolute return address */
} pf_node_t;

/* One frame of a stack: an absolute return address and its module. */
typedef struct pf_frame {
    uint64_t ip;
    int32_t module;        /* index into modules, -1 when in none */
} pf_frame_t;

typedef struct pf_stack {
    uint64_t id;
    uint64_t flags;        /* PF_STACK_* */
    uint32_t leaf;         /* node id of the innermost frame, 0: no frames */
    uint32_t depth;        /* number of frames */
    size_t first_counter;  /* its counters are counters[first .. first+n) */
    size_t n_counters;
} pf_stack_t;

typedef struct pf_counter {
    uint64_t stack_id;
    uint64_t t;            /* time of the COUNTERS record it came from */
    uint64_t size_lo;
    uint64_t size_hi;
    uint64_t allocations;
    uint64_t bytes_allocated;
    uint64_t frees;
    uint64_t bytes_freed;
    uint64_t temporary;
    uint64_t peak_blocks;
    uint64_t peak_bytes;
} pf_counter_t;

typedef struct pf_sample {
    uint64_t t;
    uint64_t heap;
    uint64_t rss;
    uint64_t allocations;
    uint64_t frees;
} pf_sample_t;

typedef struct pf_totals {
    uint64_t t;
    uint64_t flags;        /* PF_TOTALS_* */
    uint64_t allocations;
    uint64_t frees;
    uint64_t bytes_allocated;
    uint64_t bytes_freed;
    uint64_t temporary;
    uint64_t peak_bytes;
    uint64_t peak_t;
    uint64_t peak_error;
    uint64_t threads;
    uint64_t unknown_frees;
    uint64_t lost_allocations;
    uint64_t shadow_overwrites;
    uint64_t stacks;
    uint64_t rss_peak;
    uint64_t untracked;        /* 0 in profiles written before it existed */
} pf_totals_t;

typedef struct pf_profile {
    uint16_t major;
    uint16_t minor;
    uint32_t header_flags;
    pf_info_t info;
    pf_module_t *modules;
    size_t n_modules;
    pf_node_t *nodes;
    size_t n_nodes;
    pf_stack_t *stacks;
    size_t n_stacks;
    pf_counter_t *counters;
    size_t n_counters;
    pf_sample_t *samples;
    size_t n_samples;
    char **messages;
    size_t n_messages;
    int has_totals;
    pf_totals_t totals;
    int has_end;
    uint64_t end_t;
    uint64_t end_reason;   /* enum pf_end_reason */
    int final;             /* END present and nothing truncated */
    int truncated;
    char truncated_why[PF_ERRMSG_SIZE];
    uint64_t records;      /* records read */
    uint64_t skipped;      /* records of unknown type */
    uint64_t compressed;   /* of those, stored as zstd frames (3.x) */
    uint64_t counters_replaced; /* COUNTERS entries that replaced earlier ones */
} pf_profile_t;

/* Read the profile at `path`.
 * On success returns PF_OK and stores a profile in *out that the caller
 * frees with pf_reader_free(); it may have `truncated` set.  On failure
 * returns a negative PF_E* code, leaves *out NULL and writes a one-line
 * message (what and where) to err[errsz].
 *   pf_profile_t *p; char err[PF_ERRMSG_SIZE];
 *   if (pf_reader_open("x.hsp", &p, err, sizeof err)) fprintf(stderr, "%s\n", err); */
int pf_reader_open(const char *path, pf_profile_t **out, char *err, size_t errsz);

/* Same as pf_reader_open() for `len` bytes already in memory (not kept). */
int pf_reader_parse(const uint8_t *data, size_t len, pf_profile_t **out,
                    char *err, size_t errsz);

/* Free a profile from pf_reader_open/parse; NULL is allowed. */
void pf_reader_free(pf_profile_t *p);

/* Copy the frames of `s` innermost first (leaf -> root) into out[cap].
 * Returns the stack's depth, which may exceed `cap` (then only `cap` frames
 * were written).  The depth is never above PF_READ_MAX_DEPTH. */
uint32_t pf_reader_stack_frames(const pf_profile_t *p, const pf_stack_t *s,
                                pf_frame_t *out, uint32_t cap);

/* The stack with this id, or NULL. */
const pf_stack_t *pf_reader_find_stack(const pf_profile_t *p, uint64_t id);

/* Name of a record type ("NODES"), "unknown" for others. */
const char *pf_reader_type_name(uint32_t type);

#endif
