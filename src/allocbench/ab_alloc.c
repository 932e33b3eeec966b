/* ab_alloc.c - which shared object is "jemalloc", and which version it is.
 *
 * Names map to the sonames Debian ships (libjemalloc2, libgoogle-perftools4,
 * libmimalloc2.0); the file is looked up like the dynamic linker would, in
 * `ldconfig -p`, then in the multiarch directories.  glibc means "preload
 * nothing": its path is the libc this process runs on (the workloads run on
 * the same one) and its version gnu_get_libc_version().  Versions come from
 * the Debian package owning the file (dpkg-query -S, then -W), falling back
 * to the glibc version or "unknown". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allocbench/ab_alloc.h"
#include "allocbench/ab_run.h"

typedef struct known {
    const char *name;
    const char *sonames[4]; /* preferred first; NULL-terminated */
} known_t;

static const known_t known[] = {
    {"glibc", {NULL}},
    {"jemalloc", {"libjemalloc.so.2", "libjemalloc.so", NULL}},
    {"tcmalloc", {"libtcmalloc.so.4", "libtcmalloc_minimal.so.4", "libtcmalloc.so", NULL}},
    {"mimalloc", {"libmimalloc.so.2", "libmimalloc.so.3", "libmimalloc.so", NULL}},
};

const char *ab_alloc_known(void)
{
    return "glibc, jemalloc, tcmalloc, mimalloc";
}

/* Path of `soname` from `ldconfig -p` output `cache` (x86-64 entries of
 * the host's word size preferred), or the first readable file in the usual
 * directories.  Returns 0 with the path in out, or -1. */
static int find_soname(const char *cache, const char *soname, char *out, size_t cap)
{
    size_t sl = strlen(soname);
    for (const char *p = cache; p && *p;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        const char *s = p;
        while (s < p + len && (*s == ' ' || *s == '\t'))
            s++;
        const char *arrow = memmem(p, len, "=> ", 3);
        int wordsize_ok = sizeof(void *) == 8 ? memmem(p, len, "64", 2) != NULL : 1;
        if (!strncmp(s, soname, sl) && s[sl] == ' ' && arrow && wordsize_ok) {
            size_t pl = len - (size_t)(arrow + 3 - p);
            if (pl < cap) {
                memcpy(out, arrow + 3, pl);
                out[pl] = 0;
                if (access(out, R_OK) == 0)
                    return 0;
            }
        }
        p = eol ? eol + 1 : NULL;
    }
    static const char *dirs[] = {"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu",
                                 "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib",
                                 "/usr/local/lib"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        snprintf(out, cap, "%s/%s", dirs[i], soname);
        if (access(out, R_OK) == 0)
            return 0;
    }
    return -1;
}

/* "PACKAGE VERSION" of the Debian package owning `path` into out; 0 or -1. */
static int dpkg_version(const char *path, char *out, size_t cap)
{
    char cands[3][PATH_MAX];
    int nc = 0;
    snprintf(cands[nc++], PATH_MAX, "%s", path);
    if (realpath(path, cands[nc]))
        nc++;
    if (!strncmp(path, "/lib", 4))
        snprintf(cands[nc++], PATH_MAX, "/usr%.*s", PATH_MAX - 8, path);
    for (int i = 0; i < nc; i++) {
        char *argv[] = {"dpkg-query", "-S", cands[i], NULL};
        char *text = NULL;
        if (ab_capture(argv, NULL, 0, &text) != 0 || !text) {
            free(text);
            continue;
        }
        char pkg[256];
        size_t pl = strcspn(text, ": \n");
        snprintf(pkg, sizeof pkg, "%.*s", (int)(pl < 255 ? pl : 255), text);
        /* keep ":amd64" if present: dpkg-query -W wants it for multiarch */
        if (text[pl] == ':' && strncmp(text + pl, ": ", 2) != 0) {
            size_t al = strcspn(text + pl + 1, ": \n");
            snprintf(pkg + strlen(pkg), sizeof pkg - strlen(pkg), ":%.*s", (int)al, text + pl + 1);
        }
        free(text);
        char *argv2[] = {"dpkg-query", "-W", "-f=${Version}", pkg, NULL};
        if (ab_capture(argv2, NULL, 0, &text) == 0 && text && *text) {
            text[strcspn(text, "\n")] = 0;
            snprintf(out, cap, "%s %s", pkg, text);
            free(text);
            return 0;
        }
        free(text);
    }
    return -1;
}

