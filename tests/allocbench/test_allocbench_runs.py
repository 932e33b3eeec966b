"""Real runs of two small workloads under every installed allocator (glibc
and jemalloc at least), repeated twice, with the syscall pass: each run used
the allocator it claims (CSV path = the library ldconfig names, and the
checker inside the process saw malloc bound to that file), the figures are
plausible (the 100 MiB plateau shows at least 100 MiB of peak RSS and one
fault per page), the CSV has exactly the documented columns and one row per
workload, allocator and repetition, and every SVG is well-formed XML with
one group per workload and one bar per allocator."""

import glob
import os
import xml.etree.ElementTree as ET

import abtest
import hstest

SVG = "{http://www.w3.org/2000/svg}"
MIB100_KB = 100 * 1024


def main(t):
    allocs = abtest.installed_allocators()
    t.true("jemalloc installed (needed: two allocators)", "jemalloc" in allocs)
    names = [a for a in ("glibc", "jemalloc", "tcmalloc", "mimalloc") if a in allocs]
    csv_path = os.path.join(t.dir, "runs.csv")
    svg_dir = os.path.join(t.dir, "svg")
    cp = abtest.bench(t, ["--allocators", ",".join(names), "--repeat", "2",
                          "--syscalls", "--csv", csv_path, "--svg", svg_dir,
                          "plateau", "size-sweep"])

    header, rows = abtest.read_csv(csv_path)
    t.eq("CSV columns", abtest.CSV_COLUMNS, header)
    t.eq("CSV rows (2 workloads x allocators x 2 runs)", 2 * len(names) * 2, len(rows))
    seen = set()
    for r in rows:
        what = "%s/%s/run %s" % (r["workload"], r["allocator"], r["repetition"])
        seen.add((r["workload"], r["allocator"], r["repetition"]))
        want = allocs[r["allocator"]]
        t.true(what + ": allocator_path is the installed library " + want,
               abtest.same_file(r["allocator_path"], want), r["allocator_path"])
        t.eq(what + ": verified", "yes", r["verified"])
        t.true(what + ": malloc resolved in the allocator's file",
               abtest.same_file(r["malloc_from"], want), r["malloc_from"])
        t.true(what + ": a version", r["allocator_version"] not in ("", "unknown"),
               r["allocator_version"])
        wall, user, sysc = float(r["wall_s"]), float(r["user_s"]), float(r["sys_s"])
        t.true(what + ": wall > 0", wall > 0, r["wall_s"])
        t.true(what + ": CPU time > 0", user + sysc > 0, "%s+%s" % (user, sysc))
        peak = int(r["peak_rss_kb"])
        after = int(r["rss_after_free_kb"])
        # both are the kernel's RSS counters, which lag by up to 64 pages
        # per thread (split RSS counting): "not above the peak" within that
        t.true(what + ": RSS after free reported, not above the peak", 0 < after <= peak + 1024,
               "%d / %d" % (after, peak))
        calls = [int(r[k]) for k in ("brk_calls", "mmap_calls", "munmap_calls", "madvise_calls")]
        t.true(what + ": syscall counts", min(calls) >= 0, str(calls))
        t.eq(what + ": no fragmentation pass", "n/a", r["fragmentation"])
        if r["workload"] == "plateau":
            t.true(what + ": peak RSS >= 100 MiB", peak >= MIB100_KB, str(peak))
            t.true(what + ": >= 1 minor fault per 4 KiB page of 100 MiB",
                   int(r["minor_faults"]) >= MIB100_KB // 4, r["minor_faults"])
            t.true(what + ": memory came from brk or mmap", calls[0] + calls[1] >= 1, str(calls))
        else:
            t.true(what + ": size-sweep below 100 MiB", peak < MIB100_KB, str(peak))
    t.eq("one row per workload, allocator and run", 2 * len(names) * 2, len(seen))

    # the table: one line per allocator per workload, each verified
    for w in ("plateau", "size-sweep"):
        t.true("table names " + w, ("\n%s\n" % w) in cp.out, cp.out)
    verified_lines = [l for l in cp.out.splitlines()
                      if l.strip().split(" ")[0] in names and l.rstrip().endswith(" yes")]
    t.eq("table lines verified yes", 2 * len(names), len(verified_lines))

    files = sorted(os.path.basename(p) for p in glob.glob(os.path.join(svg_dir, "*.svg")))
    for key in ("wall_s", "user_s", "sys_s", "peak_rss_kb", "minor_faults",
                "rss_after_free_kb", "mmap_calls"):
        t.true("SVG for " + key, key + ".svg" in files, str(files))
    t.true("no SVG for fragmentation (not measured)", "fragmentation.svg" not in files)
    for f in files:
        root = ET.parse(os.path.join(svg_dir, f)).getroot()  # raises if malformed
        t.eq(f + " root", SVG + "svg", root.tag)
        groups = [g for g in root.iter(SVG + "g") if g.get("class") == "workload"]
        t.eq(f + " workload groups", ["plateau", "size-sweep"],
             [g.get("data-workload") for g in groups])
        for g in groups:
            bars = [r.get("data-allocator") for r in g.iter(SVG + "rect") if r.get("class") == "bar"]
            t.eq(f + " bars of " + g.get("data-workload"), names, bars)
        legend = [g for g in root.iter(SVG + "g") if g.get("class") == "legend"]
        t.eq(f + " legend entries", names,
             [x.text for x in legend[0].iter(SVG + "text")] if legend else [])


hstest.main(main)
