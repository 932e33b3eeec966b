/* cli_run.c - `heapscope run`: start a program with libheapscope.so
 * preloaded, wait for it, compress its profile, print a short summary of it
 * to stderr and exit with the program's own status (128 + signal if it was
 * killed).  It runs in the launcher (launch.c), which links nothing but
 * libc and libzstd: the summary is the analyser's (cli_run_finish), and
 * compressing is cli_finish.c's, in either.
 *
 * The program keeps stdin, stdout and stderr.  SIGINT and SIGQUIT from the
 * terminal reach the program (same process group) while heapscope ignores
 * them; SIGTERM, SIGHUP, SIGUSR1/2 sent to heapscope are forwarded. */
#define _GNU_SOURCE
#include <errno.h>
#include <glob.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/ut_exe.h"
#include "common/ut_path.h"
#include "heapscope/profile.h"

typedef struct run_opts {
    const char *output;
    const char *unwind;
    const char *depth;
    const char *interval;
    const char *sample;
    const char *signal;
    const char *peak_slack;
    int quiet;
    int no_thread;
    int jemalloc; /* --jemalloc */
    char **prog;
} run_opts_t;

static void run_usage(FILE *out)
{
    fprintf(out,
            "usage: heapscope run [OPTIONS] [--] PROG [ARGS...]\n"
            "\n"
            "Runs PROG with every allocation recorded and writes a profile.\n"
            "  -o, --output FILE     profile path (default heapscope.PROG.PID.hsp;\n"
            "                        %%p = pid, %%e = program name)\n"
            "  --unwind MODE         dwarf (default), fp (frame pointers) or libunwind\n"
            "  --depth N             keep at most N frames per stack (default 64)\n"
            "  --interval MS         write the profile every MS ms (default 500), and\n"
            "                        no sooner than 20 times the last write's CPU time\n"
            "  --sample MS           heap/RSS timeline period (default 10)\n"
            "  --signal SIG          also write the profile when SIG (e.g. USR2) arrives\n"
            "  --peak-slack BYTES    per-thread slack of the peak counter (default 16384)\n"
            "  --no-thread           start no thread of heapscope's own until PROG starts\n"
            "                        a second one: glibc keeps its single-thread paths\n"
            "                        (faster); the profile and timeline are then written\n"
            "                        as PROG allocates, not while it is idle\n"
            "  --jemalloc            also record jemalloc's own mallocx, rallocx, xallocx,\n"
            "                        dallocx and sdallocx (automatic when PROG is linked\n"
            "                        with jemalloc or LD_PRELOAD names it)\n"
            "  -q, --quiet           no summary at the end\n");
}

static int opt_value(int argc, char **argv, int *i, const char *name, const char **out)
{
    size_t n = strlen(name);
    if (!strcmp(argv[*i], name)) {
        if (*i + 1 >= argc) {
            fprintf(stderr, "heapscope run: %s needs a value\n", name);
            return -1;
        }
        *out = argv[++*i];
        return 1;
    }
    if (!strncmp(argv[*i], name, n) && argv[*i][n] == '=') {
        *out = argv[*i] + n + 1;
        return 1;
    }
    return 0;
}

static int check_number(const char *what, const char *v, long lo, long hi)
{
    if (!v)
        return 0;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || *end || !*v || n < lo || n > hi) {
        fprintf(stderr, "heapscope run: %s must be a number from %ld to %ld, not '%s'\n", what, lo,
                hi, v);
        return -1;
    }
    return 0;
}

