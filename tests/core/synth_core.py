#!/usr/bin/env python3
"""synth_core.py - small x86-64 ELF cores of a glibc heap built here, byte
by byte, with the list of chunks `heapscope core` must find in them.

Real cores come from the glibc of this machine only (2.36); these carry the
layouts of other versions, selected by feature, as glibc's sources define
them (malloc/malloc.c, malloc/arena.c):

  version  safe-linking  mp_ (malloc_par)            heap_info
  2.31     no            n_mmaps at 40 (112 bytes)   32 bytes
  2.33     yes (2.32+)   n_mmaps at 40               32 bytes
  2.36     yes           thp/hp fields, n_mmaps 60   48 bytes (pagesize, 2.35+)

The core (about 25 KB) has two threads, a main arena with a brk heap, a
thread arena over two 64 MiB-aligned heaps (the first ends with the two
fencepost chunks glibc leaves when an arena moves to a new heap), an
mmapped chunk of which only 256 bytes were dumped, a program data segment
and two stacks.  libc is named /nonexistent/heapscope-synth/libc.so.6, so
nothing on disk is read: main_arena and mp_ are found by their structure,
and libc's version from its banner in a dumped read-only segment.

Chunks (main heap, in address order):
  tcache_struct 0x290 (bin 1: T1 -> T2; counts[1] = 2)
  A 0x20 reachable (stack)      B 0x30 reachable (interior pointer, stack)
  T1 0x30 tcache                S 0x20 reachable (register rbx)
  T2 0x30 tcache                F1 0x20 fastbin (fastbinsY[0] -> F1 -> F2)
  C 0x40 reachable (global)     F2 0x20 fastbin
  D 0x50 reachable (from C)     SB 0x110 smallbin (bin 17)
  L1 0x60 definite (-> L2)      U 0x90 unsorted
  L2 0x40 indirect              LB 0x450 largebin (bin 65)
  CY1 0x30 definite, CY2 0x30 indirect (a cycle)
  K 0x20 reachable (from the mmapped chunk)      top
Thread arena, heap 1: tcache_struct (bin 3: TT), X1 0x50 reachable (thread
stack), TT 0x50 tcache, X2 0x50 definite, FT 0x30 fastbin, X3 0x20
reachable (register rdi), Z reachable (interior pointer, thread stack)
up to the two fenceposts;
heap 2: Y 0x70 reachable (thread stack), top.  mmapped: M 0x2000 reachable
(global), holding a pointer to K.

The notes: NT_PRSTATUS per thread (pid 1000 with pr_cursig SIGABRT, 1001),
NT_PRPSINFO (pid 1000, "synth --heap 2 arena"), NT_FILE, NT_AUXV.

`build(version, variant)` returns (core bytes, expected); expected has
`chunks` [(address, size, class, arena, leak)], `mallinfo2` (computed the
way glibc's int_mallinfo does, from the lists), `glibc`, `leak_summary`,
`free_bytes`, `threads`, `arenas`, `heaps`.  Variants corrupt one thing
(see VARIANTS); `mutants(n, seed)` makes randomly corrupted copies.
`python3 synth_core.py DIR` writes the seed cores of the fuzzer
(tests/corpus/core/seed-synth-*).
"""
import os
import struct
import sys

MS_SIZE = 2200
HEAP_MAX = 64 << 20
LIBC = b"/nonexistent/heapscope-synth/libc.so.6"
PROG = b"/nonexistent/heapscope-synth/prog"

LAYOUTS = {  # version: (safe_linking, mp_ with hugepage fields, heap_info size)
    "2.31": (False, False, 32),
    "2.33": (True, False, 32),
    "2.36": (True, True, 48),
}

VARIANTS = (
    "plain",          # as described above
    "xnum",           # e_phnum = PN_XNUM, the count in section header 0
    "no-banner",      # libc's read-only segment not dumped: version unknown
    "fastbin-loop",   # F2's fd points back to F1
    "tcache-loop",    # T2's next points back to T1, and the bin's count says 3
    "bad-size",       # C's size field is 0x3: the rest of the main heap is skipped
    "arena-loop",     # the thread arena's next is itself
    "heap-loop",      # heap 2's heap_info.prev is heap 2
    "glibc-2.42",     # banner says 2.42: refused
    "glibc-2.28",     # banner says 2.28: refused
    "unused-arena",   # malloc never called: main_arena as glibc's initialiser leaves it
    "libc-not-dumped",  # libc's writable segment has p_filesz 0
    "no-libc",        # NT_FILE names no libc and main_arena is garbage
    "mutex-held",     # main_arena's mutex is 1: a thread was inside malloc
    "no-chunks",      # one arena whose first chunk has a bad size, no mmapped chunk: nothing found
)

