/* an_demangle.h - C++ demangling through libstdc++'s __cxa_demangle. */
#ifndef AN_DEMANGLE_H
#define AN_DEMANGLE_H

/* A malloc'd demangled form of `name` ("_ZN2ns1fEi" -> "ns::f(int)"), or
 * NULL when it is not a mangled C++ name (or out of memory). */
char *an_demangle(const char *name);

#endif
