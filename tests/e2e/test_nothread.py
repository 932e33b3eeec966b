"""e2e_nothread: `heapscope run --no-thread` starts no thread of
heapscope's own while the program has one, so glibc keeps its
single-thread paths; the profile is still written every interval, from
the program's allocations (hs_nothread.c, col_writer.c).

- `--no-thread`, hs_nothread kill: glibc's __libc_single_threaded is still
  1 and the process has 1 thread.  It keeps 10 x 256 bytes in kept_site,
  then churns malloc(32)+free pairs for 300 ms and kills itself: the last
  profile written while it allocated (--interval 50) holds kept_site
  exactly and at least one cold check's 4,096 pairs of churn_site.
- The default (writer thread at start-up), same program: glibc says the
  process is threaded and it has 2 threads: what --no-thread avoids.  The
  profile holds kept_site exactly too.
- `--no-thread`, hs_nothread thread: the program's own thread (started and
  joined) starts heapscope's at the next cold check: 2 threads after
  20,000 pairs; the final profile is exact.
"""
import hstest


def churn_ok(t, p, at_least):
    s = t.site(p, "churn_site")
    got = p.totals_of(s)
    t.true("churn_site: at least %d allocations" % at_least, got["allocations"] >= at_least,
           str(got["allocations"]))
    t.true("churn_site: every pair freed but the one being recorded",
           got["allocations"] - got["frees"] in (0, 1), "%d allocations, %d frees"
           % (got["allocations"], got["frees"]))


def main(t):
    r = t.run("hs_nothread", ["kill"], out="nothread.hsp",
              opts=["--no-thread", "--interval", "50"], expect_rc=137)
    t.eq("--no-thread: glibc's flag and threads", b"single 1 threads 1\n", r.stdout)
    p = t.report(r.out)
    t.check_summary(p, final=False, truncated=False)
    t.check_site(p, "kept_site", allocations=10, bytes_allocated=2560, frees=0)
    churn_ok(t, p, 4096)
    t.check_consistent(p)

    r = t.run("hs_nothread", ["kill"], out="writer.hsp", opts=["--interval", "50"],
              expect_rc=137)
    t.eq("default: glibc's flag and threads", b"single 0 threads 2\n", r.stdout)
    p = t.report(r.out)
    t.check_summary(p, final=False)
    t.check_site(p, "kept_site", allocations=10, bytes_allocated=2560, frees=0)
    churn_ok(t, p, 1)

    r = t.run("hs_nothread", ["thread"], out="thread.hsp", opts=["--no-thread"])
    t.eq("--no-thread, program thread: heapscope's started", b"single 0 threads 2\n",
         r.stdout)
    p = t.report(r.out)
    t.check_summary(p, final=True)
    t.check_site(p, "churn_site", allocations=20000, frees=20000, bytes_allocated=640000)
    t.check_consistent(p)


if __name__ == "__main__":
    hstest.main(main)
