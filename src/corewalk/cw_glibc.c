/* cw_glibc.c - finds glibc malloc's state (main_arena, mp_) in the target.
 *
 * Layouts on x86-64 (SIZE_SZ 8, MALLOC_ALIGNMENT 16), glibc 2.31 to 2.41:
 *
 * struct malloc_state (2200 bytes, same in 2.27..2.41):
 *    0 mutex (int)           4 flags (int; bit 1 NONCONTIGUOUS)
 *    8 have_fastchunks (int, 2.27+)
 *   16 fastbinsY[10]        96 top              104 last_remainder
 *  112 bins[254] (bin i's fd at 112 + (i-1)*16, bk 8 later; an empty bin
 *      points at itself: fd == bk == its own address - 16)
 * 2144 binmap[4] (unsigned)  2160 next  2168 next_free
 * 2176 attached_threads     2184 system_mem  2192 max_system_mem
 *
 * struct malloc_par (mp_):
 *   0 trim_threshold  8 top_pad  16 mmap_threshold  24 arena_test  32 arena_max
 *   2.35+ only: 40 thp_pagesize  48 hp_pagesize  56 hp_flags (int)
 *   then (2.31-2.34 offsets / 2.35+ offsets; the ints follow hp_flags
 *   without padding, so they move by 20 and the size_t fields by 24):
 *   n_mmaps 40/60  n_mmaps_max 44/64  max_n_mmaps 48/68  no_dyn_threshold 52/72
 *   mmapped_mem 56/80  max_mmapped_mem 64/88  sbrk_base 72/96
 *   tcache_bins 80/104  tcache_max_bytes 88/112  tcache_count 96/120
 *
 * heap_info (thread arenas' 64 MiB heaps): ar_ptr, prev, size, mprotect_size,
 *   2.35+ pagesize, then padding to 16: 32 bytes before 2.35, 48 from 2.35.
 *   The arena of a heap's first heap_info follows it (detected in cw_arena.c).
 *
 * tcache_perthread_struct (2.30+): uint16_t counts[64], then entries[64]
 *   (pointers to the user memory of the first free chunk), 640 bytes: a
 *   0x290 chunk, the first chunk of the heap of the thread that made it.
 * Safe-linking (2.32+): tcache and fastbin next pointers are stored as
 *   (address of the field >> 12) ^ pointer (detected from the data, cw_bins.c).
 *
 * Two ways to find the addresses: libc's own symbols (main_arena and mp_
 * are local: only in .symtab of the debug file, found by build-id), and,
 * without them, the structure: a malloc_state in libc's writable data whose
 * empty bins point at themselves, whose top chunk is mapped and whose
 * `next` is mapped (itself when there is one arena); an mp_ whose fields
 * hold plausible defaults (n_mmaps_max, tcache_bins) in one of the two
 * layouts above.
 *
 * The layouts are detected from the data, not from a version number, but
 * the version is read when it can be (libc's banner "... release version
 * 2.NN." in its read-only data: in a live process's memory, or in the libc
 * file a core names when its build-id is the one the core's copy of libc's
 * ELF header carries).  A known version outside 2.30..2.41 is refused
 * with a message instead of being walked with the wrong layout: 2.26-2.29
 * have char tcache counts (a 0x250 struct), 2.42 reworked the tcache.
 * When main_arena is not found, the error says why: not initialised (no
 * malloc yet), not dumped, no libc mapped, or no known layout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cw.h"

static int mapped(const cw_core_t *c, uint64_t a)
{
    const cw_seg_t *s = cw_mem_seg(c, a);
    return s && s->data;
}

/* 1 if a malloc_state seems to live at `a` (2200 bytes at m). */
static int looks_like_arena(const cw_core_t *c, uint64_t a, const uint8_t *m)
{
    uint64_t top, next, sys, maxsys, att;
    uint32_t flags;
    memcpy(&flags, m + CW_MS_FLAGS, 4);
    memcpy(&top, m + CW_MS_TOP, 8);
    memcpy(&next, m + CW_MS_NEXT, 8);
    memcpy(&att, m + 2176, 8);
    memcpy(&sys, m + CW_MS_SYSMEM, 8);
    memcpy(&maxsys, m + CW_MS_MAXSYSMEM, 8);
    if (flags > 15 || !top || (top & 15) || !mapped(c, top) || !next || (next & 15) ||
        !mapped(c, next) || !sys || maxsys < sys || sys > (1ull << 46) || att > (1u << 24))
        return 0;
    int self = 0;
    for (int i = 1; i < CW_NBINS; i++) {
        uint64_t fd, bk, bin = a + CW_MS_BINS + (uint64_t)(i - 1) * 16 - 16;
        memcpy(&fd, m + CW_MS_BINS + (i - 1) * 16, 8);
        memcpy(&bk, m + CW_MS_BINS + (i - 1) * 16 + 8, 8);
        if (fd == bin && bk == bin)
            self++;
        else if (!mapped(c, fd) || !mapped(c, bk))
            return 0;
    }
    return self >= 64;
}

