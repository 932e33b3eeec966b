"""e2e_sigkill: a program killed with SIGKILL still leaves a readable
profile of its last flush (hs_sigkill.c).

hs_sigkill makes 20 x 512 bytes in before_kill_site (kept) and 6 x 64 in
freed_before_kill (freed), sleeps 800 ms and sends itself SIGKILL.  With
--interval 100 several flushes happened after the allocations, so the last
profile on disk holds all 26 allocations; it is not final (no END record).
`heapscope run` exits 128 + 9.  Valgrind (killed the same way, xtree):
before_kill_site 20 / 10,240 live, freed_before_kill 6 / 384 freed.

Killed after 150 ms, before the first interval (500 ms by default), it
still leaves all 26: the writer flushes when the program goes quiet (a
sample period without events after some the file does not hold).
"""
import hstest


def main(t):
    check_killed(t, t.run("hs_sigkill", out="killed.hsp", opts=["--interval", "100"],
                          expect_rc=137))
    check_killed(t, t.run("hs_sigkill", args=["150"], out="killed-quiet.hsp", expect_rc=137))


def check_killed(t, r):
    p = t.report(r.out)
    t.check_summary(p, final=False, truncated=False, allocations=26, frees=6,
                    bytes_allocated=10624, bytes_freed=384)
    t.check_site(p, "before_kill_site", allocations=20, bytes_allocated=10240, frees=0)
    t.check_site(p, "freed_before_kill", allocations=6, bytes_allocated=384, frees=6,
                 bytes_freed=384)
    t.check_consistent(p)
    t.report_text(r.out)  # the text report works on a non-final profile


if __name__ == "__main__":
    hstest.main(main)
