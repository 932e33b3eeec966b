"""`heapscope diff A B` on two versions of mp_diffprog.c (A: no argument,
B: "new"): exact deltas per stack, the new and the gone stack, totals,
--sort, --top, --json and bad input."""

import mptest
import hstest


def first_fn(stack):
    return stack["frames"][0]["function"]


def main(t):
    a = t.run("mp_diffprog", out="a.hsp").out
    b = t.run("mp_diffprog", args=["new"], out="b.hsp").out

    j = mptest.json_of(t, ["diff", "--json", "--top", "0", a, b])
    t.eq("totals before", {"allocations": 160, "bytes": 9000, "leaked": 1600},
         {k: j["totals"]["before"][k] for k in ("allocations", "bytes", "leaked")})
    t.eq("totals after", {"allocations": 360, "bytes": 30080, "leaked": 10880},
         {k: j["totals"]["after"][k] for k in ("allocations", "bytes", "leaked")})
    t.eq("counts", (4, 1, 1), (j["stacks_changed"], j["stacks_new"], j["stacks_gone"]))
    # default sort: bytes, by size of the change
    t.eq("order by bytes", ["site_common", "site_new", "site_gone", "site_shrink"],
         [first_fn(s) for s in j["stacks"]])
    by = {first_fn(s): s for s in j["stacks"]}
    t.eq("site_common", ("changed", 100, 6400, 300, 19200, 0),
         (by["site_common"]["status"], by["site_common"]["before"]["allocations"],
          by["site_common"]["before"]["bytes"], by["site_common"]["after"]["allocations"],
          by["site_common"]["after"]["bytes"], by["site_common"]["after"]["leaked"]))
    t.eq("site_shrink", ("changed", 50, 1600, 1600, 20, 640, 640),
         (by["site_shrink"]["status"], by["site_shrink"]["before"]["allocations"],
          by["site_shrink"]["before"]["bytes"], by["site_shrink"]["before"]["leaked"],
          by["site_shrink"]["after"]["allocations"], by["site_shrink"]["after"]["bytes"],
          by["site_shrink"]["after"]["leaked"]))
    t.eq("site_new", ("new", 0, 0, 40, 10240, 10240),
         (by["site_new"]["status"], by["site_new"]["before"]["allocations"],
          by["site_new"]["before"]["bytes"], by["site_new"]["after"]["allocations"],
          by["site_new"]["after"]["bytes"], by["site_new"]["after"]["leaked"]))
    t.eq("site_gone", ("gone", 10, 1000, 0, 0, 0),
         (by["site_gone"]["status"], by["site_gone"]["before"]["allocations"],
          by["site_gone"]["before"]["bytes"], by["site_gone"]["before"]["leaked"],
          by["site_gone"]["after"]["allocations"], by["site_gone"]["after"]["bytes"]))
    t.eq("frames carry file and line", ("main", "mp_diffprog.c"),
         (by["site_new"]["frames"][1]["function"],
          by["site_new"]["frames"][0]["file"].rsplit("/", 1)[-1]))

    j = mptest.json_of(t, ["diff", "--json", "--sort", "leaked", "--top", "2", a, b])
    t.eq("--sort leaked --top 2", ["site_new", "site_shrink"],
         [first_fn(s) for s in j["stacks"]])
    j = mptest.json_of(t, ["diff", "--json", "--sort=allocations", a, b])
    t.eq("--sort allocations", ["site_common", "site_new", "site_shrink", "site_gone"],
         [first_fn(s) for s in j["stacks"]])

    text = mptest.heapscope(t, ["diff", a, b])[0]
    lines = text.splitlines()
    t.eq("text totals bytes", ["bytes", "9000", "30080", "+21080"],
         next(ln for ln in lines if ln.startswith("bytes ")).split())
    t.eq("text totals leaked", ["leaked", "1600", "10880", "+9280"],
         next(ln for ln in lines if ln.startswith("leaked ")).split())
    t.true("summary line", "4 stacks changed (1 new, 1 gone)" in text, text)
    rows = [ln for ln in lines if ln.split()[:1] in (["new"], ["gone"], ["changed"])]
    t.eq("rows", [["changed", "+200", "+12800", "0"], ["new", "+40", "+10240", "+10240"],
                  ["gone", "-10", "-1000", "0"], ["changed", "-30", "-960", "-960"]],
         [r.split()[:4] for r in rows])
    t.true("new row names its site", "site_new (mp_diffprog.c:" in rows[1], rows[1])

    # the same profile twice: nothing changed
    j = mptest.json_of(t, ["diff", "--json", a, a])
    t.eq("A vs A", (0, []), (j["stacks_changed"], j["stacks"]))

    # bad input: clear message, non-zero exit
    out, err = mptest.heapscope(t, ["diff", a], expect_rc=2)
    t.true("one profile: usage", "exactly two profiles" in err, err)
    out, err = mptest.heapscope(t, ["diff", "--sort", "size", a, b], expect_rc=2)
    t.true("bad --sort", "--sort needs" in err, err)
    out, err = mptest.heapscope(t, ["diff", a, t.dir + "/missing.hsp"], expect_rc=1)
    t.true("missing file", "heapscope diff:" in err, err)
    with open(t.dir + "/junk.hsp", "wb") as f:
        f.write(b"not a profile at all\n" * 10)
    out, err = mptest.heapscope(t, ["diff", t.dir + "/junk.hsp", b], expect_rc=1)
    t.true("not a profile", "heapscope diff:" in err, err)


hstest.main(main)
