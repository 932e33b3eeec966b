/* ab_svg.c - one bar chart per measure, readable in any browser: one group
 * of bars per workload (an SVG <g class="workload">), one bar per allocator
 * in a fixed colour (the median), a whisker from the fastest to the
 * slowest repetition, a linear y axis from 0 and a legend.  Each group's
 * own scale would hide differences between workloads of different size, so
 * the axis is shared; the CSV has the exact numbers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "allocbench/ab_measures.h"
#include "allocbench/ab_output.h"
#include "allocbench/ab_stats.h"

static const char *const colours[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                      "#76b7b2", "#edc948", "#b07aa1", "#9c755f"};
#define NCOLOURS (sizeof colours / sizeof colours[0])

/* Write text with the five XML special characters escaped. */
static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++)
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default: fputc(*s, f);
        }
}

/* A round tick step (1, 2 or 5 times a power of ten) giving at most 5
 * ticks up to vmax. */
static double tick_step(double vmax)
{
    double raw = vmax / 5, p = 1;
    while (p * 10 <= raw)
        p *= 10;
    while (p > raw)
        p /= 10;
    return raw <= p ? p : raw <= 2 * p ? 2 * p : raw <= 5 * p ? 5 * p : 10 * p;
}

/* Write the chart of measure m to path; 0, or -1 with errno. */
static int chart(const ab_set_t *s, int m, const char *path)
{
    const double bar = 18, gap = 28, left = 80, top = 50, plot_h = 260, legend_w = 150;
    double group_w = bar * (double)s->na + gap;
    double plot_w = group_w * (double)s->nw;
    double width = left + plot_w + legend_w + 20, height = top + plot_h + 90;
    if (width < 720) /* room for the title */
        width = 720;
    double vmax = 0;
    for (size_t w = 0; w < s->nw; w++)
        for (size_t a = 0; a < s->na; a++) {
            ab_spread_t sp = ab_measure_spread(s, w, a, m);
            if (sp.n && sp.max > vmax)
                vmax = sp.max;
        }
    if (vmax <= 0)
        vmax = 1;
    double step = tick_step(vmax);
    int nticks = (int)(vmax / step + 0.999999);
    vmax = step * nticks; /* the axis ends on a tick */
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    const ab_measure_t *me = &ab_measures[m];
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n",
            width, height, width, height);
    fprintf(f, "<title>%s</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            me->title);
    fprintf(f, "<text x=\"%.0f\" y=\"24\" font-size=\"16\">%s%s%s%s (median of %zu, whiskers "
               "min-max)</text>\n",
            left, me->title, *me->unit ? " [" : "", me->unit, *me->unit ? "]" : "", s->nrep);
    fprintf(f, "<g class=\"axis\">\n");
    for (int t = 0; t <= nticks; t++) {
        double v = step * t, y = top + plot_h - plot_h * v / vmax;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
                left, y, left + plot_w, y);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.*f</text>\n", left - 6, y + 4,
                step >= 1 ? 0 : step >= 0.1 ? 1 : step >= 0.01 ? 2 : 4, v);
    }
    fprintf(f, "</g>\n");
    for (size_t w = 0; w < s->nw; w++) {
        double x0 = left + group_w * (double)w + gap / 2;
        fprintf(f, "<g class=\"workload\" data-workload=\"");
        xml_text(f, s->w[w].name);
        fprintf(f, "\">\n");
        for (size_t a = 0; a < s->na; a++) {
            ab_spread_t sp = ab_measure_spread(s, w, a, m);
            if (!sp.n)
                continue;
            double x = x0 + bar * (double)a, h = plot_h * sp.median / vmax;
            fprintf(f, "<rect class=\"bar\" data-allocator=\"");
            xml_text(f, s->a[a].name);
            fprintf(f, "\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
                       "<title>",
                    x, top + plot_h - h, bar - 2, h, colours[a % NCOLOURS]);
            xml_text(f, s->a[a].name);
            fprintf(f, ": %g (min %g, max %g)</title></rect>\n", sp.median, sp.min, sp.max);
            double y1 = top + plot_h - plot_h * sp.min / vmax;
            double y2 = top + plot_h - plot_h * sp.max / vmax;
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n",
                    x + (bar - 2) / 2, y1, x + (bar - 2) / 2, y2);
        }
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" transform=\"rotate(-35 %.1f "
                   "%.1f)\">",
                x0 + group_w / 2, top + plot_h + 16, x0 + group_w / 2, top + plot_h + 16);
        xml_text(f, s->w[w].name);
        fprintf(f, "</text>\n</g>\n");
    }
    fprintf(f, "<g class=\"legend\">\n");
    for (size_t a = 0; a < s->na; a++) {
        double y = top + 18 * (double)a;
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>\n",
                left + plot_w + 16, y, colours[a % NCOLOURS]);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", left + plot_w + 34, y + 10);
        xml_text(f, s->a[a].name);
        fprintf(f, "</text>\n");
    }
    fprintf(f, "</g>\n</svg>\n");
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        if (!errno)
            errno = EIO;
        return -1;
    }
    return 0;
}

int ab_svg_write(const ab_set_t *s, const char *dir, char *err, size_t errsz)
{
    if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
        snprintf(err, errsz, "cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    int files = 0;
    for (int m = 0; m < AB_M_COUNT; m++) {
        int any = 0;
        for (size_t i = 0; i < s->nrep * s->nw * s->na && !any; i++)
            any = s->done[i] && ab_measure_value(&s->r[i], m) >= 0;
        if (!any)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.svg", dir, ab_measures[m].key);
        if (chart(s, m, path) < 0) {
            snprintf(err, errsz, "cannot write %s: %s", path, strerror(errno));
            return -1;
        }
        files++;
    }
    return files;
}
