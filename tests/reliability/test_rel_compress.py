"""e2e_rel_compress: multithreaded Debian programs, xz -T2 and pigz -p 2,
compressing 4 MiB of generated data (pigz -n: no time stamp in the header) under heapscope: the same compressed
bytes, exit status 0, complete profiles with threads >= 2 (xz: at least
one worker thread; pigz: compression threads), and decompression checked.
"""
import random
import shutil

import hstest
import rltest


def main(t):
    rng = random.Random(8)
    words = [bytes(rng.choice(b"abcdefghijklmnop") for _ in range(rng.randint(2, 9)))
             for _ in range(3000)]
    data = b" ".join(rng.choice(words) for _ in range(700000))[:4 << 20]
    for tool, argv, mina in (("xz", ["-T2", "-6", "-c"], 20),
                             ("pigz", ["-p", "2", "-n", "-c"], 20)):
        path = shutil.which(tool)
        if not path:
            raise hstest.HsError("%s is not installed (Makefile DEB_PACKAGES)" % tool)
        r = rltest.run_both(t, [path] + argv, tool + ".hsp", stdin=data)
        t.eq(tool + " exit status", 0, r.rc)
        p = rltest.check_profile(t, r.out, mina)
        t.true("%s: threads %s >= 2" % (tool, p.summary.get("threads")),
               int(p.summary.get("threads", 0)) >= 2)
        back = t._exec([path, "-d", "-c"], None, None, r.stdout, t.dir, 120, 0)
        t.true(tool + ": the profiled run's output decompresses to the input",
               back.stdout == data)


if __name__ == "__main__":
    hstest.main(main)
