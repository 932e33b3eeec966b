"""test_core_badinput.py - `heapscope core` refuses what it cannot read.

Each input must give exit status 1, a message saying what is wrong, and no
crash (a signal would show as a negative status): random bytes, an ELF
that is not a core, small hand-made cores (made here) of another machine
(aarch64), 32-bit, with program headers or segment data past the end of
the file, with a note running past its segment, and a well-formed core
holding no heap, /dev/zero (its first bytes only: not an endless read).
Processes that cannot be read: one that does not exist, a zombie, one that
another process already traces (the tracer is named).  Also random
mutations of the small core (rc 0 or 1).
"""
import ctypes
import os
import random
import struct
import subprocess
import time

import hstest


def elf_core(machine=62, cls=2, phnum=2, cut=None, note_bad=False):
    """A minimal x86-64 ELF core: one PT_NOTE (one NT_PRSTATUS) and one
    PT_LOAD of 4096 zero bytes (no malloc state in it)."""
    prstatus = bytearray(336)
    struct.pack_into("<i", prstatus, 32, 1234)
    name = b"CORE\0\0\0\0"
    note = struct.pack("<III", 5, len(prstatus) if not note_bad else 100000, 1) + name + prstatus
    ehsize, phsize = 64, 56
    note_off = ehsize + phsize * phnum
    load_off = (note_off + len(note) + 4095) & ~4095
    eh = bytearray(b"\x7fELF" + bytes([cls, 1, 1]) + bytes(9))
    eh += struct.pack("<HHIQQQIHHHHHH", 4, machine, 1, 0, ehsize, 0, 0, ehsize, phsize,
                      phnum, 64, 0, 0)
    ph = struct.pack("<IIQQQQQQ", 4, 0, note_off, 0, 0, len(note), 0, 4)
    ph += struct.pack("<IIQQQQQQ", 1, 6, load_off, 0x10000, 0, 4096, 4096, 4096)
    data = bytes(eh) + ph
    data += bytes(note_off - len(data)) + note
    data += bytes(load_off - len(data)) + bytes(4096)
    return data[:cut] if cut else data


def run(t, data, name):
    path = t.write(name, data)
    r = subprocess.run([t.heapscope, "core", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    return r.returncode, r.stderr.decode(errors="replace")


def expect(t, data, name, message):
    rc, err = run(t, data, name)
    t.eq(name + ": exit status", 1, rc)
    t.true(name + ": message", message in err, "wanted %r in %r" % (message, err))


def main(t):
    rnd = random.Random(6)
    expect(t, bytes(rnd.getrandbits(8) for _ in range(10000)), "random", "not an ELF file")
    expect(t, b"", "empty", "not an ELF file")
    with open(t.prog("core_heap"), "rb") as f:
        expect(t, f.read(), "executable", "not a core file")
    expect(t, elf_core(machine=183), "aarch64", "e_machine 183 (aarch64)")
    expect(t, elf_core(cls=1), "elf32", "32-bit ELF")
    expect(t, elf_core(cut=100), "cut-phdrs", "truncated core")
    expect(t, elf_core(cut=5000), "cut-data", "truncated core")
    expect(t, elf_core(note_bad=True), "bad-note", "note runs past")
    expect(t, elf_core(), "no-heap", "no glibc malloc heap")
    rc, _ = run(t, b"x", "usage")
    r = subprocess.run([t.heapscope, "core"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    t.eq("no argument: usage, exit 2", 2, r.returncode)
    r = subprocess.run([t.heapscope, "core", "--pid", "999999999"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    t.eq("no such process: exit 1", 1, r.returncode)
    t.true("no such process: message", b"process 999999999: No such process" in r.stderr, r.stderr)
    r = subprocess.run([t.heapscope, "core", "/dev/zero"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=20)
    t.eq("/dev/zero: exit 1", 1, r.returncode)
    t.true("/dev/zero: message", b"/dev/zero: not an ELF file" in r.stderr, r.stderr)
    pid_checks(t)
    base = elf_core()
    bad = 0
    for i in range(150):
        d = bytearray(base)
        for _ in range(rnd.randint(1, 8)):
            d[rnd.randrange(0, 400)] = rnd.getrandbits(8)
        rc, _ = run(t, bytes(d), "mut")
        if rc not in (0, 1):
            bad += 1
    t.eq("mutated cores: exit status 0 or 1, never a crash", 0, bad)


def pid(t, what, p, message):
    r = subprocess.run([t.heapscope, "core", "--pid", str(p)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    t.eq(what + ": exit status", 1, r.returncode)
    err = r.stderr.decode()
    t.true(what + ": message", message in err, "wanted %r in %r" % (message, err))


def pid_checks(t):
    # a zombie: exited, not reaped
    z = os.fork()
    if z == 0:
        os._exit(0)
    for _ in range(200):
        with open("/proc/%d/stat" % z) as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
        time.sleep(0.01)
    pid(t, "zombie", z, "process %d is a zombie" % z)
    os.waitpid(z, 0)
    # already traced: this process seizes core_heap first
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    p = subprocess.Popen([t.prog("core_heap")], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        for line in p.stdout:
            if line.startswith(b"READY"):
                break
        PTRACE_SEIZE, PTRACE_INTERRUPT, PTRACE_DETACH = 0x4206, 0x4207, 17
        if libc.ptrace(PTRACE_SEIZE, p.pid, None, None) != 0:
            raise hstest.HsError("PTRACE_SEIZE: errno %d" % ctypes.get_errno())
        pid(t, "already traced", p.pid,
            "process %d is already traced by process %d (a debugger?): detach it first" % (p.pid, os.getpid()))
        libc.ptrace(PTRACE_INTERRUPT, p.pid, None, None)
        os.waitpid(p.pid, 0x40000000)  # __WALL
        t.eq("already traced: detached again", 0, libc.ptrace(PTRACE_DETACH, p.pid, None, None))
    finally:
        p.stdin.close()
        p.wait(timeout=60)


hstest.main(main)
