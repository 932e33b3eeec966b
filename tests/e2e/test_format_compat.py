"""e2e_format_compat: format 3.0 as the collector writes it and as
`heapscope run` leaves it, and profiles of formats 1.x and 2.x still read
(hs_single.c, hs_manyret.c, hs_sigkill.c).

The collector writes 3.0 with NODES and STACKS as deltas and nothing
compressed; once the program has exited, `heapscope run` rewrites a final
profile with its large records as zstd frames (docs/FORMAT.md).  Profiles
are decoded here by hsformat (written from the document, not from the C
reader) and rewritten as 2.0 (absolute nodes and stacks, XXH32 checks) and
as 1.1 (FNV-1a checks): each must report hs_single's exact counts and the
same text report.  A 1.x profile whose check does not match is cut there,
as a 2.x one is.  A profile over 256 KiB is packed in two halves, each in
a thread: its records come back in order, each the same bytes."""
import os

import hsformat
import hstest
import test_single

NODES_Z, STACKS_Z, COUNTERS_Z = 4 | hsformat.ZSTD, 5 | hsformat.ZSTD, 6 | hsformat.ZSTD


def kinds(data):
    return [rtype for rtype, _ in hsformat.records(data)]


def tail(text):
    """A text report but for its first line (the file's name)."""
    return text.split("\n", 1)[1]


def stored_plain(data):
    """(type, payload) of every record, compressed ones inflated."""
    return [(k & ~hsformat.ZSTD, hsformat.inflate(pl) if k & hsformat.ZSTD else pl)
            for k, pl in hsformat.records(data)]


def main(t):
    # the collector's own file: 3.0, deltas, nothing compressed
    raw = os.path.join(t.dir, "raw.hsp")
    t.run_preloaded("hs_single", env={"HEAPSCOPE_OUTPUT": raw})
    rdata = open(raw, "rb").read()
    t.eq("the collector writes format 3.0", (3, 0), hsformat.version(rdata))
    t.true("the collector compresses nothing", all(k < hsformat.ZSTD for k in kinds(rdata)),
           kinds(rdata))
    test_single.check_counts(t, t.report(raw))

    # `heapscope run` compresses a final profile's large records
    good = t.run("hs_single", out="v3.hsp").out
    data = open(good, "rb").read()
    t.eq("heapscope run leaves format 3.0", (3, 0), hsformat.version(data))
    t.true("heapscope run compresses COUNTERS", COUNTERS_Z in kinds(data), kinds(data))
    t.true("a small record is stored as it is", 1 in kinds(data), kinds(data))  # INFO
    report = tail(t.report_text(good))
    # the collector's file compressed as `heapscope run` does it (the
    # launcher's hidden call): the same report, byte for byte
    packed = t.write("packed.hsp", rdata)
    analyser = os.path.join(os.path.dirname(t.heapscope), "heapscope-analyse")
    t._exec([analyser, "--run-finish", packed, "0", "quiet"], None, None, b"", None, 60, 0)
    pdata = open(packed, "rb").read()
    t.true("packed: COUNTERS compressed", COUNTERS_Z in kinds(pdata), kinds(pdata))
    t.eq("compressed and plain: the same text report", tail(t.report_text(raw)),
         tail(t.report_text(packed)))
    for (major, minor) in ((2, 0), (1, 1)):
        old = t.write("v%d.hsp" % major, hsformat.rewrite(data, major, minor))
        test_single.check_counts(t, t.report(old))
        t.eq("%d.%d profile: the same text report" % (major, minor),
             report, tail(t.report_text(old)))

    # 640 KiB: packed in two parts.  Records of a type the reader skips
    # (0x7e), 8 KiB each, numbered, before END: back in order, the same
    recs = hsformat.records(rdata)
    filler = [(0x7e, (b"filler record %03d " % i) * 420) for i in range(80)]
    big = rdata[:16] + b"".join(hsformat.frame(k, pl, 3) for k, pl in recs[:-1] + filler
                                + recs[-1:])
    bigpath = t.write("big.hsp", big)
    t._exec([analyser, "--run-finish", bigpath, "0", "quiet"], None, None, b"", None, 60, 0)
    bdata = open(bigpath, "rb").read()
    t.true("640 KiB profile: compressed (%d bytes)" % len(bdata), 4 * len(bdata) < len(big))
    t.eq("640 KiB profile: every record back, in order", hsformat.records(big),
         stored_plain(bdata))
    t.eq("640 KiB profile: the same text report, packed or not",
         tail(t.report_text(t.write("big-plain.hsp", big))), tail(t.report_text(bigpath)))

    # 3,000 stacks: NODES records of thousands of deltas each, compressed,
    # read back as the 2.0 file of the same content
    many = t.run("hs_manyret", out="many.hsp").out
    mdata = open(many, "rb").read()
    t.true("hs_manyret: NODES and STACKS stored compressed",
           NODES_Z in kinds(mdata) and STACKS_Z in kinds(mdata), kinds(mdata))
    plain = hsformat.rewrite(mdata, 2, 0)
    t.true("hs_manyret: at least 3x smaller than as 2.0 (%d and %d bytes)"
           % (len(mdata), len(plain)), 3 * len(mdata) <= len(plain))
    mold = t.write("many-v2.hsp", plain)
    t.eq("hs_manyret: 3.0 and 2.0 give the same report",
         tail(t.report_text(many, ("--top", "5000"))),
         tail(t.report_text(mold, ("--top", "5000"))))

    # a profile that is not final is left as the collector wrote it: the
    # process may still have been writing it
    killed = t.run("hs_sigkill", args=["150"], out="killed.hsp", expect_rc=137).out
    kdata = open(killed, "rb").read()
    t.true("a killed program's profile is not compressed",
           all(k < hsformat.ZSTD for k in kinds(kdata)), kinds(kdata))

    # packing walks the records only; one whose check is wrong, or a file
    # cut short, is left as it is, byte for byte, for the reader to report
    for name, bad in (("bad-check", rdata[:-1] + bytes([rdata[-1] ^ 1])),
                      ("cut", rdata[:-3])):
        path = t.write("%s.hsp" % name, bad)
        t._exec([analyser, "--run-finish", path, "0", "quiet"], None, None, b"", None, 60, 0)
        t.eq("%s: left as it was" % name, bad, open(path, "rb").read())

    # a wrong FNV check cuts a 1.x profile there, keeping what came before
    v1 = bytearray(hsformat.rewrite(data, 1, 1))
    v1[len(v1) - 1] ^= 0x01  # the last record's check
    text = t.report_text(t.write("v1-cut.hsp", bytes(v1)))
    t.true("1.1 profile with a bad check: reported as truncated", "truncated" in text, text[:400])


if __name__ == "__main__":
    hstest.main(main)
