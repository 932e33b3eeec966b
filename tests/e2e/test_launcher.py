"""e2e_launcher: `heapscope` is a launcher that links nothing but libc and
runs `heapscope run` itself; every other subcommand, and run's summary, is
heapscope-analyse's, which it execs (src/cli/launch.c).

- While python3 runs under `heapscope run`, its parent (the launcher) maps
  libc and none of the analyser's libraries (libdw, libelf, libstdc++,
  protobuf-c).
- `heapscope run` without -q on hs_echo (one 65,536-byte block, freed;
  exits 3): the analyser's summary on stderr, and exit status 3.
- Installed with `cmake --install` into a scratch prefix: bin/heapscope and
  libexec/heapscope/heapscope-analyse, nothing else in bin/; without
  HEAPSCOPE_LIB the installed launcher finds lib/libheapscope.so, and the
  installed analyser reports hs_single's exact counts.
- The launcher alone in a directory: exit 2 and a message naming the
  analyser it cannot find.
"""
import os
import re
import shutil
import subprocess

import hstest
import test_single

ANALYSER_LIBS = ("/libdw", "/libelf", "/libstdc++", "/libprotobuf-c")


def check_parent_maps(t):
    code = "import os; print(open('/proc/%d/maps' % os.getppid()).read())"
    r = t.run(t.prog("python3"), args=["-c", code], out="py.hsp", opts=["-q"])
    maps = r.text()
    t.true("the launcher maps libc", "/libc.so.6" in maps, maps[:2000])
    t.eq("analysis libraries mapped in the launcher", [],
         [lib for lib in ANALYSER_LIBS if lib in maps])


def check_summary(t):
    r = t.run("hs_echo", out="echo.hsp", stdin=b"abc", expect_rc=3)
    t.eq("program stdout", b"abc", r.stdout)
    lines = r.stderr.decode("utf-8", "replace").splitlines()
    t.eq("summary lines", 3, len(lines))
    if len(lines) == 3:
        t.true("summary: counts", re.match(
            r"heapscope: 1 allocations \(64\.0 KiB\), 1 frees, peak 64\.0 KiB at \S+ \S+$",
            lines[0]), lines[0])
        t.eq("summary: leaks", "heapscope: leaked 0 B in 0 blocks, "
             "1 temporary allocations (100.0%)", lines[1])
        t.eq("summary: where", "heapscope: profile %s; see `heapscope report %s`"
             % (r.out, r.out), lines[2])


def clean_env():
    return {k: v for k, v in os.environ.items()
            if not k.startswith("HEAPSCOPE_") and k != "LD_PRELOAD"}


def check_installed(t):
    build = os.path.dirname(os.path.dirname(t.heapscope))
    cmake = shutil.which("cmake")
    if not cmake or not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        print("install check skipped: no cmake or no build tree at %s" % build)
        return
    prefix = os.path.join(t.dir, "prefix")
    cp = subprocess.run([cmake, "--install", build, "--prefix", prefix],
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    t.eq("cmake --install exit status", 0, cp.returncode)
    if cp.returncode != 0:
        print(cp.stdout.decode("utf-8", "replace")[-2000:])
        return
    t.eq("installed bin/", ["heapscope"], sorted(os.listdir(os.path.join(prefix, "bin"))))
    t.true("installed analyser", os.access(os.path.join(
        prefix, "libexec", "heapscope", "heapscope-analyse"), os.X_OK))
    hs = os.path.join(prefix, "bin", "heapscope")
    out = os.path.join(t.dir, "installed.hsp")
    cp = subprocess.run([hs, "run", "-q", "-o", out, "--", t.prog("hs_single")],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=clean_env(),
                        cwd=t.dir, timeout=120)
    t.eq("installed run: exit status", 0, cp.returncode)
    t.eq("installed run: stderr", "", cp.stderr.decode("utf-8", "replace"))
    saved = t.heapscope
    t.heapscope = hs  # t.report runs the installed `heapscope report --json`
    try:
        test_single.check_counts(t, t.report(out))
    finally:
        t.heapscope = saved


def check_no_analyser(t):
    alone = os.path.join(t.dir, "alone")
    os.mkdir(alone)
    hs = os.path.join(alone, "heapscope")
    shutil.copy2(t.heapscope, hs)
    cp = subprocess.run([hs, "report", "x.hsp"], stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, env=clean_env(), timeout=60)
    err = cp.stderr.decode("utf-8", "replace")
    if "cannot find" not in err and cp.returncode != 2:
        print("no-analyser check skipped: an installed analyser answered (%s)" % err.strip())
        return
    t.eq("launcher without the analyser: exit status", 2, cp.returncode)
    t.true("launcher without the analyser: says which", "cannot find heapscope-analyse" in err,
           err)


def main(t):
    check_parent_maps(t)
    check_summary(t)
    check_installed(t)
    check_no_analyser(t)


if __name__ == "__main__":
    hstest.main(main)
