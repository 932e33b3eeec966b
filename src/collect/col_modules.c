/* col_modules.c - the module map: which ELF objects are loaded where, with
 * their GNU build IDs, so that return addresses can be symbolised offline.
 *
 * The list only grows: a module that disappears is marked unloaded with the
 * epoch of the scan that noticed it.  Epochs let the profile writer place
 * call-tree nodes between the right MODULE_LOAD and MODULE_UNLOAD records
 * (docs/FORMAT.md).  Scans run under the writer lock, never on the
 * allocation path.  Everything here comes from mmap, never from the
 * program's allocator: the final flush also runs in _exit and exec called
 * from a signal handler, which may have interrupted malloc with an arena
 * locked. */
#define _GNU_SOURCE
#include <elf.h>
#include <stddef.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/col_internal.h"
#include "common/ut_path.h"

static col_module_t *mods;
static size_t nmods, capmods;
/* The modules' paths, one after another in chunks that never move. */
static char *path_chunk;
static size_t path_left;
#define PATH_CHUNK (64 * 1024)
uint32_t col_modules_epoch_value = 1; /* read inline: col_modules_epoch() */
uint32_t col_modules_unloads;         /* read inline: col_modules_unloaded() */
static unsigned long long seen_adds = ~0ull, seen_subs = ~0ull;
static char exe_path[4096];

/* Executable segments of the loaded modules, sorted, for the frame-pointer
 * unwinder to reject return addresses that point nowhere.  Replaced
 * wholesale on a change; old arrays stay allocated for readers. */
typedef struct exec_ranges {
    size_t n;
    uintptr_t r[][2];
} exec_ranges_t;
static exec_ranges_t *exec_cur;

/* The C library's code (glibc's libc.so.6): read inline by
 * col_modules_in_libc; written once, when the scan first meets it. */
uintptr_t col_modules_libc_lo, col_modules_libc_hi;

int col_modules_is_libc(const char *path)
{
    return ut_path_base_starts(path, "libc.so.");
}

static int add_exec(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    exec_ranges_t *x = arg;
    int libc = !__atomic_load_n(&col_modules_libc_hi, __ATOMIC_RELAXED) &&
               col_modules_is_libc(info->dlpi_name); /* its first code segment, once */
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        if (libc && !__atomic_load_n(&col_modules_libc_hi, __ATOMIC_RELAXED)) {
            __atomic_store_n(&col_modules_libc_lo, info->dlpi_addr + ph->p_vaddr, __ATOMIC_RELAXED);
            __atomic_store_n(&col_modules_libc_hi, info->dlpi_addr + ph->p_vaddr + ph->p_memsz,
                             __ATOMIC_RELEASE);
        }
        if (x->n < 4096) {
            x->r[x->n][0] = info->dlpi_addr + ph->p_vaddr;
            x->r[x->n][1] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
            x->n++;
        }
    }
    return 0;
}

/* Sort the ranges by start, in place: glibc's qsort allocates a buffer
 * for more than a few dozen, and the writer thread allocates nothing
 * (col_glibc.c).  Shell sort, gaps 3h+1: a few thousand ranges at most,
 * and only when the modules change. */
static void sort_ranges(uintptr_t (*r)[2], size_t n)
{
    size_t gap = 1;
    while (gap < n / 3)
        gap = 3 * gap + 1;
    for (; gap > 0; gap /= 3)
        for (size_t i = gap; i < n; i++) {
            uintptr_t lo = r[i][0], hi = r[i][1];
            size_t j = i;
            for (; j >= gap && r[j - gap][0] > lo; j -= gap) {
                r[j][0] = r[j - gap][0];
                r[j][1] = r[j - gap][1];
            }
            r[j][0] = lo;
            r[j][1] = hi;
        }
}

static void exec_ranges_rebuild(void)
{
    exec_ranges_t *x = col_vm_map(sizeof *x + 4096 * sizeof x->r[0]);
    if (!x)
        return;
    x->n = 0;
    dl_iterate_phdr(add_exec, x);
    sort_ranges(x->r, x->n);
    __atomic_store_n(&exec_cur, x, __ATOMIC_RELEASE);
}

/* Is ip inside an executable segment of a loaded module?  If so, stores
 * that segment in [*lo, *hi).  Lock-free. */
int col_modules_code_range(uintptr_t ip, uintptr_t *lo, uintptr_t *hi)
{
    const exec_ranges_t *x = __atomic_load_n(&exec_cur, __ATOMIC_ACQUIRE);
    if (!x)
        return 1;
    size_t a = 0, b = x->n;
    while (a < b) {
        size_t mid = (a + b) / 2;
        if (ip < x->r[mid][0]) {
            b = mid;
        } else if (ip >= x->r[mid][1]) {
            a = mid + 1;
        } else {
            *lo = x->r[mid][0];
            *hi = x->r[mid][1];
            return 1;
        }
    }
    return 0;
}

/* A copy of path that lives as long as the process. */
static char *path_copy(const char *path)
{
    size_t len = strlen(path) + 1;
    if (len > path_left) {
        size_t size = len > PATH_CHUNK ? len : PATH_CHUNK;
        char *c = col_vm_map(size);
        if (!c)
            return NULL;
        path_chunk = c;
        path_left = size;
    }
    char *p = path_chunk;
    memcpy(p, path, len);
    path_chunk += len;
    path_left -= len;
    return p;
}

typedef struct scan {
    int *present; /* per existing module: seen in this scan */
    size_t before;  /* modules known when the scan started */
    int changed;
    uint64_t now;
} scan_t;

