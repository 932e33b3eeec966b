/* ab_csv.c - every run as one CSV row, for spreadsheets and scripts.
 * Columns: workload, allocator, allocator_path, allocator_version,
 * verified (yes/no/unknown), malloc_from (where the run's malloc resolved),
 * repetition (1-based), threads, scale (as given to bench), ops (the
 * workload's own count of operations), then one column per measure
 * (ab_measures.c order); "n/a" where a measure was not taken. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "allocbench/ab_measures.h"
#include "allocbench/ab_output.h"

/* Write `v` as one CSV field (RFC 4180 quoting when needed). */
static void field(FILE *f, const char *v, int last)
{
    if (strpbrk(v, ",\"\n\r")) {
        fputc('"', f);
        for (const char *p = v; *p; p++) {
            if (*p == '"')
                fputc('"', f);
            fputc(*p, f);
        }
        fputc('"', f);
    } else {
        fputs(v, f);
    }
    fputc(last ? '\n' : ',', f);
}

int ab_csv_write(const ab_set_t *s, const char *path, const char *threads, const char *scale)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs("workload,allocator,allocator_path,allocator_version,verified,malloc_from,repetition,"
          "threads,scale,ops",
          f);
    for (int m = 0; m < AB_M_COUNT; m++)
        fprintf(f, ",%s", ab_measures[m].key);
    fputc('\n', f);
    for (size_t rep = 0; rep < s->nrep; rep++)
        for (size_t w = 0; w < s->nw; w++)
            for (size_t a = 0; a < s->na; a++) {
                size_t i = ab_set_index(s, rep, w, a);
                if (!s->done[i])
                    continue;
                const ab_result_t *r = &s->r[i];
                char buf[64];
                field(f, s->w[w].name, 0);
                field(f, s->a[a].name, 0);
                field(f, s->a[a].path, 0);
                field(f, s->a[a].version, 0);
                field(f, r->verified == 1 ? "yes" : r->verified == 0 ? "no" : "unknown", 0);
                field(f, r->malloc_from, 0);
                snprintf(buf, sizeof buf, "%zu", rep + 1);
                field(f, buf, 0);
                field(f, threads ? threads : "", 0);
                field(f, scale ? scale : "", 0);
                if (r->ops >= 0)
                    snprintf(buf, sizeof buf, "%ld", r->ops);
                else
                    snprintf(buf, sizeof buf, "n/a");
                field(f, buf, 0);
                for (int m = 0; m < AB_M_COUNT; m++) {
                    double v = ab_measure_value(r, m);
                    if (v < 0)
                        snprintf(buf, sizeof buf, "n/a");
                    else if (ab_measures[m].is_int)
                        snprintf(buf, sizeof buf, "%.0f", v);
                    else
                        snprintf(buf, sizeof buf, "%.6f", v);
                    field(f, buf, m == AB_M_COUNT - 1);
                }
            }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        if (!errno)
            errno = EIO;
        return -1;
    }
    return 0;
}