/* Validates an mp_ at `a` in the 2.35+ (hp=1) or older layout; fills lay. */
static int looks_like_mp(const cw_core_t *c, uint64_t a, int hp, cw_layout_t *lay)
{
    uint8_t m[136];
    if (cw_mem_read(c, a, m, sizeof m))
        return 0;
    int o = hp ? 24 : 0, oi = hp ? 20 : 0; /* hp_flags is an int: the ints move by 20 */
    uint64_t trim, mmth, mmem, maxmem, sbrk, tbins, tcount;
    int32_t n, nmax, maxn;
    memcpy(&trim, m, 8);
    memcpy(&mmth, m + 16, 8);
    memcpy(&n, m + 40 + oi, 4);
    memcpy(&nmax, m + 44 + oi, 4);
    memcpy(&maxn, m + 48 + oi, 4);
    memcpy(&mmem, m + 56 + o, 8);
    memcpy(&maxmem, m + 64 + o, 8);
    memcpy(&sbrk, m + 72 + o, 8);
    memcpy(&tbins, m + 80 + o, 8);
    memcpy(&tcount, m + 96 + o, 8);
    if (!trim || mmth < 4096 || mmth > (64ull << 20) || nmax <= 0 || n < 0 || maxn < n ||
        (mmem & 0xfff) || mmem > maxmem || (sbrk && !mapped(c, sbrk)) || tbins == 0 ||
        tbins > 128 || tcount == 0 || tcount > 65535 || (n == 0) != (mmem == 0))
        return 0;
    lay->mp = a;
    lay->mp_hp_fields = hp;
    lay->n_mmaps = n;
    lay->max_n_mmaps = maxn;
    lay->mmapped_mem = mmem;
    lay->max_mmapped_mem = maxmem;
    lay->sbrk_base = sbrk;
    lay->have_mp = 1;
    return 1;
}

static int is_libc(const char *p)
{
    const char *b = strrchr(p, '/');
    b = b ? b + 1 : p;
    return !strncmp(b, "libc.so", 7) || !strncmp(b, "libc-2.", 7);
}

/* The path of the libc the target mapped (NT_FILE or /proc/PID/maps), or
 * NULL (a static program, another C library, a core without NT_FILE). */
const char *cw_glibc_path(const cw_core_t *c)
{
    for (size_t i = 0; i < c->nsegs; i++)
        if (c->segs[i].path && is_libc(c->segs[i].path))
            return c->segs[i].path;
    return NULL;
}

/* Finds "release version 2.NN" (the string gnu_get_libc_version's banner
 * holds, e.g. "GNU C Library (Debian GLIBC 2.36-9) stable release version
 * 2.36.") in b[0..n); 1 and the numbers, or 0. */
static int version_in(const uint8_t *b, size_t n, int *major, int *minor)
{
    static const char key[] = "release version ";
    const size_t k = sizeof key - 1;
    for (size_t i = 0; n >= k + 3 && i <= n - k - 3; i++) {
        if (b[i] != 'r' || memcmp(b + i, key, k))
            continue;
        const uint8_t *p = b + i + k, *e = b + n;
        int ma = 0, mi = 0, dm = 0, dn = 0;
        while (p < e && *p >= '0' && *p <= '9' && dm < 3)
            ma = ma * 10 + (*p++ - '0'), dm++;
        if (!dm || p >= e || *p++ != '.')
            continue;
        while (p < e && *p >= '0' && *p <= '9' && dn < 3)
            mi = mi * 10 + (*p++ - '0'), dn++;
        if (!dn || p >= e) /* the number must end inside the buffer */
            continue;
        *major = ma;
        *minor = mi;
        return 1;
    }
    return 0;
}

/* glibc's version: from libc's read-only data when the target's memory
 * holds it (live processes; cores rarely dump it), else from the libc file
 * the core names if it is the very build that was mapped (same build-id).
 * Returns CW_VERSION_MEMORY, CW_VERSION_FILE or CW_VERSION_UNKNOWN. */
