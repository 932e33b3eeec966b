"""--threads and --scale reach the bundled workloads as -t and -s: the
size sweep does a known number of operations per thread and unit of scale
(2 x (1000x400 + 1000x200 + 200x100 + 20x100 + 8x100) = 1,245,600), so its
ops= must be exactly that times threads times scale; the CSV records the
options as given; --repeat 3 gives three rows per allocator."""

import os

import abtest
import hstest

PER_THREAD_SCALE = 2 * (1000 * 400 + 1000 * 200 + 200 * 100 + 20 * 100 + 8 * 100)


def main(t):
    csv_path = os.path.join(t.dir, "opts.csv")
    abtest.bench(t, ["--allocators", "glibc,jemalloc", "--repeat", "3", "--threads", "2",
                     "--scale", "2", "--csv", csv_path, "size-sweep"])
    _, rows = abtest.read_csv(csv_path)
    t.eq("rows: 2 allocators x 3 runs, alternating",
         [("glibc", "1"), ("jemalloc", "1"), ("glibc", "2"), ("jemalloc", "2"),
          ("glibc", "3"), ("jemalloc", "3")],
         [(r["allocator"], r["repetition"]) for r in rows])
    for r in rows:
        what = "%s run %s" % (r["allocator"], r["repetition"])
        t.eq(what + " threads", "2", r["threads"])
        t.eq(what + " scale", "2", r["scale"])
        t.eq(what + " ops", str(PER_THREAD_SCALE * 2 * 2), r["ops"])

    abtest.bench(t, ["--allocators", "glibc", "--repeat", "1", "--csv", csv_path,
                     "size-sweep"])
    _, rows = abtest.read_csv(csv_path)
    t.eq("defaults: 1 thread, scale 1", [str(PER_THREAD_SCALE)], [r["ops"] for r in rows])
    t.eq("defaults: threads and scale empty", [("", "")], [(r["threads"], r["scale"]) for r in rows])


hstest.main(main)
