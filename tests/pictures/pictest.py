"""pictest.py - helpers of the pictures tests: headless Chromium.

chromium_dom(path) loads a local file in headless Chromium, lets its
scripts run, and returns the serialised DOM; chromium_shot() saves a
screenshot.  Both return None when Chromium is missing (the test then
exits 77, "skipped")."""

import os
import shutil
import subprocess

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-extensions", "--virtual-time-budget=5000"]


def _run(args, cwd):
    # own profile dir: parallel tests must not share Chromium's singleton lock
    prof = os.path.join(cwd, "chromium-profile-%d" % os.getpid())
    return subprocess.run([CHROMIUM] + FLAGS + ["--user-data-dir=" + prof] + args,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=120, cwd=cwd)


def chromium_dom(path, cwd):
    r = _run(["--dump-dom", "file://" + os.path.abspath(path)], cwd)
    return r.stdout.decode("utf-8", "replace")


def chromium_shot(path, png, cwd, size="1280,2000"):
    _run(["--screenshot=" + os.path.abspath(png), "--window-size=" + size,
          "file://" + os.path.abspath(path)], cwd)
    return os.path.exists(png)


def element(dom, ident):
    """(attributes string, text) of the element with id `ident` in a DOM
    dump, or (None, None)."""
    import re
    m = re.search(r'<(\w+)([^>]*\bid="%s"[^>]*)>([^<]*)' % re.escape(ident), dom)
    return (m.group(2), m.group(3)) if m else (None, None)


def attr(dom, ident, name):
    import re
    a, _ = element(dom, ident)
    m = a and re.search(r'\b%s="([^"]*)"' % re.escape(name), a)
    return m.group(1) if m else None


def page_data(path):
    """The JSON data embedded in a `heapscope html` page."""
    import json
    import re
    text = open(path, encoding="utf-8").read()
    m = re.search(r'<script id="data" type="application/json">(.*?)</script>', text, re.S)
    return json.loads(m.group(1)) if m else None