static int parse(int argc, char **argv, run_opts_t *o)
{
    memset(o, 0, sizeof *o);
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        int r;
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (a[0] != '-')
            break;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            run_usage(stdout);
            exit(0);
        }
        if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            o->quiet = 1;
            continue;
        }
        if (!strcmp(a, "--no-thread")) {
            o->no_thread = 1;
            continue;
        }
        if (!strcmp(a, "--jemalloc")) {
            o->jemalloc = 1;
            continue;
        }
        if ((r = opt_value(argc, argv, &i, "-o", &o->output)) ||
            (r = opt_value(argc, argv, &i, "--output", &o->output)) ||
            (r = opt_value(argc, argv, &i, "--unwind", &o->unwind)) ||
            (r = opt_value(argc, argv, &i, "--depth", &o->depth)) ||
            (r = opt_value(argc, argv, &i, "--interval", &o->interval)) ||
            (r = opt_value(argc, argv, &i, "--sample", &o->sample)) ||
            (r = opt_value(argc, argv, &i, "--signal", &o->signal)) ||
            (r = opt_value(argc, argv, &i, "--peak-slack", &o->peak_slack))) {
            if (r < 0)
                return -1;
            continue;
        }
        fprintf(stderr, "heapscope run: unknown option '%s'\n", a);
        run_usage(stderr);
        return -1;
    }
    if (i >= argc) {
        fprintf(stderr, "heapscope run: no program given\n");
        run_usage(stderr);
        return -1;
    }
    o->prog = argv + i;
    if (o->unwind && strcmp(o->unwind, "dwarf") && strcmp(o->unwind, "fp") &&
        strcmp(o->unwind, "libunwind")) {
        fprintf(stderr, "heapscope run: --unwind must be dwarf, fp or libunwind, not '%s'\n",
                o->unwind);
        return -1;
    }
    if (check_number("--depth", o->depth, 1, 256) < 0 ||
        check_number("--interval", o->interval, 10, 86400000) < 0 ||
        check_number("--sample", o->sample, 1, 60000) < 0 ||
        check_number("--peak-slack", o->peak_slack, 0, 1L << 30) < 0)
        return -1;
    return 0;
}

/* Path of libheapscope.so: $HEAPSCOPE_LIB (then *chosen is 1), next to
 * our binary (../lib in a build tree, the libdir relative to the bindir
 * in an installed one), or the install libdir. */
static int find_library(char *out, size_t cap, int *chosen)
{
    const char *env = getenv("HEAPSCOPE_LIB");
    *chosen = env && *env;
    if (*chosen) {
        snprintf(out, cap, "%s", env);
        return access(out, R_OK) == 0 ? 0 : -1;
    }
    char dir[PATH_MAX];
    if (ut_exe_dir(dir, sizeof dir) == 0) {
        static const char *rel[] = {"/../lib/libheapscope.so",
                                    "/" HEAPSCOPE_BIN_TO_LIB "/libheapscope.so",
                                    "/../lib/heapscope/libheapscope.so", "/libheapscope.so"};
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
            char cand[PATH_MAX + 64];
            snprintf(cand, sizeof cand, "%s%s", dir, rel[i]);
            if (access(cand, R_OK) == 0 && realpath(cand, out))
                return 0;
        }
    }
    snprintf(out, cap, "%s/libheapscope.so", HEAPSCOPE_INSTALL_LIBDIR);
    return access(out, R_OK) == 0 ? 0 : -1;
}

/* The file `name` in lib's directory, into out: 0 if it is there and
 * readable, else -1 (out holds the path looked for when it fits). */
static int beside(const char *lib, const char *name, char *out, size_t cap)
{
    int dir = (int)(ut_path_base(lib) - lib);
    if (snprintf(out, cap, "%.*s%s", dir, lib, name) >= (int)cap)
        return -1;
    return access(out, R_OK) == 0 ? 0 : -1;
}

/* For --unwind fp, libheapscope-fp.so beside the library find_library
 * found (a build without libunwind, so that neither it nor liblzma is
 * loaded into the program: docs/UNWIND.md).  Not called when
 * $HEAPSCOPE_LIB chose the library. */
static void prefer_fp_library(const run_opts_t *o, char *lib, size_t cap)
{
    if (!o->unwind || strcmp(o->unwind, "fp") || strcmp(ut_path_base(lib), "libheapscope.so"))
        return;
    char fp[PATH_MAX];
    if (beside(lib, "libheapscope-fp.so", fp, sizeof fp) == 0)
        snprintf(lib, cap, "%s", fp);
}

/* The allocator extension to preload after lib (col_ext.h), in ext, or ""
 * for none: libheapscope-jemalloc.so from lib's directory when --jemalloc
 * asks for it, the program is linked with jemalloc, or LD_PRELOAD already
 * names libjemalloc.  -1 when --jemalloc asked for it and it is not there. */
