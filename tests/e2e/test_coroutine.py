"""e2e_coroutine: allocations on a coroutine's stack, one of them from a
function whose saved frame pointer leads to a PROT_NONE page
(tests/progs/hs_coroutine.c), in each unwinding mode.  The program must run
to its end with exact counts; the frame-pointer walks of the coroutine's
stack read its frames without faulting, and the stack with the sound frame
chain is found whole.  Under HEAPSCOPE_UNWIND_VERIFY the fp unwinder
counts its walks of stacks not the thread's own: the coroutine's 200, and
none in a single-threaded program run without /proc (hs_single in a mount
namespace where /proc is unmounted), whose main-thread stack bounds glibc
cannot read there and the collector takes from the loader's
__libc_stack_end instead.  A thread whose stack lies below the main
stack, within its limit (hs_stackhole), must keep its own bounds: a frame
pointer into the hole between the two is read as a foreign stack's word,
and the program runs to its end.

Under a seccomp filter that kills the process at process_vm_readv(2)
(hs_coroutine prctl|syscall|prctl-exec installs one each way, the last
inherited through exec), the walks of the coroutine's stack must not make
that call: the program ends normally with exact counts and the stacks it
has without the filter (without the check, the kernel kills it with
SIGSYS: exit 159).

Valgrind 3.19 memcheck on hs_coroutine: total heap usage 201 allocs, 201
frees, 6,456 bytes allocated.
"""
import glob
import os
import re
import subprocess

import hstest

FOREIGN = re.compile(r"(\d+) stacks, (\d+) differed; \d+ were the guessed next stack; "
                     r"(\d+) walked on a stack not the thread's own")


SECCOMP_CUTS = re.compile(r"(\d+) frame-pointer walks of a stack not the thread's own .* "
                          r"stopped early")


def seccomp_cuts(p):
    """The walks the collector stopped for a seccomp filter, or None."""
    for w in p.summary["warnings"]:
        m = SECCOMP_CUTS.search(w)
        if m:
            return int(m.group(1))
    return None


def verify_counts(p):
    """(stacks verified, differed, walked on another stack) from the fp
    verification message, or None."""
    for w in p.summary["warnings"]:
        m = FOREIGN.search(w)
        if m:
            return tuple(int(x) for x in m.groups())
    return None


def main(t):
    ref = {}
    for mode in ("fp", "dwarf"):
        r = t.run("hs_coroutine", out="coroutine-%s.hsp" % mode, opts=["--unwind", mode])
        ref[mode] = check_profile(t, mode, r)
    check_verified(t)
    check_no_proc(t)
    check_stack_hole(t)
    check_seccomp(t, ref)


def check_profile(t, what, r):
    """The program's output, exact counts, and the two stacks that must be
    whole: coro_site's under coro_body, main_site's under main; returns the
    profile."""
    t.eq(what + ": program stdout", b"coroutine done\n", r.stdout)
    p = t.report(r.out)
    t.check_summary(p, allocations=201, frees=201, bytes_allocated=6456, bytes_freed=6456,
                    leaked_bytes=0, unknown_frees=0, lost_allocations=0, final=True)
    site = p.stacks_with("coro_site")
    t.eq(what + ": coro_site's allocations", [100], [int(s["allocations"]) for s in site])
    t.true(what + ": coro_site is called by coro_body",
           bool(site) and p.frame_of(site[0], "coro_body") is not None,
           site and p.describe(site[0]))
    main_st = p.stacks_with("main_site")
    t.eq(what + ": main_site's allocations", [1], [int(s["allocations"]) for s in main_st])
    t.true(what + ": main_site is called by main",
           bool(main_st) and p.frame_of(main_st[0], "main") is not None,
           main_st and p.describe(main_st[0]))
    return p


def frame_names(p, name):
    """Function names of each stack with a frame for `name`, sorted."""
    return sorted([f.get("function") or f.get("address") or "??" for f in st.get("frames", [])]
                  for st in p.stacks_with(name))


