"""--fragmentation runs the workload once more under heapscope's collector
with the allocator behind it: the plateau's live bytes at the peak are its
100 MiB (plus its two index arrays, under 2 %), the fragmentation is the
timed run's peak RSS over those live bytes and lies in a plausible range,
and the collector run's RSS at the peak is recorded and at least the live
bytes, under glibc and jemalloc alike.  The C++ list workload has the same
live bytes under jemalloc as under glibc (to 0.1 %): jemalloc defines
operator new, and without the shim bench preloads in this pass the
collector missed every `new` (77 KB instead of 23 MB)."""

import os

import abtest
import hstest

MIB100 = 100 * 1024 * 1024


def main(t):
    csv_path = os.path.join(t.dir, "frag.csv")
    cp = abtest.bench(t, ["--allocators", "glibc,jemalloc", "--repeat", "1",
                          "--fragmentation", "--csv", csv_path, "plateau"])
    _, rows = abtest.read_csv(csv_path)
    t.eq("rows", ["glibc", "jemalloc"], [r["allocator"] for r in rows])
    for r in rows:
        what = r["allocator"]
        live = float(r["peak_live_bytes"])
        t.true(what + ": live bytes at peak = 100 MiB + < 2 %",
               MIB100 <= live < MIB100 * 1.02, r["peak_live_bytes"])
        frag = float(r["fragmentation"])
        t.true(what + ": fragmentation in [0.9, 3]", 0.9 <= frag <= 3, r["fragmentation"])
        peak_kb = float(r["peak_rss_kb"])
        t.true(what + ": fragmentation = peak RSS / live",
               abs(frag - peak_kb * 1024 / live) < 0.01 * frag, "%s %s" % (frag, peak_kb))
        t.true(what + ": RSS at the peak under the collector >= 95 % of live bytes",
               float(r["rss_at_peak_kb"]) * 1024 >= 0.95 * live, r["rss_at_peak_kb"])
        t.eq(what + " verified (timed run)", "yes", r["verified"])
    t.true("table has the frag column", " frag " in cp.out, cp.out)

    cxx_csv = os.path.join(t.dir, "cxx.csv")
    abtest.bench(t, ["--allocators", "glibc,jemalloc", "--repeat", "1", "--fragmentation",
                     "--csv", cxx_csv, "list"])
    _, rows = abtest.read_csv(cxx_csv)
    live = {r["allocator"]: float(r["peak_live_bytes"]) for r in rows}
    t.true("list: over 20 MB live under glibc", live.get("glibc", 0) > 20e6, str(live))
    t.true("list: jemalloc's live bytes = glibc's (C++ new seen)",
           abs(live.get("jemalloc", 0) - live.get("glibc", 0)) <= 0.001 * live.get("glibc", 1),
           str(live))


hstest.main(main)
