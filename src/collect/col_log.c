/* col_log.c - diagnostics of the collector: one line to stderr with
 * write(2) (unless HEAPSCOPE_QUIET), and messages kept for the profile's
 * MESSAGE records.  Called only on cold paths with the guard set. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "collect/col_internal.h"
#include "common/ut_spin.h"

#define MAX_MESSAGES 16
#define MESSAGE_LEN 256

static char messages[MAX_MESSAGES][MESSAGE_LEN];
static size_t nmessages;
static int msg_lock;

void col_log(const char *fmt, ...)
{
    if (col_config.quiet)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof line)
        n = sizeof line - 1;
    ssize_t w = write(2, line, (size_t)n);
    (void)w;
}

/* strerror(e) without translation: a translated one may allocate and
 * load a module (dcgettext), which the writer thread never does
 * (col_glibc.c). */
const char *col_strerror(int e)
{
    const char *s = strerrordesc_np(e);
    return s ? s : "unknown error";
}

/* Keep a message for the profile (the first MAX_MESSAGES only). */
void col_message_add(const char *fmt, ...)
{
    ut_spin_lock(&msg_lock);
    if (nmessages < MAX_MESSAGES) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(messages[nmessages], MESSAGE_LEN, fmt, ap);
        va_end(ap);
        nmessages++;
    }
    ut_spin_unlock(&msg_lock);
}

const char *col_message_get(size_t i)
{
    return i < nmessages ? messages[i] : NULL;
}

size_t col_message_count(void)
{
    return nmessages;
}
