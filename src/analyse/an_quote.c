/* an_quote.c - shell quoting of a profiled program's arguments for the
 * text outputs (an_quote.h). */
#include "analyse/an_quote.h"

#include <string.h>

static int is_plain(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           strchr("_@%+=:,./-", c) != NULL;
}

void an_quote_arg(FILE *out, const char *s)
{
    int plain = *s != 0, control = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        plain &= is_plain(*p);
        control |= *p < 0x20 || *p == 0x7f;
    }
    if (plain) {
        fputs(s, out);
        return;
    }
    if (!control) {
        fputc('\'', out);
        for (const char *p = s; *p; p++) {
            if (*p == '\'')
                fputs("'\\''", out);
            else
                fputc(*p, out);
        }
        fputc('\'', out);
        return;
    }
    fputs("$'", out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '\n': fputs("\\n", out); break;
        case '\t': fputs("\\t", out); break;
        case '\r': fputs("\\r", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\'': fputs("\\'", out); break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                fprintf(out, "\\x%02x", *p);
            else
                fputc(*p, out);
        }
    }
    fputc('\'', out);
}

void an_quote_argv(FILE *out, char *const *argv, uint32_t argc, uint32_t max)
{
    uint32_t n = max && argc > max ? max : argc;
    for (uint32_t i = 0; i < n; i++) {
        if (i)
            fputc(' ', out);
        an_quote_arg(out, argv[i] ? argv[i] : "");
    }
    if (n < argc)
        fputs(" ...", out);
}