static void read_build_id(struct dl_phdr_info *info, col_module_t *m)
{
    m->build_id_len = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        const unsigned char *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            size_t name = (nh->n_namesz + 3) & ~3u, desc = (nh->n_descsz + 3) & ~3u;
            const unsigned char *n = p + sizeof *nh;
            if (n + name + desc > end)
                break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(n, "GNU", 4) &&
                nh->n_descsz <= sizeof m->build_id) {
                memcpy(m->build_id, n + name, nh->n_descsz);
                m->build_id_len = nh->n_descsz;
                return;
            }
            p = n + name + desc;
        }
    }
}

static int scan_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    scan_t *s = arg;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < lo)
            lo = a;
        if (a + ph->p_memsz > hi)
            hi = a + ph->p_memsz;
    }
    if (lo >= hi)
        return 0;
    const char *path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : exe_path;
    for (size_t i = 0; i < s->before; i++) {
        col_module_t *m = &mods[i];
        if (!m->t_unload && m->bias == info->dlpi_addr && m->start == lo && !strcmp(m->path, path)) {
            s->present[i] = 1;
            return 0;
        }
    }
    if (nmods == capmods) {
        size_t cap = capmods ? capmods * 2 : 64;
        col_module_t *n = col_vm_grow(mods, capmods * sizeof *n, cap * sizeof *n);
        if (!n)
            return 0;
        mods = n;
        capmods = cap;
    }
    col_module_t *m = &mods[nmods];
    memset(m, 0, sizeof *m);
    m->path = path_copy(path);
    if (!m->path)
        return 0;
    m->id = (uint32_t)nmods + 1;
    m->t_load = s->now;
    m->bias = info->dlpi_addr;
    m->start = lo;
    m->end = hi;
    m->epoch_load = col_modules_epoch_value;
    read_build_id(info, m);
    nmods++;
    s->changed = 1;
    return 0;
}

static int read_counts(struct dl_phdr_info *info, size_t size, void *arg)
{
    unsigned long long *c = arg;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        c[0] = info->dlpi_adds;
        c[1] = info->dlpi_subs;
    }
    return 1; /* the first object is enough */
}

/* Rescan when the loader's load/unload counters moved; 1 if the list
 * changed.  Caller holds the writer lock and the re-entrancy guard. */
int col_modules_scan(void)
{
    if (!exe_path[0]) {
        ssize_t n = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
        if (n <= 0)
            strcpy(exe_path, "[program]");
        else
            exe_path[n] = 0;
    }
    unsigned long long c[2] = {0, 0};
    dl_iterate_phdr(read_counts, c);
    if (c[0] == seen_adds && c[1] == seen_subs)
        return 0;
    scan_t s = {0};
    s.now = col_now_ns() - col_proc.start_mono_ns;
    size_t present_size = (nmods + 1) * sizeof *s.present;
    s.present = col_vm_map(present_size);
    if (!s.present)
        return 0;
    size_t before = nmods;
    s.before = before;
    dl_iterate_phdr(scan_one, &s);
    for (size_t i = 0; i < before; i++) {
        if (!mods[i].t_unload && !s.present[i]) {
            mods[i].t_unload = s.now ? s.now : 1;
            mods[i].epoch_unload = col_modules_epoch_value;
            s.changed = 1;
            /* before the new code ranges: what was code may no longer be */
            __atomic_add_fetch(&col_modules_unloads, 1, __ATOMIC_RELEASE);
        }
    }
    col_vm_unmap(s.present, present_size);
    seen_adds = c[0];
    seen_subs = c[1];
    if (s.changed) {
        /* the epoch last: a walk that read the old one may have used the
         * new tables, and is redone; never the other way round */
        exec_ranges_rebuild();
        col_unwind_modules_changed();
        __atomic_add_fetch(&col_modules_epoch_value, 1, __ATOMIC_RELEASE);
    }
    return s.changed;
}

col_module_t *col_modules_list(size_t *count)
{
    *count = nmods;
    return mods;
}


/* The address range of libheapscope.so itself: the loaded module that
 * holds this function. */
void col_modules_self_range(uintptr_t *lo, uintptr_t *hi)
{
    void (*self)(uintptr_t *, uintptr_t *) = col_modules_self_range;
    uintptr_t a;
    memcpy(&a, &self, sizeof a); /* function to integer */
    *lo = *hi = 0;
    for (size_t i = 0; i < nmods; i++)
        if (!mods[i].t_unload && mods[i].start <= a && a < mods[i].end) {
            *lo = mods[i].start;
            *hi = mods[i].end;
            return;
        }
}

typedef struct path_of {
    uintptr_t addr;
    const char *path;
    uintptr_t seg[2];
} path_of_t;

static int find_path(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    path_of_t *p = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && lo <= p->addr && p->addr - lo < ph->p_memsz) {
            p->path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : NULL;
            p->seg[0] = lo;
            p->seg[1] = lo + ph->p_memsz;
            return 1;
        }
    }
    return 0;
}

/* The path of the shared object whose segments hold addr, from the
 * loader's list: dladdr's answer without its search of the object's
 * symbols, which for libc's ~3,000 took ~30 us of every process's start.
 * NULL for the program itself and an address no object holds.  With seg,
 * the loaded segment that holds addr in seg[0], seg[1] (both 0 if none). */
const char *col_modules_path_of(const void *addr, uintptr_t seg[2])
{
    path_of_t p = {(uintptr_t)addr, NULL, {0, 0}};
    dl_iterate_phdr(find_path, &p);
    if (seg) {
        seg[0] = p.seg[0];
        seg[1] = p.seg[1];
    }
    return p.path;
}
