"""e2e_convoy: threads that make the same new stacks at once (hs_convoy.c).

2 workers, released together, each build and free a tree of 8,191 nodes,
each node allocated (16 bytes) from its own stack in conv_build; three
rounds.  So the collector's call tree and site table are asked for the
same 8,191 new keys by both threads at the same moment, and a thread that
finds the other making its key waits for it, or backs off and sleeps when
it keeps trailing it (col_idtab.c).  Whatever the interleaving, every
stack must come out once, with its exact counts: 6 allocations (2 workers
x 3 rounds) of 16 bytes, all freed; each worker's last block of a round
(the rightmost leaf) is freed before it allocates again, 6 temporary in
all.

How often the workers meet on one key depends on the scheduler (a few
times a run on a 2-CPU machine); HEAPSCOPE_FAULT_BACKOFF=1 makes each such
wait a back-off, the path that sleeps instead of waiting for the lock.
(unit_tsan_collector_backoff takes that path thousands of times, under
ThreadSanitizer.)  `hs_convoy nosleep` first installs a seccomp filter
that kills the process at nanosleep and clock_nanosleep: under a filter
the collector must wait rather than sleep, or the run ends with SIGSYS
(exit 159) whenever the workers meet.
"""
import hstest

STACKS = 8191
PER_STACK = 2 * 3
DEPTH = 12


def check(t, out, args=(), opts=(), env=None):
    r = t.run("hs_convoy", args=args, out=out, opts=opts, env=env)
    t.eq(out + ": program stdout", b"convoy done\n", r.stdout)
    p = t.report(r.out)
    stacks = t.check_site(p, "conv_build", n_stacks=STACKS, allocations=STACKS * PER_STACK,
                          bytes_allocated=STACKS * PER_STACK * 16,
                          frees=STACKS * PER_STACK, bytes_freed=STACKS * PER_STACK * 16,
                          leaked_allocations=0, temporary_allocations=PER_STACK)
    odd = [p.describe(s) for s in stacks
           if (int(s["allocations"]), int(s["bytes_allocated"]), int(s["frees"]))
           != (PER_STACK, PER_STACK * 16, PER_STACK)]
    t.eq(out + ": stacks through conv_build without 6 allocations of 16 bytes, all freed",
         [], odd[:5])
    depths = sorted(sum(1 for f in s.get("frames", []) if hstest.frame_matches(f, "conv_build"))
                    for s in stacks)
    t.eq(out + ": conv_build frames per stack (a tree of depth 12)",
         sorted(d + 1 for d in range(DEPTH + 1) for _ in range(2 ** d)), depths)
    t.check_summary(p, final=True, unknown_frees=0, lost_allocations=0)
    t.check_consistent(p)


def main(t):
    check(t, "convoy.hsp")
    check(t, "convoy-backoff.hsp", env={"HEAPSCOPE_FAULT_BACKOFF": "1"})
    check(t, "convoy-fp-backoff.hsp", opts=["--unwind", "fp"],
          env={"HEAPSCOPE_FAULT_BACKOFF": "1"})
    for i in range(3):
        check(t, "convoy-nosleep-%d.hsp" % i, args=["nosleep"],
              env={"HEAPSCOPE_FAULT_BACKOFF": "1"})


if __name__ == "__main__":
    hstest.main(main)
