"""e2e_rel_forkexec: a shell running a pipeline of Debian programs (sh -c
with sort, uniq, wc: fork, exec, pipes) and make running a two-rule
makefile, under heapscope: the same stdout and exit status (also a
failing pipeline's 3); the shell's profile and every child's read back.
`heapscope run` compresses the children's profiles too: each exec'd
program's (OUT.<pid>.1, with records of 500-600 bytes) has compressed
records.  A quiet run does that in the launcher, without the analyser:
with HEAPSCOPE_ANALYSER naming no file, it says nothing and its profiles
are compressed all the same.
"""
import os
import shutil

import hsformat
import hstest
import rltest

PIPE = ("for i in $(seq 1 300); do echo line$((i % 37)); done | sort | uniq -c "
        "| sort -rn | head -5; printf 'x\\ny\\n' | wc -l")
MAKEFILE = "all: b\n\tcat b\nb: a\n\ttr a-z A-Z < a > b\na:\n\techo hello make > a\n"


def packed(path):
    """How many of the profile at path's records are stored compressed."""
    with open(path, "rb") as f:
        return len([r for r, _ in hsformat.records(f.read()) if r & hsformat.ZSTD])


def check_execd_packed(t, kids, label):
    execd = [k for k in kids if k.endswith(".1")]
    t.true("%s: profiles of exec'd programs (%d)" % (label, len(execd)), len(execd) >= 5)
    for k in execd:
        t.true("%s: %s: compressed records" % (label, os.path.basename(k)), packed(k) > 0)


def main(t):
    sh = shutil.which("sh")
    r = rltest.run_both(t, [sh, "-c", PIPE], "sh.hsp")
    t.eq("pipeline exit status", 0, r.rc)
    t.true("pipeline output", b"2\n" in r.stdout, r.text())
    rltest.check_profile(t, r.out, 10)
    kids = rltest.children(r.out)
    t.true("children's profiles (%d) for seq, sort, uniq, head, wc" % len(kids), len(kids) >= 5)
    for k in kids:
        rltest.check_profile(t, k, 0)
    check_execd_packed(t, kids, "pipeline")
    # quiet: the launcher compresses; the analyser is never run
    r = t.run(sh, args=["-c", PIPE], out="shq.hsp", opts=["-q"],
              env={"HEAPSCOPE_ANALYSER": os.path.join(t.dir, "no-analyser")})
    t.eq("quiet, no analyser: nothing said", b"", r.stderr)
    t.true("quiet, no analyser: pipeline output", b"2\n" in r.stdout, r.text())
    rltest.check_profile(t, r.out, 10)
    check_execd_packed(t, rltest.children(r.out), "quiet")
    r = rltest.run_both(t, [sh, "-c", "echo out; false | true; exit 3"], "sh3.hsp")
    t.eq("exit 3 kept", 3, r.rc)
    make = shutil.which("make")
    if make:
        with open(os.path.join(t.dir, "Makefile"), "w") as f:
            f.write(MAKEFILE)
        plain = t._exec([make, "-s"], None, None, b"", t.dir, 60, None)
        for f in ("a", "b"):
            os.unlink(os.path.join(t.dir, f))
        r = t.run(make, args=["-s"], out="make.hsp", opts=["-q"], expect_rc=None)
        t.eq("make: exit status", plain.rc, r.rc)
        t.eq("make: stdout", plain.stdout, r.stdout)
        t.eq("make: output", b"HELLO MAKE\n", r.stdout)
        rltest.check_profile(t, r.out, 10)
        for k in rltest.children(r.out):
            rltest.check_profile(t, k, 0)


if __name__ == "__main__":
    hstest.main(main)
