/* an_symaddr.c - resolve one address with libdw, expanding inlined calls.
 *
 * dwarf_getscopes(CU, pc) finds the innermost scope containing pc;
 * dwarf_getscopes_die() on it gives the concrete nesting, innermost first:
 *   inlined_subroutine (A) -> lexical_block -> inlined_subroutine (B)
 *   -> subprogram (C) -> compile_unit
 * Frame A is at the line-table location of pc; B is at A's DW_AT_call_file
 * and DW_AT_call_line; C at B's call site.  Names prefer the linkage name
 * (for C++ demangling), following DW_AT_abstract_origin/specification.
 */
#include "analyse/an_symaddr.h"

#include <dwarf.h>
#include <stdlib.h>

#include <elfutils/libdw.h>

/* Name of a subprogram or inlined_subroutine DIE, NULL when none. */
static const char *an_symaddr_name(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    const char *s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
    if (!s)
        s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
    if (!s)
        s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
    return s;
}

/* Call site of an inlined_subroutine: sets *file (NULL if unknown), *line. */
static void an_symaddr_call_site(Dwarf_Die *die, Dwarf_Die *cu, const char **file,
                                 uint32_t *line)
{
    Dwarf_Attribute a;
    Dwarf_Word w;
    Dwarf_Files *files;
    size_t nfiles;
    *file = NULL;
    *line = 0;
    if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &w) == 0 &&
        dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && w < nfiles)
        *file = dwarf_filesrc(files, w, NULL, NULL);
    if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &w) == 0 && w <= UINT32_MAX)
        *line = (uint32_t)w;
}

/* Walk the inline chain at pc.  Returns frames written; *closed is set when
 * the containing subprogram was reached. */
static size_t an_symaddr_scopes(Dwarf_Die *cu, Dwarf_Addr cupc, const char *file, uint32_t line,
                                an_sym_t *out, size_t cap, int *closed)
{
    Dwarf_Die *scopes = NULL, *chain = NULL;
    size_t n = 0;
    int ns = dwarf_getscopes(cu, cupc, &scopes);
    int nc = ns > 0 ? dwarf_getscopes_die(&scopes[0], &chain) : 0;
    for (int i = 0; i < nc && n < cap; i++) {
        int tag = dwarf_tag(&chain[i]);
        if (tag == DW_TAG_inlined_subroutine) {
            out[n++] = (an_sym_t){an_symaddr_name(&chain[i]), file, line, 1};
            an_symaddr_call_site(&chain[i], cu, &file, &line);
        } else if (tag == DW_TAG_subprogram) {
            out[n++] = (an_sym_t){an_symaddr_name(&chain[i]), file, line, 0};
            *closed = 1;
            break;
        }
    }
    free(chain);
    free(scopes);
    if (!*closed && n < cap) /* the caller's location for the ELF-symbol frame */
        out[n] = (an_sym_t){NULL, file, line, 0};
    return n;
}

size_t an_symaddr_resolve(Dwfl_Module *mod, Dwarf_Addr pc, an_sym_t *out, size_t cap)
{
    if (!cap)
        return 0;
    const char *file = NULL;
    int line = 0;
    Dwfl_Line *l = dwfl_module_getsrc(mod, pc);
    if (l)
        file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
    uint32_t uline = line > 0 ? (uint32_t)line : 0;
    size_t n = 0;
    int closed = 0;
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = dwfl_module_addrdie(mod, pc, &bias);
    out[0] = (an_sym_t){NULL, file, uline, 0};
    if (cu)
        n = an_symaddr_scopes(cu, pc - bias, file, uline, out, cap, &closed);
    if (closed && out[n - 1].function)
        return n;
    /* No DWARF name: the ELF symbol table names the containing function. */
    GElf_Sym sym;
    GElf_Off off;
    const char *name = dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL, NULL);
    if (closed) {
        out[n - 1].function = name;
        return n;
    }
    if (n == cap)
        n--;
    out[n].function = name;
    out[n].inlined = 0;
    return n + 1;
}
