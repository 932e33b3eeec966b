/* ab_checker.c - libheapscope-abcheck.so, the tiny library `heapscope
 * bench` preloads after the allocator to prove which `malloc` a workload
 * really uses.  Its constructor asks the dynamic linker where the global
 * symbol `malloc` resolves (dlsym(RTLD_DEFAULT), the same lookup the
 * program's own calls get) and which object defines it (dladdr), and
 * appends "PID PATH\n" to the file named by $HEAPSCOPE_AB_VERIFY.
 * A statically linked program never loads it: then no line is written and
 * bench reports the allocator as unverified.  The constructor uses only
 * open/write, so it neither allocates through the allocator under test
 * (beyond what dlsym itself may do) nor prints anything. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void ab_checker_report(void)
{
    const char *out = getenv("HEAPSCOPE_AB_VERIFY");
    if (!out || !*out)
        return;
    void *sym = dlsym(RTLD_DEFAULT, "malloc");
    Dl_info info;
    if (!sym || !dladdr(sym, &info) || !info.dli_fname)
        return;
    char line[4200];
    int n = snprintf(line, sizeof line, "%ld %s\n", (long)getpid(), info.dli_fname);
    if (n <= 0 || (size_t)n >= sizeof line)
        return;
    int fd = open(out, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    if (write(fd, line, (size_t)n) < 0) {
        /* nothing to do: bench reports the run as unverified */
    }
    close(fd);
}
