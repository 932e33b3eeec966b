"""e2e_signal: HEAPSCOPE_SIGNAL=USR2 writes a profile on demand (hs_signal.c).

hs_signal makes 3 x 100 bytes in before_signal_site, raises SIGUSR2, waits
until the profile file is not empty (the collector claims the name with an
empty file, then renames a complete file over it), makes 2 x 100 in
after_signal_site and SIGKILLs itself.  The flush
interval is an hour, so the file on disk is the one SIGUSR2 produced: it has
before_signal_site and not after_signal_site, and is not final.

hs_sigexit calls _exit(7) from a signal handler while another thread holds
malloc's main arena lock (blocked in malloc_stats on a full stderr), after
iconv_open loaded a module the dlopen hook never saw.  The final profile,
written inside that handler, must not allocate: the program ends with 7
(it hung before the module list left malloc), and the profile holds
sigexit_site's 5 x 300 bytes, in fp and dwarf mode.
"""
import os

import hstest


def main(t):
    out = os.path.join(t.dir, "signal.hsp")
    r = t.run("hs_signal", args=[out], out="signal.hsp",
              opts=["--interval", "3600000"], env={"HEAPSCOPE_SIGNAL": "USR2"},
              expect_rc=None)
    t.eq("exit status (128 + SIGKILL; 98: no profile after SIGUSR2)", 137, r.rc)
    p = t.report(out)
    t.check_site(p, "before_signal_site", allocations=3, bytes_allocated=300, frees=0)
    t.check_no_site(p, "after_signal_site")
    t.check_summary(p, final=False, allocations=3, bytes_allocated=300)

    for mode in ("fp", "dwarf"):
        r = t.run("hs_sigexit", out="sigexit-%s.hsp" % mode, opts=["--unwind", mode],
                  timeout=30, expect_rc=None)
        t.eq("sigexit %s: exit status (7: _exit in the handler)" % mode, 7, r.rc)
        t.check_site(t.report(r.out), "sigexit_site", allocations=5, bytes_allocated=1500,
                     frees=0)


if __name__ == "__main__":
    hstest.main(main)
