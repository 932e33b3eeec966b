"""test_export_formats.py - `heapscope export` in every format, each read
back by the consuming tool's own parser where Debian has one:

  pprof       gunzip + `protoc --decode perftools.profiles.Profile` with
              src/analyse/pprof/profile.proto; exact values per sample,
              inlined Line entries, mappings with the ELF's build ID
  folded      re-parsed as flamegraph.pl reads it; exact lines per cost
  speedscope  json; the schema's required fields, frame indexes, weights
              summing to endValue, exact weights per stack
  massif      Valgrind's ms_print: the peak and the top function
  json        the whole profile; exact sums and counters per size
plus bad usage and unreadable profiles.  Programs: export_known.c (this
directory) and tests/progs/hs_single.c, whose allocations are documented
in their header comments.
"""

import gzip
import json
import os
import re
import shutil
import subprocess
import sys

import hstest

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_DIR = os.path.join(HERE, "..", "..", "src", "analyse", "pprof")


def export(t, fmt, profile, *args, out=None, expect_rc=0):
    """Run `heapscope export`; return stdout (bytes) or the file's bytes."""
    argv = [t.heapscope, "export", "--format", fmt] + list(args)
    if out:
        argv += ["-o", os.path.join(t.dir, out)]
    argv.append(profile)
    cp = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if cp.returncode != expect_rc:
        sys.stderr.write(cp.stderr.decode("utf-8", "replace"))
        raise hstest.HsError("%s exited %d, expected %d"
                             % (" ".join(argv), cp.returncode, expect_rc))
    if expect_rc:
        return cp.stderr.decode("utf-8", "replace")
    if out:
        with open(os.path.join(t.dir, out), "rb") as f:
            return f.read()
    return cp.stdout


def parse_text_proto(text):
    """protoc's text format -> dict of lists (every field repeated)."""
    root = {}
    stack = [root]
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.endswith("{"):
            child = {}
            stack[-1].setdefault(line[:-1].strip(), []).append(child)
            stack.append(child)
        elif line == "}":
            stack.pop()
        else:
            key, _, val = line.partition(":")
            val = val.strip()
            if val.startswith('"'):
                val = json.loads(val) if "\\" not in val else val[1:-1]
            elif val in ("true", "false"):
                val = val == "true"
            else:
                val = int(val)
            stack[-1].setdefault(key.strip(), []).append(val)
    return root


def one(d, key, default=0):
    return d.get(key, [default])[0]


