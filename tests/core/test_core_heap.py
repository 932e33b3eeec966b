"""test_core_heap.py - `heapscope core` on a program whose heap is known.

core_heap (core_heap.cpp) prints every block it made with the class its
chunk must have (in_use, tcache, fastbin, smallbin, largebin, unsorted,
mmapped) and its leak state, then glibc's own mallinfo2(), and waits.  The
test reads it live (--pid), dumps it with gdb's gcore and reads the core
(with libc's symbols and with --no-symbols, i.e. the structure heuristics),
then reads a core the kernel writes for a second run (SIGABRT),
and checks each time: mallinfo2 equal field by field, every block's class,
free bytes per bin kind, the leaks (exactly the lost blocks, none of the
reachable ones; the cycle gives one definite and one indirect), the vtable
name of the leaked C++ object, pinned memory.  A truncated copy of the core
must be refused with exit status 1.  Also: the process stopped with
SIGSTOP is read the same and stays stopped (and a running one runs on
after --pid); the gcore core piped through stdin reads the same as the
file; glibc's version is read (from memory live, from libc's file for a
core) and, when the core's copy of libc's build-id is changed, libc's file
is no longer trusted: no version, main_arena found by its structure.
"""
import json
import glob
import os
import resource
import signal
import shutil
import struct
import subprocess
import time

import hstest

MI_FIELDS = ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
             "fsmblks", "uordblks", "fordblks", "keepcost")
FREE_CLASSES = ("tcache", "fastbin", "unsorted", "smallbin", "largebin")
GLIBC = os.confstr("CS_GNU_LIBC_VERSION").split()[1]  # "2.36"


def start(t, cwd=None, preexec_fn=None):
    p = subprocess.Popen([t.prog("core_heap")], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, cwd=cwd, preexec_fn=preexec_fn)
    blocks, mi = [], {}
    for line in p.stdout:
        w = line.decode().split()
        if w[0] == "block":
            blocks.append((int(w[1], 16), w[2], w[3]))
        elif w[0] == "mallinfo2":
            mi = {k: int(v) for k, v in (x.split("=") for x in w[1:])}
        elif w[0] == "READY":
            break
    return p, blocks, mi


def core_json(t, what, args):
    argv = [t.heapscope, "core", "--json", "--summary", "--leaks", "--chunks",
            "--fragmentation"] + args
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    if r.returncode != 0:
        raise hstest.HsError("%s: heapscope core exited %d: %s" %
                             (what, r.returncode, r.stderr.decode()))
    with open(os.path.join(t.dir, what.replace(" ", "_") + ".json"), "wb") as f:
        f.write(r.stdout)
    return json.loads(r.stdout)


