/* an_json.c - the streaming JSON writer of an_json.h.
 *
 * Escaping: '"' and '\\' get a backslash; control characters use \n, \t,
 * \r, \b, \f or \u00XX; bytes that do not form valid UTF-8 (bad lead or
 * continuation bytes, overlong forms, surrogates, above U+10FFFF) are
 * written as \ufffd, one per rejected byte.
 *
 * Output goes through the unlocked stdio calls and numbers are formatted
 * here, not by printf: the analyser writes from one thread, and a
 * profile of 65,539 stacks makes ~230 MB of --json.
 */
#define _GNU_SOURCE
#include "analyse/an_json.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Every put_ helper takes the stream last, as fputc and fputs do. */
static void put_c(char c, FILE *out)
{
    putc_unlocked(c, out);
}

static void put_n(const void *s, size_t n, FILE *out)
{
    fwrite_unlocked(s, 1, n, out);
}

static void put_s(const char *s, FILE *out)
{
    put_n(s, strlen(s), out);
}

/* A line break and depth * 2 spaces. */
static void put_indent(int depth, FILE *out)
{
    put_c('\n', out);
    for (int i = 0; i < depth * 2; i++)
        put_c(' ', out);
}

/* v in base 10, or in base 16 (lower case) with hex. */
static void put_u64(uint64_t v, int hex, FILE *out)
{
    char buf[24];
    size_t i = sizeof buf;
    do {
        unsigned d = (unsigned)(hex ? v & 15 : v % 10);
        buf[--i] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
        v = hex ? v >> 4 : v / 10;
    } while (v);
    put_n(buf + i, sizeof buf - i, out);
}

void an_json_init(an_json_t *j, FILE *out)
{
    j->out = out;
    j->depth = 0;
    j->after_key = 0;
    for (int i = 0; i < AN_JSON_MAX_DEPTH; i++)
        j->count[i] = 0;
}

/* Separator and line break before a value or key at the current level. */
static void an_json_sep(an_json_t *j)
{
    if (j->after_key) {
        j->after_key = 0;
        return;
    }
    if (j->depth == 0)
        return;
    int lvl = j->depth < AN_JSON_MAX_DEPTH ? j->depth : AN_JSON_MAX_DEPTH - 1;
    if (j->count[lvl])
        put_c(',', j->out);
    j->count[lvl] = 1;
    if (j->depth <= 2)
        put_indent(j->depth, j->out);
}

static void an_json_open(an_json_t *j, char c)
{
    an_json_sep(j);
    put_c(c, j->out);
    j->depth++;
    if (j->depth < AN_JSON_MAX_DEPTH)
        j->count[j->depth] = 0;
}

static void an_json_close(an_json_t *j, char c)
{
    int lvl = j->depth < AN_JSON_MAX_DEPTH ? j->depth : AN_JSON_MAX_DEPTH - 1;
    int had = j->count[lvl];
    j->depth--;
    if (had && j->depth < 2)
        put_indent(j->depth, j->out);
    put_c(c, j->out);
    if (j->depth == 0)
        put_c('\n', j->out);
}

void an_json_object_begin(an_json_t *j)
{
    an_json_open(j, '{');
}

void an_json_object_end(an_json_t *j)
{
    an_json_close(j, '}');
}

void an_json_array_begin(an_json_t *j)
{
    an_json_open(j, '[');
}

void an_json_array_end(an_json_t *j)
{
    an_json_close(j, ']');
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static size_t an_json_utf8_len(const unsigned char *s, size_t left)
{
    unsigned char c = s[0];
    size_t n;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (n > left)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

/* Writes str quoted and escaped.  Runs of bytes that need no escape go
 * out in one fwrite: a 65,539-stack profile's --json is ~230 MB of
 * mostly plain text, and a call per byte made the writer its cost. */
static void an_json_escape(FILE *out, const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    put_c('"', out);
    size_t run = 0; /* start of the pending plain run */
    for (size_t i = 0; i < len;) {
        unsigned char c = s[i];
        size_t n;
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            i++;
            continue;
        }
        if (c >= 0x80 && (n = an_json_utf8_len(s + i, len - i)) != 0) {
            i += n;
            continue;
        }
        if (i > run)
            put_n(s + run, i - run, out);
        if (c == '"' || c == '\\') {
            put_c('\\', out);
            put_c(c, out);
        } else if (c < 0x20) {
            switch (c) {
            case '\n': put_s("\\n", out); break;
            case '\t': put_s("\\t", out); break;
            case '\r': put_s("\\r", out); break;
            case '\b': put_s("\\b", out); break;
            case '\f': put_s("\\f", out); break;
            default: fprintf(out, "\\u%04x", c); break;
            }
        } else {
            put_s("\\ufffd", out); /* a byte that starts no valid UTF-8 sequence */
        }
        i++;
        run = i;
    }
    if (len > run)
        put_n(s + run, len - run, out);
    put_c('"', out);
}

void an_json_key(an_json_t *j, const char *key)
{
    an_json_sep(j);
    an_json_escape(j->out, key, strlen(key));
    put_c(':', j->out);
    j->after_key = 1;
}

void an_json_strn(an_json_t *j, const char *s, size_t len)
{
    an_json_sep(j);
    an_json_escape(j->out, s, len);
}

void an_json_str(an_json_t *j, const char *s)
{
    if (!s) {
        an_json_null(j);
        return;
    }
    an_json_strn(j, s, strlen(s));
}

void an_json_u64(an_json_t *j, uint64_t v)
{
    an_json_sep(j);
    put_u64(v, 0, j->out);
}

void an_json_bool(an_json_t *j, int v)
{
    an_json_sep(j);
    put_s(v ? "true" : "false", j->out);
}

void an_json_null(an_json_t *j)
{
    an_json_sep(j);
    put_s("null", j->out);
}

void an_json_hex(an_json_t *j, uint64_t v)
{
    an_json_sep(j);
    put_s("\"0x", j->out);
    put_u64(v, 1, j->out);
    put_c('"', j->out);
}

void an_json_hexbytes(an_json_t *j, const uint8_t *b, size_t len)
{
    an_json_sep(j);
    put_c('"', j->out);
    for (size_t i = 0; i < len; i++) {
        put_c("0123456789abcdef"[b[i] >> 4], j->out);
        put_c("0123456789abcdef"[b[i] & 15], j->out);
    }
    put_c('"', j->out);
}

void an_json_kv_u64(an_json_t *j, const char *key, uint64_t v)
{
    an_json_key(j, key);
    an_json_u64(j, v);
}

void an_json_kv_str(an_json_t *j, const char *key, const char *s)
{
    an_json_key(j, key);
    an_json_str(j, s);
}

void an_json_kv_bool(an_json_t *j, const char *key, int v)
{
    an_json_key(j, key);
    an_json_bool(j, v);
}
