/* an_symfile.h - find the ELF file that describes a profiled module and
 * open a libdwfl session on it at the module's load bias.
 *
 * Candidates, in order: the module's path, then files named by its GNU
 * build ID (/usr/lib/debug/.build-id, the debuginfod client cache).  A
 * candidate is used only when its build ID equals the profile's (when the
 * profile has none, only the module's path is tried, unverified).  Once a
 * file is open, libdwfl asks an_symfile's find_debuginfo callback for
 * separate debug info, which tries the same build-ID locations and then
 * elfutils' standard search (.gnu_debuglink).
 */
#ifndef AN_SYMFILE_H
#define AN_SYMFILE_H

#include <stddef.h>

#include <elfutils/libdwfl.h>

#include "format/pf_reader.h"

typedef struct an_symfile {
    Dwfl *dwfl;
    Dwfl_Module *mod;
    char *path;            /* the file in use (malloc'd) */
} an_symfile_t;

/* Open the best file for module `m` into *f.  Returns 0 on success;
 * otherwise -1 with *f zeroed and a reason ("file missing", ...) in
 * why[whysz], suitable after "no symbols for MODULE: ". */
int an_symfile_open(const pf_module_t *m, an_symfile_t *f, char *why, size_t whysz);

void an_symfile_close(an_symfile_t *f);

/* Write the path of build-ID candidate `which` (0: /usr/lib/debug .debug
 * file, 1: debuginfod cache debuginfo, 2: debuginfod cache executable) for
 * `id` into buf.  Returns 0, or -1 when there is no such candidate. */
int an_symfile_buildid_path(const uint8_t *id, size_t len, int which, char *buf, size_t sz);

#endif
