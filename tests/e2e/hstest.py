"""hstest.py - shared helper of the end-to-end tests (Python 3 stdlib only).

Each tests/e2e/test_*.py runs real programs from tests/progs under
`heapscope run`, reads the profile back with `heapscope report --json`, and
asserts exact numbers per stack (found by a function name in its frames)
and in the summary.  tests/e2e/CMakeLists.txt passes the paths:

    test_x.py --heapscope build/bin/heapscope --libdir build/lib \
              --prog hs_single=build/tests/progs/hs_single ...

Usage in a test:

    import hstest
    def main(t):
        r = t.run("hs_single", out="single.hsp")
        p = t.report(r.out)
        t.check_site(p, "alloc_site_a", allocations=100, bytes_allocated=6550)
        t.check_summary(p, allocations=150)
    hstest.main(main)

Checks do not stop the test: every mismatch is printed as
`FAIL what: expected X, got Y` and the test exits 1 at the end.  Structural
problems (a profile that does not exist, no stack for a function) raise
HsError and end the test at once.  On failure the scratch directory with
the profiles and a text report of each is kept and its path printed.
"""

import argparse
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import traceback

# the collector's HEAPSCOPE_STATS message on its cache of recent stacks
CACHE_STATS = re.compile(r"HEAPSCOPE_STATS: stacks of (\d+) allocations: (\d+) from way 0 of the "
                         r"cache of recent stacks, (\d+) from ways 1-\d, (\d+) walked")

# Stack fields that are integers in `heapscope report --json`.
STACK_FIELDS = ("allocations", "frees", "bytes_allocated", "bytes_freed",
                "peak_bytes", "leaked_bytes", "leaked_allocations",
                "temporary_allocations")


class HsError(Exception):
    """A problem that makes the rest of the test meaningless."""


class RunResult:
    """Outcome of one profiled run: rc, stdout/stderr (bytes), out (path)."""

    def __init__(self, rc, stdout, stderr, out, argv):
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr
        self.out = out
        self.argv = argv

    def text(self):
        return self.stdout.decode("utf-8", "replace")


def frame_matches(frame, name):
    """True if the frame's function is `name`, or `name(...)` (C++)."""
    fn = frame.get("function") or ""
    return fn == name or fn.startswith(name + "(")


class Profile:
    """A parsed `heapscope report --json` object, with lookups by function."""

    def __init__(self, data, path):
        self.data = data
        self.path = path
        self.summary = data.get("summary", {})
        self.stacks = data.get("stacks", [])
        # the stacks that allocated something (a profile may also list a
        # stack with no counts, e.g. the collector's "no frames" stack)
        self.alloc_stacks = [s for s in self.stacks if int(s.get("allocations", 0)) > 0]

    def stacks_with(self, name, module_suffix=None):
        """Stacks having a frame for function `name` (in a module whose path
        ends with module_suffix, if given)."""
        found = []
        for s in self.stacks:
            for f in s.get("frames", []):
                if frame_matches(f, name) and (
                        module_suffix is None
                        or (f.get("module") or "").endswith(module_suffix)):
                    found.append(s)
                    break
        return found

    def frame_of(self, stack, name):
        """The first frame of `stack` for function `name`, or None."""
        for f in stack.get("frames", []):
            if frame_matches(f, name):
                return f
        return None

    def totals_of(self, stacks):
        """Field-wise sums of STACK_FIELDS over `stacks`."""
        return {k: sum(int(s.get(k, 0)) for s in stacks) for k in STACK_FIELDS}

    def describe(self, stack):
        """One-line description of a stack for messages."""
        names = [f.get("function") or "??" for f in stack.get("frames", [])]
        counts = ", ".join("%s=%s" % (k, stack.get(k)) for k in STACK_FIELDS)
        return "[%s] %s" % (" <- ".join(names[:8]), counts)


