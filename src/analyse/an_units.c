/* an_units.c - number formatting of an_units.h.
 *
 * Sizes use binary units (KiB = 1024) with one decimal; the exact byte
 * count is printed separately by callers where it matters.
 */
#include "analyse/an_units.h"

#include <stdio.h>

const char *an_units_bytes(uint64_t n, char *buf)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (n < 1024) {
        snprintf(buf, AN_UNITS_BUF, "%u B", (unsigned)n);
        return buf;
    }
    double v = (double)n;
    unsigned u = 0;
    while (v >= 1024.0 && u < 6) {
        v /= 1024.0;
        u++;
    }
    /* 1023.96 KiB would print as "1024.0 KiB": move up a unit instead */
    if (v >= 1023.95 && u < 6) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, AN_UNITS_BUF, "%.1f %s", v, unit[u]);
    return buf;
}

const char *an_units_count(uint64_t n, char *buf)
{
    char digits[24];
    int len = snprintf(digits, sizeof digits, "%llu", (unsigned long long)n);
    int o = 0;
    for (int i = 0; i < len; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
    return buf;
}

const char *an_units_noun(uint64_t n, const char *noun, char *buf)
{
    char digits[AN_UNITS_BUF];
    int len = snprintf(buf, AN_UNITS_BUF, "%s %s%s", an_units_count(n, digits), noun,
                       n == 1 ? "" : "s");
    if (len < 0)
        buf[0] = '\0';
    return buf; /* a noun too long for the buffer is cut (an_units.h) */
}

const char *an_units_time(uint64_t ns, char *buf)
{
    if (ns < 1000)
        snprintf(buf, AN_UNITS_BUF, "%u ns", (unsigned)ns);
    else if (ns < 1000000)
        snprintf(buf, AN_UNITS_BUF, "%.1f us", (double)ns / 1e3);
    else if (ns < 1000000000)
        snprintf(buf, AN_UNITS_BUF, "%.2f ms", (double)ns / 1e6);
    else if (ns < 60ull * 1000000000)
        snprintf(buf, AN_UNITS_BUF, "%.3f s", (double)ns / 1e9);
    else
        snprintf(buf, AN_UNITS_BUF, "%llu min %.1f s", (unsigned long long)(ns / 60000000000ull),
                 (double)(ns % 60000000000ull) / 1e9);
    return buf;
}

const char *an_units_percent(uint64_t part, uint64_t whole, char *buf)
{
    if (!whole || !part) {
        snprintf(buf, AN_UNITS_BUF, "0%%");
        return buf;
    }
    double pc = (double)part * 100.0 / (double)whole;
    if (pc < 0.05)
        snprintf(buf, AN_UNITS_BUF, "<0.1%%");
    else
        snprintf(buf, AN_UNITS_BUF, "%.1f%%", pc);
    return buf;
}
