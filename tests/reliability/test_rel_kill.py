"""e2e_rel_kill: the profiled program killed at random moments leaves a
profile that reads.  rl_victim (2,000 allocations, 1,000 frees over ~2 s
when complete) is run under `heapscope run --interval 50`; after a random
delay (seeded, printed; RL_SEED=N repeats a run) the victim itself, not
`heapscope run`, gets SIGKILL, SIGSEGV or SIGABRT; it also faults by
itself (raise(SIGSEGV), abort()) in a random round.  Each time: `heapscope
run` exits 128 + N, `report --json` exits 0, the profile is not final, and
its figures are at most those of the complete run, and at least one
flush's worth (the first flush happens within 50 ms of start).
"""
import os
import random
import signal
import subprocess
import time

import hstest

SIGNALS = (signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT)


def victim_pid(run_pid, deadline):
    """The pid of `heapscope run`'s child (the profiled program)."""
    path = "/proc/%d/task/%d/children" % (run_pid, run_pid)
    while time.time() < deadline:
        try:
            with open(path) as f:
                kids = f.read().split()
            if kids:
                return int(kids[0])
        except OSError:
            pass
        time.sleep(0.005)
    raise hstest.HsError("no child of heapscope run %d" % run_pid)


def check_partial(t, what, path, full):
    p = t.report(path)
    s = p.summary
    t.eq(what + ": final", False, s.get("final"))
    for k in ("allocations", "frees", "bytes_allocated", "bytes_freed"):
        t.true("%s: %s %s <= complete run's %s" % (what, k, s.get(k), full[k]),
               0 <= int(s.get(k, 0)) <= full[k])
    t.true(what + ": allocations > 0", int(s.get("allocations", 0)) > 0)
    t.check_consistent(p)
    t.report_text(path)


def main(t):
    seed = int(os.environ.get("RL_SEED", random.randrange(1 << 30)))
    print("e2e_rel_kill: seed %d (RL_SEED=%d to repeat)" % (seed, seed), flush=True)
    rng = random.Random(seed)
    victim = t.prog("rl_victim")
    r = t.run(victim, out="full.hsp", opts=["-q", "--interval", "50"])
    fp = t.report(r.out)
    full = fp.summary
    t.check_site(fp, "rl_victim_site", allocations=2000, frees=1000)
    n = 0
    for sig in SIGNALS:
        for k in range(3):
            delay = rng.uniform(0.15, 1.8)
            out = os.path.join(t.dir, "k%d.hsp" % n)
            n += 1
            what = "%s after %.3f s" % (signal.Signals(sig).name, delay)
            print("injecting " + what, flush=True)
            proc = subprocess.Popen([t.heapscope, "run", "-q", "--interval", "50", "-o", out,
                                     "--", victim], env=t.env(), cwd=t.dir,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            pid = victim_pid(proc.pid, time.time() + 10)
            time.sleep(delay)
            os.kill(pid, sig)
            proc.communicate(timeout=60)
            t.eq(what + ": heapscope run's exit status", 128 + sig, proc.returncode)
            check_partial(t, what, out, full)
    for how, sig in (("segv", signal.SIGSEGV), ("abort", signal.SIGABRT)):
        rnd = rng.randrange(20, 190)
        what = "%s by itself in round %d" % (how, rnd)
        print(what, flush=True)
        r = t.run(victim, args=[how, str(rnd)], out="self-%s.hsp" % how,
                  opts=["-q", "--interval", "50"], expect_rc=128 + sig)
        check_partial(t, what, r.out, full)
    print("faults injected: %d" % (n + 2))


if __name__ == "__main__":
    hstest.main(main)