class Test:
    """State of one test: paths, scratch directory and failures so far."""

    def __init__(self, argv):
        ap = argparse.ArgumentParser()
        ap.add_argument("--heapscope", required=True,
                        help="path of the heapscope command")
        ap.add_argument("--libdir", required=True,
                        help="directory holding libheapscope.so")
        ap.add_argument("--prog", action="append", default=[],
                        metavar="NAME=PATH", help="a test program")
        ap.add_argument("--valgrind", default=shutil.which("valgrind"),
                        help="path of valgrind (cross-check tests)")
        self.args = ap.parse_args(argv)
        self.heapscope = os.path.abspath(self.args.heapscope)
        self.lib = os.path.join(os.path.abspath(self.args.libdir),
                                "libheapscope.so")
        self.progs = {}
        for item in self.args.prog:
            name, _, path = item.partition("=")
            self.progs[name] = os.path.abspath(path)
        self.name = os.path.splitext(os.path.basename(sys.argv[0]))[0]
        self.dir = tempfile.mkdtemp(prefix="hs-%s-" % self.name)
        self.failures = []
        self.passed = 0
        self.profiles = []

    def write(self, name, data):
        """Write data (bytes, or text) to the file `name` in the scratch
        directory; returns its path."""
        path = os.path.join(self.dir, name)
        with open(path, "wb" if isinstance(data, (bytes, bytearray)) else "w") as f:
            f.write(data)
        return path

    # ---- programs -----------------------------------------------------------

    def prog(self, name):
        """Path of the test program registered as `name`."""
        if name not in self.progs:
            raise HsError("no --prog %s=PATH given" % name)
        path = self.progs[name]
        if not os.path.exists(path):
            raise HsError("test program %s missing: %s" % (name, path))
        return path

    def env(self, extra=None):
        """The environment for a profiled run: ours, with HEAPSCOPE_LIB set
        and no HEAPSCOPE_* or LD_PRELOAD inherited from the caller."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("HEAPSCOPE_") and k != "LD_PRELOAD"}
        env["HEAPSCOPE_LIB"] = self.lib
        env.update(extra or {})
        return env

    def run(self, prog, args=(), out="profile.hsp", opts=(), env=None,
            stdin=b"", cwd=None, timeout=120, expect_rc=0):
        """Run `heapscope run [-o OUT] OPTS -- PROG ARGS` and return a
        RunResult.  `prog` is a --prog name or an absolute path; `out` is
        relative to the scratch directory (None: no -o).  Checks the exit
        status against expect_rc unless it is None."""
        path = prog if os.path.isabs(prog) else self.prog(prog)
        argv = [self.heapscope, "run"]
        outpath = None
        if out is not None:
            outpath = os.path.join(self.dir, out)
            argv += ["-o", outpath]
        argv += list(opts) + ["--", path] + list(args)
        return self._exec(argv, outpath, env, stdin, cwd, timeout, expect_rc)

    def run_preloaded(self, prog, args=(), env=None, stdin=b"", cwd=None,
                      timeout=120, expect_rc=0, lib=None):
        """Run PROG directly with LD_PRELOAD=libheapscope.so (or lib, a
        path) and no `heapscope run`: only the HEAPSCOPE_* variables in
        `env` steer the collector."""
        path = prog if os.path.isabs(prog) else self.prog(prog)
        extra = dict(env or {})
        extra["LD_PRELOAD"] = lib or self.lib
        return self._exec([path] + list(args), None, extra, stdin, cwd,
                          timeout, expect_rc)

    def _exec(self, argv, outpath, env, stdin, cwd, timeout, expect_rc):
        # its own process group, so that a program that hangs is killed
        # with `heapscope run` (which waits for it) and does not outlive us
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=self.env(env),
                                cwd=cwd or self.dir, start_new_session=True)
        try:
            out, err = proc.communicate(stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise HsError("timed out after %ss: %s" % (timeout, " ".join(argv)))
        r = RunResult(proc.returncode, out, err, outpath, argv)
        if expect_rc is not None and proc.returncode != expect_rc:
            sys.stderr.write(err.decode("utf-8", "replace"))
            raise HsError("%s exited %d, expected %d"
                          % (" ".join(argv), proc.returncode, expect_rc))
        return r

    # ---- reports ------------------------------------------------------------

    def report(self, path):
        """`heapscope report --json PATH`, parsed into a Profile."""
        if not os.path.exists(path):
            raise HsError("no profile at %s (scratch dir has: %s)"
                          % (path, sorted(os.listdir(self.dir))))
        cp = subprocess.run([self.heapscope, "report", "--json", path],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            timeout=120)
        if cp.returncode != 0:
            sys.stderr.write(cp.stderr.decode("utf-8", "replace"))
            raise HsError("heapscope report --json %s exited %d"
                          % (path, cp.returncode))
        try:
            data = json.loads(cp.stdout.decode("utf-8"))
        except ValueError as e:
            raise HsError("report --json %s is not JSON: %s" % (path, e))
        self.profiles.append(path)
        return Profile(data, path)

    def report_text(self, path, args=()):
        """The text report of a profile (checks exit status 0)."""
        cp = subprocess.run([self.heapscope, "report"] + list(args) + [path],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            timeout=120)
        if cp.returncode != 0:
            sys.stderr.write(cp.stderr.decode("utf-8", "replace"))
            raise HsError("heapscope report %s exited %d" % (path, cp.returncode))
        return cp.stdout.decode("utf-8", "replace")

    # ---- checks -------------------------------------------------------------

    def eq(self, what, expected, actual):
        """Check actual == expected."""
        if actual == expected:
            self.passed += 1
            return True
        self.fail("%s: expected %r, got %r" % (what, expected, actual))
        return False

    def true(self, what, cond, detail=""):
        """Check a condition; detail is printed when it fails."""
        if cond:
            self.passed += 1
            return True
        self.fail("%s%s" % (what, (": " + detail) if detail else ""))
        return False

    def fail(self, msg):
        self.failures.append(msg)
        print("FAIL " + msg, flush=True)

    def site(self, p, name, n_stacks=None, module_suffix=None):
        """The stacks through function `name`; checks there are n_stacks of
        them (None: any number, at least one: the compiler may unroll a
        short loop into several call sites).  Raises if there is none."""
        stacks = p.stacks_with(name, module_suffix)
        if not stacks:
            raise HsError("%s: no stack has a frame for %s%s; functions seen: %s"
                          % (p.path, name,
                             " in *" + module_suffix if module_suffix else "",
                             sorted({f.get("function") or "??"
                                     for s in p.stacks
                                     for f in s.get("frames", [])})[:80]))
        if n_stacks is not None:
            self.eq("%s: number of stacks through %s" % (os.path.basename(p.path), name),
                    n_stacks, len(stacks))
        return stacks

    def check_site(self, p, name, n_stacks=None, module_suffix=None, **expected):
        """Sum STACK_FIELDS over the stacks through `name` and compare the
        fields given as keyword arguments.  Returns the stacks."""
        stacks = self.site(p, name, n_stacks, module_suffix)
        got = p.totals_of(stacks)
        for k, v in expected.items():
            if k not in STACK_FIELDS:
                raise HsError("unknown stack field %s" % k)
            if not self.eq("%s: %s.%s" % (os.path.basename(p.path), name, k), v, got[k]):
                for s in stacks:
                    print("     stack " + p.describe(s))
        return stacks

    def check_no_site(self, p, name):
        """Check that no stack goes through function `name`."""
        stacks = p.stacks_with(name)
        self.eq("%s: stacks through %s" % (os.path.basename(p.path), name), 0, len(stacks))

    def check_summary(self, p, **expected):
        """Compare summary fields given as keyword arguments."""
        for k, v in expected.items():
            if k not in p.summary:
                self.fail("%s: summary has no field %s" % (os.path.basename(p.path), k))
                continue
            self.eq("%s: summary.%s" % (os.path.basename(p.path), k), v, p.summary[k])

    def check_sizes(self, p, stack, expected):
        """Compare a stack's size histogram with a list of
        (size_lo, size_hi, allocations, bytes) tuples (order ignored)."""
        got = sorted((int(e["size_lo"]), int(e["size_hi"]), int(e["allocations"]),
                      int(e["bytes"])) for e in stack.get("sizes", []))
        self.eq("%s: sizes of %s" % (os.path.basename(p.path), p.describe(stack)[:60]),
                sorted(expected), got)

    def cache_stats(self, p, label):
        """The counts of the collector's HEAPSCOPE_STATS message on its
        cache of recent stacks in profile p (run with HEAPSCOPE_STATS=1):
        (allocations, from way 0, from the other ways, walked), after
        checking that there is exactly one such message and that they add
        up; None if there is none."""
        found = [m for m in (CACHE_STATS.search(w) for w in p.summary["warnings"]) if m]
        self.eq("%s: one HEAPSCOPE_STATS message on the cache" % label, 1, len(found))
        if not found:
            return None
        allocs, way0, ways, walks = (int(x) for x in found[0].groups())
        print("%s: %d allocations, way 0 %d, other ways %d, walked %d"
              % (label, allocs, way0, ways, walks))
        self.eq("%s: the ways and walks add up" % label, allocs, way0 + ways + walks)
        return allocs, way0, ways, walks

    def check_consistent(self, p, exact_totals=True):
        """Invariants every profile must satisfy: the stacks add up to the
        summary (when no allocation was lost), leaked = allocated - freed,
        size histograms add up to their stack, no unknown frees."""
        s = p.summary
        base = os.path.basename(p.path)
        fields = ["allocations", "frees", "bytes_allocated", "bytes_freed",
                  "temporary_allocations"]
        if s.get("final"):
            fields += ["leaked_bytes", "leaked_allocations"]
        for k in fields:
            if k in s and int(s.get("lost_allocations", 0)) == 0:
                self.eq("%s: sum of stacks.%s == summary.%s" % (base, k, k),
                        int(s[k]), sum(int(st.get(k, 0)) for st in p.stacks))
        if s.get("final"):
            self.eq(base + ": summary leaked_bytes = allocated - freed",
                    int(s["bytes_allocated"]) - int(s["bytes_freed"]),
                    int(s["leaked_bytes"]))
            self.eq(base + ": summary leaked_allocations = allocations - frees",
                    int(s["allocations"]) - int(s["frees"]),
                    int(s["leaked_allocations"]))
        bad = []
        for st in p.stacks:
            a = sum(int(e["allocations"]) for e in st.get("sizes", []))
            b = sum(int(e["bytes"]) for e in st.get("sizes", []))
            if (a, b) != (int(st["allocations"]), int(st["bytes_allocated"])):
                bad.append(p.describe(st))
        self.eq(base + ": stacks whose size histogram does not add up", [], bad)
        self.eq(base + ": summary.unknown_frees", 0, s.get("unknown_frees"))
        self.eq(base + ": summary.truncated", False, s.get("truncated"))

    # ---- end ----------------------------------------------------------------

    def finish(self):
        """Print the verdict; keep the scratch directory if anything failed."""
        if self.failures:
            self.keep()
            print("%s: %d checks passed, %d failed" % (self.name, self.passed,
                                                      len(self.failures)))
            return 1
        shutil.rmtree(self.dir, ignore_errors=True)
        print("%s: all %d checks passed" % (self.name, self.passed))
        return 0

    def keep(self):
        """Keep the scratch directory, with a text report of every profile."""
        for path in self.profiles:
            try:
                txt = self.report_text(path)
                with open(path + ".txt", "w") as f:
                    f.write(txt)
            except Exception as e:  # the report itself may be what is broken
                print("(no text report of %s: %s)" % (path, e))
        print("scratch directory kept: " + self.dir)


def read_text(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def valgrind_heap_usage(valgrind, argv, cwd=None, stdin=b""):
    """Run argv under `valgrind --tool=memcheck` and return the HEAP SUMMARY
    of the process started: allocs, frees, bytes (total heap usage),
    live_bytes, live_blocks (in use at exit), rc and stdout of the program,
    and `children`: {pid: the same figures} for its fork children."""
    logdir = tempfile.mkdtemp(prefix="hs-vg-")
    try:
        proc = subprocess.Popen([valgrind, "--tool=memcheck",
                                 "--log-file=%s/vg.%%p" % logdir] + list(argv),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, cwd=cwd)
        out, _ = proc.communicate(stdin, timeout=600)
        found = {}
        for name in os.listdir(logdir):
            text = read_text(os.path.join(logdir, name))
            m = re.search(r"total heap usage: ([\d,]+) allocs, ([\d,]+) frees, "
                          r"([\d,]+) bytes allocated", text)
            u = re.search(r"in use at exit: ([\d,]+) bytes in ([\d,]+) blocks", text)
            if not m or not u:
                raise HsError("no HEAP SUMMARY in valgrind's output:\n" + text)
            n = [int(x.replace(",", "")) for x in m.groups() + u.groups()]
            found[int(name.split(".")[1])] = {
                "allocs": n[0], "frees": n[1], "bytes": n[2],
                "live_bytes": n[3], "live_blocks": n[4]}
    finally:
        shutil.rmtree(logdir, ignore_errors=True)
    if proc.pid not in found:
        raise HsError("valgrind wrote no summary for pid %d" % proc.pid)
    res = found.pop(proc.pid)
    res.update(rc=proc.returncode, stdout=out, children=found)
    return res


def main(body, argv=None):
    """Run body(Test) and exit with its verdict (1 on any failure or error)."""
    t = Test(sys.argv[1:] if argv is None else argv)
    try:
        body(t)
    except HsError as e:
        t.fail("error: %s" % e)
    except Exception:
        traceback.print_exc()
        t.fail("exception in the test")
    sys.exit(t.finish())


# Allocators other than glibc that tests preload behind the collector.
OTHER_ALLOCATORS = [("jemalloc", "libjemalloc.so.2"), ("tcmalloc", "libtcmalloc_minimal.so.4"),
                    ("mimalloc", "libmimalloc.so.2")]


def installed_allocators():
    """(name, path) of each of OTHER_ALLOCATORS that is installed; the
    others are reported as skipped."""
    found = []
    for name, so in OTHER_ALLOCATORS:
        lib = os.path.join("/usr/lib/x86_64-linux-gnu", so)
        if os.path.exists(lib):
            found.append((name, lib))
        else:
            print("%s: %s not installed, skipped" % (name, lib))
    return found


def glob_profiles(pattern):
    return sorted(glob.glob(pattern))


PROGS_SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                         "..", "progs")


def source_line(filename, needle):
    """1-based number of the only line of tests/progs/FILENAME containing
    `needle` (so tests need not hard-code line numbers)."""
    with open(os.path.join(PROGS_SRC, filename)) as f:
        hits = [i + 1 for i, line in enumerate(f) if needle in line]
    if len(hits) != 1:
        raise HsError("%r occurs %d times in %s" % (needle, len(hits), filename))
    return hits[0]
