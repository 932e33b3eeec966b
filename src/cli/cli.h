/* cli.h - entry points of the `heapscope` subcommands, and what the two
 * executables behind the command give each other.
 *
 * `heapscope` is the launcher (launch.c): it runs `heapscope run` itself
 * and links nothing but libc, so that the process waiting for the profiled
 * program loads no analysis library (time and memory it would add to every
 * profiled run: docs/ARCHITECTURE.md, "The command").  Every other
 * subcommand, and the end of `run` (compressing the profile, the
 * summary), is the analyser's,
 * `heapscope-analyse` (analyse_main.c), which the launcher execs.
 *
 * Each entry point takes the arguments after the subcommand name (argv[0]
 * is the subcommand) and returns the process exit status. */
#ifndef CLI_H
#define CLI_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

int cli_run_main(int argc, char **argv);

/* The end of a `heapscope run`, for cli_run_finish. */
typedef struct cli_run_end {
    const char *path;    /* the started process's profile */
    int code;            /* the program's exit status */
    int quiet;           /* no summary */
    long pid;            /* the started process; 0: unknown (no other profile is looked for) */
    uint64_t since_ns;   /* CLOCK_REALTIME just before it was started */
    const char *pattern; /* the output pattern it was given (-o's, or the default) */
} cli_run_end_t;

/* The end of `heapscope run`, once the program has exited: compress its
 * profile in place (pf_pack.h: if it is final), and those of the other
 * processes of the run (cli_finish_pack), print the summary to stderr
 * unless quiet, then end with exit status `code` (the program's).  In the
 * analyser: does it and returns code.  In the launcher: does it itself
 * when quiet; else becomes the analyser (exec), and returns code only if
 * it cannot, after saying so. */
int cli_run_finish(const cli_run_end_t *end);

/* Compress the run's profiles (cli_finish.c): the started process's, then
 * the others of the run (cli_family_find), named in *family, oldest first
 * (free with cli_finish_free).  Returns how many others.  A rewrite that
 * fails leaves the file as it was, and is said on stderr unless quiet. */
size_t cli_finish_pack(const cli_run_end_t *end, char ***family);
void cli_finish_free(char **family, size_t n);

/* The profiles of the run whose started process pid wrote `first` and
 * was started at since_ns, given the output pattern (cli_family.c): its
 * fork children's, their children's and the programs they exec'd, oldest
 * first, in *paths (each and the array malloc'd).  Returns how many. */
size_t cli_family_find(const char *first, const char *pattern, long pid, uint64_t since_ns,
                       char ***paths);

/* Why the program prog (argv[0] of `heapscope run`) cannot have written a
 * profile, read from its executable (cli_noprofile.c): a sentence, or NULL
 * when nothing there says why. */
const char *cli_no_profile_reason(const char *prog);

/* prog found as execvp finds it: itself if it has a '/', else the first
 * regular executable file of that name in PATH.  0, or -1 if none. */
int cli_find_program(const char *prog, char *out, size_t cap);

/* The program headers of the 64-bit little-endian ELF file at fd, *count
 * of them (cli_elf.c; a static buffer, valid until the next call), or NULL
 * if it is not such a file. */
const Elf64_Phdr *cli_elf_phdrs(int fd, unsigned *count);

/* Is the program prog linked with jemalloc: a DT_NEEDED entry of its
 * executable that starts with "libjemalloc" (cli_allocext.c)?  0 when not,
 * or when the file cannot be read as a 64-bit ELF executable. */
int cli_links_jemalloc(const char *prog);

/* Does the LD_PRELOAD value preload name a library whose file name starts
 * with "libjemalloc" (cli_allocext.c)? */
int cli_preloads_jemalloc(const char *preload);

/* The hidden analyser command the launcher's cli_run_finish execs for a
 * run with a summary: `heapscope-analyse --run-finish PATH CODE
 * summary|quiet [PID SINCE_NS PATTERN]` (cli_run_end_t's fields; the
 * launcher compresses a quiet run's profiles itself, and tests call it
 * with quiet). */
#define CLI_RUN_FINISH_CMD "--run-finish"

#endif
