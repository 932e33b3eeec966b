/* launch.c - the `heapscope` command: runs `heapscope run` itself and
 * hands every other subcommand to the analyser, `heapscope-analyse`
 * (analyse_main.c), by exec with the same arguments.
 *
 * Why two executables: the analyser links libdw, libelf, libstdc++,
 * protobuf-c and zlib (with liblzma and libbz2 behind libdw).  Loading
 * them cost every `heapscope run` ~1.2 ms before the program started, and
 * 2 MB of RSS in the process that waits for it, inside the profiled
 * program's cgroup (docs/BENCHMARKS.md, "The launcher without the
 * analysis libraries"); this binary needs only libc and libzstd.  `run`'s
 * summary at the end is the analyser's too (cli_run_finish below); a
 * quiet run compresses its profiles here (cli_finish.c).
 *
 * The analyser is $HEAPSCOPE_ANALYSER if set, else the one beside this
 * binary (both are in bin/, built and installed, so that the subcommands
 * find their files relative to their own executable as the launcher
 * would), else the one in the configured bindir. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/ut_exe.h"

#define ANALYSER "heapscope-analyse"

/* Path of the analyser into out (cap bytes); -1 if there is none. */
static int find_analyser(char *out, size_t cap)
{
    const char *env = getenv("HEAPSCOPE_ANALYSER");
    if (env && *env) {
        snprintf(out, cap, "%s", env);
        return access(out, X_OK) == 0 ? 0 : -1;
    }
    char dir[PATH_MAX];
    if (ut_exe_dir(dir, sizeof dir) == 0 &&
        snprintf(out, cap, "%s/%s", dir, ANALYSER) < (int)cap && access(out, X_OK) == 0)
        return 0;
    snprintf(out, cap, "%s/%s", HEAPSCOPE_INSTALL_BINDIR, ANALYSER);
    return access(out, X_OK) == 0 ? 0 : -1;
}

/* Become the analyser with argv (argv[0] stays "heapscope", which its
 * messages name); returns only if that failed, after saying why. */
static void exec_analyser(char **argv)
{
    char path[PATH_MAX];
    if (find_analyser(path, sizeof path) < 0) {
        fprintf(stderr, "heapscope: cannot find %s (beside heapscope or in %s; or set HEAPSCOPE_ANALYSER)\n",
                ANALYSER, HEAPSCOPE_INSTALL_BINDIR);
        return;
    }
    fflush(NULL);
    execv(path, argv);
    fprintf(stderr, "heapscope: cannot run %s: %s\n", path, strerror(errno));
}

int cli_run_finish(const cli_run_end_t *end)
{
    if (end->quiet) {
        char **family = NULL;
        cli_finish_free(family, cli_finish_pack(end, &family));
        return end->code;
    }
    char status[16], pid[24], since[24];
    snprintf(status, sizeof status, "%d", end->code);
    snprintf(pid, sizeof pid, "%ld", end->pid);
    snprintf(since, sizeof since, "%llu", (unsigned long long)end->since_ns);
    char *argv[] = {"heapscope", CLI_RUN_FINISH_CMD, (char *)end->path, status,
                    "summary", pid, since, (char *)end->pattern, NULL};
    exec_analyser(argv);
    fprintf(stderr, "heapscope: no summary; the profile is %s\n", end->path);
    return end->code;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "run"))
        return cli_run_main(argc - 1, argv + 1);
    exec_analyser(argv);
    return 2;
}
