"""test_pictures_flame.py - `heapscope flamegraph` on pic_known.c, whose
allocations are known exactly: the SVG parses as XML, the frames carry the
exact costs, their widths are proportional to them, --reverse roots the
icicle at the allocation sites, and the file loads in headless Chromium
with its script run (data-status="ok").  Bad usage fails cleanly."""

import os
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hstest  # noqa: E402
import pictest  # noqa: E402

NS = "{http://www.w3.org/2000/svg}"
WIDTH = 1200
SPAN = WIDTH - 20  # the frames span the width minus 10 px each side


def flame(t, prof, out, *opts):
    r = subprocess.run([t.heapscope, "flamegraph", "-o", out] + list(opts) + [prof],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        raise hstest.HsError("flamegraph %s failed: %s" % (opts, r.stderr.decode()))
    return ET.parse(out).getroot()


def frames(root):
    """name -> list of (value, x, y, width) of the frame <g>s."""
    out = {}
    for g in root.iter(NS + "g"):
        if g.get("class") != "f":
            continue
        rect = g.find(NS + "rect")
        out.setdefault(g.get("data-n"), []).append(
            (int(g.get("data-v")), float(rect.get("x")), float(rect.get("y")),
             float(rect.get("width"))))
    return out


def check_frames(t, what, root, expected):
    """expected: name -> cost; each name is one frame, width = cost share."""
    fs = frames(root)
    total = int(root.get("data-total"))
    for name, cost in expected.items():
        got = fs.get(name, [])
        t.eq("%s: frames named %s" % (what, name), 1, len(got))
        if not got:
            continue
        v, x, y, w = got[0]
        t.eq("%s: %s cost" % (what, name), cost, v)
        t.true("%s: %s width %.4f is %d/%d of %d px" % (what, name, w, cost, total, SPAN),
               abs(w - SPAN * cost / total) < 0.001)
    return fs


def main(t):
    os.chdir(t.dir)
    r = t.run("pic_known", out="known.hsp")
    prof = r.out

    root = flame(t, prof, "bytes.svg")
    t.eq("default cost", "bytes", root.get("data-cost"))
    t.eq("total bytes", 5000, int(root.get("data-total")))
    fs = check_frames(t, "bytes", root, {"pic_work": 5000, "pic_alpha": 1000,
                                         "pic_beta": 4000, "pic_gamma": 3000})
    # the tree: callees stand on their callers, gamma starts where beta does
    if all(fs.get(n) for n in ("pic_work", "pic_alpha", "pic_beta", "pic_gamma")):
        work, alpha, beta, gamma = (fs[n][0] for n in ("pic_work", "pic_alpha", "pic_beta", "pic_gamma"))
        t.eq("alpha one level above work", work[2] - 16, alpha[2])
        t.eq("gamma one level above beta", beta[2] - 16, gamma[2])
        t.true("gamma starts at beta's x", abs(gamma[1] - beta[1]) < 1e-6)
        t.true("alpha and beta side by side", abs(alpha[1] + alpha[3] - beta[1]) < 0.001)
    main_frames = fs.get("main", [])
    t.true("main is a frame", len(main_frames) == 1)

    root = flame(t, prof, "allocs.svg", "--cost", "allocations", "--title", "A & <B>")
    t.eq("total allocations", 18, int(root.get("data-total")))
    check_frames(t, "allocations", root, {"pic_work": 18, "pic_alpha": 10,
                                          "pic_beta": 8, "pic_gamma": 3})
    titles = [e.text for e in root.iter(NS + "text")]
    t.true("title escaped and shown", "A & <B>" in titles, str(titles[:3]))

    root = flame(t, prof, "leaked.svg", "--cost", "leaked")
    t.eq("total leaked", 1000, int(root.get("data-total")))
    fs = check_frames(t, "leaked", root, {"pic_work": 1000, "pic_beta": 1000})
    t.true("no leak under alpha or gamma: pruned", "pic_alpha" not in fs and "pic_gamma" not in fs)

    root = flame(t, prof, "temp.svg", "--cost", "temporary")
    check_frames(t, "temporary", root, {"pic_alpha": 10, "pic_gamma": 1})

    # icicle: the allocation sites hang from the root, their callers below
    root = flame(t, prof, "rev.svg", "--reverse", "--width", "800")
    t.eq("reverse flag", "1", root.get("data-reverse"))
    t.eq("width", "800", root.get("width"))
    fs = frames(root)
    if fs.get("pic_gamma") and fs.get("pic_beta") and fs.get("pic_alpha"):
        t.eq("reverse: beta appears under gamma and as a site", 2, len(fs["pic_beta"]))
        gamma = fs["pic_gamma"][0]
        t.true("reverse: gamma is a site (one level below the root)",
               any(v[2] == gamma[2] for v in fs["pic_alpha"]))
        t.true("reverse: pic_work merged per site", len(fs.get("pic_work", [])) == 3)

    # deterministic: the same profile gives the same file
    flame(t, prof, "bytes2.svg")
    t.true("deterministic output", open("bytes.svg", "rb").read() == open("bytes2.svg", "rb").read())

    # bad usage and bad input: clear message, non-zero exit
    for args, rc, msg in ((["--cost", "nope", "-o", "x.svg", prof], 2, "--cost"),
                          ([prof], 2, "-o"),
                          (["-o", "x.svg", "/nonexistent.hsp"], 1, "nonexistent"),
                          (["--width", "5", "-o", "x.svg", prof], 2, "--width"),
                          (["-o", "/nonexistent/dir/x.svg", prof], 1, "cannot write")):
        p = subprocess.run([t.heapscope, "flamegraph"] + args,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        t.eq("exit of %s" % args, rc, p.returncode)
        t.true("message of %s names %s" % (args, msg), msg in p.stderr.decode(), p.stderr.decode())

    if not pictest.CHROMIUM:
        print("chromium missing: browser check skipped")
        sys.exit(t.finish() or 77)
    dom = pictest.chromium_dom("bytes.svg", os.getcwd())
    t.true("Chromium ran the SVG's script", 'data-status="ok"' in dom, dom[:300])
    t.true("Chromium drew labels", ">pic_beta<" in dom or ">pic_beta" in dom)


hstest.main(main)