def check(t, what, j, blocks, mi):
    for k in MI_FIELDS:
        t.eq("%s: mallinfo2.%s" % (what, k), mi[k], j["mallinfo2"][k])
    t.eq(what + ": arenas", 2, j["summary"]["arenas"])
    t.eq(what + ": threads", 2, j["summary"]["threads"])
    t.eq(what + ": tcache detected", True, j["glibc"]["tcache"])
    t.eq(what + ": safe-linking detected (glibc 2.32+)", True, j["glibc"]["safe_linking"])
    chunks = {c["address"]: c for c in j["chunks"]}
    want_free = dict.fromkeys(FREE_CLASSES, 0)
    for addr, cls, _ in blocks:
        c = chunks.get(addr - 16)
        if not t.true("%s: block %#x is a chunk" % (what, addr), c is not None):
            continue
        t.eq("%s: class of block %#x" % (what, addr), cls, c["class"])
        if cls in want_free:
            want_free[cls] += c["size"]
    counts = {}
    for _, cls, _ in blocks:
        counts[cls] = counts.get(cls, 0) + 1
    t.eq(what + ": classes made", {"in_use": 46, "tcache": 21, "fastbin": 5, "smallbin": 2,
                                   "largebin": 2, "unsorted": 1, "mmapped": 1}, counts)
    # free bytes per bin kind: exactly the program's frees (nothing else is freed)
    for k in FREE_CLASSES:
        t.eq("%s: free bytes in %s" % (what, k), want_free[k],
             j["fragmentation"]["free_bytes"][k])
    fr = j["fragmentation"]
    t.eq(what + ": fragmentation = 1 - largest/total",
         round(1 - fr["largest_free"] / fr["total_free"], 6), round(fr["fragmentation"], 6))
    # pinned: free chunks (top excluded) below the highest live chunk of the main heap
    main_heap = [p for p in fr["pinned"] if p["arena"] == 0][0]
    pin = main_heap["pinned_by"]["address"]
    t.eq(what + ": pinning chunk is in use", "in_use", chunks[pin]["class"])
    below = sum(c["size"] for c in j["chunks"] if c["arena"] == 0 and c["address"] < pin
                and c["class"] in FREE_CLASSES)
    t.eq(what + ": pinned bytes of the main heap", below, main_heap["pinned_bytes"])
    t.true(what + ": pinned bytes include the program's frees", below >= sum(
        want_free[k] for k in ("smallbin", "largebin", "unsorted")))
    # leaks
    leaks = {x["address"]: x["kind"] for x in j["leaks"]}
    mine = {a for a, _, _ in blocks}
    for addr, _, leak in blocks:
        if leak in ("definite", "indirect"):
            t.eq("%s: leak state of %#x" % (what, addr), leak, leaks.get(addr))
        elif leak == "reachable":
            t.true("%s: reachable block %#x not reported" % (what, addr), addr not in leaks)
    cyc = sorted(leaks.get(a) or "none" for a, _, l in blocks if l == "cycle")
    t.eq(what + ": the lost cycle", ["definite", "indirect"], cyc)
    t.eq(what + ": leaks among the program's blocks", 8, len([a for a in leaks if a in mine]))
    groups = [g for g in j["leak_groups"] if g["label"] == "vtable for hs::Leaky"]
    t.eq(what + ": leaked hs::Leaky named by its vtable", [(1, "definite", 144)],
         [(g["count"], g["kind"], g["size"]) for g in groups])
    t.eq(what + ": no problems reported", [], j["problems"])


def patch_core(core, out, patches):
    """Copies core to out with 8-byte words {address: value} overwritten
    (addresses mapped to file offsets through the PT_LOAD headers)."""
    with open(core, "rb") as f:
        d = bytearray(f.read())
    phoff, = struct.unpack_from("<Q", d, 32)
    phnum, = struct.unpack_from("<H", d, 56)
    for addr, val in patches.items():
        for i in range(phnum):
            typ, _, off, va, _, fsz, _, _ = struct.unpack_from("<IIQQQQQQ", d, phoff + 56 * i)
            if typ == 1 and va <= addr < va + fsz:
                struct.pack_into("<Q", d, off + addr - va, val)
                break
        else:
            raise hstest.HsError("address %#x not in the core" % addr)
    with open(out, "wb") as f:
        f.write(d)


def check_corrupt(t, core, blocks, j):
    """A loop in a small bin and a bad chunk size in the main heap: both
    reported, exit 0, and the thread arena is still walked."""
    small = [a - 16 for a, c, _ in blocks if c == "smallbin"][0]
    chunks = {c["address"]: c for c in j["chunks"]}
    main_inuse = [c["address"] for c in j["chunks"] if c["arena"] == 0 and c["class"] == "in_use"]
    victim = max(main_inuse)  # above every free chunk: the lists stay checkable
    bad = core + ".bad"
    patch_core(core, bad, {small + 16: small, victim + 8: 0x3})
    jj = core_json(t, "corrupt", [bad])
    probs = " | ".join(jj["problems"])
    t.true("corrupt: bad size reported", "bad size 0x3 of chunk %#x" % victim in probs, probs)
    t.true("corrupt: bin loop reported", "loop" in probs or "bk" in probs, probs)
    thread = sorted(c["address"] for c in j["chunks"] if c["arena"] == 1)
    t.eq("corrupt: thread arena still walked", thread,
         sorted(c["address"] for c in jj["chunks"] if c["arena"] == 1))
    os.remove(bad)


