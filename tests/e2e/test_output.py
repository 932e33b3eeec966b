"""e2e_output: where profiles go, and HEAPSCOPE_DISABLE (hs_single.c).

- `heapscope run` without -o: heapscope.hs_single.<pid>.hsp in the current
  directory, and nothing else.
- LD_PRELOAD with HEAPSCOPE_OUTPUT=DIR/x.%e.%p.hsp: x.hs_single.<pid>.hsp,
  with hs_single's exact counts.
- HEAPSCOPE_DISABLE=1: the program runs as usual and writes no profile.
- A program that changes directory before it writes its profile
  (hs_chdir.c, as `make -C` or `git -C`): a relative -o, the default name,
  and a relative HEAPSCOPE_OUTPUT all land in the directory the program
  was started in, with hs_chdir's 3 leaked blocks of 4242 bytes; so does
  the profile of an image it execs from the other directory, with -o or
  with HEAPSCOPE_OUTPUT.
- A command line with a space, quotes and a newline (hs_chdir into such a
  directory): the text report's "program" line and the massif export's
  "cmd:" line are one line each, and bash reads them back to the same
  arguments.
- A process whose only write of its profile is the last one (at exit)
  writes into the file it claimed: inotify sees one file made in the
  directory, the profile, and no NAME.tmp renamed over it.
- No profile: for a statically linked program (hs_single_static),
  `heapscope run` says why; under HEAPSCOPE_DISABLE it says only that
  there is none.
"""
import ctypes
import os
import re
import struct
import subprocess

import hstest
import test_single


def main(t):
    cwd = os.path.join(t.dir, "cwd")
    os.mkdir(cwd)
    r = t.run("hs_single", out=None, cwd=cwd)
    t.eq("program stdout", b"single done\n", r.stdout)
    names = os.listdir(cwd)
    t.true("one default-named profile in the current directory",
           len(names) == 1 and re.match(r"heapscope\.hs_single\.\d+\.hsp$", names[0]),
           str(names))
    if names:
        test_single.check_counts(t, t.report(os.path.join(cwd, names[0])))

    pdir = os.path.join(t.dir, "pattern")
    os.mkdir(pdir)
    t.run_preloaded("hs_single", env={"HEAPSCOPE_OUTPUT": pdir + "/x.%e.%p.hsp",
                                      "HEAPSCOPE_QUIET": "1"})
    names = os.listdir(pdir)
    t.true("HEAPSCOPE_OUTPUT pattern expanded", len(names) == 1 and
           re.match(r"x\.hs_single\.\d+\.hsp$", names[0]), str(names))
    if names:
        p = t.report(os.path.join(pdir, names[0]))
        test_single.check_counts(t, p)
        t.eq("pid in the file name is summary.pid",
             int(names[0].split(".")[2]), p.summary.get("pid"))

    ddir = os.path.join(t.dir, "disabled")
    os.mkdir(ddir)
    r = t.run_preloaded("hs_single", cwd=ddir,
                        env={"HEAPSCOPE_DISABLE": "1",
                             "HEAPSCOPE_OUTPUT": ddir + "/d.%p.hsp"})
    t.eq("disabled: program stdout", b"single done\n", r.stdout)
    t.eq("disabled: files written", [], os.listdir(ddir))

    check_one_write(t)
    check_chdir(t)
    check_quoted_argv(t)
    check_no_profile(t)


IN_CREATE, IN_MOVED_TO, IN_NONBLOCK = 0x100, 0x80, 0o4000


