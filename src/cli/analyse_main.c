/* analyse_main.c - `heapscope-analyse`, the analyser behind the
 * `heapscope` command: dispatches to a subcommand.  The launcher
 * (launch.c) execs it, with the same arguments, for everything but `run`.
 *
 * Each subcommand is one entry of `commands` below: its name, its entry
 * point (argv[0] is the subcommand's name; it returns the exit status) and
 * the lines `heapscope --help` prints for it.  The entry points live with
 * their code: `run` in cli_run.c (here too, so that this binary alone is a
 * whole `heapscope`), the reports and pictures in src/analyse, `core` in
 * src/corewalk, `bench` in src/allocbench.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocbench/ab_cmd.h"
#include "analyse/an_cmd.h"
#include "analyse/an_diff.h"
#include "analyse/an_export.h"
#include "analyse/an_flame.h"
#include "analyse/an_html.h"
#include "cli/cli.h"
#include "corewalk/cw_cmd.h"

typedef struct cli_command {
    const char *name;
    int (*main)(int argc, char **argv);
    const char *help; /* synopsis line(s), then a one-line description */
} cli_command_t;

static const cli_command_t commands[] = {
    {"run", cli_run_main,
     "run [-o FILE] [--unwind fp|dwarf|libunwind] [--depth N] [--interval MS] -- PROG ARGS...\n"
     "                 run PROG under the heap profiler and write a profile"},
    {"report", an_report_main,
     "report [--json] [--top N] FILE\n"
     "                 summary and top allocation stacks of a profile"},
    {"diff", an_diff_main,
     "diff [--sort allocations|bytes|leaked|peak] [--top N] [--json] A B\n"
     "                 what changed per stack from profile A to profile B"},
    {"bench", ab_main,
     "bench [--allocators glibc,jemalloc,tcmalloc,mimalloc|PATH,...] [--repeat N] [--csv FILE]\n"
     "                 [--svg DIR] [WORKLOAD...] [-- COMMAND ARGS...]; bench --list\n"
     "                 compare malloc implementations on workloads"},
    {"flamegraph", an_flame_main,
     "flamegraph [--cost allocations|bytes|leaked|peak|temporary] [--reverse] [--title T]\n"
     "                 [--width PX] -o OUT.svg FILE\n"
     "                 interactive SVG flamegraph of a profile"},
    {"html", an_html_main,
     "html [--title T] -o OUT.html FILE\n"
     "                 self-contained interactive HTML report of a profile"},
    {"core", cw_main,
     "core [--json] [--summary] [--fragmentation] [--leaks] [--chunks] [--no-symbols] (CORE | --pid PID)\n"
     "                 glibc heap of a core file or a stopped live process: arenas, mallinfo2,\n"
     "                 fragmentation, leak candidates"},
    {"export", an_export_main,
     "export --format pprof|folded|speedscope|massif|json [--cost C] [-o OUT] FILE\n"
     "                 write a profile for pprof, flamegraph.pl, speedscope or ms_print"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: heapscope COMMAND [OPTIONS] ...\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %s\n", commands[i].help);
    fprintf(out, "\n`heapscope COMMAND --help` describes a command; `man heapscope` has it all.\n");
}

/* The other processes' profiles, named after the summary: at most a few. */
#define FAMILY_NAMED 4

int cli_run_finish(const cli_run_end_t *end)
{
    char **family = NULL;
    size_t n = cli_finish_pack(end, &family);
    if (!end->quiet) {
        an_run_summary(end->path, stderr);
        if (n)
            fprintf(stderr, "heapscope: %zu more profile%s, of the processes it started:", n,
                    n == 1 ? "" : "s");
        for (size_t i = 0; i < n && i < FAMILY_NAMED; i++)
            fprintf(stderr, " %s%s", family[i], i + 1 < n && i + 1 < FAMILY_NAMED ? "," : "");
        if (n > FAMILY_NAMED)
            fprintf(stderr, " and %zu more", n - FAMILY_NAMED);
        if (n)
            fprintf(stderr, "\n");
    }
    cli_finish_free(family, n);
    return end->code;
}

/* A decimal number in [0, max], or -1. */
static long long number(const char *s, unsigned long long max)
{
    char *e;
    errno = 0;
    unsigned long long v = strtoull(s, &e, 10);
    return errno || e == s || *e || *s == '-' || v > max ? -1 : (long long)v;
}

/* `--run-finish PATH CODE summary|quiet [PID SINCE_NS PATTERN]`, from the
 * launcher's cli_run_finish. */
static int run_finish_main(int argc, char **argv)
{
    cli_run_end_t end = {0};
    long long code = argc == 4 || argc == 7 ? number(argv[2], 255) : -1;
    long long pid = argc == 7 ? number(argv[4], 0x7fffffff) : 0;
    long long since = argc == 7 ? number(argv[5], (unsigned long long)INT64_MAX) : 0;
    if (code < 0 || pid < 0 || since < 0 ||
        (strcmp(argv[3], "quiet") && strcmp(argv[3], "summary"))) {
        fprintf(stderr,
                "heapscope: usage: heapscope-analyse %s PATH EXIT-STATUS summary|quiet "
                "[PID SINCE-NS PATTERN]\n",
                CLI_RUN_FINISH_CMD);
        return 2;
    }
    end.path = argv[1];
    end.code = (int)code;
    end.quiet = !strcmp(argv[3], "quiet");
    end.pid = (long)pid;
    end.since_ns = (uint64_t)since;
    end.pattern = argc == 7 ? argv[6] : "";
    return cli_run_finish(&end);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, CLI_RUN_FINISH_CMD))
        return run_finish_main(argc - 1, argv + 1);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(cmd, commands[i].name))
            return commands[i].main(argc - 1, argv + 1);
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("heapscope %s\n", HEAPSCOPE_VERSION);
        return 0;
    }
    fprintf(stderr, "heapscope: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