def kernel_core(t):
    """A second run dumped by the kernel (SIGABRT, RLIMIT_CORE unlimited),
    when core_pattern writes a plain file; checked like the others."""
    with open("/proc/sys/kernel/core_pattern") as f:
        pattern = f.read().strip()
    if pattern.startswith("|") or "/" in pattern:
        print("kernel core not checked: core_pattern is %r" % pattern)
        return
    d = os.path.join(t.dir, "kernel")
    os.mkdir(d)
    unlimited = lambda: resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY,
                                                                  resource.RLIM_INFINITY))
    p, blocks, mi = start(t, cwd=d, preexec_fn=unlimited)
    p.send_signal(signal.SIGABRT)
    p.wait(timeout=60)
    cores = glob.glob(os.path.join(d, "core*"))
    if not t.true("kernel wrote a core", len(cores) == 1, str(os.listdir(d))):
        return
    jk = core_json(t, "kernel core", [cores[0]])
    check(t, "kernel core", jk, blocks, mi)
    t.eq("kernel core: process and signal", (p.pid, t.prog("core_heap")[:79], signal.SIGABRT, False),
         (jk["process"]["pid"], jk["process"]["command"], jk["process"]["signal"], jk["process"]["live"]))
    os.remove(cores[0])


def proc_state(pid):
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def libc_build_id_address(pid):
    """The address of the build-id bytes in the target's copy of libc's ELF
    header page (the first mapping of libc, file offset 0)."""
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            w = line.split()
            if len(w) >= 6 and os.path.basename(w[5]).startswith("libc.so") and int(w[2], 16) == 0:
                base = int(w[0].split("-")[0], 16)
                path = w[5]
                break
        else:
            raise hstest.HsError("libc not mapped")
    with open(path, "rb") as f:
        d = f.read(1 << 16)
    phoff, = struct.unpack_from("<Q", d, 32)
    phnum, = struct.unpack_from("<H", d, 56)
    for i in range(phnum):
        typ, _, off, _, _, fsz, _, _ = struct.unpack_from("<IIQQQQQQ", d, phoff + 56 * i)
        pos = off
        while typ == 4 and pos + 12 <= off + fsz:
            nsz, dsz, ntype = struct.unpack_from("<III", d, pos)
            desc = pos + 12 + ((nsz + 3) & ~3)
            if ntype == 3 and d[pos + 12:pos + 16] == b"GNU\0":
                return base + desc
            pos = desc + ((dsz + 3) & ~3)
    raise hstest.HsError("no build-id note in " + path)


