/* cli_finish.c - what `heapscope run` does with the run's profiles once
 * the program has exited: compress the started process's profile in place
 * (pf_pack.h: if it is final), then find the other processes' profiles
 * (cli_family.c) and compress each.
 *
 * Linked into both executables.  The launcher does it itself for a quiet
 * run (launch.c): exec'ing the analyser, to load its libraries, cost every
 * such run ~1.2 ms more (docs/BENCHMARKS.md, "The end of a run").  For a
 * run with a summary the analyser does it, then prints the summary
 * (analyse_main.c). */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "format/pf_pack.h"
#include "format/pf_reader.h"

/* Compress the profile at path in place if it is final; a failure is
 * said unless quiet. */
static void pack(const char *path, int quiet)
{
    char err[PF_ERRMSG_SIZE];
    int rc = pf_pack_file(path, err, sizeof err);
    /* a profile that does not read is the summary's to report (pf_pack
     * leaves it); a failed rewrite leaves it as it was, readable */
    if (rc < 0 && !quiet)
        fprintf(stderr, "heapscope: the profile %s is left uncompressed: %s\n", path, err);
}

size_t cli_finish_pack(const cli_run_end_t *end, char ***family)
{
    pack(end->path, end->quiet);
    size_t n = cli_family_find(end->path, end->pattern, end->pid, end->since_ns, family);
    for (size_t i = 0; i < n; i++)
        pack((*family)[i], end->quiet);
    return n;
}

void cli_finish_free(char **family, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(family[i]);
    free(family);
}