def check_pprof(t, prof, exe):
    data = export(t, "pprof", prof, out="known.pb.gz")
    t.eq("pprof: gzip magic", b"\x1f\x8b", data[:2])
    raw = gzip.decompress(data)
    cp = subprocess.run(["protoc", "--decode", "perftools.profiles.Profile",
                         "-I", PROTO_DIR, "profile.proto"], input=raw,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if cp.returncode:
        raise hstest.HsError("protoc --decode failed: %s" % cp.stderr.decode())
    p = parse_text_proto(cp.stdout.decode())
    st = p["string_table"]
    t.eq("pprof: string_table[0]", "", st[0])
    types = [(st[one(v, "type")], st[one(v, "unit")]) for v in p["sample_type"]]
    t.eq("pprof: sample types", [("alloc_objects", "count"), ("alloc_space", "bytes"),
                                 ("inuse_objects", "count"), ("inuse_space", "bytes")], types)
    t.eq("pprof: period", 1, one(p, "period"))
    t.true("pprof: time_nanos set", one(p, "time_nanos") > 10 ** 18)
    t.true("pprof: duration_nanos set", one(p, "duration_nanos") > 0)
    t.eq("pprof: default_sample_type", "inuse_space", st[one(p, "default_sample_type")])
    funcs = {one(f, "id"): f for f in p["function"]}
    locs = {one(l, "id"): l for l in p["location"]}
    maps = {one(m, "id"): m for m in p["mapping"]}

    def names(loc):
        return [st[one(funcs[one(ln, "function_id")], "name")] for ln in loc.get("line", [])]

    by_site = {}
    for s in p["sample"]:
        leaf_names = [n for lid in s["location_id"] for n in names(locs[lid])]
        for site in ("site_inline", "site_temp", "site_big"):
            if site in leaf_names[:3]:
                by_site.setdefault(site, []).append((s, leaf_names))
    for site, values in (("site_inline", [10, 640, 10, 640]),
                         ("site_temp", [5, 500, 0, 0]),
                         ("site_big", [1, 4096, 0, 0])):
        got = by_site.get(site, [])
        t.eq("pprof: samples of %s" % site, 1, len(got))
        if got:
            t.eq("pprof: values of %s" % site, values, got[0][0]["value"])
            t.true("pprof: %s called from main" % site, "main" in got[0][1], got[0][1])
    # the inlined call: one Location, two Lines, innermost first
    if by_site.get("site_inline"):
        s = by_site["site_inline"][0][0]
        leaf = locs[s["location_id"][0]]
        t.eq("pprof: inline location's functions", ["inl_alloc", "site_inline"], names(leaf))
        lines = [one(ln, "line") for ln in leaf["line"]]
        src = os.path.join(HERE, "export_known.c")
        want = [line_of(src, "void *p = malloc(n);"), line_of(src, "keep[i] = inl_alloc(64);")]
        t.eq("pprof: inline location's lines", want, lines)
        fn = funcs[one(leaf["line"][1], "function_id")]
        t.true("pprof: function filename", st[one(fn, "filename")].endswith("export_known.c"),
               st[one(fn, "filename")])
        t.eq("pprof: system_name", "site_inline", st[one(fn, "system_name")])
        m = maps.get(one(leaf, "mapping_id"))
        if m is None:
            t.fail("pprof: inline location has no mapping")
        else:
            t.eq("pprof: mapping filename", exe, st[one(m, "filename")])
            t.eq("pprof: mapping build ID", elf_build_id(exe), st[one(m, "build_id")])
            addr = one(leaf, "address")
            t.true("pprof: address inside its mapping",
                   one(m, "memory_start") <= addr < one(m, "memory_limit"))


def line_of(path, needle):
    with open(path) as f:
        hits = [i + 1 for i, l in enumerate(f) if needle in l]
    if len(hits) != 1:
        raise hstest.HsError("%r found %d times in %s" % (needle, len(hits), path))
    return hits[0]


def elf_build_id(path):
    out = subprocess.run(["readelf", "-n", path], stdout=subprocess.PIPE).stdout.decode()
    m = re.search(r"Build ID:\s*([0-9a-f]+)", out)
    return m.group(1) if m else None


def parse_folded(text):
    """flamegraph.pl's reading: the last space splits stack and count."""
    rows = []
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            raise hstest.HsError("bad folded line %r" % line)
        rows.append((stack.split(";"), int(count)))
    return rows


def check_folded(t, single, known):
    lines = export(t, "folded", single).decode().splitlines()
    t.eq("folded: sorted", sorted(lines), lines)
    rows = parse_folded("\n".join(lines))
    got = {r[0][-1]: r[1] for r in rows}
    t.eq("folded bytes (default)", {"alloc_site_a": 6550, "alloc_site_b": 50000}, got)
    for frames, _ in rows:
        t.true("folded: outermost first", frames.index("main") < len(frames) - 1, frames)
    for cost, want in (("allocations", {"alloc_site_a": 100, "alloc_site_b": 50}),
                       ("leaked", {"alloc_site_b": 30000}),
                       ("peak", {"alloc_site_a": 6550, "alloc_site_b": 50000})):
        rows = parse_folded(export(t, "folded", single, "--cost", cost).decode())
        t.eq("folded --cost %s" % cost, want, {r[0][-1]: r[1] for r in rows})
    rows = parse_folded(export(t, "folded", known, "--cost", "temporary", out="t.folded").decode())
    t.eq("folded --cost temporary", {"site_temp": 5, "site_big": 1},
         {r[0][-1]: r[1] for r in rows})
    rows = parse_folded(export(t, "folded", known, "--cost", "leaked").decode())
    t.eq("folded: inlined frame last", [(["site_inline", "inl_alloc"], 640)],
         [(r[0][-2:], r[1]) for r in rows])


def check_speedscope(t, known):
    d = json.loads(export(t, "speedscope", known, "-o", "-").decode())
    t.eq("speedscope: $schema", "https://www.speedscope.app/file-format-schema.json", d.get("$schema"))
    frames = d["shared"]["frames"]
    t.true("speedscope: frames have names", all(isinstance(f.get("name"), str) for f in frames))
    profs = {p["name"]: p for p in d["profiles"]}
    t.eq("speedscope: profiles", ["allocations", "bytes", "leaked", "peak", "temporary"],
         [p["name"] for p in d["profiles"]])
    want = {"allocations": ({"site_inline": 10, "site_temp": 5, "site_big": 1}, "none"),
            "bytes": ({"site_inline": 640, "site_temp": 500, "site_big": 4096}, "bytes"),
            "leaked": ({"site_inline": 640}, "bytes"),
            "peak": ({"site_inline": 640, "site_big": 4096}, "bytes"),
            "temporary": ({"site_temp": 5, "site_big": 1}, "none")}
    for name, (sites, unit) in want.items():
        p = profs[name]
        for key in ("type", "name", "unit", "startValue", "endValue", "samples", "weights"):
            t.true("speedscope %s: has %s" % (name, key), key in p)
        t.eq("speedscope %s: type" % name, "sampled", p["type"])
        t.eq("speedscope %s: unit" % name, unit, p["unit"])
        t.eq("speedscope %s: one weight per sample" % name, len(p["samples"]), len(p["weights"]))
        t.eq("speedscope %s: weights sum to endValue" % name, p["endValue"], sum(p["weights"]))
        t.true("speedscope %s: frame indexes valid" % name,
               all(0 <= i < len(frames) for s in p["samples"] for i in s))
        got = {}
        for s, w in zip(p["samples"], p["weights"]):
            fn = [frames[i]["name"] for i in s]
            site = fn[-2] if fn[-1] == "inl_alloc" else fn[-1]
            t.eq("speedscope: root first (%s)" % site, "main", fn[fn.index("main")])
            t.true("speedscope: main before %s" % site, fn.index("main") < fn.index(site))
            got[site] = got.get(site, 0) + w
        t.eq("speedscope %s weights" % name, sites, got)


def check_massif(t, known):
    export(t, "massif", known, out="massif.out.1")
    ms_print = shutil.which("ms_print")
    if not ms_print:
        t.fail("ms_print not found (valgrind package)")
        return
    cp = subprocess.run([ms_print, os.path.join(t.dir, "massif.out.1")],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    t.eq("ms_print exit status", 0, cp.returncode)
    text = cp.stdout.decode()
    if cp.returncode:
        sys.stderr.write(cp.stderr.decode())
    m = re.search(r"Detailed snapshots: \[(.*)\]", text)
    t.true("ms_print: a peak snapshot", m and "(peak)" in m.group(1), m and m.group(1))
    # the peak snapshot's line and its tree: site_big's 4096 of 4736 first
    t.true("ms_print: peak total 4,736", re.search(r"^\s+\d+\s+\d+\s+4,736\s+4,736\s+0\s+0$",
                                                   text, re.M), text[:2000])
    top = re.findall(r"^->(\d+\.\d+)% \(([\d,]+)B\) 0x[0-9A-F]+: (\S+)", text, re.M)
    t.true("ms_print: trees shown", len(top) >= 2, top)
    if top:
        t.eq("ms_print: peak's top function", ("86.49", "4,096", "site_big"), top[0])
        t.eq("ms_print: last snapshot's top function", ("100.00", "640", "inl_alloc"), top[-1])
    t.true("ms_print: inlined caller shown", re.search(r"site_inline \(export_known\.c:\d+\)", text))


def check_json(t, single, exe):
    d = json.loads(export(t, "json", single).decode())
    t.eq("json: format", "heapscope-export", d["format"])
    t.eq("json: exe", exe, d["info"]["exe"])
    tot = d["totals"]
    for k, v in (("allocations", 150), ("bytes_allocated", 56550), ("peak_bytes", 56550),
                 ("leaked_bytes", 30000), ("leaked_allocations", 30)):
        t.eq("json totals %s" % k, v, tot[k])
    sites = {}
    for s in d["stacks"]:
        for f in s["frames"]:
            if f["function"] in ("alloc_site_a", "alloc_site_b"):
                sites[f["function"]] = s
                t.true("json: frame module valid", 0 <= f["module"] < len(d["modules"]))
                break
    b = sites.get("alloc_site_b")
    a = sites.get("alloc_site_a")
    t.true("json: both sites", a and b)
    if a and b:
        t.eq("json site_b", (50, 50000, 20000, 30000, 30),
             (b["allocations"], b["bytes_allocated"], b["bytes_freed"], b["leaked_bytes"],
              b["leaked_allocations"]))
        t.eq("json site_b sizes", [(1000, 50, 50000)],
             [(c["size_lo"], c["allocations"], c["bytes_allocated"]) for c in b["sizes"]])
        t.eq("json site_a", (100, 6550, 6550, 0), (a["allocations"], a["bytes_allocated"],
                                                   a["bytes_freed"], a["leaked_bytes"]))
        t.eq("json site_a counts over sizes", 100, sum(c["allocations"] for c in a["sizes"]))
    t.eq("json: stack sums = totals", tot["bytes_allocated"],
         sum(s["bytes_allocated"] for s in d["stacks"]))
    mods = [m for m in d["modules"] if m["path"] == exe]
    t.eq("json: exe module build id", [elf_build_id(exe)], [m["build_id"] for m in mods])
    t.true("json: samples", isinstance(d["samples"], list))


def check_bad(t, prof):
    bad = os.path.join(t.dir, "garbage.hsp")
    with open(bad, "wb") as f:
        f.write(b"not a profile at all\n" * 10)
    for args, rc, msg in (((bad,), 1, "garbage.hsp"),
                          ((os.path.join(t.dir, "missing.hsp"),), 1, "missing.hsp"),
                          (("--format", "nope", prof), 2, "unknown --format"),
                          ((prof,), 2, "no --format"),
                          (("--format", "pprof", prof), 2, "binary"),
                          (("--format", "json", "--cost", "bytes", prof), 2, "--cost"),
                          (("--format", "folded", "--cost", "x", prof), 2, "--cost"),
                          (("--format", "folded", "-o", "/nonexistent/dir/x", prof), 1,
                           "cannot write")):
        argv = [t.heapscope, "export"] + (["--format", "folded"] if args[0] in (bad,) or
                                           args[0].endswith("missing.hsp") else []) + list(args)
        cp = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        err = cp.stderr.decode("utf-8", "replace")
        t.eq("exit status of %s" % " ".join(args), rc, cp.returncode)
        t.true("message of %s" % " ".join(args), msg in err, err)


def main(t):
    known = t.run("export_known", out="known.hsp").out
    single = t.run("hs_single", out="single.hsp").out
    check_pprof(t, known, t.prog("export_known"))
    check_folded(t, single, known)
    check_speedscope(t, known)
    check_massif(t, known)
    check_json(t, single, t.prog("hs_single"))
    check_bad(t, single)


hstest.main(main)