static int jemalloc_extension(const run_opts_t *o, const char *lib, char *ext, size_t cap)
{
    ext[0] = 0;
    const char *pre = getenv("LD_PRELOAD");
    if (!o->jemalloc && !cli_preloads_jemalloc(pre) && !cli_links_jemalloc(o->prog[0]))
        return 0;
    if (beside(lib, "libheapscope-jemalloc.so", ext, cap) == 0)
        return 0;
    if (o->jemalloc) {
        fprintf(stderr, "heapscope run: --jemalloc: cannot find %s\n", ext);
        return -1;
    }
    ext[0] = 0; /* the collector's MESSAGE will say what is missing */
    return 0;
}

static void set_env(const char *name, const char *value)
{
    if (value)
        setenv(name, value, 1);
}

/* HEAPSCOPE_OUTPUT for the program: its pattern made absolute against
 * heapscope's directory (with each '%' of the directory doubled), so that
 * a program that changes directory, or an image it execs from another
 * one, still writes where profile_path looks.  The collector would make it
 * absolute too, but against the directory each image starts in. */
static char *absolute_output(const char *pattern)
{
    char *cwd;
    if (pattern[0] == '/' || !(cwd = getcwd(NULL, 0)))
        return (char *)pattern;
    size_t n = strlen(cwd), k = 0;
    char *out = malloc(2 * n + strlen(pattern) + 2);
    if (!out) {
        free(cwd);
        return (char *)pattern;
    }
    for (size_t i = 0; i < n; i++) {
        if (cwd[i] == '%')
            out[k++] = '%';
        out[k++] = cwd[i];
    }
    if (n > 1)
        out[k++] = '/';
    strcpy(out + k, pattern);
    free(cwd);
    return out;
}

/* In the forked child: the environment for the collector, then PROG.
 * LD_PRELOAD is lib, then ext (if any), then what it was. */
static void child_exec(const run_opts_t *o, const char *lib, const char *ext)
{
    signal(SIGINT, SIG_DFL);
    signal(SIGQUIT, SIG_DFL);
    const char *old = getenv("LD_PRELOAD");
    char *preload;
    if (asprintf(&preload, "%s%s%s%s%s", lib, *ext ? ":" : "", ext, old && *old ? ":" : "",
                 old ? old : "") < 0)
        _exit(127);
    setenv("LD_PRELOAD", preload, 1);
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    setenv("HEAPSCOPE_ROOT_PID", pid, 1);
    if (o->output || !getenv("HEAPSCOPE_OUTPUT"))
        set_env("HEAPSCOPE_OUTPUT", absolute_output(o->output ? o->output : PF_DEFAULT_OUTPUT));
    set_env("HEAPSCOPE_UNWIND", o->unwind);
    set_env("HEAPSCOPE_DEPTH", o->depth);
    set_env("HEAPSCOPE_INTERVAL_MS", o->interval);
    set_env("HEAPSCOPE_SAMPLE_MS", o->sample);
    set_env("HEAPSCOPE_SIGNAL", o->signal);
    set_env("HEAPSCOPE_PEAK_SLACK", o->peak_slack);
    set_env("HEAPSCOPE_WRITER", o->no_thread ? "0" : NULL);
    execvp(o->prog[0], o->prog);
    fprintf(stderr, "heapscope run: cannot run '%s': %s\n", o->prog[0], strerror(errno));
    _exit(errno == ENOENT ? 127 : 126);
}

static pid_t child_pid;

static void forward(int sig)
{
    if (child_pid > 0)
        kill(child_pid, sig);
}

/* pat with %p and %e expanded as the collector does (%e: name). */
static void expand(const char *pat, const char *name, pid_t pid, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = pat; *p && n + 32 < cap; p++) {
        if (p[0] == '%' && p[1] == 'p')
            n += (size_t)snprintf(out + n, cap - n, "%d", (int)pid), p++;
        else if (p[0] == '%' && p[1] == 'e')
            n += (size_t)snprintf(out + n, cap - n, "%s", name), p++;
        else if (p[0] == '%' && p[1] == '%')
            out[n++] = '%', p++;
        else
            out[n++] = *p;
    }
    out[n] = 0;
}

