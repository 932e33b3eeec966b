"""--fragmentation runs the workload once more under heapscope's collector
with the allocator behind it: the plateau's live bytes at the peak are its
100 MiB (plus its two index arrays, under 2 %), the fragmentation is the
timed run's peak RSS over those live bytes and lies in a plausible range,
and the collector run's RSS at the peak is recorded and at least the live
bytes, under glibc and jemalloc alike."""

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


hstest.main(main)
