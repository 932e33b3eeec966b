"""The verification catches a run that did not use the claimed allocator,
and accepts the right one: a shared object that defines no malloc (libz)
given as the allocator is preloaded but malloc still binds to libc, so
bench reports 'verified no', names libc, and exits 1; jemalloc given by
path is verified; a user command after `--` (a shell pipeline) is verified
from its own process, and has no rss_after_free (it does not print one)."""

import os

import abtest
import hstest


def find_libz():
    paths = abtest.ldconfig_paths()
    return paths.get("libz.so.1")


def main(t):
    allocs = abtest.installed_allocators()
    libc = allocs["glibc"]

    libz = find_libz()
    if libz:
        csv_path = os.path.join(t.dir, "libz.csv")
        cp = abtest.bench(t, ["--allocators", libz, "--repeat", "1", "--csv", csv_path,
                              "size-sweep"], expect_rc=1)
        t.true("message: used malloc from libc, not libz",
               "used malloc from" in cp.err and "libz" in cp.err, cp.err)
        _, rows = abtest.read_csv(csv_path)
        t.eq("libz rows", 1, len(rows))
        if rows:
            t.eq("libz run verified", "no", rows[0]["verified"])
            t.true("libz run's malloc came from libc",
                   abtest.same_file(rows[0]["malloc_from"], libc), rows[0]["malloc_from"])
            t.eq("allocator named after the file", "libz", rows[0]["allocator"])
    else:
        t.fail("libz.so.1 not in ldconfig's cache: cannot test a wrong allocator")

    je = allocs.get("jemalloc")
    t.true("jemalloc installed", je is not None)
    if not je:
        return
    csv_path = os.path.join(t.dir, "cmd.csv")
    cp = abtest.bench(t, ["--allocators", "glibc," + je, "--repeat", "1", "--csv", csv_path,
                          "ramp", "--", "sh", "-c", "head -c 3000000 /dev/zero | wc -c"])
    header, rows = abtest.read_csv(csv_path)
    t.eq("rows: 2 workloads x 2 allocators", 4, len(rows))
    for r in rows:
        what = "%s/%s" % (r["workload"], r["allocator"])
        t.eq(what + " verified", "yes", r["verified"])
        want = libc if r["allocator"] == "glibc" else je
        t.true(what + " malloc from " + want, abtest.same_file(r["malloc_from"], want),
               r["malloc_from"])
    t.eq("workloads", ["ramp", "ramp", "sh", "sh"], [r["workload"] for r in rows])
    t.eq("allocator by path named after the file", ["glibc", "libjemalloc"] * 2,
         [r["allocator"] for r in rows])
    t.eq("user command: no rss_after_free", ["n/a", "n/a"],
         [r["rss_after_free_kb"] for r in rows if r["workload"] == "sh"])
    t.true("ramp: rss_after_free measured",
           all(r["rss_after_free_kb"].isdigit() for r in rows if r["workload"] == "ramp"))
    # the ramp allocates 64 MiB of live blocks before freeing them
    t.true("ramp peak RSS >= 64 MiB",
           all(int(r["peak_rss_kb"]) >= 64 * 1024 for r in rows if r["workload"] == "ramp"),
           str([r["peak_rss_kb"] for r in rows]))


hstest.main(main)
