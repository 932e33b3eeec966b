"""e2e_rel_output: the profile cannot be written (the disk is full:
/dev/full, which the collector must write into, never replace or put a
file beside; the directory does not exist; the path goes through a regular
file), yet the program runs with the same stdout and exit status, and a
clear message naming the path is printed on stderr.
"""
import os
import stat

import hstest


def main(t):
    prog = t.prog("rl_throw")
    plain = t._exec([prog], None, None, b"", t.dir, 60, None)
    blocker = os.path.join(t.dir, "afile")
    with open(blocker, "w") as f:
        f.write("x")
    for where in ("/dev/full", "/nonexistent-dir/sub/p.hsp", blocker + "/p.hsp"):
        # `heapscope run -o /dev/full` too: it must not remove the device
        # (it did, as root, before cli_run.c checked for a regular file)
        for how in ("run", "preload"):
            if how == "run":
                r = t.run(prog, out=None, opts=["-o", where], expect_rc=None)
            else:
                r = t.run_preloaded(prog, env={"HEAPSCOPE_OUTPUT": where}, expect_rc=None)
            what = "%s, output %s" % (how, where)
            t.eq(what + ": exit status", plain.rc, r.rc)
            t.eq(what + ": stdout", plain.stdout, r.stdout)
            err = r.stderr.decode("utf-8", "replace")
            t.true(what + ": stderr names the path", where in err or
                   where.replace("p.hsp", "") in err, err)
            if where == "/dev/full":
                t.true(what + ": /dev/full is still a character device",
                       stat.S_ISCHR(os.stat(where).st_mode))
                t.true(what + ": the message says why", "No space left on device" in err, err)
                t.eq(what + ": no profile beside it", [],
                     [f for f in os.listdir("/dev") if f.startswith("full.")])
            print("%s -> %s" % (what, err.strip().splitlines()[0] if err.strip() else "(nothing)"))


if __name__ == "__main__":
    hstest.main(main)
