/* cw_report_text.c - the human-readable report of `heapscope core`. */
#include <inttypes.h>
#include <stdlib.h>

#include "cw.h"
#include "cw_report.h"

#define U(x) ((unsigned long long)(x))

/* "SIGABRT" for 6, "6" for a number without a name here. */
static const char *sigabbrev(int sig)
{
    static const char *n[32] = {NULL, "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT",
                                "SIGBUS", "SIGFPE", "SIGKILL", "SIGUSR1", "SIGSEGV", "SIGUSR2", "SIGPIPE",
                                "SIGALRM", "SIGTERM", "SIGSTKFLT", "SIGCHLD", "SIGCONT", "SIGSTOP",
                                "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG", "SIGXCPU", "SIGXFSZ",
                                "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO", "SIGPWR", "SIGSYS"};
    static char buf[16];
    if (sig > 0 && sig < 32)
        return n[sig];
    snprintf(buf, sizeof buf, "%d", sig);
    return buf;
}

static void layout(FILE *o, const cw_walk_t *w)
{
    const cw_layout_t *l = &w->lay;
    const cw_core_t *c = w->core;
    if (c->live)
        fprintf(o, "process %d '%s' (live, stopped while its memory was copied)\n", c->proc_pid, c->command);
    else if (c->proc_pid || c->command[0])
        fprintf(o, "core of process %d '%s'%s%s\n", c->proc_pid, c->command, c->signo ? ", signal " : "",
                c->signo ? sigabbrev(c->signo) : "");
    if (l->version_from)
        fprintf(o, "glibc %d.%d (version string in %s)\n", l->glibc_major, l->glibc_minor,
                l->version_from == CW_VERSION_MEMORY ? "the process's memory" : "libc's file, same build-id");
    else
        fprintf(o, "glibc version unknown (libc's version string is neither in the core nor in a libc file "
                   "of the same build-id)\n");
    fprintf(o, "glibc malloc: main_arena %#llx (found by %s), mp_ ", U(l->main_arena),
            l->found_by_symbols ? "libc symbols" : "structure");
    if (l->have_mp)
        fprintf(o, "%#llx\n", U(l->mp));
    else
        fprintf(o, "not found (mmapped figures from the chunks found)\n");
    fprintf(o, "  tcache %s, safe-linking %s, ", l->tcache ? "yes" : "no",
            l->safe_linking < 0 ? "unknown (no free list entry)" : l->safe_linking ? "yes" : "no");
    if (l->heap_info_size)
        fprintf(o, "heap_info %d bytes, ", l->heap_info_size);
    else
        fprintf(o, "heap_info unknown (no thread arena), ");
    fprintf(o, "mp_ %s\n", !l->have_mp ? "layout unknown" : l->mp_hp_fields ? "with hugepage fields (2.35+)"
                                                                       : "without hugepage fields (<= 2.34)");
}

static void summary(FILE *o, const cw_walk_t *w)
{
    uint64_t n[CW_NCLASS], b[CW_NCLASS];
    cw_report_classes(w, -1, n, b);
    uint64_t sys = 0, maxsys = 0;
    for (size_t i = 0; i < w->narenas; i++) {
        sys += w->arenas[i].system_mem;
        maxsys += w->arenas[i].max_system_mem;
    }
    fprintf(o, "\narenas: %zu   heaps: %zu   threads: %zu\n", w->narenas, w->nheaps, w->core->nthreads);
    fprintf(o, "system memory: %llu bytes (high-water %llu), mmapped: %lld chunks, %llu bytes (high-water %llu)\n",
            U(sys), U(maxsys), (long long)w->lay.n_mmaps, U(w->lay.mmapped_mem), U(w->lay.max_mmapped_mem));
    fprintf(o, "\n%-14s %10s %14s\n", "class", "chunks", "bytes");
    for (int k = 0; k < CW_NCLASS; k++)
        fprintf(o, "%-14s %10llu %14llu\n", cw_class_name((cw_class_t)k), U(n[k]), U(b[k]));
    for (size_t i = 0; i < w->narenas; i++) {
        const cw_arena_t *a = &w->arenas[i];
        cw_report_classes(w, (int)i, n, b);
        uint64_t un = n[CW_INUSE] + n[CW_TCACHE_STRUCT], ub = b[CW_INUSE] + b[CW_TCACHE_STRUCT];
        uint64_t fn = 0, fb = 0;
        for (int k = CW_TCACHE; k <= CW_TOP; k++) {
            fn += n[k];
            fb += b[k];
        }
        fprintf(o, "arena %zu %s%#llx: in use %llu chunks %llu bytes, free %llu chunks %llu bytes "
                   "(top %llu), system %llu (high-water %llu)\n",
                i, i ? "" : "(main) ", U(a->addr), U(un), U(ub), U(fn), U(fb), U(a->topsize),
                U(a->system_mem), U(a->max_system_mem));
    }
    cw_mallinfo_t mi;
    cw_report_mallinfo(w, &mi);
    fprintf(o, "\nmallinfo2: arena %llu ordblks %llu smblks %llu hblks %llu hblkhd %llu usmblks %llu "
               "fsmblks %llu uordblks %llu fordblks %llu keepcost %llu\n",
            U(mi.arena), U(mi.ordblks), U(mi.smblks), U(mi.hblks), U(mi.hblkhd), U(mi.usmblks),
            U(mi.fsmblks), U(mi.uordblks), U(mi.fordblks), U(mi.keepcost));
}

