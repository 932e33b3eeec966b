"""e2e_closefds: a program that closes the descriptors it did not open and
reuses their numbers (hs_closefds.c) gets its own bytes back.

The collector keeps no descriptor open across the program's code: a
daemon's close-everything loop would otherwise hand the number to one of
the program's files, and the writer's wake-up read or the flush signal's
wake-up write would take bytes from it or add bytes to it.  hs_closefds
makes 4 pipes after its loop, raises HEAPSCOPE_SIGNAL (USR2), waits ten
sample periods, and checks each pipe holds exactly the 16 bytes it wrote.
The profile written at its exit holds closefds_site's 4 x 100 bytes.

libunwind keeps a pipe for good, made at its first walk, and reads and
writes a byte there to check a page (hs_closefds unwind: in `dwarf` mode
for a frame without CFI, in `libunwind` mode for every stack): its ends
are moved out of the program's way like the profile's (col_unwind.c's
pipe2).  Before that, pipe 0 lost its first byte and gained one.

And a profile is written (a flush every 10 ms, hs_closefds scan) through
a descriptor above 255, out of reach of a program's next open() and of a
close-everything loop to 256 (it was written through 3 before
col_fd_high: the scan then saw none up there).
"""
import hstest


def main(t):
    for mode in ("fp", "dwarf"):
        r = t.run("hs_closefds", out="closefds-%s.hsp" % mode, opts=["--unwind", mode],
                  env={"HEAPSCOPE_SIGNAL": "USR2"}, expect_rc=None)
        t.eq("%s: program exit status" % mode, 0, r.rc)
        t.eq("%s: program stdout" % mode, b"pipes intact\n", r.stdout)
        p = t.report(r.out)
        t.check_site(p, "closefds_site", allocations=4, bytes_allocated=400, frees=0,
                     leaked_bytes=400, leaked_allocations=4)
        t.check_summary(p, final=True)

    for mode in ("dwarf", "libunwind"):
        r = t.run("hs_closefds", args=["unwind"], out="closefds-unwind-%s.hsp" % mode,
                  opts=["--unwind", mode], env={"HEAPSCOPE_SIGNAL": "USR2"}, expect_rc=None)
        t.eq("unwind %s: program exit status" % mode, 0, r.rc)
        t.eq("unwind %s: program stdout" % mode, b"pipes intact\n", r.stdout)
        p = t.report(r.out)
        t.check_site(p, "closefds_site", allocations=12, bytes_allocated=1200, frees=8,
                     leaked_bytes=400, leaked_allocations=4)
        t.check_site(p, "nocfi_call2", allocations=4, frees=4)
        t.check_summary(p, final=True)

    r = t.run("hs_closefds", args=["scan"], out="closefds-scan.hsp", opts=["--interval", "10"])
    words = r.stdout.decode().split()
    t.true("scan: a profile was seen being written through a descriptor above 255",
           len(words) == 3 and words[2].isdigit() and int(words[2]) > 255, r.stdout.decode())


if __name__ == "__main__":
    hstest.main(main)
