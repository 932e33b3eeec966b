#!/usr/bin/env python3
"""Bad input: `heapscope report` and `heapscope run` given truncated,
corrupt, foreign and hostile files or arguments must exit non-zero with a
clear message (or, for a torn tail, keep what came before and say so) and
never crash or hang."""
import os
import struct
import subprocess

import hstest
from hsformat import frame, uv, sv, ZSTD


def s(text):
    b = text.encode()
    return uv(len(b)) + b


def record(rtype, payload, major=1):
    return frame(rtype, payload, major)


def header(major):
    return b"HEAPSCP\0" + struct.pack("<HHI", major, 0, 0)


HEADER = header(1)
INFO_PAYLOAD = (uv(42) + uv(1) + uv(0) + uv(0) + uv(0) + s("/bin/x") + uv(1) + s("x")
                + uv(1) + uv(64) + uv(500) + uv(10) + uv(16384) + s("libc"))
INFO = record(1, INFO_PAYLOAD)


def zstd(data, sized=True):
    """A zstd frame of data; sized=False leaves out its content size, as
    the zstd command does for a pipe unless it is told the size."""
    size = ["--stream-size=%d" % len(data)] if sized else []
    return subprocess.run(["zstd", "-1", "-c", "-q"] + size, input=data,
                          stdout=subprocess.PIPE, check=True).stdout


def format3_files():
    """(name, bytes, expected message) of hostile format-3 files: its zstd
    records and delta-coded nodes."""
    h3, info3 = header(3), record(1, INFO_PAYLOAD, 3)
    nodes = uv(1) + uv(2) + uv(1) + sv(0x401000) + uv(1) + sv(-16)  # a good chain of 2
    z = zstd(nodes)
    bomb = zstd(bytes(65 << 20))  # states 65 MiB, a few KiB stored
    return (
        ("zstd-not-a-frame.hsp", h3 + info3 + record(4 | ZSTD, b"not zstd at all", 3),
         "not a zstd frame"),
        ("zstd-cut.hsp", h3 + info3 + record(4 | ZSTD, z[:len(z) - 3], 3), "does not inflate"),
        ("zstd-no-size.hsp", h3 + info3 + record(4 | ZSTD, zstd(nodes, sized=False), 3),
         "does not state its size"),
        ("zstd-bomb.hsp", h3 + info3 + record(4 | ZSTD, bomb, 3), "above the limit"),
        ("delta-parent-0.hsp", h3 + info3 + record(4, uv(1) + uv(1) + uv(0) + sv(4096), 3),
         "parent"),
        ("delta-parent-far.hsp", h3 + info3 + record(4, uv(1) + uv(1) + uv(2) + sv(4096), 3),
         "parent"),
        ("delta-leaf.hsp", h3 + info3 + record(4 | ZSTD, z, 3)
         + record(5, uv(1) + sv(3) + sv(5) + uv(0), 3), "leaf node 7"),
    )


def main(t):
    hs = t.heapscope
    # a real profile to damage
    good = t.run("hs_single", out="good.hsp").out

    def report(name, data, expect_rc, fragment, json=False):
        path = t.write(name, data)
        argv = [hs, "report"] + (["--json"] if json else []) + [path]
        r = t._exec(argv, None, None, b"", None, 30, None)
        err = r.stderr.decode("utf-8", "replace")
        out = r.stdout.decode("utf-8", "replace")
        t.eq(name + ": exit status", expect_rc, r.rc)
        t.true(name + ": message mentions %r" % fragment, fragment in err + out, err + out[:300])
        return out

    data = open(good, "rb").read()
    report("empty.hsp", b"", 1, "has not written a profile")
    report("magic.hsp", b"NOTAPROF" + data[8:], 1, "not a heapscope profile")
    report("elf.hsp", open("/bin/true", "rb").read(4096), 1, "not a heapscope profile")
    report("major.hsp", data[:8] + struct.pack("<H", 7) + data[10:], 1, "version")
    report("header-only.hsp", data[:10], 1, "")
    # a torn tail keeps the records before it and says so
    out = report("torn.hsp", data[:len(data) - 7], 0, "truncated", json=True)
    t.true("torn.hsp: JSON has truncated=true", '"truncated":true' in out.replace(" ", ""))
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0xff
    report("checksum.hsp", bytes(flipped), 0, "truncated", json=True)
    # hostile but well-framed content
    forward = record(4, uv(1) + uv(1) + uv(5) + uv(0x1000))      # parent 5 of node 1
    report("forward-parent.hsp", HEADER + INFO + forward, 1, "parent")
    huge = record(4, uv(1) + uv(1 << 40))                        # 2^40 nodes, 0 bytes
    report("huge-count.hsp", HEADER + INFO + huge, 1, "count")
    over = record(7, uv(1) + b"\xff" * 11)                       # varint longer than 64 bits
    report("varint.hsp", HEADER + INFO + over, 1, "")
    noinfo = record(8, uv(0))
    report("no-info.hsp", HEADER + noinfo, 1, "INFO")
    for name, content, fragment in format3_files():
        report(name, content, 1, fragment)
    # a 1.x or 2.x file knows no compressed records: one is skipped, unread
    report("zstd-in-v2.hsp", header(2) + record(1, INFO_PAYLOAD, 2)
                 + record(4 | ZSTD, b"not zstd at all", 2), 0, "unknown type skipped")
    r = t._exec([hs, "report", os.path.join(t.dir, "does-not-exist.hsp")], None, None, b"",
                None, 30, None)
    t.eq("missing file: exit status", 1, r.rc)
    t.true("missing file: says so", "No such file" in r.stderr.decode(), r.stderr.decode())
    # the command line
    for argv, fragment in (([hs, "report"], "usage"),
                           ([hs, "report", "--top", "x", good], "--top"),
                           ([hs, "report", "--bogus", good], "unknown option"),
                           ([hs, "run"], "no program"),
                           ([hs, "run", "--unwind", "magic", "--", "/bin/true"], "--unwind"),
                           ([hs, "run", "--depth", "0", "--", "/bin/true"], "--depth"),
                           ([hs, "frobnicate"], "unknown command")):
        r = t._exec(argv, None, None, b"", None, 30, None)
        t.eq(" ".join(argv[1:]) + ": exit status 2", 2, r.rc)
        t.true(" ".join(argv[1:]) + ": mentions " + fragment, fragment in r.stderr.decode(),
               r.stderr.decode())
    r = t._exec([hs, "run", "--", "/nonexistent/prog"], None, None, b"", None, 30, None)
    t.eq("run of a missing program: exit 127", 127, r.rc)
    t.true("run of a missing program: says so", "cannot run" in r.stderr.decode(), r.stderr.decode())


if __name__ == "__main__":
    hstest.main(main)
