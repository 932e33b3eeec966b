/* an_quote.h - a profiled program's command line as the text outputs show
 * it: each argument as a shell would read it back, so that one with a
 * space, a quote or a newline (python3 -c 'CODE') neither runs into the
 * next nor breaks the line it is printed on. */
#ifndef AN_QUOTE_H
#define AN_QUOTE_H

#include <stdint.h>
#include <stdio.h>

/* Write s to out: as it is if every byte is a letter, digit or one of
 * _@%+=:,./- ; else in single quotes ('\'' for a quote); or, if it holds
 * a control byte, as $'...' with \n, \t, \r, \\, \' and \xNN escapes. */
void an_quote_arg(FILE *out, const char *s);

/* The first `max` arguments of argv, each quoted and separated by a space,
 * then " ..." if there were more (max 0: all). */
void an_quote_argv(FILE *out, char *const *argv, uint32_t argc, uint32_t max);

#endif
