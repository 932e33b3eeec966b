/* col_config.c - the collector's settings, read once from HEAPSCOPE_*
 * environment variables (set by `heapscope run`, see the man page), and
 * the two entries of the environment it changes for the images the
 * program starts: a relative HEAPSCOPE_OUTPUT made absolute, and
 * LD_PRELOAD without heapscope once the profile is sealed. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "collect/col_internal.h"
#include "heapscope/profile.h"

col_config_t col_config;

static long env_long(const char *name, long def, long lo, long hi)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return def;
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || v < lo || v > hi) {
        col_log("heapscope: ignoring %s=%s (expected %ld..%ld)\n", name, s, lo, hi);
        return def;
    }
    return v;
}

/* The output pattern, made absolute against the directory the collector
 * starts in (a '%' of that directory doubled, so that it stays a '%'): a
 * program that changes directory before its profile is written (make -C,
 * git -C) would otherwise leave it there, where nobody looks.  Left
 * relative if the directory is unknown or the whole does not fit. */
static void output_pattern(col_config_t *c, const char *pat)
{
    char *out = c->output;
    const size_t cap = sizeof c->output, half = cap / 2, plen = strlen(pat);
    /* The directory is read into the upper half and copied down with each
     * '%' doubled; the copy never reaches what is still to be read. */
    const char *q = out + half;
    if (pat[0] != '/' && getcwd(out + half, half) && *q == '/') {
        size_t n = 0;
        for (; *q && n + 2 < half; q++) {
            if (*q == '%')
                out[n++] = '%';
            out[n++] = *q;
        }
        if (!*q) {
            if (n > 1) /* not the root directory */
                out[n++] = '/';
            if (n + plen < cap) {
                memcpy(out + n, pat, plen + 1);
                return;
            }
        }
    }
    strncpy(out, pat, cap - 1);
    out[cap - 1] = 0;
}

extern char **environ;

/* Where environ holds the entry "NAME=..." (prefix: "NAME="), or NULL. */
static char **env_slot(const char *prefix)
{
    size_t n = strlen(prefix);
    for (char **e = environ; e && *e; e++)
        if (!strncmp(*e, prefix, n))
            return e;
    return NULL;
}

/* A relative HEAPSCOPE_OUTPUT set by hand (`heapscope run` passes it
 * absolute) is also made absolute in the environment the program passes
 * on: an image it execs after a chdir (or runs with system() or
 * posix_spawn, which no hook sees) would otherwise resolve it against its
 * own start directory.  The entry of environ is pointed at a static copy,
 * which glibc's setenv and unsetenv handle as any string they did not
 * allocate; no memory is allocated, and the kernel's copy of the initial
 * environment (/proc/self/environ) is left as it was. */
static void output_env(const char *pattern)
{
    static const char name[] = "HEAPSCOPE_OUTPUT=";
    static char entry[sizeof name + sizeof col_config.output];
    char **e = pattern[0] == '/' ? env_slot(name) : NULL;
    if (e) {
        memcpy(entry, name, sizeof name - 1);
        strcpy(entry + sizeof name - 1, pattern);
        *e = entry;
    }
}

/* Once the profile is sealed (col_seccomp.c), an image the program execs,
 * or starts with system() or posix_spawn, would load heapscope again under
 * the same filter, and its start-up makes calls the filter may forbid
 * (prlimit64, sched_getaffinity...): the program would be killed where it
 * ran without heapscope.  So libheapscope*.so leaves LD_PRELOAD in
 * environ while the seal holds (a static string, as output_env's), and
 * comes back if it is lifted.  The program's own getenv("LD_PRELOAD")
 * sees that too. */
static char preload_entry[4200];
static char *preload_saved; /* the entry replaced, NULL if none */

static int is_heapscope(const char *path, size_t len)
{
    size_t base = len;
    while (base > 0 && path[base - 1] != '/')
        base--;
    return len - base >= 12 && !strncmp(path + base, "libheapscope", 12);
}

void col_config_preload_drop(void)
{
    static const char name[] = "LD_PRELOAD=";
    char **e = preload_saved ? NULL : env_slot(name);
    if (!e)
        return;
    const char *v = *e + sizeof name - 1;
    size_t n = sizeof name - 1, len = strlen(v);
    if (n + len >= sizeof preload_entry)
        return;
    memcpy(preload_entry, name, n);
    int dropped = 0;
    /* the loader splits the list at spaces and colons */
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && v[j] != ' ' && v[j] != ':')
            j++;
        if (j > i && is_heapscope(v + i, j - i)) {
            dropped = 1;
        } else if (j > i) {
            if (n > sizeof name - 1)
                preload_entry[n++] = ':';
            memcpy(preload_entry + n, v + i, j - i);
            n += j - i;
        }
        i = j + 1;
    }
    preload_entry[n] = 0;
    if (dropped) {
        preload_saved = *e;
        *e = preload_entry;
    }
}

/* (environ is looked through again: the program may have grown it since) */
void col_config_preload_restore(void)
{
    for (char **e = environ; preload_saved && e && *e; e++)
        if (*e == preload_entry)
            *e = preload_saved;
    preload_saved = NULL;
}

