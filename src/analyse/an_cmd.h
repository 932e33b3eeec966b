/* an_cmd.h - the analyser's entry points for the `heapscope` command
 * (src/cli/main.c and src/cli/cli_run.c). */
#ifndef AN_CMD_H
#define AN_CMD_H

#include <stdio.h>

/* `heapscope report [VIEW] [FILTERS] [--json] [--top N] [--help] FILE`;
 * argv[0] is "report".  VIEW is one of --leaks, --peak, --temporary,
 * --histogram, --timeline, --tree, --mprof (docs/REPORTS.md); without one
 * the summary report.  Prints the report on stdout.  Returns the exit status: 0 success, 1 the
 * profile cannot be read (message on stderr), 2 bad usage. */
int an_report_main(int argc, char **argv);

/* Print a short (4-6 line) summary of the profile at `path` to `out`, for
 * `heapscope run` once the program has exited:
 *   heapscope: 1,234 allocations (56.0 KiB), 1,200 frees, peak 12.0 KiB at 3.1 ms
 *   heapscope: leaked 1.0 KiB in 34 blocks, 800 temporary allocations (64.8%)
 *   heapscope: profile: PATH
 *   heapscope: see `heapscope report PATH`
 * Returns 0, or a negative PF_E* code after printing why on stderr. */
int an_run_summary(const char *path, FILE *out);

#endif
