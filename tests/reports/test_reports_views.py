"""e2e_reports_views: each view of `heapscope report` on rp_views.c, whose
allocations are known exactly (see its header): --leaks, --peak,
--temporary, --histogram (global and --stack), --timeline, --tree and
--tree --bottom-up, in JSON (exact figures) and text (the same figures as
printed)."""
import hstest
import rptest


def check_tree(t, doc, what):
    """inclusive = self + sum of the children's inclusive, for every node."""
    kids = {}
    for n in doc["nodes"]:
        kids.setdefault(n["parent"], []).append(n)
    for n in doc["nodes"]:
        s = n["self"] + sum(c["inclusive"] for c in kids.get(n["id"], []))
        t.eq("%s: %s inclusive = self + children" % (what, n["function"]), n["inclusive"], s)
    t.eq("%s: roots sum to the total" % what, doc["total"],
         sum(n["inclusive"] for n in kids.get(0, [])))


def main(t):
    path = rptest.run_views(t)

    # --leaks: leak_big first, then the three leak_small stacks
    d = rptest.view(t, path, "--leaks")
    t.eq("leaks view", "leaks", d["view"])
    t.eq("leaks total", 1300, d["total"])
    t.eq("leaks rows", [("leak_big", 1000, 1)] + [("leak_small", 100, 1)] * 3,
         rptest.rows_by_fn0(d))
    t.eq("leaks share of leak_big (ppm)", 769231, d["stacks"][0]["share_ppm"])
    t.eq("leaks suppressed", (0, 0, 0), (d["suppressed"]["stacks"], d["suppressed"]["bytes"],
                                          d["suppressed"]["blocks"]))
    txt = rptest.text(t, path, "--leaks")
    t.true("leaks text total", "leaked (live at exit) 1.3 KiB (1,300 bytes) in 4 blocks, 4 stacks"
           in txt, txt)
    t.true("leaks text first row", "  1. 1000 B in 1 block, 76.9% of the leaks" in txt, txt)
    t.true("leaks text frame", "#0  leak_big  " in txt and "rp_views.c:" in txt, txt)

    # --peak: 1,000 + 300 + 200,000 live at the peak (single thread: exact)
    d = rptest.view(t, path, "--peak")
    t.eq("peak total", 201300, d["total"])
    t.eq("peak exact", 0, d["peak_error"])
    t.eq("peak rows", [("peak_site", 200000, 4), ("leak_big", 1000, 1)] +
         [("leak_small", 100, 1)] * 3, rptest.rows_by_fn0(d))
    t.eq("peak share of peak_site (ppm)", 993542, d["stacks"][0]["share_ppm"])
    t.eq("peak rows sum to the peak", 201300, sum(r["bytes"] for r in d["stacks"]))
    txt = rptest.text(t, path, "--peak")
    t.true("peak text", "peak heap 196.6 KiB (201,300 bytes) at " in txt and
           "195.3 KiB (200,000 bytes) in 4 blocks, 99.4% of the peak" in txt, txt)

    # --temporary: 20 + 1 (peak_site) + 1 (hist_site) + 1 + 1 (alloc_in)
    d = rptest.view(t, path, "--temporary")
    t.eq("temporary total (all allocations)", 47, d["total"])
    t.eq("temporary allocations", 24, d["temporary_allocations"])
    rows = rptest.rows_by_fn0(d)
    t.eq("temporary first row", ("temp_site", 640, 20), rows[0])
    t.eq("temporary share of temp_site (ppm)", 425532, d["stacks"][0]["share_ppm"])
    t.eq("temporary counts by site", {"temp_site": 20, "peak_site": 1, "hist_site": 1,
                                      "alloc_in": 2},
         {f: sum(c for g, _, c in rows if g == f) for f, _, _ in rows})
    txt = rptest.text(t, path, "--temporary")
    t.true("temporary text", "24 temporary allocations of 47 (51.1%)" in txt and
           "20 temporary of 20 allocations (42.6% of all allocations)" in txt, txt)

    # --histogram: every size of the program, buckets above 8192
    d = rptest.view(t, path, "--histogram")
    sizes = [(s["size_lo"], s["size_hi"], s["allocations"], s["bytes"]) for s in d["sizes"]]
    t.eq("histogram sizes", [(24, 24, 10, 240), (32, 32, 20, 640), (64, 64, 2, 128),
                             (100, 100, 8, 800), (1000, 1000, 1, 1000),
                             (19456, 20479, 2, 40000), (49152, 51199, 4, 200000)], sizes)
    t.eq("histogram allocations", 47, d["allocations"])
    temp_id = rptest.view(t, path, "--temporary")["stacks"][0]["id"]
    d = rptest.view(t, path, "--histogram", "--stack", str(temp_id))
    t.eq("histogram of temp_site's stack", [(32, 32, 20, 640)],
         [(s["size_lo"], s["size_hi"], s["allocations"], s["bytes"]) for s in d["sizes"]])
    txt = rptest.text(t, path, "--histogram", "--width", "80")
    line = [l for l in txt.splitlines() if l.startswith("32 ")]
    t.true("histogram text row for 32 bytes", len(line) == 1 and " 20 " in line[0] and
           "42.6%" in line[0] and line[0].rstrip().endswith("#" * 22), repr(line))
    t.true("histogram text bucket row", any(l.startswith("19456-20479 ") for l in txt.splitlines()),
           txt)
    t.true("histogram text fits 80 columns", max(len(l) for l in txt.splitlines()) <= 80, txt)

    # --timeline: samples every 1 ms; peak_site holds the peak for 40 ms
    d = rptest.view(t, path, "--timeline")
    t.true("timeline has samples", len(d["samples"]) >= 5, str(len(d["samples"])))
    t.eq("timeline reaches the peak", 201300, max(s["heap"] for s in d["samples"]))
    t.eq("timeline max_heap", 201300, d["max_heap"])
    t.true("timeline times increase", all(a["t_ns"] <= b["t_ns"] for a, b in
                                          zip(d["samples"], d["samples"][1:])))
    txt = rptest.text(t, path, "--timeline", "--width", "100")
    t.true("timeline text shows the peak", "196.6 KiB" in txt and "every 1 ms" in txt, txt)
    t.true("timeline text rows <= 100", len(txt.splitlines()) <= 110, str(len(txt.splitlines())))
    t.true("timeline text fits 100 columns", max(len(l) for l in txt.splitlines()) <= 100)

    # --tree: top-down from main, by bytes allocated, nothing pruned
    d = rptest.view(t, path, "--tree", "--threshold", "0")
    t.eq("tree total", 242808, d["total"])
    top = [n for n in d["nodes"] if n["parent"] == 0]
    t.eq("tree root is main", ["main"], [n["function"] for n in top])
    kids = {n["function"]: (n["inclusive"], n["self"]) for n in d["nodes"]
            if n["parent"] == top[0]["id"]}
    t.eq("tree children of main", {"peak_site": (200000, 200000), "hist_site": (40740, 40740),
                                   "leak_big": (1000, 1000), "temp_site": (640, 640),
                                   "leak_small": (300, 300), "via_a": (64, 0),
                                   "via_b": (64, 0)}, kids)
    check_tree(t, d, "tree")
    # bottom-up by leaked bytes: allocation sites, then their callers
    d = rptest.view(t, path, "--tree", "--bottom-up", "--sort", "leaked", "--threshold", "0")
    t.eq("bottom-up total", 1300, d["total"])
    top = {n["function"]: (n["inclusive"], n["self"]) for n in d["nodes"] if n["parent"] == 0}
    t.eq("bottom-up sites", {"leak_big": (1000, 0), "leak_small": (300, 0)}, top)
    check_tree(t, d, "bottom-up")
    # the default threshold (1%) prunes the small subtrees into one line
    txt = rptest.text(t, path, "--tree")
    t.true("tree text", "237.1 KiB allocated in 12 stacks; top-down from main" in txt and
           "  195.3 KiB  82.4%   195.3 KiB    peak_site  (rp_views)" in txt and
           "(5 below threshold)" in txt, txt)


if __name__ == "__main__":
    hstest.main(main)
