/* ut_exe.h - the running executable's path and directory, from
 * /proc/self/exe: heapscope's commands find the files of their build or
 * installed tree (the preload library, the analyser, the bench
 * workloads) relative to it. */
#ifndef UT_EXE_H
#define UT_EXE_H

#include <string.h>
#include <unistd.h>

#include "common/ut_compiler.h"

/* The executable's absolute path into out (cap bytes): 0, or -1 with out
 * empty (no /proc, or a path longer than cap). */
UT_INLINE int ut_exe_path(char *out, size_t cap)
{
    ssize_t n = cap ? readlink("/proc/self/exe", out, cap) : -1;
    if (n <= 0 || (size_t)n >= cap) {
        if (cap)
            out[0] = 0;
        return -1;
    }
    out[n] = 0;
    return 0;
}

/* The directory holding the executable ("/" for one at the root): 0, or
 * -1 with out empty. */
UT_INLINE int ut_exe_dir(char *out, size_t cap)
{
    if (ut_exe_path(out, cap) != 0)
        return -1;
    char *slash = strrchr(out, '/');
    if (slash == NULL) {
        out[0] = 0;
        return -1;
    }
    slash[slash == out] = 0;
    return 0;
}

#endif
