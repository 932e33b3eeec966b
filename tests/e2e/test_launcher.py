"""e2e_launcher: `heapscope` is a launcher that links nothing but libc and
runs `heapscope run` itself; every other subcommand, and run's summary, is
heapscope-analyse's, which it execs (src/cli/launch.c).

- While python3 runs under `heapscope run`, its parent (the launcher) maps
  libc and none of the analyser's libraries (libdw, libelf, libstdc++,
  protobuf-c).
- `heapscope run` without -q on hs_echo (one 65,536-byte block, freed;
  exits 3): the analyser's summary on stderr, and exit status 3.  A shell
  that kills itself with SIGTERM after a periodic flush: "was killed by
  signal 15", then the summary of the last snapshot, and exit status 143.
- Installed with `cmake --install` into a scratch prefix: bin/heapscope and
  bin/heapscope-analyse; without HEAPSCOPE_LIB the installed launcher finds
  the installed libheapscope.so, the installed analyser reports
  hs_single's exact counts, and `heapscope bench --list` finds the
  installed workloads.
- The launcher alone in a directory: exit 2 and a message naming the
  analyser it cannot find; with HEAPSCOPE_ANALYSER naming one, it runs.
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
            r"heapscope: 1 allocation \(64\.0 KiB\), 1 free, peak 64\.0 KiB at \S+ \S+$",
            lines[0]), lines[0])
        t.eq("summary: leaks", "heapscope: leaked 0 B in 0 blocks, "
             "1 temporary allocation (100.0%)", lines[1])
        t.eq("summary: where", "heapscope: profile %s; see `heapscope report %s`"
             % (r.out, r.out), lines[2])


def check_killed(t):
    r = t.run("/bin/sh", args=["-c", "sleep 0.2; kill -TERM $$"], out="killed.hsp",
              opts=["--interval", "10"], expect_rc=143)
    lines = r.stderr.decode("utf-8", "replace").splitlines()
    t.eq("killed: first line", "heapscope: /bin/sh was killed by signal 15 (Terminated)",
         lines[0] if lines else None)
    t.eq("killed: the summary follows", "heapscope: profile %s; see `heapscope report %s`"
         % (r.out, r.out), lines[-2] if len(lines) > 1 else None)
    # the shell forked for `sleep`: that process's profile is named after it
    t.true("killed: then the profile of sh's child", re.match(
        r"heapscope: \d+ more profiles?, of the processes it started: %s\.\d+" % re.escape(r.out),
        lines[-1] if lines else ""), lines[-1] if lines else None)


def clean_env():
    return {k: v for k, v in os.environ.items()
            if not k.startswith("HEAPSCOPE_") and k not in ("LD_PRELOAD", "DESTDIR")}


def install(t, cmake, build, prefix):
    """cmake --install into prefix, leaving the build tree's
    install_manifest.txt (a real install's record) as it was."""
    manifest = os.path.join(build, "install_manifest.txt")
    saved = open(manifest, "rb").read() if os.path.exists(manifest) else None
    try:
        return subprocess.run([cmake, "--install", build, "--prefix", prefix],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              env=clean_env(), timeout=120)
    finally:
        if saved is None:
            if os.path.exists(manifest):
                os.unlink(manifest)
        else:
            with open(manifest, "wb") as f:
                f.write(saved)


def check_installed(t):
    build = os.path.dirname(os.path.dirname(t.heapscope))
    cmake = shutil.which("cmake")
    if not cmake or not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        print("install check skipped: no cmake or no build tree at %s" % build)
        return
    prefix = os.path.join(t.dir, "prefix")
    cp = install(t, cmake, build, prefix)
    t.eq("cmake --install exit status", 0, cp.returncode)
    if cp.returncode != 0:
        print(cp.stdout.decode("utf-8", "replace")[-2000:])
        return
    t.eq("installed bin/", ["heapscope", "heapscope-analyse"],
         sorted(os.listdir(os.path.join(prefix, "bin"))))
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
    cp = subprocess.run([hs, "bench", "--list"], stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, env=clean_env(), timeout=60)
    listed = cp.stdout.decode("utf-8", "replace").split()
    t.eq("installed bench --list: exit status", 0, cp.returncode)
    t.true("installed bench --list: the bundled workloads",
           "binary-trees" in listed and "json" in listed, cp.stderr.decode() + " ".join(listed))


def check_no_analyser(t):
    alone = os.path.join(t.dir, "alone")
    os.mkdir(alone)
    hs = os.path.join(alone, "heapscope")
    shutil.copy2(t.heapscope, hs)
    cp = subprocess.run([hs, "report", "x.hsp"], stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, env=clean_env(), timeout=60)
    err = cp.stderr.decode("utf-8", "replace")
    if "cannot find" not in err:
        print("no-analyser check skipped: an installed analyser answered (%s)" % err.strip())
        return
    t.eq("launcher without the analyser: exit status", 2, cp.returncode)
    t.true("launcher without the analyser: says which", "cannot find heapscope-analyse" in err,
           err)
    env = clean_env()
    env["HEAPSCOPE_ANALYSER"] = os.path.join(os.path.dirname(t.heapscope), "heapscope-analyse")
    cp = subprocess.run([hs, "--version"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                        env=env, timeout=60)
    t.true("HEAPSCOPE_ANALYSER names the analyser", cp.returncode == 0 and
           cp.stdout.startswith(b"heapscope "), repr((cp.returncode, cp.stdout, cp.stderr)))


def main(t):
    check_parent_maps(t)
    check_summary(t)
    check_killed(t)
    check_installed(t)
    check_no_analyser(t)


if __name__ == "__main__":
    hstest.main(main)
