"""test_pictures_big.py - `heapscope html` on a profile of 100,000
distinct stacks (pic_many.c): the page loads in headless Chromium without
a script error and shows all of them (summary, table row counts: 10,000
leaking stacks, 90,000 temporary), with the flamegraph pruned to what is
at least a pixel wide.  Prints the page's load time (performance.now()
when everything is drawn) for docs/PICTURES.md; no timing is asserted."""

import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hstest  # noqa: E402
import pictest  # noqa: E402

N = 100000


def main(t):
    os.chdir(t.dir)
    r = t.run("pic_many", args=[str(N)], out="many.hsp")
    p = subprocess.run([t.heapscope, "html", "-o", "many.html", r.out],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode:
        if b"built without the page" in p.stderr:
            print("heapscope built without the HTML assets: skipped")
            sys.exit(77)
        raise hstest.HsError("html failed: " + p.stderr.decode())
    d = pictest.page_data("many.html")
    sites = [i for i, s in enumerate(d["stacks"]) if any(d["names"][f >> 2] == "pic_rec" for f in s)]
    t.eq("stacks through pic_rec", N, len(sites))
    n = len(d["stacks"])
    print("page: %d stacks, %.1f MB" % (n, os.path.getsize("many.html") / 1e6))
    if not pictest.CHROMIUM:
        sys.exit(t.finish() or 77)
    dom = pictest.chromium_dom(os.path.abspath("many.html"), t.dir)
    m = re.search(r'<body[^>]*data-status="(\w+)"', dom)
    t.eq("page status", "ok", m and m.group(1))
    t.eq("no script error", "", pictest.element(dom, "errors")[1])
    t.eq("summary: stacks shown", str(n), pictest.attr(dom, "sum-stacks", "data-shown"))
    t.eq("top stacks rows", str(n), pictest.attr(dom, "tbl-stacks-count", "data-rows"))
    t.eq("leak rows", str(N // 10), pictest.attr(dom, "tbl-leaks-count", "data-rows"))
    t.eq("temporary rows", str(N - N // 10), pictest.attr(dom, "tbl-temp-count", "data-rows"))
    t.eq("table rows in the DOM: one page of 50", 50,
         len(re.findall(r'<tr class="row"', dom.split('id="tbl-stacks"')[1].split("</table>")[0])))
    drawn = int(pictest.attr(dom, "flame", "data-drawn") or 0)
    t.true("flamegraph pruned: %d frames drawn of ~%d" % (drawn, 2 * N), 100 < drawn < 20000)
    print("load time in Chromium: %s ms" % pictest.element(dom, "load-ms")[1])


hstest.main(main)
