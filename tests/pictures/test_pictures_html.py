"""test_pictures_html.py - `heapscope html` on pic_known.c (known
allocations): the page is one file with nothing fetched from elsewhere,
its embedded data holds the profile's stacks and figures, and headless
Chromium runs it without a script error and shows what the profile holds
(summary, row counts of the three tables, the flamegraph's frames and
total for two costs, the time-range filter preset from the URL).  A
screenshot is kept in the build directory (path printed)."""

import html
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hstest  # noqa: E402
import pictest  # noqa: E402


def main(t):
    shot = os.path.abspath("pictures_html.png")
    os.chdir(t.dir)
    r = t.run("pic_known", out="known.hsp")
    p = subprocess.run([t.heapscope, "html", "-o", "known.html", "--title", "known <&>", r.out],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode:
        if b"built without the page" in p.stderr:
            print("heapscope built without the HTML assets (cmake/embed.cmake): skipped")
            sys.exit(77)
        raise hstest.HsError("html failed: " + p.stderr.decode())
    page = open("known.html", encoding="utf-8").read()
    t.true("offline: no src= or href= attribute", not re.search(r'\b(src|href)\s*=', page))
    t.true("offline: no http(s) URL", "http://" not in page and "https://" not in page)
    t.true("title escaped", "<title>known &lt;&amp;></title>" in page)

    d = pictest.page_data("known.html")
    rep = t.report(r.out)
    t.eq("stacks embedded", len(rep.data["stacks"]), len(d["stacks"]))
    t.eq("figures: six per stack", 6 * len(d["stacks"]), len(d["figs"]))
    t.eq("bytes summed", 5000, sum(d["figs"][i * 6 + 1] for i in range(len(d["ids"]))))
    t.eq("leaked summed", 1000, sum(d["figs"][i * 6 + 2] for i in range(len(d["ids"]))))
    t.eq("summary allocations", 18, d["summary"]["allocations"])
    names = [[d["names"][f >> 2] for f in s] for s in d["stacks"]]
    t.true("a stack runs main > pic_work > pic_beta > pic_gamma",
           any(n[n.index("main"):][:4] == ["main", "pic_work", "pic_beta", "pic_gamma"]
               for n in names if "main" in n), str(names))
    t.eq("histogram allocations", 18, sum(h[2] for h in d["hist"]))
    t.eq("histogram bucket 64-127 (the 100-byte blocks)", [64, 127, 10, 1000],
         next((h for h in d["hist"] if h[0] == 64), None))

    if not pictest.CHROMIUM:
        print("chromium missing: browser checks skipped")
        sys.exit(t.finish() or 77)
    url = os.path.abspath("known.html")
    dom = pictest.chromium_dom(url, t.dir)
    m = re.search(r'<body[^>]*data-status="(\w+)"', dom)
    t.eq("page status", "ok", m and m.group(1))
    t.eq("no script error", "", pictest.element(dom, "errors")[1])
    t.eq("summary: stacks", str(len(d["stacks"])), pictest.element(dom, "sum-stacks")[1])
    t.eq("summary: allocations", "18", pictest.element(dom, "sum-allocations")[1])
    t.eq("summary: leaked", "1000 B in 5 blocks", pictest.element(dom, "sum-leaked")[1])
    t.eq("top stacks rows", str(len(d["stacks"])), pictest.attr(dom, "tbl-stacks-count", "data-rows"))
    t.eq("leak rows (pic_beta's malloc)", "1", pictest.attr(dom, "tbl-leaks-count", "data-rows"))
    t.eq("temporary rows (alpha, gamma)", "2", pictest.attr(dom, "tbl-temp-count", "data-rows"))
    t.eq("flamegraph total bytes", "5000", pictest.attr(dom, "flame", "data-total"))
    frames = json.loads(html.unescape(pictest.attr(dom, "flame", "data-frames") or "[]"))
    for name, v in (("pic_work", 5000), ("pic_beta", 4000), ("pic_gamma", 3000), ("pic_alpha", 1000)):
        t.true("flamegraph frame %s = %d" % (name, v), [name, v] in frames, str(frames))
    t.true("top stacks table shows a site", ">pic_gamma</td>" in dom)
    t.true("histogram rows", dom.count('class="hist"') == len(d["hist"]))

    # presets from the URL: the leaked cost, and a time range
    dom = pictest.chromium_dom(url + "#cost=leaked", t.dir)
    t.eq("leaked: flamegraph total", "1000", pictest.attr(dom, "flame", "data-total"))
    frames = json.loads(html.unescape(pictest.attr(dom, "flame", "data-frames") or "[]"))
    t.true("leaked: pic_beta 1000, no pic_alpha", ["pic_beta", 1000] in frames and
           not any(f[0] == "pic_alpha" for f in frames), str(frames))
    last = max(d["figs"][i * 6 + 5] for i in range(len(d["ids"])))
    dom = pictest.chromium_dom(url + "#range=0,%d" % (last + 1), t.dir)
    t.eq("range over the run: all rows", str(len(d["stacks"])), pictest.attr(dom, "tbl-stacks-count", "data-rows"))
    dom = pictest.chromium_dom(url + "#range=%d,%d" % (last + 1, last + 2), t.dir)
    t.eq("range after the last snapshot: no rows", "0", pictest.attr(dom, "tbl-stacks-count", "data-rows"))
    t.eq("range after the last snapshot: empty flamegraph", "0", pictest.attr(dom, "flame", "data-total"))
    t.eq("range: no script error", "", pictest.element(dom, "errors")[1])

    if pictest.chromium_shot(url, shot, t.dir):
        print("screenshot: " + shot)
    else:
        t.fail("no screenshot written to " + shot)

    for args, rc, msg in ((["known.hsp"], 2, "-o"), (["-o", "x.html", "/nonexistent.hsp"], 1, "nonexistent"),
                          (["--bogus", "-o", "x.html", "known.hsp"], 2, "--bogus")):
        q = subprocess.run([t.heapscope, "html"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        t.eq("exit of %s" % args, rc, q.returncode)
        t.true("message of %s names %s" % (args, msg), msg in q.stderr.decode(), q.stderr.decode())


hstest.main(main)
