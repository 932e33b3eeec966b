/* an_export.c - `heapscope export`: option parsing, output opening and
 * the dispatch to one writer per format (an_export_<format>.c).
 *
 *   heapscope export --format pprof|folded|speedscope|massif|json
 *                    [--cost C] [-o OUT] FILE
 */
#include "analyse/an_export.h"

#include <errno.h>
#include <string.h>

static void an_export_usage(FILE *out)
{
    fprintf(out,
            "usage: heapscope export --format FORMAT [--cost COST] [-o OUT] FILE\n"
            "\n"
            "Write a heapscope profile in another tool's format (docs/EXPORTS.md).\n"
            "\n"
            "formats:\n"
            "  pprof        gzipped profile.proto (pprof, Pyroscope, Parca); binary, needs -o\n"
            "  folded       folded stacks 'root;...;leaf VALUE' (flamegraph.pl, inferno)\n"
            "  speedscope   speedscope's JSON file format, one profile per cost\n"
            "  massif       Valgrind massif's out file (ms_print, massif-visualizer)\n"
            "  json         the whole profile as JSON\n"
            "options:\n"
            "  --cost C     folded: allocations|bytes|leaked|peak|temporary (default bytes)\n"
            "  -o OUT       output file; '-' or none: standard output (text formats)\n"
            "  --help       show this help\n");
}

static int an_export_bad(const char *msg)
{
    fprintf(stderr, "heapscope export: %s\n", msg);
    an_export_usage(stderr);
    return 2;
}

int an_export_main(int argc, char **argv)
{
    const char *format = NULL, *path = NULL, *outpath = NULL;
    an_export_cost_t cost = AN_EXPORT_BYTES;
    int cost_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            an_export_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--format") || !strcmp(a, "-f")) {
            if (!next)
                return an_export_bad("--format needs one of pprof, folded, speedscope, massif, json");
            format = argv[++i];
        } else if (!strcmp(a, "--cost")) {
            if (an_export_cost_parse(next, &cost))
                return an_export_bad("--cost needs one of allocations, bytes, leaked, peak, temporary");
            cost_given = 1;
            i++;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (!next)
                return an_export_bad("-o needs a file name");
            outpath = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "heapscope export: unknown option '%s'\n", a);
            an_export_usage(stderr);
            return 2;
        } else if (path) {
            return an_export_bad("give one profile");
        } else
            path = a;
    }
    if (!format)
        return an_export_bad("no --format given");
    int fmt = -1;
    static const char *const formats[] = {"pprof", "folded", "speedscope", "massif", "json"};
    for (int k = 0; k < 5; k++)
        if (!strcmp(format, formats[k]))
            fmt = k;
    if (fmt < 0)
        return an_export_bad("unknown --format (pprof, folded, speedscope, massif, json)");
    if (cost_given && fmt != 1)
        return an_export_bad("--cost applies to --format folded only");
    if (!path)
        return an_export_bad("no profile given");
    int to_stdout = !outpath || !strcmp(outpath, "-");
    if (fmt == 0 && to_stdout)
        return an_export_bad("pprof output is binary: give -o OUT.pb.gz");

    an_report_t r;
    char err[PF_ERRMSG_SIZE];
    if (an_report_load(&r, path, err, sizeof err)) {
        fprintf(stderr, "heapscope export: %s: %s\n", path, err);
        an_report_close(&r);
        return 1;
    }
    FILE *out = to_stdout ? stdout : fopen(outpath, fmt == 0 ? "wb" : "w");
    if (!out) {
        fprintf(stderr, "heapscope export: cannot write %s: %s\n", outpath, strerror(errno));
        an_report_close(&r);
        return 1;
    }
    int rc;
    switch (fmt) {
    case 0: rc = an_export_pprof(&r, out); break;
    case 1: rc = an_export_folded(&r, cost, out); break;
    case 2: rc = an_export_speedscope(&r, out); break;
    case 3: rc = an_export_massif(&r, out); break;
    default: rc = an_export_json(&r, out); break;
    }
    if (fflush(out) || ferror(out))
        rc = rc ? rc : PF_EIO;
    if (!to_stdout && fclose(out))
        rc = rc ? rc : PF_EIO;
    if (rc == PF_ENOMEM)
        fprintf(stderr, "heapscope export: out of memory\n");
    else if (rc)
        fprintf(stderr, "heapscope export: cannot write %s\n", to_stdout ? "standard output" : outpath);
    an_report_close(&r);
    return rc ? 1 : 0;
}