def check_stack_hole(t):
    """hs_stackhole: a thread whose stack lies within the main stack's
    limit, below it, walks a frame pointer into the unmapped hole between
    them.  The thread's bounds must be its own (glibc's), not the main
    stack's: the walk then reads that word as a foreign stack's and ends
    the stack, where a direct read would kill the program."""
    for mode in ("fp", "dwarf"):
        r = t.run("hs_stackhole", out="hole-%s.hsp" % mode, opts=["--unwind", mode])
        if r.stdout == b"hole skipped\n":
            print("skipped: the address below the main stack is taken")
            return
        t.eq("hole %s: program stdout" % mode, b"hole done\n", r.stdout)
        p = t.report(r.out)
        t.check_summary(p, final=True, unknown_frees=0, lost_allocations=0)
        t.eq("hole %s: allocations under hole_call" % mode, [4],
             [int(st["allocations"]) for st in p.stacks_with("hole_call")])


def check_seccomp(t, ref):
    """A filter that kills at process_vm_readv, installed by prctl, by
    syscall(SYS_seccomp), or inherited through exec (seen in
    /proc/self/status): the program must run to its end, with the same
    stacks as without the filter in both modes (ref: mode -> the profile
    of the run without it; fp reads the coroutine's frames through a pipe
    instead), and no walk may stop early."""
    for how in ("prctl", "syscall", "prctl-exec"):
        for mode in ("fp", "dwarf"):
            what = "seccomp by %s, %s" % (how, mode)
            r = t.run("hs_coroutine", args=[how], out="coroutine-seccomp-%s-%s.hsp" % (how, mode),
                      opts=["--unwind", mode], expect_rc=None)
            if r.rc == 3:
                print("skipped: cannot install a seccomp filter here (%s)" % r.stderr.decode()[:200])
                return
            t.eq(what + ": exit status (159: killed by SIGSYS)", 0, r.rc)
            if how.endswith("-exec"):
                # the image exec'd under the filter writes OUT.<pid>
                # (OUT is the first image's, with no allocations)
                later = glob.glob(r.out + ".[0-9]*")
                t.eq(what + ": one profile of the exec'd image", 1, len(later))
                r.out = later[0] if later else r.out
            p = check_profile(t, what, r)
            for name in ("coro_site", "coro_stray", "main_site"):
                t.eq(what + ": %s's stacks as without the filter" % name,
                     frame_names(ref[mode], name), frame_names(p, name))
            t.eq(what + ": no walk stopped early", None, seccomp_cuts(p))


def check_verified(t):
    r = t.run("hs_coroutine", out="coroutine-verify.hsp", opts=["--unwind", "fp"],
              env={"HEAPSCOPE_UNWIND_VERIFY": "1"})
    p = t.report(r.out)
    t.eq("fp verify: stacks, differences, walks on the coroutine's stack", (201, 0, 200),
         verify_counts(p))


def check_no_proc(t):
    """hs_single without /proc: glibc cannot give the main thread's stack
    bounds, and the walks must still count it as the thread's own."""
    lib = os.path.join(os.path.dirname(t.lib), "libheapscope-fp.so")
    out = os.path.join(t.dir, "noproc.hsp")
    env = t.env({"HS_LIB": lib, "HEAPSCOPE_OUTPUT": out, "HEAPSCOPE_UNWIND_VERIFY": "1"})
    script = 'umount -l /proc && LD_PRELOAD="$HS_LIB" exec "$0"'
    proc = subprocess.run(["unshare", "-m", "sh", "-c", script, t.prog("hs_single")],
                          env=env, capture_output=True, timeout=120)
    if proc.returncode != 0 and not os.path.exists(out):
        print("skipped: no mount namespace here (%s)" % proc.stderr.decode().strip()[:200])
        return
    t.eq("no /proc: hs_single's exit status", 0, proc.returncode)
    p = t.report(out)
    t.check_summary(p, allocations=150, frees=120, bytes_allocated=56550)
    t.eq("no /proc: stacks verified, differences, walks on another stack", (150, 0, 0),
         verify_counts(p))


if __name__ == "__main__":
    hstest.main(main)
