/* an_json.h - a small streaming JSON writer for `heapscope report --json`.
 *
 * The writer tracks nesting and commas, so callers only say what comes
 * next.  Strings are escaped per RFC 8259 and invalid UTF-8 (profiles are
 * untrusted) becomes U+FFFD, so the output is always valid JSON.  Members
 * of the top-level object and elements of arrays directly inside it start
 * on their own line; deeper values stay on that line.
 *
 *   an_json_t j; an_json_init(&j, stdout);
 *   an_json_object_begin(&j);
 *   an_json_key(&j, "n"); an_json_u64(&j, 3);
 *   an_json_object_end(&j);          // {\n  "n":3\n}
 */
#ifndef AN_JSON_H
#define AN_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define AN_JSON_MAX_DEPTH 32

typedef struct an_json {
    FILE *out;
    int depth;
    int after_key;                      /* a key was written, value next */
    unsigned char count[AN_JSON_MAX_DEPTH]; /* 0: no element yet at that level */
} an_json_t;

void an_json_init(an_json_t *j, FILE *out);
void an_json_object_begin(an_json_t *j);
void an_json_object_end(an_json_t *j);
void an_json_array_begin(an_json_t *j);
void an_json_array_end(an_json_t *j);
void an_json_key(an_json_t *j, const char *key);
/* A string value; NULL writes null. */
void an_json_str(an_json_t *j, const char *s);
void an_json_strn(an_json_t *j, const char *s, size_t len);
void an_json_u64(an_json_t *j, uint64_t v);
void an_json_bool(an_json_t *j, int v);
void an_json_null(an_json_t *j);
/* A string "0x1a2b". */
void an_json_hex(an_json_t *j, uint64_t v);
/* Binary as a lowercase hex string ("" when empty). */
void an_json_hexbytes(an_json_t *j, const uint8_t *b, size_t len);

/* key + value shorthands */
void an_json_kv_u64(an_json_t *j, const char *key, uint64_t v);
void an_json_kv_str(an_json_t *j, const char *key, const char *s);
void an_json_kv_bool(an_json_t *j, const char *key, int v);

#endif