int cw_glibc_version(const cw_core_t *c, int *major, int *minor)
{
    const char *libc = cw_glibc_path(c);
    if (!libc)
        return CW_VERSION_UNKNOWN;
    for (size_t i = 0; i < c->nsegs; i++) {
        const cw_seg_t *s = &c->segs[i];
        if (s->path == libc && s->data && !(s->flags & CW_SEG_W) && version_in(s->data, s->datalen, major, minor))
            return CW_VERSION_MEMORY;
    }
    if (cw_syms_file_matches(c, libc) != 1)
        return CW_VERSION_UNKNOWN;
    FILE *f = fopen(libc, "rb");
    if (!f)
        return CW_VERSION_UNKNOWN;
    int found = 0;
    enum { CHUNK = 1 << 20, OVERLAP = 64 };
    uint8_t *buf = malloc(CHUNK + OVERLAP);
    size_t have = 0, total = 0;
    while (buf && !found && total < (256u << 20)) {
        size_t k = fread(buf + have, 1, CHUNK, f);
        if (!k)
            break;
        total += k;
        have += k;
        found = version_in(buf, have, major, minor);
        size_t keep = have < OVERLAP ? have : OVERLAP;
        memmove(buf, buf + have - keep, keep);
        have = keep;
    }
    free(buf);
    fclose(f);
    return found ? CW_VERSION_FILE : CW_VERSION_UNKNOWN;
}

/* 1 if segment i is libc's writable data or the bss right after it. */
static int libc_data(const cw_core_t *c, size_t i)
{
    const cw_seg_t *s = &c->segs[i];
    if (!(s->flags & CW_SEG_W) || !s->data)
        return 0;
    if (s->path)
        return is_libc(s->path);
    return i > 0 && c->segs[i - 1].path && is_libc(c->segs[i - 1].path) &&
           c->segs[i - 1].end == s->start;
}

/* Scans writable segments (libc's first, all of them if libc is not named)
 * for a malloc_state and an mp_. */
static void heuristics(const cw_core_t *c, cw_layout_t *lay)
{
    int any_libc = 0;
    for (size_t i = 0; i < c->nsegs; i++)
        any_libc |= c->segs[i].path && is_libc(c->segs[i].path);
    for (int pass = 0; pass < 2 && (!lay->main_arena || !lay->have_mp); pass++) {
        for (size_t i = 0; i < c->nsegs; i++) {
            const cw_seg_t *s = &c->segs[i];
            if (!s->data || !(s->flags & CW_SEG_W))
                continue;
            if (any_libc && !pass ? !libc_data(c, i) : 0)
                continue;
            if (pass && any_libc && libc_data(c, i))
                continue;
            for (uint64_t off = 0; off + CW_MSTATE_SIZE <= s->datalen; off += 16) {
                uint64_t a = s->start + off;
                /* thread arenas sit right after a heap_info: not main_arena */
                uint64_t in_heap = a & (CW_HEAP_MAX - 1);
                if (!lay->main_arena && in_heap != 32 && in_heap != 48 &&
                    looks_like_arena(c, a, s->data + off))
                    lay->main_arena = a;
            }
            for (uint64_t off = 0; !lay->have_mp && off + 136 <= s->datalen; off += 8) {
                uint64_t a = s->start + off;
                if (!looks_like_mp(c, a, 1, lay))
                    looks_like_mp(c, a, 0, lay);
            }
        }
    }
}

/* An uninitialised main_arena (the program had not called malloc yet):
 * glibc's static initialiser sets only `next` (itself) and
 * attached_threads (1); ptmalloc_init fills the bins at the first malloc. */
static int looks_unused_arena(uint64_t a, const uint8_t *m)
{
    uint64_t top, next, att, sys;
    memcpy(&top, m + CW_MS_TOP, 8);
    memcpy(&next, m + CW_MS_NEXT, 8);
    memcpy(&att, m + 2176, 8);
    memcpy(&sys, m + CW_MS_SYSMEM, 8);
    if (top || next != a || att != 1 || sys)
        return 0;
    for (int i = 0; i < 2 * CW_NBINS - 2; i++) {
        uint64_t b;
        memcpy(&b, m + CW_MS_BINS + 8 * i, 8);
        if (b)
            return 0;
    }
    return 1;
}

/* Says in why[] what the main_arena candidate at `a` (from the symbols)
 * is when it is not an initialised malloc_state. */
