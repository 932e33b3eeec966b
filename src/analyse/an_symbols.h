/* an_symbols.h - offline symbolisation of return addresses with elfutils
 * (libdwfl/libdw).
 *
 * Each module of the profile gets its own libdwfl session, opened on first
 * use at the module's load bias, from the first of these files whose GNU
 * build ID matches the one in the profile:
 *   1. the module's path
 *   2. /usr/lib/debug/.build-id/xx/rest.debug
 *   3. $DEBUGINFOD_CACHE_PATH (else $XDG_CACHE_HOME/debuginfod_client, else
 *      ~/.cache/debuginfod_client) /<hex>/debuginfo, then .../executable
 * One return address can expand into several frames (inlined calls, from
 * DW_TAG_inlined_subroutine scopes).  Results are cached per
 * (module, address), so repeated frames cost one hash lookup.
 */
#ifndef AN_SYMBOLS_H
#define AN_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "format/pf_reader.h"

#define AN_SYM_MAX_INLINE 32 /* frames one address can expand into */

/* One symbolised frame.  Strings live as long as the an_symbols_t. */
typedef struct an_sym {
    const char *function;  /* demangled; "??" when unknown */
    const char *file;      /* NULL when unknown */
    uint32_t line;         /* 0 when unknown */
    int inlined;           /* inlined into the frame that follows it */
} an_sym_t;

typedef struct an_symbols an_symbols_t;

/* Create a symboliser for the modules of `p` (which must outlive it).
 * Nothing is opened yet.  Returns PF_OK or PF_ENOMEM. */
int an_symbols_open(const pf_profile_t *p, an_symbols_t **out);

/* Frames for return address `ip` in module index `module` (-1: none),
 * innermost first.  The caller of an inlined chain comes last with
 * inlined = 0.  Looks up ip - 1 (the call instruction).  *syms stays valid
 * until the next lookup; *n is at least 1.  Returns PF_OK or PF_ENOMEM. */
int an_symbols_lookup(an_symbols_t *s, uint64_t ip, int32_t module, const an_sym_t **syms,
                      uint32_t *n);

/* The file symbols of `module` came from, NULL when none was usable or the
 * module has not been looked at yet. */
const char *an_symbols_file(const an_symbols_t *s, int32_t module);

/* Warnings collected so far (modules without a usable file), in the order
 * modules were first used.  Returns their number; *list is valid until the
 * next lookup. */
size_t an_symbols_warnings(const an_symbols_t *s, const char *const **list);

void an_symbols_close(an_symbols_t *s);

#endif
