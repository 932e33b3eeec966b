/* hs_closefds.c - a program that closes every descriptor it did not open,
 * as daemons do, and then reuses their numbers.
 *
 *   hs_closefds
 *   hs_closefds unwind
 *   hs_closefds scan
 *
 * closefds_site: 4 x malloc(100), kept (400 bytes).  Then it closes
 * descriptors 3..1023, makes 4 pipes (their ends take the lowest numbers,
 * among them any the collector held), writes 16 bytes into each, raises
 * SIGUSR2 (the tests run it with HEAPSCOPE_SIGNAL=USR2), sleeps 100 ms
 * (ten of the writer's sample periods) and reads every pipe back: each
 * must hold its own 16 bytes and nothing more.  Prints "pipes intact", or
 * "pipe N: ..." and exits with 1.
 *
 * With "unwind", closefds_site is also called once before the loop
 * through nocfi_call and once after it through nocfi_call2
 * (hs_nocfi_call.S), frames no FDE covers, with rbp at a frame-pointer
 * pair on a page of its own (another page after the loop): libunwind,
 * which walks such a stack in `dwarf` mode (and every stack in `libunwind`
 * mode), takes rbp for a frame pointer and checks the pages it then reads
 * through the pipe it opened at its first use, reading a byte from its
 * read end and writing one into its write end.  nocfi_call2 is a return
 * address libunwind has not seen, so that its cache of frames does not
 * answer the second walk without a check.  Before the loop that pipe is
 * opened; after it, its numbers must not be the program's.  closefds_site
 * then has 12 allocations, 8 of them freed at once.
 *
 * With "scan" (run it with a short flush interval): after closefds_site
 * it looks, for up to 10 s, through descriptors 256..4199 for one open on
 * a "*.hsp.tmp" file (a profile being written), and prints the first
 * number it saw there ("profile fd N"), or "profile fd not seen".  A
 * program that opens files gets the lowest free numbers, and many a
 * close-everything loop stops at 256: the profile is to be written
 * through a descriptor above those.  (Its open(2) gives it a low one for
 * a moment, before it is moved up.)  No other allocation. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hsfd.h"

#define NPIPES 4
#define LEN 16

static void *kept[4];

void nocfi_call(void (*fn)(void), uintptr_t bp);
void nocfi_call2(void (*fn)(void), uintptr_t bp);

/* frame-pointer pairs (saved rbp 0, a return address), one per page */
static _Alignas(4096) volatile uintptr_t pairs[2][512];

HS_SITE static void closefds_site(void)
{
    for (int i = 0; i < 4; i++) {
        if (!(kept[i] = malloc(100)))
            hs_fail("malloc");
        hs_escape(kept[i]);
    }
}

static void bad(int i, const char *what)
{
    hs_puts(1, "pipe ");
    hs_put_u64(1, (uint64_t)i);
    hs_puts(1, ": ");
    hs_puts(1, what);
    hs_puts(1, "\n");
    exit(1);
}

static int is_profile_tmp(int fd)
{
    char target[4096];
    ssize_t len = hs_fd_target(fd, target, sizeof target);
    return len >= 8 && !strcmp(target + len - 8, ".hsp.tmp");
}

static int scan(void)
{
    int seen = -1;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        for (int fd = 256; fd < 4200 && seen < 0; fd++)
            if (fcntl(fd, F_GETFD) >= 0 && is_profile_tmp(fd)) /* open: which file? */
                seen = fd;
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (seen < 0 && now.tv_sec - start.tv_sec < 10);
    if (seen < 0) {
        hs_puts(1, "profile fd not seen\n");
    } else {
        hs_puts(1, "profile fd ");
        hs_put_u64(1, (uint64_t)seen);
        hs_puts(1, "\n");
    }
    return 0;
}

/* closefds_site's 4 allocations, freed, from a stack through nocfi_call
 * with rbp at pairs[page] */
static void through_nocfi(int page)
{
    void *saved[4];
    memcpy(saved, kept, sizeof saved);
    pairs[page][1] = (uintptr_t)scan + 4; /* somewhere inside a function */
    (page == 0 ? nocfi_call : nocfi_call2)(closefds_site, (uintptr_t)pairs[page]);
    for (int i = 0; i < 4; i++)
        free(kept[i]);
    memcpy(kept, saved, sizeof saved);
}

int main(int argc, char **argv)
{
    closefds_site();
    if (argc > 1 && !strcmp(argv[1], "scan"))
        return scan();
    int unwind = argc > 1 && !strcmp(argv[1], "unwind");
    if (unwind)
        through_nocfi(0);
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
    int p[NPIPES][2];
    for (int i = 0; i < NPIPES; i++) {
        if (pipe2(p[i], O_NONBLOCK) != 0)
            hs_fail("pipe2");
        char msg[LEN + 1] = "pipe-data-0000-X";
        msg[LEN - 1] = (char)('a' + i);
        if (write(p[i][1], msg, LEN) != LEN)
            hs_fail("write");
    }
    if (unwind)
        through_nocfi(1);
    raise(SIGUSR2);
    struct timespec ts = {0, 100 * 1000 * 1000};
    while (nanosleep(&ts, &ts) != 0)
        ;
    for (int i = 0; i < NPIPES; i++) {
        char got[2 * LEN];
        ssize_t n = read(p[i][0], got, sizeof got);
        if (n != LEN)
            bad(i, n < 0 ? "read failed" : "not the 16 bytes written");
        if (memcmp(got, "pipe-data-0000-", LEN - 1) != 0 || got[LEN - 1] != (char)('a' + i))
            bad(i, "other bytes than written");
        if (read(p[i][0], got, sizeof got) != -1 || errno != EAGAIN)
            bad(i, "more bytes than written");
    }
    hs_puts(1, "pipes intact\n");
    return 0;
}
