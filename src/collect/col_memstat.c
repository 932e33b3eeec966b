/* col_memstat.c - with HEAPSCOPE_STATS=1, at exit: the collector's own
 * memory, by what it is for, as a profile message.  A user who sees a
 * program's peak RSS grow under heapscope can read there how much of it is
 * heapscope's, and where it went (docs/BENCHMARKS.md, "Where a thread's
 * pages go").
 *
 * The mappings are col_vm.c's, each with its kind.  Their pages are
 * counted from /proc/self/pagemap: present and mapped by this process
 * alone.  So the kernel's zero page, which a read of a page never written
 * maps, is left out, as it is from RSS; so is a page a forked child still
 * shares with its parent, which RSS counts in both.  Anonymous memory
 * only: the library's code and the pages of other files the collector
 * reads (.eh_frame) are not in it.  Counted before the final flush, whose
 * buffers come and go. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include "collect/col_internal.h"

#define PM_PRESENT (1ull << 63)
#define PM_EXCLUSIVE (1ull << 56)

typedef struct count {
    int fd;
    int failed;
    uint64_t pages[COL_VM_KINDS];
    unsigned mappings[COL_VM_KINDS];
} count_t;

/* The pages of [p, p + size) present and mapped by this process alone. */
static uint64_t resident(count_t *c, uintptr_t p, size_t size)
{
    uint64_t buf[512], n = 0;
    uintptr_t first = p / 4096, end = (p + size + 4095) / 4096;
    for (uintptr_t at = first; at < end && !c->failed;) {
        size_t want = end - at < 512 ? (size_t)(end - at) : 512;
        ssize_t got = pread(c->fd, buf, want * sizeof buf[0], (off_t)(at * sizeof buf[0]));
        if (got <= 0 || got % (ssize_t)sizeof buf[0] != 0) {
            c->failed = 1;
            break;
        }
        size_t k = (size_t)got / sizeof buf[0];
        for (size_t i = 0; i < k; i++)
            n += (buf[i] & (PM_PRESENT | PM_EXCLUSIVE)) == (PM_PRESENT | PM_EXCLUSIVE);
        at += k;
    }
    return n;
}

static void count_one(void *p, size_t size, col_vm_kind_t kind, void *arg)
{
    count_t *c = arg;
    if (kind >= COL_VM_KINDS)
        kind = COL_VM_OTHER;
    c->pages[kind] += resident(c, (uintptr_t)p, size);
    c->mappings[kind]++;
}

void col_memstat_report(void)
{
    if (!col_config.stats)
        return;
    count_t c = {.fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)};
    if (c.fd < 0) {
        col_message_add("HEAPSCOPE_STATS: the collector's own memory is not counted: "
                        "/proc/self/pagemap cannot be read");
        return;
    }
    unsigned untracked = col_vm_each(count_one, &c);
    close(c.fd);
    if (c.failed) {
        col_message_add("HEAPSCOPE_STATS: the collector's own memory is not counted: "
                        "/proc/self/pagemap could not be read");
        return;
    }
    uint64_t all = 0;
    for (int k = 0; k < COL_VM_KINDS; k++)
        all += c.pages[k];
    col_message_add("HEAPSCOPE_STATS: the collector's own memory at exit, pages this process "
                    "alone maps: %llu KB: shadow map %llu KB, thread states %llu KB (%u), "
                    "counters %llu KB, call tree and sites %llu KB, unwinders %llu KB, "
                    "other %llu KB; %u mappings not kept track of",
                    (unsigned long long)all * 4, (unsigned long long)c.pages[COL_VM_SHADOW] * 4,
                    (unsigned long long)c.pages[COL_VM_STATES] * 4, c.mappings[COL_VM_STATES],
                    (unsigned long long)c.pages[COL_VM_COUNTERS] * 4,
                    (unsigned long long)c.pages[COL_VM_TREE] * 4,
                    (unsigned long long)c.pages[COL_VM_UNWIND] * 4,
                    (unsigned long long)c.pages[COL_VM_OTHER] * 4, untracked);
}
