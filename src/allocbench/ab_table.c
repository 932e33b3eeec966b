/* ab_table.c - the terminal table: is this allocator faster or smaller than
 * glibc on this workload?  Ratios answer that at a glance; the baseline's
 * absolute figures keep the ratios honest (2x of 1 ms is noise). */
#include <stdlib.h>
#include <string.h>

#include "allocbench/ab_measures.h"
#include "allocbench/ab_output.h"
#include "allocbench/ab_stats.h"

/* Verification over the repetitions: "yes" if all verified, "NO" if any
 * used another malloc, "unknown" otherwise. */
static const char *verified_of(const ab_set_t *s, size_t w, size_t a)
{
    int yes = 0, no = 0, runs = 0;
    for (size_t rep = 0; rep < s->nrep; rep++) {
        size_t i = ab_set_index(s, rep, w, a);
        if (!s->done[i])
            continue;
        runs++;
        yes += s->r[i].verified == 1;
        no += s->r[i].verified == 0;
    }
    return no ? "NO" : runs && yes == runs ? "yes" : "unknown";
}

/* The columns, in order; system calls and fragmentation are absolute on every line. */
static const int shown[] = {AB_M_WALL, AB_M_USER, AB_M_SYS, AB_M_PEAK_RSS, AB_M_MINFLT,
                            AB_M_RSS_AFTER, AB_M_MMAP, AB_M_MUNMAP, AB_M_MADVISE, AB_M_BRK,
                            AB_M_FRAG};
static const char *const heads[] = {"wall", "user", "sys", "peak RSS", "minflt", "after free",
                                    "mmap", "munmap", "madvise", "brk", "frag"};
#define NSHOWN (sizeof shown / sizeof shown[0])

/* Absolute figure of measure m: seconds with 3 decimals, KiB, counts. */
static void fmt_abs(char *buf, size_t cap, int m, const ab_spread_t *sp)
{
    if (sp->n == 0)
        snprintf(buf, cap, "n/a");
    else if (m == AB_M_WALL)
        snprintf(buf, cap, "%.3fs [%.3f-%.3f]", sp->median, sp->min, sp->max);
    else if (m == AB_M_USER || m == AB_M_SYS)
        snprintf(buf, cap, "%.3fs", sp->median);
    else if (m == AB_M_PEAK_RSS || m == AB_M_RSS_AFTER)
        snprintf(buf, cap, "%.0f KiB", sp->median);
    else if (m == AB_M_FRAG)
        snprintf(buf, cap, "%.2f", sp->median);
    else
        snprintf(buf, cap, "%.0f", sp->median);
}

/* Ratio of measure m to the baseline median; the spread too for wall. */
static void fmt_ratio(char *buf, size_t cap, int m, const ab_spread_t *sp, const ab_spread_t *base)
{
    if (sp->n == 0)
        snprintf(buf, cap, "n/a");
    else if (base->n == 0 || base->median <= 0)
        fmt_abs(buf, cap, m, sp);
    else if (m == AB_M_WALL)
        snprintf(buf, cap, "%.2fx [%.2f-%.2f]", sp->median / base->median, sp->min / base->median,
                 sp->max / base->median);
    else
        snprintf(buf, cap, "%.2fx", sp->median / base->median);
}

void ab_table_print(const ab_set_t *s, FILE *out)
{
    size_t base = 0;
    for (size_t a = 0; a < s->na; a++)
        if (!strcmp(s->a[a].name, "glibc")) {
            base = a;
            break;
        }
    int present[NSHOWN];
    for (size_t k = 0; k < NSHOWN; k++) {
        present[k] = 0;
        for (size_t i = 0; i < s->nrep * s->nw * s->na; i++)
            if (s->done[i] && ab_measure_value(&s->r[i], shown[k]) >= 0)
                present[k] = 1;
    }
    fprintf(out, "Medians of %zu run%s; %s's line is absolute, the others are ratios to it "
                 "(below 1: faster or smaller);\nsystem call counts and fragmentation are absolute.\n",
            s->nrep, s->nrep == 1 ? "" : "s", s->a[base].name);
    for (size_t w = 0; w < s->nw; w++) {
        fprintf(out, "\n%s\n  %-10s", s->w[w].name, "allocator");
        for (size_t k = 0; k < NSHOWN; k++)
            if (present[k])
                fprintf(out, " %-*s", shown[k] == AB_M_WALL ? 22 : 11, heads[k]);
        fprintf(out, " verified\n");
        for (size_t a = 0; a < s->na; a++) {
            fprintf(out, "  %-10s", s->a[a].name);
            for (size_t k = 0; k < NSHOWN; k++) {
                if (!present[k])
                    continue;
                char cell[64];
                ab_spread_t sp = ab_measure_spread(s, w, a, shown[k]);
                ab_spread_t bs = ab_measure_spread(s, w, base, shown[k]);
                /* counts and the fragmentation ratio read better as they are */
                int absolute = shown[k] >= AB_M_BRK;
                if (a == base || absolute)
                    fmt_abs(cell, sizeof cell, shown[k], &sp);
                else
                    fmt_ratio(cell, sizeof cell, shown[k], &sp, &bs);
                fprintf(out, " %-*s", shown[k] == AB_M_WALL ? 22 : 11, cell);
            }
            fprintf(out, " %s\n", verified_of(s, w, a));
        }
    }
    fprintf(out, "\nAllocators:\n");
    for (size_t a = 0; a < s->na; a++)
        fprintf(out, "  %-10s %s (%s)\n", s->a[a].name, s->a[a].path, s->a[a].version);
}