def main(t):
    p, blocks, mi = start(t)
    try:
        t.true("program printed its mallinfo2", mi != {})
        j = core_json(t, "live", ["--pid", str(p.pid)])
        check(t, "live", j, blocks, mi)
        t.eq("live: process", {"pid": p.pid, "command": t.prog("core_heap")[:80], "signal": None, "live": True},
             j["process"])
        t.eq("live: glibc version read from memory", (GLIBC, "memory"),
             (j["glibc"]["version"], j["glibc"]["version_from"]))
        t.true("live: the process runs on after --pid", proc_state(p.pid) in ("S", "R"), proc_state(p.pid))
        # a stopped process (SIGSTOP, ^Z) is read the same and stays stopped
        os.kill(p.pid, signal.SIGSTOP)
        for _ in range(100):
            if proc_state(p.pid) == "T":
                break
            time.sleep(0.01)
        t.eq("stopped: state before", "T", proc_state(p.pid))
        js = core_json(t, "stopped", ["--pid", str(p.pid)])
        check(t, "stopped", js, blocks, mi)
        t.eq("stopped: still stopped after --pid", "T", proc_state(p.pid))
        os.kill(p.pid, signal.SIGCONT)
        build_id_at = libc_build_id_address(p.pid)
        gcore = shutil.which("gcore")
        if not gcore:
            raise hstest.HsError("gcore (gdb) not installed")
        prefix = os.path.join(t.dir, "core")
        subprocess.run([gcore, "-o", prefix, str(p.pid)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=120, check=True)
        core = "%s.%d" % (prefix, p.pid)
        pid = p.pid
    finally:
        p.stdin.close()
        p.wait(timeout=60)
    jg = core_json(t, "gcore", [core])
    check(t, "gcore", jg, blocks, mi)
    t.eq("gcore: process", (pid, t.prog("core_heap")[:79]), (jg["process"]["pid"], jg["process"]["command"]))
    t.eq("gcore: glibc version read from libc's file (same build-id)", (GLIBC, "file"),
         (jg["glibc"]["version"], jg["glibc"]["version_from"]))
    with open(core, "rb") as f:
        r = subprocess.run([t.heapscope, "core", "--json", "--summary", "--leaks", "--chunks",
                            "--fragmentation", "/dev/stdin"], stdin=f, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120)
    t.eq("gcore through a pipe: exit status", 0, r.returncode)
    t.true("gcore through a pipe: same report", r.returncode == 0 and json.loads(r.stdout) == jg)
    # --json alone: the whole analysis but the chunk list, leaks included
    r = subprocess.run([t.heapscope, "core", "--json", core], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    t.eq("gcore --json alone: exit status", 0, r.returncode)
    jd = json.loads(r.stdout) if r.returncode == 0 else {}
    t.eq("gcore --json alone: members",
         ["process", "glibc", "summary", "arenas", "mallinfo2", "fragmentation", "leak_summary",
          "leaks", "leak_groups", "problems"], list(jd.keys()))
    t.eq("gcore --json alone: the same mallinfo2 and leaks",
         (jg["mallinfo2"], jg["leaks"]), (jd.get("mallinfo2"), jd.get("leaks")))
    # another build of libc than the file on disk: neither its symbols nor its version are used
    other = core + ".otherlibc"
    with open(core, "rb") as f:
        d = f.read()
    phoff, = struct.unpack_from("<Q", d, 32)
    phnum, = struct.unpack_from("<H", d, 56)
    for i in range(phnum):
        typ, _, off, va, _, fsz, _, _ = struct.unpack_from("<IIQQQQQQ", d, phoff + 56 * i)
        if typ == 1 and va <= build_id_at < va + fsz:
            first, = struct.unpack_from("<Q", d, off + build_id_at - va)
            break
    else:
        raise hstest.HsError("libc's ELF header page is not in the gcore core")
    patch_core(core, other, {build_id_at: first ^ 0xff})
    jo = core_json(t, "other libc build", [other])
    t.eq("other libc build: version unknown, structure", (None, None, "structure"),
         (jo["glibc"]["version"], jo["glibc"]["version_from"], jo["glibc"]["found_by"]))
    check(t, "other libc build", jo, blocks, mi)
    os.remove(other)
    check_corrupt(t, core, blocks, jg)
    j = core_json(t, "gcore no symbols", ["--no-symbols", core])
    t.eq("heuristics found main_arena", "structure", j["glibc"]["found_by"])
    check(t, "gcore no symbols", j, blocks, mi)
    # a truncated core: refused, exit 1, no crash
    cut = core + ".cut"
    with open(core, "rb") as f, open(cut, "wb") as g:
        g.write(f.read(os.path.getsize(core) // 2))
    r = subprocess.run([t.heapscope, "core", cut], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    t.eq("truncated core: exit status", 1, r.returncode)
    t.true("truncated core: says so", b"truncated core" in r.stderr, r.stderr.decode())
    os.remove(core)
    os.remove(cut)
    kernel_core(t)


hstest.main(main)