/* Is `path` a readable ELF shared object?  0, or -1 with a message. */
static int check_elf(const char *path, char *err, size_t errsz)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errsz, "cannot open allocator '%s': %s", path, strerror(errno));
        return -1;
    }
    unsigned char h[18];
    size_t n = fread(h, 1, sizeof h, f);
    fclose(f);
    if (n < sizeof h || memcmp(h, "\177ELF", 4) != 0 || h[16] != 3 /* ET_DYN */) {
        snprintf(err, errsz, "allocator '%s' is not an ELF shared object", path);
        return -1;
    }
    return 0;
}

int ab_alloc_resolve(const char *spec, ab_alloc_t *out, char *err, size_t errsz)
{
    memset(out, 0, sizeof *out);
    if (strchr(spec, '/')) {
        if (check_elf(spec, err, errsz) < 0)
            return -1;
        if (!realpath(spec, out->path))
            snprintf(out->path, sizeof out->path, "%s", spec);
        const char *base = strrchr(spec, '/') + 1;
        snprintf(out->name, sizeof out->name, "%.*s", (int)strcspn(base, "."), base);
        if (!out->name[0])
            snprintf(out->name, sizeof out->name, "custom");
        out->preload = 1;
        if (dpkg_version(out->path, out->version, sizeof out->version) < 0)
            snprintf(out->version, sizeof out->version, "unknown");
        return 0;
    }
    const known_t *k = NULL;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!strcmp(spec, known[i].name))
            k = &known[i];
    if (!k) {
        snprintf(err, errsz, "unknown allocator '%s' (known: %s, or a path to a .so)", spec,
                 ab_alloc_known());
        return -1;
    }
    snprintf(out->name, sizeof out->name, "%s", k->name);
    if (!k->sonames[0]) { /* glibc: the libc we run on */
        Dl_info info;
        void *sym = dlsym(RTLD_DEFAULT, "gnu_get_libc_version");
        if (sym && dladdr(sym, &info) && info.dli_fname)
            snprintf(out->path, sizeof out->path, "%s", info.dli_fname);
        else
            snprintf(out->path, sizeof out->path, "libc.so.6");
        if (dpkg_version(out->path, out->version, sizeof out->version) < 0)
            snprintf(out->version, sizeof out->version, "glibc %s", gnu_get_libc_version());
        out->preload = 0;
        return 0;
    }
    char *ldc_argv[] = {"ldconfig", "-p", NULL};
    char *cache = NULL;
    if (ab_capture(ldc_argv, NULL, 0, &cache) != 0) {
        char *alt[] = {"/sbin/ldconfig", "-p", NULL};
        free(cache);
        cache = NULL;
        if (ab_capture(alt, NULL, 0, &cache) != 0) {
            free(cache);
            cache = NULL;
        }
    }
    int found = -1;
    for (int i = 0; k->sonames[i] && found < 0; i++)
        found = find_soname(cache, k->sonames[i], out->path, sizeof out->path);
    free(cache);
    if (found < 0) {
        snprintf(err, errsz, "allocator '%s' is not installed (looked for %s%s%s)", spec,
                 k->sonames[0], k->sonames[1] ? ", " : "", k->sonames[1] ? k->sonames[1] : "");
        return -1;
    }
    out->preload = 1;
    if (dpkg_version(out->path, out->version, sizeof out->version) < 0)
        snprintf(out->version, sizeof out->version, "unknown");
    return 0;
}
