/* ut_path.h - a path's file name, and whether it starts with a prefix:
 * how the collector knows glibc's libc.so.6 and jemalloc among its modules,
 * the jemalloc extension knows jemalloc, and `heapscope run` reads
 * LD_PRELOAD. */
#ifndef UT_PATH_H
#define UT_PATH_H

#include <string.h>

#include "common/ut_compiler.h"

/* The part of path after its last '/' (path itself without one). */
UT_INLINE const char *ut_path_base(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Does the file name of path start with prefix?  0 for a NULL path. */
UT_INLINE int ut_path_base_starts(const char *path, const char *prefix)
{
    return path && !strncmp(ut_path_base(path), prefix, strlen(prefix));
}

#endif