# addresses
PROG_RW = 0x555555557000
HEAP = 0x555555559000
HEAP_SIZE = 0x21000
THEAP1 = 0x7ffff0000000
THEAP1_SIZE = 0x2000
THEAP2 = THEAP1 + HEAP_MAX
THEAP2_SIZE = 0x21000
TSTACK = 0x7ffff6000000
MMAP = 0x7ffff7000000
LIBC_R = 0x7ffff7dd0000
LIBC_RW = 0x7ffff7fa0000
MP = LIBC_RW + 0x340
MAIN_ARENA = LIBC_RW + 0xc60
STACK = 0x7ffffffde000


class Mem:
    """Segments: start -> [bytearray, memsz, flags, path, file page]."""

    def __init__(self):
        self.segs = {}

    def seg(self, start, memsz, flags, dumped, path=None, page=0):
        self.segs[start] = [bytearray(dumped), memsz, flags, path, page]

    def find(self, a):
        for s, v in self.segs.items():
            if s <= a < s + len(v[0]):
                return s, v
        raise KeyError("address %#x not in a dumped segment" % a)

    def put(self, a, data):
        s, v = self.find(a)
        v[0][a - s:a - s + len(data)] = data

    def p64(self, a, x):
        self.put(a, struct.pack("<Q", x & (2 ** 64 - 1)))

    def p32(self, a, x):
        self.put(a, struct.pack("<I", x))

    def p16(self, a, x):
        self.put(a, struct.pack("<H", x))

    def u64(self, a):
        s, v = self.find(a)
        return struct.unpack_from("<Q", v[0], a - s)[0]


def bin_at(arena, i):
    return arena + 112 + (i - 1) * 16 - 16


def init_arena(m, a, top, nxt, sysmem, flags):
    m.put(a, bytes(MS_SIZE))
    m.p32(a + 4, flags)
    for i in range(1, 128):
        b = bin_at(a, i)
        m.p64(b + 16, b)
        m.p64(b + 24, b)
    m.p64(a + 96, top)
    m.p64(a + 2160, nxt)
    m.p64(a + 2176, 1)
    m.p64(a + 2184, sysmem)
    m.p64(a + 2192, sysmem)


def lay_chunks(m, start, spec):
    """Writes chunk headers from start; spec: [(name, size, kind)], kind
    "used" (next chunk's PREV_INUSE set) or "binned" (clear, with the
    next chunk's prev_size).  Returns {name: address}."""
    at, p = {}, start
    prev_binned, prev_size = False, 0
    for name, size, kind in spec:
        at[name] = p
        m.p64(p, prev_size if prev_binned else 0)
        m.p64(p + 8, size | (0 if prev_binned else 1))
        prev_binned, prev_size = kind == "binned", size
        p += size
    return at, p


