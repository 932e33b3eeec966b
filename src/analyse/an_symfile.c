/* an_symfile.c - locate and open the ELF file for a profiled module (see
 * an_symfile.h for the search order).
 *
 * Each module gets its own Dwfl session: modules of one profile may
 * overlap in address space (a dlclose'd library and a later one mapped at
 * the same place), which one session cannot represent.  Modules are
 * reported with dwfl_report_elf(..., base = load_bias, add_p_vaddr =
 * true), so libdwfl addresses equal the run-time addresses in the profile.
 */
#define _POSIX_C_SOURCE 200809L

#include "analyse/an_symfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define AN_PATH_MAX 4096

static void an_symfile_hex(const uint8_t *id, size_t len, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[id[i] >> 4];
        out[2 * i + 1] = digits[id[i] & 15];
    }
    out[2 * len] = '\0';
}

/* The debuginfod client's cache directory, as the client itself picks it. */
static int an_symfile_cache_dir(char *buf, size_t sz)
{
    const char *e = getenv("DEBUGINFOD_CACHE_PATH");
    int n;
    if (e && *e)
        n = snprintf(buf, sz, "%s", e);
    else if ((e = getenv("XDG_CACHE_HOME")) && *e)
        n = snprintf(buf, sz, "%s/debuginfod_client", e);
    else if ((e = getenv("HOME")) && *e)
        n = snprintf(buf, sz, "%s/.cache/debuginfod_client", e);
    else
        return -1;
    return n > 0 && (size_t)n < sz ? 0 : -1;
}

int an_symfile_buildid_path(const uint8_t *id, size_t len, int which, char *buf, size_t sz)
{
    char hex[2 * 64 + 1], dir[AN_PATH_MAX];
    int n;
    if (len < 2 || len > 64)
        return -1;
    an_symfile_hex(id, len, hex);
    if (which == 0) {
        n = snprintf(buf, sz, "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
    } else if (which == 1 || which == 2) {
        if (an_symfile_cache_dir(dir, sizeof dir))
            return -1;
        n = snprintf(buf, sz, "%s/%s/%s", dir, hex, which == 1 ? "debuginfo" : "executable");
    } else {
        return -1;
    }
    return n > 0 && (size_t)n < sz ? 0 : -1;
}

/* libdwfl callback: separate debug info for an opened module.  Returns an
 * open fd (and a malloc'd name in *debuginfo_file_name) or -1. */
static int an_symfile_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                                     Dwarf_Addr base, const char *file_name,
                                     const char *debuglink_file, GElf_Word debuglink_crc,
                                     char **debuginfo_file_name)
{
    const unsigned char *bits;
    GElf_Addr vaddr;
    int n = dwfl_module_build_id(mod, &bits, &vaddr);
    char path[AN_PATH_MAX];
    for (int which = 0; n > 0 && which < 2; which++) {
        if (an_symfile_buildid_path(bits, (size_t)n, which, path, sizeof path))
            continue;
        if (file_name && !strcmp(path, file_name))
            continue;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        *debuginfo_file_name = strdup(path);
        return fd;
    }
    return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
                                        debuglink_crc, debuginfo_file_name);
}

static const Dwfl_Callbacks an_symfile_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = an_symfile_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

enum { AN_TRY_OK, AN_TRY_MISSING, AN_TRY_NOT_ELF, AN_TRY_MISMATCH };

/* Open `path` as module m.  Returns AN_TRY_*; on AN_TRY_OK fills *f. */
static int an_symfile_try(const pf_module_t *m, const char *path, an_symfile_t *f)
{
    if (access(path, R_OK) != 0)
        return AN_TRY_MISSING;
    Dwfl *d = dwfl_begin(&an_symfile_callbacks);
    if (!d)
        return AN_TRY_NOT_ELF;
    const char *name = strrchr(m->path, '/');
    name = name ? name + 1 : m->path;
    dwfl_report_begin(d);
    Dwfl_Module *mod = dwfl_report_elf(d, name, path, -1, m->load_bias, true);
    dwfl_report_end(d, NULL, NULL);
    if (!mod) {
        dwfl_end(d);
        return AN_TRY_NOT_ELF;
    }
    if (m->build_id_len) {
        Dwarf_Addr bias;
        const unsigned char *bits = NULL;
        GElf_Addr vaddr;
        dwfl_module_getelf(mod, &bias);
        int n = dwfl_module_build_id(mod, &bits, &vaddr);
        if (n <= 0 || (size_t)n != m->build_id_len || memcmp(bits, m->build_id, (size_t)n)) {
            dwfl_end(d);
            return AN_TRY_MISMATCH;
        }
    }
    f->path = strdup(path);
    if (!f->path) {
        dwfl_end(d);
        return AN_TRY_NOT_ELF;
    }
    f->dwfl = d;
    f->mod = mod;
    return AN_TRY_OK;
}

int an_symfile_open(const pf_module_t *m, an_symfile_t *f, char *why, size_t whysz)
{
    static const char *const what[] = {
        "", "the file is missing", "the file is not a readable ELF file",
        "the file has a different build ID (rebuilt or updated since the run?)",
    };
    char path[AN_PATH_MAX], hex[2 * 64 + 1];
    *f = (an_symfile_t){0};
    int first = an_symfile_try(m, m->path, f);
    if (first == AN_TRY_OK)
        return 0;
    if (!m->build_id_len) {
        snprintf(why, whysz, "%s, and the profile has no build ID to find a debug file by",
                 what[first]);
        return -1;
    }
    for (int which = 0; which < 3; which++) {
        if (an_symfile_buildid_path(m->build_id, m->build_id_len, which, path, sizeof path))
            continue;
        if (an_symfile_try(m, path, f) == AN_TRY_OK)
            return 0;
    }
    if (m->build_id_len <= 64)
        an_symfile_hex(m->build_id, m->build_id_len, hex);
    else
        snprintf(hex, sizeof hex, "(%zu bytes)", m->build_id_len);
    snprintf(why, whysz, "%s, and no debug file matches build ID %s", what[first], hex);
    return -1;
}

void an_symfile_close(an_symfile_t *f)
{
    if (f->dwfl)
        dwfl_end(f->dwfl);
    free(f->path);
    *f = (an_symfile_t){0};
}
