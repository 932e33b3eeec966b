/* an_demangle.c - demangle C++ symbol names.
 *
 * libstdc++ exports the Itanium C++ ABI demangler; it has C linkage, so we
 * declare it here rather than compile C++ (the library links stdc++).
 */
#include "analyse/an_demangle.h"

#include <stddef.h>

/* From the Itanium C++ ABI (cxxabi.h): returns a malloc'd string, status 0
 * on success. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *an_demangle(const char *name)
{
    if (!name || name[0] != '_' || name[1] != 'Z')
        return NULL;
    int status = -1;
    char *d = __cxa_demangle(name, NULL, NULL, &status);
    return status == 0 ? d : NULL;
}