/* The profile the started process wrote. */
static int profile_path(const run_opts_t *o, pid_t pid, char *out, size_t cap)
{
    if (o->output && !strstr(o->output, "%")) {
        snprintf(out, cap, "%s", o->output);
        return access(out, R_OK);
    }
    /* the program's name is argv[0]'s */
    expand(o->output ? o->output : PF_DEFAULT_OUTPUT, basename(o->prog[0]), pid, out, cap);
    if (access(out, R_OK) == 0 || o->output)
        return access(out, R_OK);
    /* the program exec'd under another name: any profile of that pid */
    char pattern[PATH_MAX];
    expand(PF_DEFAULT_OUTPUT, "*", pid, pattern, sizeof pattern);
    glob_t g;
    int rc = -1;
    if (glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc > 0) {
        snprintf(out, cap, "%s", g.gl_pathv[0]);
        rc = 0;
    }
    globfree(&g);
    return rc;
}

int cli_run_main(int argc, char **argv)
{
    run_opts_t o;
    if (parse(argc, argv, &o) < 0)
        return 2;
    char lib[PATH_MAX];
    int chosen;
    if (find_library(lib, sizeof lib, &chosen) < 0) {
        fprintf(stderr, "heapscope run: cannot find libheapscope.so (looked for %s; set HEAPSCOPE_LIB)\n",
                lib);
        return 2;
    }
    if (!chosen)
        prefer_fp_library(&o, lib, sizeof lib);
    char ext[PATH_MAX];
    if (jemalloc_extension(&o, lib, ext, sizeof ext) < 0)
        return 2;
    if (o.output && !strstr(o.output, "%")) {
        char tmp[PATH_MAX + 8];
        struct stat st;
        /* An old profile is ours to replace; a device or FIFO (/dev/null)
         * is written into, never removed, even when we run as root. */
        if (lstat(o.output, &st) == 0 && S_ISREG(st.st_mode))
            unlink(o.output);
        snprintf(tmp, sizeof tmp, "%s.tmp", o.output);
        if (lstat(tmp, &st) == 0 && S_ISREG(st.st_mode))
            unlink(tmp);
    }
    fflush(NULL);
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    struct timespec since;
    clock_gettime(CLOCK_REALTIME, &since);
    child_pid = fork();
    if (child_pid < 0) {
        fprintf(stderr, "heapscope run: fork: %s\n", strerror(errno));
        return 2;
    }
    if (child_pid == 0)
        child_exec(&o, lib, ext);
    signal(SIGTERM, forward);
    signal(SIGHUP, forward);
    signal(SIGUSR1, forward);
    signal(SIGUSR2, forward);
    int status;
    while (waitpid(child_pid, &status, 0) < 0)
        if (errno != EINTR) {
            fprintf(stderr, "heapscope run: waitpid: %s\n", strerror(errno));
            return 2;
        }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (WIFEXITED(status) && (code == 126 || code == 127))
        return code; /* could not start the program; already reported */
    char path[PATH_MAX];
    struct stat pst;
    int found = profile_path(&o, child_pid, path, sizeof path) == 0;
    int exists = found && stat(path, &pst) == 0;
    int regular = exists && S_ISREG(pst.st_mode);
    cli_run_end_t end = {path, code, o.quiet, (long)child_pid,
                         (uint64_t)since.tv_sec * 1000000000u + (uint64_t)since.tv_nsec,
                         o.output ? o.output : PF_DEFAULT_OUTPUT};
    if (o.quiet)
        return regular ? cli_run_finish(&end) : code;
    const char *why;
    if (WIFSIGNALED(status))
        fprintf(stderr, "heapscope: %s was killed by signal %d (%s)\n", o.prog[0],
                WTERMSIG(status), strsignal(WTERMSIG(status)));
    if (exists && !regular)
        fprintf(stderr, "heapscope: profile written to %s (not a regular file: no summary)\n",
                path);
    else if (found)
        return cli_run_finish(&end);
    else if ((why = cli_no_profile_reason(o.prog[0])) != NULL)
        fprintf(stderr, "heapscope: no profile was written for %s (pid %d): %s\n", o.prog[0],
                (int)child_pid, why);
    else
        fprintf(stderr, "heapscope: no profile was written for pid %d\n", (int)child_pid);
    return code;
}