static void frag(FILE *o, const cw_walk_t *w, const cw_frag_t *f)
{
    fprintf(o, "\nfragmentation:\n");
    for (int k = CW_TCACHE; k <= CW_TOP; k++)
        fprintf(o, "  free in %-10s %14llu bytes\n", cw_class_name((cw_class_t)k), U(f->free_by_class[k]));
    fprintf(o, "  total free %llu, largest free chunk %llu, fragmentation (1 - largest/total) %.4f\n",
            U(f->total_free), U(f->largest_free),
            f->total_free ? 1.0 - (double)f->largest_free / (double)f->total_free : 0.0);
    fprintf(o, "  footprint %llu bytes over %llu in use: %.3f\n", U(f->footprint), U(f->inuse_bytes),
            f->inuse_bytes ? (double)f->footprint / (double)f->inuse_bytes : 0.0);
    fprintf(o, "  free chunk sizes (top excluded):\n");
    for (int b = 0; b < 40; b++)
        if (f->hist[b])
            fprintf(o, "    [%llu, %llu) %10llu chunks %14llu bytes\n", U(1ull << b), U(2ull << b),
                    U(f->hist[b]), U(f->hist_bytes[b]));
    for (size_t h = 0; h < w->nheaps; h++)
        if (f->pinned_bytes && f->pinned_bytes[h])
            fprintf(o, "  heap %#llx (arena %d): %llu free bytes pinned below the live chunk %#llx (size %llu)\n",
                    U(w->heaps[h].start), w->heaps[h].arena, U(f->pinned_bytes[h]), U(f->pin_addr[h]),
                    U(f->pin_size[h]));
}

static void leaks(FILE *o, const cw_walk_t *w, const cw_leaks_t *l)
{
    fprintf(o, "\nleak candidates: definitely lost %zu chunks %llu bytes, indirectly lost %zu chunks "
               "%llu bytes, reachable %zu chunks\n",
            l->direct, U(l->direct_bytes), l->indirect, U(l->indirect_bytes), l->reachable);
    cw_leakgroup_t *g;
    size_t n = cw_report_leakgroups(w, &g);
    for (size_t i = 0; i < n; i++)
        fprintf(o, "  %-10s %6llu x %8llu bytes  first word 0x%016llx %s (e.g. %#llx)\n",
                g[i].kind == CW_LEAK_DIRECT ? "definite" : "indirect", U(g[i].count), U(g[i].size),
                U(g[i].first_word), g[i].label, U(g[i].example));
    free(g);
}

static void chunks(FILE *o, const cw_walk_t *w)
{
    static const char *lk[] = {"", "reachable", "definite", "indirect"};
    fprintf(o, "\n%-18s %10s %-14s %5s %s\n", "chunk", "size", "class", "arena", "leak");
    for (size_t i = 0; i < w->nchunks; i++) {
        const cw_chunk_t *c = &w->chunks[i];
        fprintf(o, "%#18llx %10llu %-14s %5d %s\n", U(c->addr), U(c->size), cw_class_name((cw_class_t)c->cls),
                c->arena, lk[c->leak & 3]);
    }
}

/* Prints the selected views of the walk in text. */
void cw_report_text(FILE *o, cw_walk_t *w, int views, const cw_frag_t *f, const cw_leaks_t *l)
{
    layout(o, w);
    if (views & CW_VIEW_SUMMARY)
        summary(o, w);
    if (views & CW_VIEW_FRAG)
        frag(o, w, f);
    if (views & CW_VIEW_LEAKS)
        leaks(o, w, l);
    if (views & CW_VIEW_CHUNKS)
        chunks(o, w);
    if (w->nproblems) {
        fprintf(o, "\nproblems met (%zu):\n", w->nproblems);
        for (size_t i = 0; i < w->nproblems; i++)
            fprintf(o, "  %s\n", w->problems[i]);
    }
}
