"""e2e_exit_stdio: `heapscope run` passes stdin/stdout through and keeps the
exit status (hs_echo.c: copies stdin to stdout, exits 3).

200 KiB of binary input must come back byte for byte; heapscope run exits
3; the profile has echo_buffer_site's single 65,536-byte block, freed, and
nothing else (Valgrind: 1 alloc, 1 free, 65,536 bytes).  The summary goes to
stderr, never stdout.
"""
import hstest


def main(t):
    data = bytes((i * 7919 + (i >> 8)) & 0xFF for i in range(200 * 1024))
    r = t.run("hs_echo", out="echo.hsp", stdin=data, expect_rc=3)
    t.eq("stdout length", len(data), len(r.stdout))
    t.true("stdout equals stdin", r.stdout == data)
    t.true("a summary on stderr", len(r.stderr) > 0)
    p = t.report(r.out)
    t.check_site(p, "echo_buffer_site", allocations=1, bytes_allocated=65536, frees=1,
                 bytes_freed=65536, temporary_allocations=1)
    t.check_summary(p, final=True, allocations=1, frees=1, bytes_allocated=65536,
                    leaked_bytes=0)

    # empty stdin and -q: nothing on stdout, nothing on stderr
    r = t.run("hs_echo", out="echo2.hsp", stdin=b"", opts=["-q"], expect_rc=3)
    t.eq("stdout for empty stdin", b"", r.stdout)
    t.eq("stderr with -q", b"", r.stderr)
    t.check_summary(t.report(r.out), allocations=1, frees=1)


if __name__ == "__main__":
    hstest.main(main)
