"""e2e_format_compat: profiles of format 1.x are still read (hs_single.c).

heapscope writes format 2.0, whose records end in an XXH32 check; 1.x
profiles end theirs in FNV-1a (docs/FORMAT.md).  A profile just written is
rewritten here in 1.1 framing, every check recomputed as FNV-1a, and must
report hs_single's exact counts and the same text report; a 1.x profile
whose check does not match is cut there, as a 2.x one is."""
import os
import struct

import hstest
import test_single
from test_bad_input import fnv


def records(data):
    """(type, payload) of every record after the 16-byte header."""
    off, out = 16, []
    while off < len(data):
        rtype, n = struct.unpack_from("<II", data, off)
        out.append((rtype, data[off + 8:off + 8 + n]))
        off += 12 + n
    return out


def as_v1(data):
    head = data[:8] + struct.pack("<HH", 1, 1) + data[12:16]
    body = b"".join(struct.pack("<II", rtype, len(pl)) + pl +
                    struct.pack("<I", fnv(pl, fnv(struct.pack("<I", rtype))))
                    for rtype, pl in records(data))
    return head + body


def main(t):
    good = t.run("hs_single", out="v2.hsp").out
    data = open(good, "rb").read()
    t.eq("a new profile is format 2.0", (2, 0), struct.unpack_from("<HH", data, 8))
    old = os.path.join(t.dir, "v1.hsp")
    with open(old, "wb") as f:
        f.write(as_v1(data))
    p = t.report(old)
    test_single.check_counts(t, p)
    t.eq("1.1 profile: the same text report, but for its file name",
         t.report_text(good).split("\n", 1)[1], t.report_text(old).split("\n", 1)[1])

    # a wrong FNV check cuts a 1.x profile there, keeping what came before
    v1 = bytearray(as_v1(data))
    v1[len(v1) - 1] ^= 0x01  # the last record's check
    cut = os.path.join(t.dir, "v1-cut.hsp")
    with open(cut, "wb") as f:
        f.write(bytes(v1))
    text = t.report_text(cut)
    t.true("1.1 profile with a bad check: reported as truncated", "truncated" in text, text[:400])


if __name__ == "__main__":
    hstest.main(main)
