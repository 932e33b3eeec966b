"""The recursion figure of the mprof paper (mp_recurse.c): main -> f -> g
-> f -> g -> malloc(10), 100 times.  The pairs count 2,000 bytes over
f -> g; f and g must merge into <cycle 1> and main's self + desc must be
1,000 bytes (100%), with the 300 intra-cycle calls as recursion."""

import mptest
import hstest


def main(t):
    r = t.run("mp_recurse", out="r.hsp")
    text = mptest.mprof_text(t, r.out)
    e = mptest.graph_entries(text)
    t.eq("entries (main, cycle members, cycle)", 3, len(e))
    t.eq("main entry", [
        "[0]    100.0        0       |             | ----------- |       0         main [0]",
        "                 1000 (**)  | **          | **          |     100/100         <cycle 1> [1]"],
        e[0])
    t.eq("cycle members", [
        "[1]    100.0     1000 (**)  | **          | ----------- |     100+300     <cycle 1> as a whole [1]",
        "                 1000 (**)  | **          | **          |                     g in <cycle 1>",
        "                    0       |             |             |                     f in <cycle 1>"],
        e[1])
    t.eq("cycle entry", [
        "                 1000 (**)  | **          | **          |     100/100         main [0]",
        "[1]    100.0     1000 (**)  | **          | ----------- |     100+300     <cycle 1> [1]"],
        e[2])
    leaks = mptest.table(text, "Memory Leaks")
    t.eq("leak row: the whole 5-function chain, so rooted",
         "      1000 (**)       100      1000 (**)   || > main > f > g > f > g", leaks[5])

    j = mptest.mprof_json(t, r.out)
    g = {x["name"]: x for x in j["call_graph"]}
    t.eq("json cycle", (["g", "f"], 1000, 1000, 100, 300),
         (sorted(g["<cycle 1>"]["members"], reverse=True), g["<cycle 1>"]["self"],
          g["<cycle 1>"]["self_desc"], g["<cycle 1>"]["called"], g["<cycle 1>"]["recursive"]))
    t.eq("json main", (1000, [("<cycle 1>", 1000, 100)]),
         (g["main"]["self_desc"],
          [(c["name"], c["bytes"], c["called"]) for c in g["main"]["children"]]))
    t.eq("no f or g entries of their own", (False, False), ("f" in g, "g" in g))


hstest.main(main)