def build(version="2.36", variant="plain"):
    safe, mp_new, hisz = LAYOUTS[version]
    m = Mem()
    # memory size, bytes dumped (p_memsz, p_filesz): only what matters is dumped
    m.seg(PROG_RW, 0x1000, 6, 0x100, PROG, 2)
    m.seg(HEAP, HEAP_SIZE, 6, 0x1000)
    m.seg(THEAP1, THEAP1_SIZE, 6, THEAP1_SIZE)
    m.seg(THEAP2, THEAP2_SIZE, 6, 0x100)
    m.seg(TSTACK, 0x1000, 6, 0x900)
    m.seg(MMAP, 0x2000, 6, 0x100)
    m.seg(LIBC_R, 0x1000, 4, 0 if variant == "no-banner" else 0x300, LIBC, 0)
    m.seg(LIBC_RW, 0x3000, 6, 0x1500, LIBC, 0x1d0)
    m.seg(STACK, 0x1000, 6, 0x1000)
    banner_version = {"glibc-2.42": "2.42", "glibc-2.28": "2.28"}.get(variant, version)
    if variant != "no-banner":
        m.put(LIBC_R + 0x200, b"GNU C Library (heapscope synthetic) stable release version %s.\n\0"
              % banner_version.encode())

    def mangle(pos, ptr):
        return (pos >> 12) ^ ptr if safe else ptr  # NULL is mangled too

    # main heap
    spec = [("tcs", 0x290, "used"), ("A", 0x20, "used"), ("B", 0x30, "used"), ("T1", 0x30, "used"),
            ("S", 0x20, "used"), ("T2", 0x30, "used"), ("F1", 0x20, "used"), ("C", 0x40, "used"),
            ("F2", 0x20, "used"), ("D", 0x50, "used"), ("SB", 0x110, "binned"), ("L1", 0x60, "used"),
            ("U", 0x90, "binned"), ("L2", 0x40, "used"), ("LB", 0x450, "binned"), ("CY1", 0x30, "used"),
            ("CY2", 0x30, "used"), ("K", 0x20, "used")]
    at, top = lay_chunks(m, HEAP, spec)
    topsize = HEAP + HEAP_SIZE - top
    m.p64(top + 8, topsize | 1)
    cls = {"tcs": "tcache_struct", "T1": "tcache", "T2": "tcache", "F1": "fastbin", "F2": "fastbin",
           "SB": "smallbin", "U": "unsorted", "LB": "largebin"}
    leak = {"A": "reachable", "B": "reachable", "S": "reachable", "C": "reachable",
            "D": "reachable", "K": "reachable", "L1": "definite", "L2": "indirect",
            "CY1": "definite", "CY2": "indirect"}
    u = {k: v + 16 for k, v in at.items()}  # user pointers
    # tcache bin 1 (0x30): T1 -> T2, each entry's key field set
    m.p16(u["tcs"] + 2, 3 if variant == "tcache-loop" else 2)
    m.p64(u["tcs"] + 128 + 8, u["T1"])
    m.p64(u["T1"], mangle(u["T1"], u["T2"]))
    m.p64(u["T2"], mangle(u["T2"], u["T1"] if variant == "tcache-loop" else 0))
    for t in ("T1", "T2"):
        m.p64(u[t] + 8, 0x5f3759df5f3759df)
    # fastbin 0 (0x20): F1 -> F2
    m.p64(u["F1"], mangle(u["F1"], at["F2"]))
    m.p64(u["F2"], mangle(u["F2"], at["F1"] if variant == "fastbin-loop" else 0))
    # contents: pointers that make the leak picture
    m.p64(u["C"], u["D"])
    m.p64(u["L1"] + 8, u["L2"] + 24)       # interior pointer: still a reference
    m.p64(u["CY1"], u["CY2"])
    m.p64(u["CY2"], u["CY1"])

    # main_arena and its bins
    arena_flags = 0
    ta = THEAP1 + hisz
    init_arena(m, MAIN_ARENA, top, MAIN_ARENA if variant == "unused-arena" else ta, HEAP_SIZE, arena_flags)
    m.p32(MAIN_ARENA + 8, 1)  # have_fastchunks
    m.p64(MAIN_ARENA + 16, at["F1"])
    for i, name in ((1, "U"), (17, "SB"), (65, "LB")):
        b = bin_at(MAIN_ARENA, i)
        m.p64(b + 16, at[name])
        m.p64(b + 24, at[name])
        m.p64(at[name] + 16, b)
        m.p64(at[name] + 24, b)
        if i > 1:
            m.p32(MAIN_ARENA + 2144 + 4 * (i >> 5), m.u64(MAIN_ARENA + 2144 + 4 * (i >> 5)) & 0xffffffff
                  | 1 << (i & 31))
    m.p64(at["LB"] + 32, at["LB"])  # fd_nextsize, bk_nextsize: alone in its size
    m.p64(at["LB"] + 40, at["LB"])

    # thread arena: heap 1 (first; the arena follows heap_info), heap 2 (top)
    first = (ta + MS_SIZE + 15) & ~15
    tspec = [("ttcs", 0x290, "used"), ("X1", 0x50, "used"), ("TT", 0x50, "used"), ("X2", 0x50, "used"),
             ("FT", 0x30, "used"), ("X3", 0x20, "used")]
    tat, p = lay_chunks(m, first, tspec)
    zsize = THEAP1 + THEAP1_SIZE - 0x20 - p  # the last chunk reaches the fenceposts
    tat["Z"] = p
    m.p64(p + 8, zsize | 1)
    m.p64(p + zsize + 8, 0x10 | 1)  # fencepost chunks, as sysmalloc leaves them
    m.p64(p + zsize + 0x18, 0 | 1)
    y = THEAP2 + hisz
    tat["Y"] = y
    m.p64(y + 8, 0x70 | 1)
    ttop = y + 0x70
    ttopsize = THEAP2 + THEAP2_SIZE - ttop
    m.p64(ttop + 8, ttopsize | 1)
    tu = {k: v + 16 for k, v in tat.items()}
    m.p16(tu["ttcs"] + 2 * 3, 1)
    m.p64(tu["ttcs"] + 128 + 8 * 3, tu["TT"])
    m.p64(tu["TT"], mangle(tu["TT"], 0))
    init_arena(m, ta, ttop, ta if variant == "arena-loop" else MAIN_ARENA,
               THEAP1_SIZE + THEAP2_SIZE, 2)
    m.p32(ta + 8, 1)
    m.p64(ta + 16 + 8, tat["FT"])
    m.p64(tu["FT"], mangle(tu["FT"], 0))
    for h, prev, size in ((THEAP1, 0, THEAP1_SIZE), (THEAP2, THEAP2 if variant == "heap-loop" else THEAP1,
                                                      THEAP2_SIZE)):
        m.p64(h, ta)
        m.p64(h + 8, prev)
        m.p64(h + 16, size)
        m.p64(h + 24, size)
        if hisz == 48:
            m.p64(h + 32, 4096)
    cls.update({"ttcs": "tcache_struct", "TT": "tcache", "FT": "fastbin"})
    leak.update({"X1": "reachable", "X2": "definite", "X3": "reachable", "Z": "reachable",
                 "Y": "reachable"})

    # mmapped chunk: header, a pointer to K; only its first 256 bytes dumped
    m.p64(MMAP, 0)
    m.p64(MMAP + 8, 0x2000 | 2)
    m.p64(MMAP + 16, u["K"])

    # mp_
    mp = {"trim": 0x20000, "top_pad": 0x20000, "mmap_threshold": 0x20000, "arena_test": 8,
          "n_mmaps": 1, "n_mmaps_max": 65536, "max_n_mmaps": 1, "mmapped_mem": 0x2000,
          "max_mmapped_mem": 0x2000, "sbrk_base": HEAP, "tcache_bins": 64,
          "tcache_max_bytes": 1032, "tcache_count": 7}
    o, oi = (24, 20) if mp_new else (0, 0)
    m.p64(MP, mp["trim"])
    m.p64(MP + 8, mp["top_pad"])
    m.p64(MP + 16, mp["mmap_threshold"])
    m.p64(MP + 24, mp["arena_test"])
    for off, k in ((40, "n_mmaps"), (44, "n_mmaps_max"), (48, "max_n_mmaps")):
        m.p32(MP + off + oi, mp[k])
    for off, k in ((56, "mmapped_mem"), (64, "max_mmapped_mem"), (72, "sbrk_base"), (80, "tcache_bins"),
                   (88, "tcache_max_bytes"), (96, "tcache_count")):
        m.p64(MP + off + o, mp[k])

    # roots: the program's globals, the stacks, the registers
    m.p64(PROG_RW + 0x10, u["C"])
    m.p64(PROG_RW + 0x18, MMAP + 16)
    rsp = STACK + 0x800
    m.p64(rsp + 0x8, u["A"])
    m.p64(rsp + 0x10, u["B"] + 8)
    m.p64(rsp + 0x18, u["T1"])        # a stale pointer to a free chunk: no effect
    m.p64(rsp - 0x8, u["L1"])         # below rsp: dead, not a root
    trsp = TSTACK + 0x800
    m.p64(trsp, tu["X1"])
    m.p64(trsp + 8, tu["Z"] + 0x100)
    m.p64(trsp + 16, tu["Y"])
    regs_main = {5: u["S"], 19: rsp, 16: 0x555555555123}       # rbx, rsp, rip
    regs_thread = {14: tu["X3"], 19: trsp, 16: 0x7ffff7e01234}  # rdi, rsp, rip

    if variant == "bad-size":
        m.p64(at["C"] + 8, 0x3)
    if variant == "mutex-held":
        m.p32(MAIN_ARENA, 1)
    if variant == "no-chunks":
        m.p64(HEAP + 8, 0x3)
        m.p64(MAIN_ARENA + 2160, MAIN_ARENA)
        m.p64(MMAP + 8, 0)
    if variant == "unused-arena":
        m.put(MAIN_ARENA, bytes(MS_SIZE))
        m.p64(MAIN_ARENA + 2160, MAIN_ARENA)
        m.p64(MAIN_ARENA + 2176, 1)
    if variant == "no-libc":
        m.put(MAIN_ARENA, bytes(MS_SIZE))

    core = elf(m, [(1000, regs_main), (1001, regs_thread)], variant)

    # what heapscope core must report
    chunks = []
    for names, arena in ((at, 0), (tat, 1)):
        for n, a in names.items():
            size = m.u64(a + 8) & ~7
            if variant == "bad-size" and arena == 0 and a >= at["C"]:
                continue
            chunks.append((a, size, cls.get(n, "in_use"), arena, leak.get(n, "")))
    if variant != "bad-size":
        chunks.append((top, topsize, "top", 0, ""))
    chunks.append((ttop, ttopsize, "top", 1, ""))
    chunks.append((MMAP, 0x2000, "mmapped", -1, "reachable"))
    chunks.sort()

    def mallinfo_of(arenas):
        mi = dict.fromkeys(("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                            "uordblks", "fordblks", "keepcost"), 0)
        for sysmem, top_size, fast, binned in arenas:  # glibc's int_mallinfo
            avail = top_size + sum(fast) + sum(binned)
            mi["smblks"] += len(fast)
            mi["ordblks"] += 1 + len(binned)
            mi["fordblks"] += avail
            mi["uordblks"] += sysmem - avail
            mi["arena"] += sysmem
            mi["fsmblks"] += sum(fast)
        mi["hblks"], mi["hblkhd"] = mp["n_mmaps"], mp["mmapped_mem"]
        mi["keepcost"] = arenas[0][1]
        return mi

    mallinfo = mallinfo_of([(HEAP_SIZE, topsize, [0x20, 0x20], [0x110, 0x90, 0x450]),
                            (THEAP1_SIZE + THEAP2_SIZE, ttopsize, [0x30], [])])
    free_bytes = dict.fromkeys(("tcache", "fastbin", "unsorted", "smallbin", "largebin", "top"), 0)
    for _, size, c, _, _ in chunks:
        if c in free_bytes:
            free_bytes[c] += size
    lost = [(c[1], c[4]) for c in chunks if c[4] in ("definite", "indirect")]
    expected = {
        "chunks": chunks,
        "mallinfo2": mallinfo,
        "glibc": {"version": version if variant != "no-banner" else None,
                  "version_from": "memory" if variant != "no-banner" else None,
                  "main_arena": MAIN_ARENA, "mp": MP, "found_by": "structure", "tcache": True,
                  "safe_linking": safe, "heap_info_size": hisz, "mp_hugepage_fields": mp_new},
        "leak_summary": {"definite_chunks": sum(1 for _, k in lost if k == "definite"),
                         "definite_bytes": sum(s for s, k in lost if k == "definite"),
                         "indirect_chunks": sum(1 for _, k in lost if k == "indirect"),
                         "indirect_bytes": sum(s for s, k in lost if k == "indirect"),
                         "reachable_chunks": sum(1 for c in chunks if c[4] == "reachable")},
        "free_bytes": free_bytes,
        "threads": 2, "arenas": 2, "heaps": 3,
        "addresses": dict(list(at.items()) + list(tat.items()), top=top, ttop=ttop),
    }
    return core, expected


def mutants(n, seed):
    """n copies of the three layouts' cores with 1-4 dumped words each
    overwritten by a value a walker has to doubt: a chunk's address, its
    user pointer or a neighbour, 0, a mangled pointer, a small size with
    flag bits, an address in the same segment, a huge number.  Yields
    (name, bytes)."""
    import random
    rnd = random.Random(seed)
    bases = []
    for v in LAYOUTS:
        core, e = build(v)
        phoff, = struct.unpack_from("<Q", core, 32)
        phnum, = struct.unpack_from("<H", core, 56)
        segs = []
        for i in range(phnum):
            typ, _, off, va, _, fs, _, _ = struct.unpack_from("<IIQQQQQQ", core, phoff + 56 * i)
            if typ == 1 and fs:
                segs.append((va, off, fs))
        bases.append((v, core, segs, [c[0] for c in e["chunks"]]))
    for k in range(n):
        v, core, segs, addrs = rnd.choice(bases)
        d = bytearray(core)
        for _ in range(rnd.randint(1, 4)):
            va, off, fs = rnd.choice(segs)
            pos = off + rnd.randrange(0, fs // 8) * 8
            a = rnd.choice(addrs)
            val = rnd.choice([a, a + 16, a + 8, a - 16, 0, rnd.getrandbits(64), rnd.getrandbits(12),
                              rnd.randrange(0, 4096) * 16 + rnd.randrange(0, 4), va + rnd.randrange(0, fs),
                              (pos >> 12) ^ (rnd.choice(addrs) + 16), 2 ** 63, 2 ** 64 - 16])
            struct.pack_into("<Q", d, pos, val & (2 ** 64 - 1))
        yield "%s-mutant-%d" % (v, k), bytes(d)


def note(name, ntype, desc):
    name = name + b"\0"
    pad = lambda b: b + bytes(-len(b) % 4)
    return struct.pack("<III", len(name), len(desc), ntype) + pad(name) + pad(desc)


def elf(m, threads, variant):
    """The ELF core of m: PT_NOTE (NT_PRSTATUS per thread, NT_FILE, NT_AUXV)
    then one PT_LOAD per segment, dumped bytes after the headers."""
    notes = b""
    for tid, regs in threads:
        pr = bytearray(336)
        struct.pack_into("<h", pr, 12, 6 if tid == threads[0][0] else 0)  # pr_cursig: SIGABRT
        struct.pack_into("<i", pr, 32, tid)
        for r, v in regs.items():
            struct.pack_into("<Q", pr, 112 + 8 * r, v)
        notes += note(b"CORE", 1, bytes(pr))
    ps = bytearray(136)
    struct.pack_into("<i", ps, 24, threads[0][0])
    ps[40:45] = b"synth"
    ps[56:56 + 20] = b"synth --heap 2 arena"
    notes += note(b"CORE", 3, bytes(ps))
    files = [(s, v) for s, v in sorted(m.segs.items()) if v[3] and not (variant == "no-libc" and v[3] == LIBC)]
    desc = struct.pack("<QQ", len(files), 4096)
    desc += b"".join(struct.pack("<QQQ", s, s + v[1], v[4]) for s, v in files)
    desc += b"".join(v[3] + b"\0" for _, v in files)
    notes += note(b"CORE", 0x46494c45, desc)
    notes += note(b"CORE", 6, struct.pack("<QQQQQQ", 3, PROG_RW - 0x3000 + 0x40, 9, 0x555555555000, 0, 0))
    segs = sorted(m.segs.items())
    nph = 1 + len(segs)
    xnum = variant == "xnum"
    off = 64 + 56 * nph + (64 if xnum else 0)
    phdrs, blobs = [], []
    phdrs.append(struct.pack("<IIQQQQQQ", 4, 4, off, 0, 0, len(notes), 0, 4))
    blobs.append(notes)
    off += len(notes)
    for s, (data, memsz, flags, _, _) in segs:
        dumped = bytes(data)
        if variant == "libc-not-dumped" and s == LIBC_RW:
            dumped = b""
        phdrs.append(struct.pack("<IIQQQQQQ", 1, flags, off, s, 0, len(dumped), memsz, 4096))
        blobs.append(dumped)
        off += len(dumped)
    shoff = 64 + 56 * nph if xnum else 0
    eh = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    eh += struct.pack("<HHIQQQIHHHHHH", 4, 62, 1, 0, 64, shoff, 0, 64, 56, 0xffff if xnum else nph,
                      64 if xnum else 0, 1 if xnum else 0, 0)
    out = eh + b"".join(phdrs)
    if xnum:  # section header 0: sh_info holds the program header count
        out += struct.pack("<IIQQQQIIQQ", 0, 0, 0, 0, 0, 0, 0, nph, 0, 0)
    return out + b"".join(blobs)


def main():
    d = sys.argv[1]
    for v in LAYOUTS:
        core, _ = build(v)
        with open(os.path.join(d, "seed-synth-glibc-%s.core" % v), "wb") as f:
            f.write(core)


if __name__ == "__main__":
    main()
