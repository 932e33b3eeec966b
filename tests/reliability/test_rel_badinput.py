"""e2e_rel_badinput: every reader given bad input, and the command line
given bad arguments, answers with a clear message and a non-zero exit
status, never a signal or a hang.

- the command line: unknown commands and options, missing arguments,
  numbers out of range or not numbers, for every subcommand;
- files: a directory, /dev/null, a core given where a profile is wanted
  and a profile where a core is wanted, a missing file;
- suppression files (LeakSanitizer's `leak:` format): binary garbage (the
  message shows it as printable text), a 100,000-byte line, an empty
  pattern, a directory, a missing file.
Exit status 2 is a usage error, 1 a file that cannot be used.
"""
import os
import random

import hstest


def check(t, args, rc, needle, cwd):
    r = t._exec([t.heapscope] + args, None, None, b"", cwd, 60, None)
    err = r.stderr.decode("utf-8", "replace")
    what = "heapscope " + " ".join(a if len(a) < 40 else a[:37] + "..." for a in args)
    t.eq(what + ": exit status", rc, r.rc)
    t.true(what + ": message mentions %r" % needle, needle in err, err[:300])
    t.true(what + ": one short message, no dump", len(err) < 4000, "%d bytes" % len(err))


def main(t):
    d = t.dir
    prof = t.run("rl_throw", out="good.hsp").out
    core = os.path.join(d, "fake.core")
    with open(core, "wb") as f:  # an ELF header of another machine (aarch64 core)
        f.write(b"\x7fELF\x02\x01\x01" + b"\0" * 9 + b"\x04\x00\xb7\x00" + b"\0" * 44)
    os.mkdir(os.path.join(d, "adir"))
    rnd = random.Random(8)
    with open(os.path.join(d, "garbage.sup"), "wb") as f:
        f.write(bytes(rnd.getrandbits(8) for _ in range(3000)))
    with open(os.path.join(d, "huge.sup"), "w") as f:
        f.write("leak:" + "a" * 100000 + "\n")
    with open(os.path.join(d, "empty-pattern.sup"), "w") as f:
        f.write("# fine\nleak:main\nleak:\n")

    usage = [
        (["nosuchcmd"], 2, "unknown command 'nosuchcmd'"),
        (["report"], 2, "usage: heapscope report"),
        (["report", "--nosuch", prof], 2, "unknown option '--nosuch'"),
        (["report", "--top", "-1", prof], 2, "--top needs a number"),
        (["report", "--top", "abc", prof], 2, "--top needs a number"),
        (["report", "--top", "99999999999999999999", prof], 2, "--top needs a number"),
        (["report", "--width", "0", prof], 2, "--width needs a number"),
        (["report", "--tree", "--threshold", "-5", prof], 2, "--threshold needs a percentage"),
        (["report", "--suppressions"], 2, "--suppressions needs a file"),
        (["run"], 2, "no program given"),
        (["run", "--depth", "99999999999", "--", "/bin/true"], 2, "--depth must be a number"),
        (["run", "--interval", "abc", "--", "/bin/true"], 2, "--interval must be a number"),
        (["run", "--unwind", "xyz", "--", "/bin/true"], 2, "--unwind must be dwarf, fp or libunwind"),
        (["diff", prof], 2, "give exactly two profiles"),
        (["export", prof], 2, "no --format given"),
        (["export", "--format", "nope", prof], 2, "unknown --format"),
        (["export", "--format", "pprof", prof], 2, "pprof output is binary"),
        (["flamegraph", prof], 2, "no output given"),
        (["core", "--pid", "abc"], 2, "bad pid 'abc'"),
        (["bench", "--allocators", "nope"], 2, "unknown allocator 'nope'"),
        (["bench", "--repeat", "0"], 2, "--repeat must be a number"),
    ]
    files = [
        (["report", "adir"], 1, "Is a directory"),
        (["report", "/dev/null"], 1, "a device, not a file or a pipe"),
        (["report", "/dev/zero"], 1, "a device, not a file or a pipe"),
        (["report", core], 1, "not a heapscope profile"),
        (["report", "missing.hsp"], 1, "missing.hsp"),
        (["report", "--histogram", "--stack", "999999", prof], 1, "no stack with id 999999"),
        (["diff", prof, core], 1, "not a heapscope profile"),
        (["html", "-o", "x.html", core], 1, "not a heapscope profile"),
        (["flamegraph", "-o", "/nonexistent-dir/x.svg", prof], 1, "cannot write /nonexistent-dir/x.svg"),
        (["core", prof], 1, "it is a heapscope profile"),
        (["core", "adir"], 1, "Is a directory"),
        (["core", "/dev/null"], 1, "not an ELF file"),
        (["core", core], 1, "e_machine 183 (aarch64) (only x86-64 cores are read)"),
        (["core", "--pid", "999999"], 1, "process 999999"),
        (["run", "--", "/nonexistent/prog"], 127, "cannot run '/nonexistent/prog'"),
    ]
    sups = [
        ("garbage.sup", "garbage.sup:1: expected 'leak:PATTERN', got '"),
        ("huge.sup", "huge.sup:1: line too long"),
        ("empty-pattern.sup", "empty-pattern.sup:3: expected 'leak:PATTERN', got 'leak:'"),
        ("adir", "adir: read error"),
        ("missing.sup", "missing.sup: No such file or directory"),
    ]
    for args, rc, needle in usage + files:
        check(t, args, rc, needle, d)
    for name, needle in sups:
        check(t, ["report", "--leaks", "--suppressions", name, prof], 2, needle, d)
    # the garbage line is shown as printable text only
    r = t._exec([t.heapscope, "report", "--leaks", "--suppressions", "garbage.sup", prof],
                None, None, b"", d, 60, None)
    line = r.stderr.decode("latin-1").strip()
    t.true("garbage.sup: the message is printable ASCII",
           all(0x20 <= ord(ch) < 0x7f for ch in line), repr(line[:120]))


if __name__ == "__main__":
    hstest.main(main)
