/* test_ab_unit.c - unit tests of `heapscope bench`'s pure parts: medians
 * with spread (negative = not measured), the parser of strace -c summaries
 * and the reader of a profile's peak and timeline from report --json. */
#include <stdio.h>
#include <string.h>

#include "allocbench/ab_passes.h"
#include "allocbench/ab_stats.h"
#include "unit_check.h"


static void test_spread(void)
{
    double odd[] = {3, -1, 1, 2};
    ab_spread_t s = ab_stats_spread(odd, 4);
    CHECK(s.n == 3 && s.median == 2 && s.min == 1 && s.max == 3);
    double even[] = {4, 1, 3, 2};
    s = ab_stats_spread(even, 4);
    CHECK(s.n == 4 && s.median == 2.5 && s.min == 1 && s.max == 4);
    double none[] = {-1, -1};
    s = ab_stats_spread(none, 2);
    CHECK(s.n == 0 && s.median < 0);
}

static void test_strace(void)
{
    const char *text =
        "% time     seconds  usecs/call     calls    errors syscall\n"
        "------ ----------- ----------- --------- --------- ----------------\n"
        " 52.03    0.000090           1        53           mmap\n"
        " 20.00    0.000030           2        12           munmap\n"
        " 10.00    0.000020           1         7         1 brk\n"
        "------ ----------- ----------- --------- --------- ----------------\n"
        "100.00    0.000173           2        72         1 total\n";
    ab_result_t r;
    memset(&r, 0, sizeof r);
    r.madvise = -1;
    CHECK(ab_syscalls_parse(text, &r) == 0);
    CHECK(r.mmap == 53 && r.munmap == 12 && r.brk == 7 && r.madvise == 0);
    CHECK(ab_syscalls_parse("strace: exec failed\n", &r) == -1);
    CHECK(ab_syscalls_parse(NULL, &r) == -1);
}

static void test_frag(void)
{
    const char *json = "{\"summary\":{\"peak_bytes\":1000,\"peak_time_ns\":250,"
                       "\"rss_peak\":9000},\"stacks\":[],\"timeline\":[\n"
                       "{\"t_ns\":100,\"heap\":10,\"rss\":1000,\"allocations\":1,\"frees\":0},\n"
                       "{\"t_ns\":240,\"heap\":10,\"rss\":2000,\"allocations\":1,\"frees\":0},\n"
                       "{\"t_ns\":300,\"heap\":10,\"rss\":3000,\"allocations\":1,\"frees\":0}\n"
                       "],\"modules\":[]}";
    double peak = 0, rss = 0;
    CHECK(ab_frag_parse(json, &peak, &rss) == 0);
    CHECK(peak == 1000 && rss == 2000); /* the sample nearest t=250 */
    const char *no_tl = "{\"peak_bytes\":5,\"peak_time_ns\":1,\"rss_peak\":77,\"timeline\":[]}";
    CHECK(ab_frag_parse(no_tl, &peak, &rss) == 0 && rss == 77);
    CHECK(ab_frag_parse("{\"summary\":{}}", &peak, &rss) == -1);
}

int main(void)
{
    test_spread();
    test_strace();
    test_frag();
    return unit_check_done("allocbench_unit");
}