/* Signal name (USR2, SIGUSR2) or number; 0 if unset or invalid. */
static int env_signal(const char *name)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return 0;
    if (!strncmp(s, "SIG", 3))
        s += 3;
    static const struct { const char *n; int v; } names[] = {
        {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"HUP", SIGHUP},
        {"PROF", SIGPROF}, {"WINCH", SIGWINCH}, {"URG", SIGURG},
    };
    for (size_t i = 0; i < UT_ARRAY_LEN(names); i++)
        if (!strcmp(s, names[i].n))
            return names[i].v;
    char *end;
    long v = strtol(s, &end, 10);
    if (!*end && v > 0 && v < NSIG)
        return (int)v;
    col_log("heapscope: ignoring HEAPSCOPE_SIGNAL=%s\n", s);
    return 0;
}

/* Fill col_config from the environment; defaults for what is unset. */
void col_config_load(void)
{
    col_config_t *c = &col_config;
    c->quiet = env_long("HEAPSCOPE_QUIET", 0, 0, 1) != 0;
    c->disabled = env_long("HEAPSCOPE_DISABLE", 0, 0, 1) != 0;
    c->verify_unwind = env_long("HEAPSCOPE_UNWIND_VERIFY", 0, 0, 1) != 0;
    c->stats = env_long("HEAPSCOPE_STATS", 0, 0, 1) != 0;
    const char *u = getenv("HEAPSCOPE_UNWIND");
#ifdef COL_FP_ONLY
    /* libheapscope-fp.so, built without libunwind (col_unwind.c) */
    c->unwinder = PF_UNWIND_FP;
    if (u && *u && strcmp(u, "fp"))
        col_message_add("libheapscope-fp.so unwinds with frame pointers only: "
                        "HEAPSCOPE_UNWIND=%.32s was not used",
                        u);
#else
    c->unwinder = PF_UNWIND_DWARF;
    if (u && !strcmp(u, "fp"))
        c->unwinder = PF_UNWIND_FP;
    else if (u && !strcmp(u, "libunwind"))
        c->unwinder = PF_UNWIND_LIBUNWIND;
    else if (u && *u && strcmp(u, "dwarf"))
        col_log("heapscope: unknown HEAPSCOPE_UNWIND=%s, using dwarf\n", u);
#endif
    c->max_depth = (int)env_long("HEAPSCOPE_DEPTH", 64, 1, COL_MAX_DEPTH);
    c->interval_ms = (unsigned)env_long("HEAPSCOPE_INTERVAL_MS", 500, 10, 86400000);
    c->sample_ms = (unsigned)env_long("HEAPSCOPE_SAMPLE_MS", 10, 1, 60000);
    if (c->sample_ms > c->interval_ms)
        c->sample_ms = c->interval_ms;
    c->peak_slack = env_long("HEAPSCOPE_PEAK_SLACK", 16384, 0, 1L << 30);
    c->writer = env_long("HEAPSCOPE_WRITER", 1, 0, 1) != 0;
    c->hide_writer = env_long("HEAPSCOPE_HIDE_WRITER", 1, 0, 1) != 0;
    c->signal = env_signal("HEAPSCOPE_SIGNAL");
    c->root_pid = (int)env_long("HEAPSCOPE_ROOT_PID", 0, 0, 1L << 30);
    c->fault_shadow_leaves = env_long("HEAPSCOPE_FAULT_SHADOW_LEAVES", -1, -1, 1L << 20);
    c->fault_nodes = env_long("HEAPSCOPE_FAULT_NODES", 0, 0, 1L << 30);
    c->fault_sites = env_long("HEAPSCOPE_FAULT_SITES", 0, 0, 1L << 30);
    c->fault_peak_cold = env_long("HEAPSCOPE_FAULT_PEAK_COLD", 0, 0, 1) != 0;
    c->fault_count_maps = env_long("HEAPSCOPE_FAULT_COUNT_MAPS", 0, 0, 1) != 0;
    c->fault_backoff = env_long("HEAPSCOPE_FAULT_BACKOFF", 0, 0, 1) != 0;
    c->fault_writer_alloc = env_long("HEAPSCOPE_FAULT_WRITER_ALLOC", 0, 0, 1) != 0;
    c->fault_slow_reads = env_long("HEAPSCOPE_FAULT_SLOW_READS", 0, 0, 1) != 0;
    c->fault_slow_carry = env_long("HEAPSCOPE_FAULT_SLOW_CARRY", 0, 0, 1) != 0;
    c->fault_flush_cpu = env_long("HEAPSCOPE_FAULT_FLUSH_CPU_MS", 0, 0, 10000);
    c->fault_flush_sleep = env_long("HEAPSCOPE_FAULT_FLUSH_SLEEP_MS", 0, 0, 10000);
    const char *o = getenv("HEAPSCOPE_OUTPUT");
    c->output_explicit = o && *o;
    output_pattern(c, c->output_explicit ? o : PF_DEFAULT_OUTPUT);
    if (c->output_explicit && o[0] != '/')
        output_env(c->output);
}

/* HEAPSCOPE_FAULT_SLOW_READS: a flush sleeps 20 us between two reads of
 * one site's counters (col_flush.c), and a heap sample after reading each
 * thread's counts (col_sample.c), as when they lose the CPU there; and
 * HEAPSCOPE_FAULT_SLOW_CARRY: a counter's owner between the two stores of
 * a carry (col_record.c). */
void col_fault_slow_read_now(void)
{
    /* the system call itself: glibc's nanosleep is a cancellation point,
     * and the flush may run on a program thread */
    struct timespec ts = {0, 20000};
    syscall(SYS_nanosleep, &ts, NULL);
}
