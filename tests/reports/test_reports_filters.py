"""e2e_reports_filters: the filters and merges of `heapscope report`
change each view exactly as expected (rp_views.c, rp_clean.cpp): function
and module substrings, --min-bytes, --min-count, --top, --merge function,
--merge caller and --fold-templates, in JSON and text."""
import hstest
import rptest


def main(t):
    path = rptest.run_views(t)
    r = t.run("rp_clean", out="clean.hsp")
    clean = r.out

    # --function keeps the stacks with a frame containing the substring
    d = rptest.view(t, path, "--leaks", "--function", "leak_sm")
    t.eq("--function leak_sm --leaks", [("leak_small", 100, 1)] * 3, rptest.rows_by_fn0(d))
    t.eq("--function: total of what is shown", 300, d["total"])
    d = rptest.view(t, path, "--function", "alloc_in")
    t.eq("--function alloc_in (stacks view)", "stacks", d["view"])
    t.eq("--function alloc_in rows", [("alloc_in", 64, 1)] * 2, rptest.rows_by_fn0(d))
    t.eq("--function alloc_in callers", ["via_a", "via_b"],
         sorted(s["frames"][1]["function"] for s in d["stacks"]))
    d = rptest.view(t, path, "--histogram", "--function", "hist_site")
    t.eq("--function hist_site --histogram", [(24, 10), (100, 5), (19456, 2)],
         [(s["size_lo"], s["allocations"]) for s in d["sizes"]])
    d = rptest.view(t, path, "--tree", "--function", "peak_site", "--threshold", "0")
    t.eq("--function peak_site --tree total", 200000, d["total"])

    # --module: a module file name substring
    d = rptest.view(t, path, "--module", "libstdc++")
    t.eq("--module libstdc++ on a C program", 0, d["rows"])
    d = rptest.view(t, clean, "--temporary", "--module", "rp_clean")
    t.true("--module rp_clean keeps the stacks with a frame in rp_clean",
           d["rows"] >= 2 and all(any("rp_clean" in (f["module"] or "") for f in s["frames"])
                                  for s in d["stacks"]), str(d["stacks"]))

    # --min-bytes / --min-count on the view's own figures
    d = rptest.view(t, path, "--leaks", "--min-bytes", "1000")
    t.eq("--min-bytes 1000 --leaks", [("leak_big", 1000, 1)], rptest.rows_by_fn0(d))
    d = rptest.view(t, path, "--peak", "--min-count", "2")
    t.eq("--min-count 2 --peak", [("peak_site", 200000, 4)], rptest.rows_by_fn0(d))
    d = rptest.view(t, path, "--temporary", "--min-count", "2")
    t.eq("--min-count 2 --temporary", [("temp_site", 640, 20)], rptest.rows_by_fn0(d))

    # --top N
    d = rptest.view(t, path, "--leaks", "--top", "2")
    t.eq("--top 2 --leaks", [("leak_big", 1000, 1), ("leak_small", 100, 1)],
         rptest.rows_by_fn0(d))
    txt = rptest.text(t, path, "--leaks", "--top", "1")
    t.true("--top 1 text", "  1. 1000 B" in txt and "  2. " not in txt and
           "... 3 more rows" in txt, txt)

    # --top N in the tree: children per node
    d = rptest.view(t, path, "--tree", "--threshold", "0", "--top", "3")
    t.eq("--top 3 --tree nodes", ["main", "peak_site", "hist_site", "leak_big"],
         [n["function"] for n in d["nodes"]])
    txt = rptest.text(t, path, "--tree", "--threshold", "0", "--top", "3")
    t.true("--top 3 --tree text", "(4 more, past --top 3)" in txt, txt)

    # --merge function: the three leak_small stacks differ only in main's line
    d = rptest.view(t, path, "--leaks", "--merge", "function")
    t.eq("--merge function --leaks", [("leak_big", 1000, 1), ("leak_small", 300, 3)],
         rptest.rows_by_fn0(d))
    t.eq("--merge function: merged stack ids", 3, len(d["stacks"][1]["stack_ids"]))
    t.eq("--merge function: no line numbers", {0}, {f["line"] for f in d["stacks"][1]["frames"]})
    txt = rptest.text(t, path, "--leaks", "--merge", "function")
    t.true("--merge function text", "300 B in 3 blocks, 23.1% of the leaks; 3 stacks merged" in txt,
           txt)
    # --merge caller: via_a and via_b both reach malloc through alloc_in
    d = rptest.view(t, path, "--function", "alloc_in", "--merge", "caller")
    t.eq("--merge caller rows", [("alloc_in", 128, 2)], rptest.rows_by_fn0(d))
    t.eq("--merge caller frames: the site only", ["alloc_in"], rptest.functions(d["stacks"][0]))
    d = rptest.view(t, path, "--leaks", "--merge", "caller")
    t.eq("--merge caller --leaks", [("leak_big", 1000, 1), ("leak_small", 300, 3)],
         rptest.rows_by_fn0(d))

    # --fold-templates: tmpl_site<int> and tmpl_site<long> (new T[10], deleted)
    d = rptest.view(t, clean, "--function", "tmpl_site")
    # frame 0: heapscope interposes operator new[] itself, so the stack
    # starts at the code that said `new`
    names = sorted(s["frames"][0]["function"] for s in d["stacks"])
    t.eq("two template instances", ["void hsrp::tmpl_site<int>()",
                                    "void hsrp::tmpl_site<long>()"], names)
    t.eq("their bytes", [40, 80], sorted(s["bytes"] for s in d["stacks"]))
    d = rptest.view(t, clean, "--function", "tmpl_site", "--fold-templates")
    t.eq("--fold-templates names", ["void hsrp::tmpl_site<...>()"] * 2,
         [s["frames"][0]["function"] for s in d["stacks"]])
    d = rptest.view(t, clean, "--function", "tmpl_site", "--fold-templates", "--merge", "function")
    t.eq("--fold-templates --merge function: one row", [(120, 2)],
         [(s["bytes"], s["count"]) for s in d["stacks"]])
    d = rptest.view(t, clean, "--function", "tmpl_site<...>", "--fold-templates")
    t.eq("--function matches folded names", 2, d["rows"])
    d = rptest.view(t, clean, "--tree", "--fold-templates", "--function", "tmpl_site",
                    "--threshold", "0")
    t.eq("--fold-templates in the tree", [("void hsrp::tmpl_site<...>()", 120)],
         [(n["function"], n["inclusive"]) for n in d["nodes"] if n["depth"] == 1])


if __name__ == "__main__":
    hstest.main(main)
