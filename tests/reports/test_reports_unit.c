/* test_reports_unit.c - unit tests of the string rules the report views
 * use: C++ template folding (an_filter_fold), LeakSanitizer's pattern
 * match (an_suppress_match), counts with their nouns (an_units_noun) and
 * the JSON writer's escapes and numbers (an_json). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/an_filter.h"
#include "analyse/an_json.h"
#include "analyse/an_suppress.h"
#include "analyse/an_units.h"

static int failures;

static void fold_is(const char *in, const char *want)
{
    char buf[256];
    an_filter_fold(in, buf, sizeof buf);
    if (strcmp(buf, want)) {
        printf("FAIL fold(%s): expected %s, got %s\n", in, want, buf);
        failures++;
    }
}

static void match_is(const char *pat, const char *s, int want)
{
    if (an_suppress_match(pat, s) != want) {
        printf("FAIL match(%s, %s): expected %d\n", pat, s, want);
        failures++;
    }
}

static void noun_is(unsigned long long n, const char *noun, const char *want)
{
    char buf[AN_UNITS_BUF];
    const char *got = an_units_noun(n, noun, buf);
    if (strcmp(got, want)) {
        printf("FAIL noun(%llu, %s): expected %s, got %s\n", n, noun, want, got);
        failures++;
    }
}

/* The JSON text of one string value of len bytes, or of a few numbers. */
static void json_is(const char *what, const char *in, size_t len, const char *want)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f) {
        printf("FAIL json(%s): open_memstream\n", what);
        failures++;
        return;
    }
    an_json_t j;
    an_json_init(&j, f);
    if (in) {
        an_json_strn(&j, in, len);
    } else {
        static const uint8_t id[] = {0x00, 0x0f, 0xa5, 0xff};
        an_json_array_begin(&j);
        an_json_u64(&j, 0);
        an_json_u64(&j, 18446744073709551615ull);
        an_json_hex(&j, 0);
        an_json_hex(&j, 0xdeadbeef0123ull);
        an_json_hexbytes(&j, id, sizeof id);
        an_json_array_end(&j);
    }
    fclose(f);
    if (strcmp(buf, want)) {
        printf("FAIL json(%s): expected [%s], got [%s]\n", what, want, buf);
        failures++;
    }
    free(buf);
}

/* A string literal's bytes, embedded NULs included. */
#define JSON_IS(what, lit, want) json_is(what, lit, sizeof(lit) - 1, want)

static void json_checks(void)
{
    JSON_IS("plain", "malloc", "\"malloc\"");
    JSON_IS("empty", "", "\"\"");
    JSON_IS("quote, backslash", "a\"b\\c", "\"a\\\"b\\\\c\"");
    JSON_IS("control", "x\n\t\r\b\f\001\037y", "\"x\\n\\t\\r\\b\\f\\u0001\\u001fy\"");
    JSON_IS("DEL is plain", "\177", "\"\177\"");
    JSON_IS("valid UTF-8", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
            "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    JSON_IS("bad lead byte", "a\xff" "b", "\"a\\ufffdb\"");
    JSON_IS("overlong", "\xc0\x80", "\"\\ufffd\\ufffd\"");
    JSON_IS("surrogate", "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");
    JSON_IS("above U+10FFFF", "\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
    JSON_IS("cut sequence", "ok\xe2\x82", "\"ok\\ufffd\\ufffd\"");
    JSON_IS("embedded NUL", "a\0b", "\"a\\u0000b\"");
    json_is("numbers", NULL, 0,
            "[\n  0,\n  18446744073709551615,\n  \"0x0\",\n  \"0xdeadbeef0123\",\n"
            "  \"000fa5ff\"\n]\n");
}

int main(void)
{
    json_checks();
    noun_is(0, "block", "0 blocks");
    noun_is(1, "block", "1 block");
    noun_is(2, "block", "2 blocks");
    noun_is(1, "temporary allocation", "1 temporary allocation");
    noun_is(1234567, "allocation", "1,234,567 allocations");
    noun_is(18446744073709551615ull, "temporary allocation",
            "18,446,744,073,709,551,615 temporary allocations");

    fold_is("void f<int>()", "void f<...>()");
    fold_is("std::vector<std::pair<int, long>, std::allocator<std::pair<int, long> > >::push_back",
            "std::vector<...>::push_back");
    fold_is("bool operator< <int>(a<int> const&, a<int> const&)",
            "bool operator< <...>(a<...> const&, a<...> const&)");
    fold_is("std::ostream& std::operator<< <std::char_traits<char> >(std::ostream&, char const*)",
            "std::ostream& std::operator<< <...>(std::ostream&, char const*)");
    fold_is("x::operator<=(int)", "x::operator<=(int)");
    fold_is("x::operator->()", "x::operator->()");
    fold_is("broken<int", "broken<...>");
    fold_is("main", "main");
    char small[8];
    an_filter_fold("abcdefghijkl", small, sizeof small);
    if (strcmp(small, "abcdefg")) {
        printf("FAIL fold truncates: got %s\n", small);
        failures++;
    }

    match_is("leak_big", "leak_big", 1);
    match_is("leak_big", "my_leak_big_one", 1);  /* a substring */
    match_is("^leak", "leak_big", 1);
    match_is("^leak", "my_leak", 0);
    match_is("big$", "leak_big", 1);
    match_is("big$", "leak_bigger", 0);
    match_is("^leak_*l$", "leak_small", 1);
    match_is("^leak_*l$", "leak_smallx", 0);
    match_is("a*b*c", "xxaYYbZZcxx", 1);
    match_is("a*b*c", "xxaYYcZZbxx", 0);
    match_is("*", "", 1);
    match_is("libstdc++.so", "libstdc++.so.6", 1);
    match_is("^$", "", 1);
    match_is("^$", "x", 0);

    if (!failures)
        printf("test_reports_unit: all checks passed\n");
    return failures != 0;
}
