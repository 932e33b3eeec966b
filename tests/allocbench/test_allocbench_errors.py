"""Bad input gets a clear message and a non-zero exit, never a crash: an
unknown allocator, a path that is not a shared object, an unknown workload,
a bad --repeat, a command that fails (`-- false`) or does not exist.  And
`--list` names exactly the executable wl-* programs of the bench directory."""

import os

import abtest
import hstest


def expect(t, what, args, rc, *needles):
    cp = abtest.bench(t, args, expect_rc=None, timeout=60)
    t.eq(what + ": exit status", rc, cp.returncode)
    for n in needles:
        t.true("%s: message has %r" % (what, n), n in cp.err, cp.err)
    t.true(what + ": no crash", cp.returncode < 128, str(cp.returncode))
    return cp


def main(t):
    expect(t, "unknown allocator", ["--allocators", "glibc,nosuchmalloc", "plateau"], 2,
           "unknown allocator 'nosuchmalloc'", "jemalloc")
    notso = os.path.join(t.dir, "not-a-library.so")
    with open(notso, "w") as f:
        f.write("just text\n")
    expect(t, "not a shared object", ["--allocators", notso, "plateau"], 2,
           "is not an ELF shared object")
    expect(t, "missing .so", ["--allocators", "/nonexistent/libx.so", "plateau"], 2,
           "cannot open allocator '/nonexistent/libx.so'")
    expect(t, "unknown workload", ["--allocators", "glibc", "no-such-workload"], 2,
           "unknown workload 'no-such-workload'", "--list")
    expect(t, "bad --repeat", ["--repeat", "0", "plateau"], 2, "--repeat must be a number")
    expect(t, "-- with nothing", ["--allocators", "glibc", "--"], 2, "needs a command")
    cp = expect(t, "failing command", ["--allocators", "glibc", "--repeat", "1", "--", "false"],
                1, "'false' under glibc exited with status 1")
    t.eq("failing command: no table", "", cp.out)
    expect(t, "missing program", ["--allocators", "glibc,jemalloc", "--", "no-such-prog-xyz"], 1,
           "cannot run 'no-such-prog-xyz': No such file or directory")

    cp = abtest.bench(t, ["--list"])
    bench_dir = os.path.dirname(t.prog("wl-plateau"))
    want = sorted(f[3:] for f in os.listdir(bench_dir)
                  if f.startswith("wl-") and os.access(os.path.join(bench_dir, f), os.X_OK)
                  and os.path.isfile(os.path.join(bench_dir, f)))
    t.eq("--list", want, cp.out.split())
    for w in ("cache-scratch", "phased", "plateau", "prodcons", "ramp", "size-sweep"):
        t.true("--list has " + w, w in cp.out.split())


hstest.main(main)
