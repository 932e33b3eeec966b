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

int cli_run_main(int argc, char **argv);

/* The end of `heapscope run`, once the program has exited: compress its
 * profile at path in place (pf_pack.h: if it is final), print the summary
 * to stderr unless quiet, then end with exit status `code` (the
 * program's).  In the analyser: does it and returns code.  In the
 * launcher: becomes the analyser (exec), and returns code only if it
 * cannot, after saying so (unless quiet). */
int cli_run_finish(const char *path, int code, int quiet);

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

/* The hidden analyser command the launcher's cli_run_finish execs:
 * `heapscope-analyse --run-finish PATH CODE summary|quiet`. */
#define CLI_RUN_FINISH_CMD "--run-finish"

#endif