def dir_events(t, path, run):
    """(event, name) of the files made in or moved into path while run()
    ran, from inotify(7)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(IN_NONBLOCK)
    t.true("inotify_init1", fd >= 0, os.strerror(ctypes.get_errno()))
    try:
        wd = libc.inotify_add_watch(fd, path.encode(), IN_CREATE | IN_MOVED_TO)
        t.true("inotify_add_watch", wd >= 0, os.strerror(ctypes.get_errno()))
        run()
        data = b""
        while True:
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                break
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    events, off = [], 0
    while off + 16 <= len(data):
        _, mask, _, n = struct.unpack_from("iIII", data, off)
        name = data[off + 16:off + 16 + n].split(b"\0")[0].decode()
        events.append(("moved" if mask & IN_MOVED_TO else "created", name))
        off += 16 + n
    return events


def check_one_write(t):
    odir = os.path.join(t.dir, "one-write")
    os.mkdir(odir)
    # no writer thread and an hour's interval: the final flush is the only one
    env = {"HEAPSCOPE_OUTPUT": odir + "/w.%p.hsp", "HEAPSCOPE_WRITER": "0",
           "HEAPSCOPE_INTERVAL_MS": "3600000", "HEAPSCOPE_QUIET": "1"}
    events = dir_events(t, odir, lambda: t.run_preloaded("hs_single", env=env))
    names = os.listdir(odir)
    t.true("one write: one profile", len(names) == 1 and re.fullmatch(r"w\.\d+\.hsp", names[0]),
           str(names))
    if len(names) == 1:
        t.eq("one write: the profile made once, nothing renamed over it",
             [("created", names[0])], events)
        test_single.check_counts(t, t.report(os.path.join(odir, names[0])))


def shell_words(line):
    """The arguments bash reads from line."""
    cp = subprocess.run(["bash", "-c", 'printf "%s\\0" ' + line], stdout=subprocess.PIPE)
    return cp.stdout.decode().split("\0")[:-1]


def check_quoted_argv(t):
    odd = os.path.join(t.dir, "it's a\nnew line")
    os.mkdir(odd)
    r = t.run("hs_chdir", args=[odd], out="quoted.hsp")
    argv = [t.prog("hs_chdir"), odd]
    lines = [l for l in t.report_text(r.out).split("\n") if l.startswith("  program ")]
    t.eq("quoted: one program line in the text report", 1, len(lines))
    if lines:
        m = re.match(r"  program +(.*)  \(pid \d+\)$", lines[0])
        t.true("quoted: program line shape", m, lines[0])
        if m:
            t.eq("quoted: bash reads the program line back", argv, shell_words(m.group(1)))
    cp = subprocess.run([t.heapscope, "export", "--format", "massif", r.out],
                        stdout=subprocess.PIPE, check=True)
    cmd = [l for l in cp.stdout.decode().split("\n") if l.startswith("cmd: ")]
    t.eq("quoted: one cmd line in the massif export", 1, len(cmd))
    if cmd:
        t.eq("quoted: bash reads the massif cmd line back", argv, shell_words(cmd[0][5:]))


def check_no_profile(t):
    sdir = os.path.join(t.dir, "static")
    os.mkdir(sdir)
    r = t.run("hs_single_static", out=None, opts=["-o", "s.hsp"], cwd=sdir)
    t.eq("static: program stdout", b"single done\n", r.stdout)
    t.eq("static: files written", [], os.listdir(sdir))
    msg = "heapscope: no profile was written for %s (pid " % t.prog("hs_single_static")
    t.true("static: heapscope run says why there is no profile",
           msg in r.stderr.decode() and "): it is statically linked, and LD_PRELOAD reaches only "
           "dynamically linked programs\n" in r.stderr.decode(), r.stderr.decode())
    r = t.run("hs_single", out=None, opts=["-o", "s.hsp"], cwd=sdir,
              env={"HEAPSCOPE_DISABLE": "1"})
    t.true("disabled: only that there is no profile",
           re.fullmatch(r"heapscope: no profile was written for pid \d+\n", r.stderr.decode()),
           r.stderr.decode())


def chdir_dirs(t, name):
    """A start directory and the directory hs_chdir moves to, both empty."""
    start = os.path.join(t.dir, name)
    away = os.path.join(start + "-away")
    os.mkdir(start)
    os.mkdir(away)
    return start, away


def check_chdir_profile(t, path):
    p = t.report(path)
    t.check_site(p, "chdir_site", allocations=3, frees=0, bytes_allocated=12726,
                 leaked_bytes=12726, leaked_allocations=3)


def check_one_profile(t, what, start, away, name_re):
    """One profile named name_re where the program started, with hs_chdir's
    blocks, and nothing where it went."""
    names = os.listdir(start)
    t.true("%s: one profile %s where the program started" % (what, name_re),
           len(names) == 1 and re.fullmatch(name_re, names[0]), str(names))
    t.eq("%s: files where the program went" % what, [], os.listdir(away))
    if len(names) == 1:
        check_chdir_profile(t, os.path.join(start, names[0]))


def check_chdir(t):
    # heapscope run -o with a relative name (a '%' in the directory's name
    # is not a pattern)
    start, away = chdir_dirs(t, "chdir-%p-o")
    r = t.run("hs_chdir", args=[away], out=None, opts=["-o", "rel.hsp"], cwd=start)
    t.eq("chdir, -o rel.hsp: program stdout", b"chdir done\n", r.stdout)
    t.eq("chdir, -o rel.hsp: files where heapscope started", ["rel.hsp"], os.listdir(start))
    t.eq("chdir, -o rel.hsp: files where the program went", [], os.listdir(away))
    t.true("chdir, -o rel.hsp: heapscope run found it (no 'no profile' message)",
           b"no profile was written" not in r.stderr, r.stderr.decode()[-300:])
    if os.listdir(start) == ["rel.hsp"]:
        check_chdir_profile(t, os.path.join(start, "rel.hsp"))

    # heapscope run without -o: the default name
    start, away = chdir_dirs(t, "chdir-default")
    t.run("hs_chdir", args=[away], out=None, cwd=start)
    check_one_profile(t, "chdir, no -o", start, away, r"heapscope\.hs_chdir\.\d+\.hsp")

    # an image exec'd after the change of directory: rel.hsp.<pid>
    start, away = chdir_dirs(t, "chdir-exec")
    r = t.run("hs_chdir", args=[away, t.prog("hs_chdir"), "."], out=None,
              opts=["-o", "rel.hsp"], cwd=start)
    t.eq("chdir then exec: program stdout", b"chdir done\n", r.stdout)
    names = sorted(os.listdir(start))
    t.true("chdir then exec: rel.hsp and rel.hsp.<pid> where heapscope started",
           len(names) == 2 and names[0] == "rel.hsp" and re.match(r"rel\.hsp\.\d+$", names[1]),
           str(names))
    t.eq("chdir then exec: files where the program went", [], os.listdir(away))
    for n in names:
        check_chdir_profile(t, os.path.join(start, n))

    # LD_PRELOAD alone, HEAPSCOPE_OUTPUT relative (a '%%' kept as '%')
    start, away = chdir_dirs(t, "chdir-%preload")
    t.run_preloaded("hs_chdir", args=[away], cwd=start,
                    env={"HEAPSCOPE_OUTPUT": "pre.%p.100%%.hsp", "HEAPSCOPE_QUIET": "1"})
    check_one_profile(t, "chdir, LD_PRELOAD", start, away, r"pre\.\d+\.100%\.hsp")

    # the same, and an image exec'd after the change of directory: the
    # collector made the variable absolute in the environment it passes on
    # (the same pid: the second profile's name gets .1)
    start, away = chdir_dirs(t, "chdir-%preload-exec")
    r = t.run_preloaded("hs_chdir", args=[away, t.prog("hs_chdir"), "."], cwd=start,
                        env={"HEAPSCOPE_OUTPUT": "pre.%p.%%.hsp", "HEAPSCOPE_QUIET": "1"})
    t.eq("chdir then exec, LD_PRELOAD: program stdout", b"chdir done\n", r.stdout)
    names = sorted(os.listdir(start))
    t.true("chdir then exec, LD_PRELOAD: both images' profiles where it started",
           len(names) == 2 and re.fullmatch(r"pre\.\d+\.%\.hsp", names[0]) and
           names[1] == names[0] + ".1", str(names))
    t.eq("chdir then exec, LD_PRELOAD: files where the program went", [], os.listdir(away))
    for n in names:
        check_chdir_profile(t, os.path.join(start, n))


if __name__ == "__main__":
    hstest.main(main)
