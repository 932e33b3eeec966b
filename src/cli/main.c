/* main.c - the `heapscope` command: dispatches to a subcommand.
 *
 * heapscope run [OPTIONS] -- PROG ARGS...   profile a program (cli_run.c)
 * heapscope report [OPTIONS] FILE           read a profile (src/analyse)
 */
#include <stdio.h>
#include <string.h>

#include "analyse/an_cmd.h"
#include "cli/cli.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: heapscope COMMAND [OPTIONS] ...\n"
            "\n"
            "commands:\n"
            "  run [-o FILE] [--unwind fp|dwarf|libunwind] [--depth N] [--interval MS] -- PROG ARGS...\n"
            "                 run PROG under the heap profiler and write a profile\n"
            "  report [--json] [--top N] FILE\n"
            "                 summary and top allocation stacks of a profile\n"
            "\n"
            "`heapscope COMMAND --help` describes a command; `man heapscope` has it all.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "run"))
        return cli_run_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "report"))
        return an_report_main(argc - 1, argv + 1);
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