static void explain_symbol(const cw_core_t *c, uint64_t a, char *why, size_t whysz)
{
    uint8_t m[CW_MSTATE_SIZE];
    const cw_seg_t *s = cw_mem_seg(c, a);
    unsigned long long A = (unsigned long long)a;
    if (!s)
        snprintf(why, whysz, "main_arena (%#llx, from libc's symbols) is not mapped in this core", A);
    else if (cw_mem_read(c, a, m, sizeof m))
        snprintf(why, whysz, "main_arena (%#llx, from libc's symbols) is in memory the core did not dump "
                 "(see coredump_filter in core(5))", A);
    else if (looks_unused_arena(a, m))
        snprintf(why, whysz, "main_arena (%#llx) is not initialised: the program had not called malloc", A);
    else
        snprintf(why, whysz, "main_arena (%#llx, from libc's symbols) does not hold a malloc_state of the "
                 "layout of glibc 2.%d to 2.%d (an unknown glibc layout, or corrupt memory)",
                 A, CW_GLIBC_MIN, CW_GLIBC_MAX);
}

/* Says in why[] why the structure scan found no main_arena. */
static void explain_scan(const cw_core_t *c, char *why, size_t whysz)
{
    const char *libc = cw_glibc_path(c);
    int data = 0;
    for (size_t i = 0; i < c->nsegs; i++) {
        if (!libc_data(c, i))
            continue;
        data = 1;
        const cw_seg_t *s = &c->segs[i];
        for (uint64_t off = 0; off + CW_MSTATE_SIZE <= s->datalen; off += 16)
            if (looks_unused_arena(s->start + off, s->data + off)) {
                snprintf(why, whysz, "main_arena (%#llx, found by its structure) is not initialised: "
                         "the program had not called malloc", (unsigned long long)(s->start + off));
                return;
            }
    }
    if (!libc && !c->has_nt_file)
        snprintf(why, whysz, "the core names no mapped files (no NT_FILE note) and no malloc_state was "
                 "recognised in its writable memory");
    else if (!libc)
        snprintf(why, whysz, "no libc.so.6 is mapped (a static program, or another C library?) and no "
                 "malloc_state was recognised in its writable memory");
    else if (!data)
        snprintf(why, whysz, "libc's writable data is not in the core (see coredump_filter in core(5))");
    else
        snprintf(why, whysz, "no malloc_state of the layout of glibc 2.%d to 2.%d was recognised in "
                 "libc's writable data (an unknown glibc layout, or corrupt memory)",
                 CW_GLIBC_MIN, CW_GLIBC_MAX);
}

/* Fills lay: glibc's version when it can be read, main_arena and the mp_
 * fields.  use_symbols 0 skips libc's symbols (to test the heuristics).
 * Returns 0, or -1 with err set: a glibc whose version is outside the
 * layouts known (CW_GLIBC_MIN..CW_GLIBC_MAX), or no initialised
 * main_arena (the message says what was found instead). */
int cw_glibc_locate(const cw_core_t *c, cw_layout_t *lay, int use_symbols, char *err, size_t errsz)
{
    memset(lay, 0, sizeof *lay);
    lay->safe_linking = -1;
    int major = 0, minor = 0;
    lay->version_from = cw_glibc_version(c, &major, &minor);
    if (lay->version_from != CW_VERSION_UNKNOWN) {
        lay->glibc_major = major;
        lay->glibc_minor = minor;
        if (major != 2 || minor < CW_GLIBC_MIN || minor > CW_GLIBC_MAX) {
            snprintf(err, errsz, "unknown glibc layout: the core's libc is glibc %d.%d (from %s), "
                     "heapscope core reads the malloc layouts of glibc 2.%d to 2.%d on x86-64",
                     major, minor, lay->version_from == CW_VERSION_MEMORY ? "its memory" : "libc's file",
                     CW_GLIBC_MIN, CW_GLIBC_MAX);
            return -1;
        }
    }
    char why[256] = "";
    const char *libc = cw_glibc_path(c);
    if (use_symbols && libc) {
        uint64_t bias, v;
        if (!cw_syms_bias(c, libc, &bias)) {
            uint8_t m[CW_MSTATE_SIZE];
            if (!cw_syms_lookup(c, libc, "main_arena", &v)) {
                if (!cw_mem_read(c, bias + v, m, sizeof m) && looks_like_arena(c, bias + v, m)) {
                    lay->main_arena = bias + v;
                    lay->found_by_symbols = 1;
                } else {
                    explain_symbol(c, bias + v, why, sizeof why);
                }
            }
            if (!cw_syms_lookup(c, libc, "mp_", &v) && !looks_like_mp(c, bias + v, 1, lay))
                looks_like_mp(c, bias + v, 0, lay);
        }
    }
    if (!lay->main_arena || !lay->have_mp)
        heuristics(c, lay);
    if (!lay->main_arena) {
        if (!why[0])
            explain_scan(c, why, sizeof why);
        snprintf(err, errsz, "no glibc malloc heap found in this core: %s", why);
        return -1;
    }
    return 0;
}
