#!/usr/bin/env python3
"""Bad input: `heapscope report` and `heapscope run` given truncated,
corrupt, foreign and hostile files or arguments must exit non-zero with a
clear message (or, for a torn tail, keep what came before and say so) and
never crash or hang."""
import os
import struct
import hstest

FNV_INIT, FNV_PRIME = 0x811c9dc5, 0x01000193


def fnv(data, h=FNV_INIT):
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & 0xffffffff
    return h


def uv(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7f) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def s(text):
    b = text.encode()
    return uv(len(b)) + b


def record(rtype, payload):
    head = struct.pack("<II", rtype, len(payload))
    return head + payload + struct.pack("<I", fnv(payload, fnv(head[:4])))


HEADER = b"HEAPSCP\0" + struct.pack("<HHI", 1, 0, 0)
INFO = record(1, uv(42) + uv(1) + uv(0) + uv(0) + uv(0) + s("/bin/x") + uv(1) + s("x")
              + uv(1) + uv(64) + uv(500) + uv(10) + uv(16384) + s("libc"))


def main(t):
    hs = t.heapscope
    # a real profile to damage
    good = t.run("hs_single", out="good.hsp").out

    def report(name, data, expect_rc, fragment, json=False):
        path = os.path.join(t.dir, name)
        with open(path, "wb") as f:
            f.write(data)
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
