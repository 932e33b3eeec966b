/* an_symaddr.h - what one code address in an opened module is: function,
 * source location and the chain of inlined calls, from DWARF (or the ELF
 * symbol table when there is no DWARF). */
#ifndef AN_SYMADDR_H
#define AN_SYMADDR_H

#include <stddef.h>

#include <elfutils/libdwfl.h>

#include "analyse/an_symbols.h"

/* Fill out[cap] with the frames at `pc` (an address inside an instruction,
 * in libdwfl's address space), innermost first: one per inlined call, then
 * the containing function with inlined = 0.  Function names are as stored
 * (maybe mangled) and NULL when unknown; strings belong to libdwfl.
 * Returns the number of frames written, at least 1 when cap > 0. */
size_t an_symaddr_resolve(Dwfl_Module *mod, Dwarf_Addr pc, an_sym_t *out, size_t cap);

#endif
