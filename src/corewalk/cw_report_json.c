/* cw_report_json.c - `heapscope core --json`: one object (see docs/CORE.md):
 *   glibc        where the state was found and the layout features
 *   summary      arenas, per-class chunk counts and bytes, system memory
 *   arenas       the same per arena
 *   mallinfo2    glibc's field names and values
 *   fragmentation, leaks (+ leak_groups), chunks: with their views
 *   problems     corruption met
 */
#include <stdlib.h>

#include "cw.h"
#include "cw_report.h"

#define U(x) ((unsigned long long)(x))

static void classes(FILE *o, const cw_walk_t *w, int ai)
{
    uint64_t n[CW_NCLASS], b[CW_NCLASS];
    cw_report_classes(w, ai, n, b);
    fprintf(o, "{");
    for (int k = 0; k < CW_NCLASS; k++)
        fprintf(o, "%s\"%s\": {\"chunks\": %llu, \"bytes\": %llu}", k ? ", " : "",
                cw_class_name((cw_class_t)k), U(n[k]), U(b[k]));
    fprintf(o, "}");
}

static void json_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(o, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(o, "\\u%04x", ch);
        else
            fputc(ch, o);
    }
    fputc('"', o);
}

/* Prints the selected views of the walk as one JSON object. */
void cw_report_json(FILE *o, cw_walk_t *w, int views, const cw_frag_t *f, const cw_leaks_t *l)
{
    const cw_layout_t *lay = &w->lay;
    const cw_core_t *core = w->core;
    fprintf(o, "{\"process\": {\"pid\": %d, \"command\": ", core->proc_pid);
    json_str(o, core->command);
    if (core->signo)
        fprintf(o, ", \"signal\": %d", core->signo);
    else
        fprintf(o, ", \"signal\": null");
    fprintf(o, ", \"live\": %s},\n ", core->live ? "true" : "false");
    if (lay->version_from)
        fprintf(o, "\"glibc\": {\"version\": \"%d.%d\", \"version_from\": \"%s\", ", lay->glibc_major,
                lay->glibc_minor, lay->version_from == CW_VERSION_MEMORY ? "memory" : "file");
    else
        fprintf(o, "\"glibc\": {\"version\": null, \"version_from\": null, ");
    fprintf(o, "\"main_arena\": %llu, \"mp\": %llu, \"found_by\": \"%s\", \"tcache\": %s, "
               "\"safe_linking\": %s, \"heap_info_size\": %d, \"mp_hugepage_fields\": %s},\n",
            U(lay->main_arena), U(lay->mp), lay->found_by_symbols ? "symbols" : "structure",
            lay->tcache ? "true" : "false",
            lay->safe_linking < 0 ? "null" : lay->safe_linking ? "true" : "false", lay->heap_info_size,
            lay->mp_hp_fields ? "true" : "false");
    uint64_t sys = 0, maxsys = 0;
    for (size_t i = 0; i < w->narenas; i++) {
        sys += w->arenas[i].system_mem;
        maxsys += w->arenas[i].max_system_mem;
    }
    fprintf(o, " \"summary\": {\"arenas\": %zu, \"heaps\": %zu, \"threads\": %zu, \"system_mem\": %llu, "
               "\"max_system_mem\": %llu, \"mmapped_chunks\": %lld, \"mmapped_mem\": %llu, "
               "\"max_mmapped_mem\": %llu, \"classes\": ",
            w->narenas, w->nheaps, w->core->nthreads, U(sys), U(maxsys), (long long)lay->n_mmaps,
            U(lay->mmapped_mem), U(lay->max_mmapped_mem));
    classes(o, w, -1);
    fprintf(o, "},\n \"arenas\": [");
    for (size_t i = 0; i < w->narenas; i++) {
        const cw_arena_t *a = &w->arenas[i];
        fprintf(o, "%s\n  {\"address\": %llu, \"main\": %s, \"top\": %llu, \"top_size\": %llu, "
                   "\"system_mem\": %llu, \"max_system_mem\": %llu, \"classes\": ",
                i ? "," : "", U(a->addr), i ? "false" : "true", U(a->top), U(a->topsize),
                U(a->system_mem), U(a->max_system_mem));
        classes(o, w, (int)i);
        fprintf(o, "}");
    }
    cw_mallinfo_t mi;
    cw_report_mallinfo(w, &mi);
    fprintf(o, "],\n \"mallinfo2\": {\"arena\": %llu, \"ordblks\": %llu, \"smblks\": %llu, \"hblks\": %llu, "
               "\"hblkhd\": %llu, \"usmblks\": %llu, \"fsmblks\": %llu, \"uordblks\": %llu, "
               "\"fordblks\": %llu, \"keepcost\": %llu}",
            U(mi.arena), U(mi.ordblks), U(mi.smblks), U(mi.hblks), U(mi.hblkhd), U(mi.usmblks),
            U(mi.fsmblks), U(mi.uordblks), U(mi.fordblks), U(mi.keepcost));
    if (views & CW_VIEW_FRAG) {
        fprintf(o, ",\n \"fragmentation\": {\"free_bytes\": {");
        for (int k = CW_TCACHE; k <= CW_TOP; k++)
            fprintf(o, "%s\"%s\": %llu", k > CW_TCACHE ? ", " : "", cw_class_name((cw_class_t)k),
                    U(f->free_by_class[k]));
        fprintf(o, "}, \"total_free\": %llu, \"largest_free\": %llu, \"fragmentation\": %.6f, "
                   "\"footprint\": %llu, \"in_use_bytes\": %llu, \"footprint_over_in_use\": %.6f, \"histogram\": [",
                U(f->total_free), U(f->largest_free),
                f->total_free ? 1.0 - (double)f->largest_free / (double)f->total_free : 0.0,
                U(f->footprint), U(f->inuse_bytes),
                f->inuse_bytes ? (double)f->footprint / (double)f->inuse_bytes : 0.0);
        int first = 1;
        for (int b = 0; b < 40; b++)
            if (f->hist[b]) {
                fprintf(o, "%s{\"min\": %llu, \"max\": %llu, \"chunks\": %llu, \"bytes\": %llu}",
                        first ? "" : ", ", U(1ull << b), U(2ull << b), U(f->hist[b]), U(f->hist_bytes[b]));
                first = 0;
            }
        fprintf(o, "], \"pinned\": [");
        first = 1;
        for (size_t h = 0; h < w->nheaps; h++) {
            fprintf(o, "%s{\"heap\": %llu, \"arena\": %d, \"pinned_bytes\": %llu, \"pinned_by\": "
                       "{\"address\": %llu, \"size\": %llu}}",
                    first ? "" : ", ", U(w->heaps[h].start), w->heaps[h].arena,
                    U(f->pinned_bytes ? f->pinned_bytes[h] : 0), U(f->pin_addr ? f->pin_addr[h] : 0),
                    U(f->pin_size ? f->pin_size[h] : 0));
            first = 0;
        }
        fprintf(o, "]}");
    }
    if (views & CW_VIEW_LEAKS) {
        fprintf(o, ",\n \"leak_summary\": {\"definite_chunks\": %zu, \"definite_bytes\": %llu, "
                   "\"indirect_chunks\": %zu, \"indirect_bytes\": %llu, \"reachable_chunks\": %zu},\n \"leaks\": [",
                l->direct, U(l->direct_bytes), l->indirect, U(l->indirect_bytes), l->reachable);
        int first = 1;
        for (size_t i = 0; i < w->nchunks; i++) {
            const cw_chunk_t *c = &w->chunks[i];
            if (c->leak != CW_LEAK_DIRECT && c->leak != CW_LEAK_INDIRECT)
                continue;
            uint64_t fw = 0;
            cw_mem_u64(w->core, c->addr + 16, &fw);
            fprintf(o, "%s\n  {\"address\": %llu, \"size\": %llu, \"kind\": \"%s\", \"first_word\": %llu}",
                    first ? "" : ",", U(c->addr + 16), U(c->size),
                    c->leak == CW_LEAK_DIRECT ? "definite" : "indirect", U(fw));
            first = 0;
        }
        fprintf(o, "],\n \"leak_groups\": [");
        cw_leakgroup_t *g;
        size_t n = cw_report_leakgroups(w, &g);
        for (size_t i = 0; i < n; i++) {
            fprintf(o, "%s\n  {\"kind\": \"%s\", \"size\": %llu, \"count\": %llu, \"bytes\": %llu, "
                       "\"first_word\": %llu, \"example\": %llu, \"label\": ",
                    i ? "," : "", g[i].kind == CW_LEAK_DIRECT ? "definite" : "indirect", U(g[i].size),
                    U(g[i].count), U(g[i].bytes), U(g[i].first_word), U(g[i].example));
            json_str(o, g[i].label);
            fprintf(o, "}");
        }
        free(g);
        fprintf(o, "]");
    }
    if (views & CW_VIEW_CHUNKS) {
        static const char *lk[] = {"", "reachable", "definite", "indirect"};
        fprintf(o, ",\n \"chunks\": [");
        for (size_t i = 0; i < w->nchunks; i++) {
            const cw_chunk_t *c = &w->chunks[i];
            fprintf(o, "%s\n  {\"address\": %llu, \"size\": %llu, \"class\": \"%s\", \"arena\": %d, \"leak\": \"%s\"}",
                    i ? "," : "", U(c->addr), U(c->size), cw_class_name((cw_class_t)c->cls), c->arena,
                    lk[c->leak & 3]);
        }
        fprintf(o, "]");
    }
    fprintf(o, ",\n \"problems\": [");
    for (size_t i = 0; i < w->nproblems; i++) {
        fprintf(o, "%s", i ? ", " : "");
        json_str(o, w->problems[i]);
    }
    fprintf(o, "]}\n");
}
