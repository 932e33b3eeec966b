"""The widget program of the mprof paper (mp_widgets.c): 10,000 widgets of
204 bytes, the 5,000 red ones never freed.  Asserts every figure of the
four tables, text and JSON."""

import mptest
import hstest

SEP = "-------------------------------s--m--l--x----s--m--l--x----------"


def main(t):
    r = t.run("mp_widgets", out="w.hsp")
    text = mptest.mprof_text(t, r.out)

    bins = mptest.table(text, "Allocation Bins")
    t.eq("bin header", "      size:    allocs     bytes (%)      frees      kept (%)     types",
         bins[2].rstrip())
    t.eq("bin 204", "        204     10000   2040000 (**)      5000   1020000 (**)", bins[3])
    t.eq("bin > 1024", "     > 1024         0         0              0         0", bins[4].rstrip())
    t.eq("bin total", "    <TOTAL>     10000   2040000           5000   1020000", bins[5])

    leaks = mptest.table(text, "Memory Leaks")
    t.eq("leak total", "Total bytes not freed: 1020000", leaks[2])
    t.eq("leak header (no frees columns)", "kept bytes (%)     allocs     bytes (%)     path",
         leaks[4].rstrip())
    t.eq("leak row", "   1020000 (**)      5000   1020000 (**)   || > main > make_red_widget > make_widget",
         leaks[5])
    t.eq("one leak path", "", leaks[6] if len(leaks) > 6 else "")

    direct = mptest.table(text, "Direct Allocation Table")
    t.eq("direct header", "     % mem        bytes | % mem(size) |   bytes kept |  % all kept |        calls   name",
         direct[2])
    t.eq("direct total", "     -----      2040000 |    **       |      1020000 |    **       |        10000   <TOTAL>",
         direct[4])
    t.eq("direct make_widget", "     100.0      2040000 |    **       |      1020000 |    **       |        10000   make_widget",
         direct[5])
    t.eq("direct: one function", "", direct[6])

    e = mptest.graph_entries(text)
    t.eq("graph entries", 4, len(e))
    t.eq("main entry", [
        "[0]    100.0        0       |             | ----------- |       0         main [0]",
        "              1020000 (50)  |    **       |    50       |    5000/5000        make_blue_widget [2]",
        "              1020000 (50)  |    **       |    50       |    5000/5000        make_red_widget [3]",
        "         all  2040000       |    **       |             |"],
        sorted(e[0][1:3]) and [e[0][0]] + sorted(e[0][1:3]) + [e[0][3]])
    t.eq("make_widget entry", [
        "         all  2040000       |    **       |             |",
        "[1]    100.0  2040000 (**)  |    **       | ----------- |   10000         make_widget [1]"],
        [e[1][0], e[1][3]])
    t.eq("make_widget ancestors", [
        "              1020000 (50)  |    **       |    50       |    5000/5000        make_blue_widget [2]",
        "              1020000 (50)  |    **       |    50       |    5000/5000        make_red_widget [3]"],
        sorted(e[1][1:3]))
    t.eq("make_red_widget entry", [
        "              1020000 (**)  |    **       |    **       |    5000/10000       main [0]",
        "[3]     50.0        0       |             | ----------- |    5000         make_red_widget [3]",
        "              1020000 (**)  |    **       |    **       |    5000/10000       make_widget [1]"],
        e[3])
    t.true("no consistency complaint", "disagree" not in text)

    j = mptest.mprof_json(t, r.out)
    t.eq("json totals", {"allocs": 10000, "bytes": 2040000, "frees": 5000, "kept": 1020000,
                          "truncated_stacks": 0},
         j["totals"])
    t.eq("json bins", [{"size": 204, "allocs": 10000, "bytes": 2040000, "frees": 5000,
                        "kept": 1020000}], j["bins"])
    t.eq("json leaks", [{"kept": 1020000, "allocs": 5000, "bytes": 1020000, "frees": 0,
                         "bytes_freed": 0, "rooted": True,
                         "path": ["main", "make_red_widget", "make_widget"]}], j["leaks"])
    d = j["direct"]
    t.eq("json direct", [("make_widget", 2040000, 1020000, 10000, 2040000, 1020000)],
         [(x["function"], x["bytes"], x["bytes_kept"], x["calls"],
           x["bytes_by_class"]["medium"], x["kept_by_class"]["medium"]) for x in d])
    g = {x["name"]: x for x in j["call_graph"]}
    t.eq("json graph main", (0, 0, 2040000, 0),
         (g["main"]["index"], g["main"]["self"], g["main"]["self_desc"], g["main"]["called"]))
    t.eq("json graph make_widget", (1, 2040000, 2040000, 10000, 0),
         (g["make_widget"]["index"], g["make_widget"]["self"], g["make_widget"]["self_desc"],
          g["make_widget"]["called"], g["make_widget"]["recursive"]))
    t.eq("json red parents", [{"name": "main", "index": 0, "bytes": 1020000, "called": 5000,
                               "total": 10000}], g["make_red_widget"]["parents"])
    t.eq("json red children", [{"name": "make_widget", "index": 1, "bytes": 1020000,
                                "called": 5000, "total": 10000}],
         g["make_red_widget"]["children"])


hstest.main(main)
