/* an_json.c - the streaming JSON writer of an_json.h.
 *
 * Escaping: '"' and '\\' get a backslash; control characters use \n, \t,
 * \r, \b, \f or \u00XX; bytes that do not form valid UTF-8 (bad lead or
 * continuation bytes, overlong forms, surrogates, above U+10FFFF) are
 * written as \ufffd, one per rejected byte.
 */
#include "analyse/an_json.h"

#include <inttypes.h>
#include <string.h>

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
        fputc(',', j->out);
    j->count[lvl] = 1;
    if (j->depth <= 2)
        fprintf(j->out, "\n%*s", j->depth * 2, "");
}

static void an_json_open(an_json_t *j, char c)
{
    an_json_sep(j);
    fputc(c, j->out);
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
        fprintf(j->out, "\n%*s", j->depth * 2, "");
    fputc(c, j->out);
    if (j->depth == 0)
        fputc('\n', j->out);
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

static void an_json_escape(FILE *out, const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', out);
    for (size_t i = 0; i < len;) {
        unsigned char c = s[i];
        if (c == '"' || c == '\\') {
            fputc('\\', out);
            fputc(c, out);
            i++;
        } else if (c < 0x20) {
            switch (c) {
            case '\n': fputs("\\n", out); break;
            case '\t': fputs("\\t", out); break;
            case '\r': fputs("\\r", out); break;
            case '\b': fputs("\\b", out); break;
            case '\f': fputs("\\f", out); break;
            default: fprintf(out, "\\u%04x", c); break;
            }
            i++;
        } else {
            size_t n = an_json_utf8_len(s + i, len - i);
            if (!n) {
                fputs("\\ufffd", out);
                i++;
            } else {
                fwrite(s + i, 1, n, out);
                i += n;
            }
        }
    }
    fputc('"', out);
}

void an_json_key(an_json_t *j, const char *key)
{
    an_json_sep(j);
    an_json_escape(j->out, key, strlen(key));
    fputc(':', j->out);
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
    fprintf(j->out, "%" PRIu64, v);
}

void an_json_bool(an_json_t *j, int v)
{
    an_json_sep(j);
    fputs(v ? "true" : "false", j->out);
}

void an_json_null(an_json_t *j)
{
    an_json_sep(j);
    fputs("null", j->out);
}

void an_json_hex(an_json_t *j, uint64_t v)
{
    an_json_sep(j);
    fprintf(j->out, "\"0x%" PRIx64 "\"", v);
}

void an_json_hexbytes(an_json_t *j, const uint8_t *b, size_t len)
{
    an_json_sep(j);
    fputc('"', j->out);
    for (size_t i = 0; i < len; i++)
        fprintf(j->out, "%02x", b[i]);
    fputc('"', j->out);
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
