/* test_reports_unit.c - unit tests of the string rules the report views
 * use: C++ template folding (an_filter_fold), LeakSanitizer's pattern
 * match (an_suppress_match) and counts with their nouns (an_units_noun). */
#include <stdio.h>
#include <string.h>

#include "analyse/an_filter.h"
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

int main(void)
{
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
