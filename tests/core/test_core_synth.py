"""test_core_synth.py - `heapscope core` on cores built byte by byte
(synth_core.py) with the glibc layouts this machine does not have: 2.31 (no
safe-linking, mp_ without the 2.35 hugepage fields, 32-byte heap_info),
2.33 (safe-linking), 2.36 (all of 2.35's changes).

For each, the exact chunk list (address, size, class, arena, leak state),
glibc's mallinfo2 recomputed by a naive model of int_mallinfo, the layout
facts, free bytes per class, the leak summary and no problem; the same
core with extended program header numbering (PN_XNUM) gives the same
answer; without libc's banner the version is unknown and the walk the
same.  Corrupt variants: each corruption reported with its address and the
rest walked (a fastbin loop, a tcache loop, a bad chunk size, a held arena
mutex (a core taken inside malloc), an arena ring
that loops on itself and a heap_info.prev loop, which used to make 4096
copies of the same arena or heap; a walk that finds no chunk at all); cores that cannot be walked refused
with a message saying why (glibc 2.42 and 2.28, a main_arena that malloc
never initialised, libc's data not dumped, no libc at all).  Then 1000
structure-aware mutants (synth_core.mutants, fixed seed) through the fuzz
entry point (fz_core_replay, one process) and 20 through heapscope core:
no signal, no sanitizer report, exit 0 or 1.  One core
(2.36) is also checked in text form for the figures a reader sees.
"""
import json
import os
import subprocess
import sys

import hstest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import synth_core  # noqa: E402

MUTANTS = 1000      # in one process, fz_core_replay
CLI_MUTANTS = 20    # one heapscope process each
MI = ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
      "fordblks", "keepcost")


def run(t, name, core, args=()):
    path = t.write(name + ".core", core)
    r = subprocess.run([t.heapscope, "core"] + list(args) + [path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def walk(t, name, core):
    rc, out, err = run(t, name, core, ["--json", "--summary", "--fragmentation", "--leaks", "--chunks"])
    if rc != 0:
        raise hstest.HsError("%s: exit %d: %s" % (name, rc, err))
    return json.loads(out)


def chunk_list(j):
    return [(c["address"], c["size"], c["class"], c["arena"], c["leak"]) for c in j["chunks"]]


def check_full(t, name, j, e):
    t.eq(name + ": chunks", e["chunks"], chunk_list(j))
    for k in MI:
        t.eq("%s: mallinfo2.%s" % (name, k), e["mallinfo2"][k], j["mallinfo2"][k])
    for k, v in e["glibc"].items():
        t.eq("%s: glibc.%s" % (name, k), v, j["glibc"][k])
    for k, v in e["free_bytes"].items():
        t.eq("%s: free bytes in %s" % (name, k), v, j["fragmentation"]["free_bytes"][k])
    t.eq(name + ": leak summary", e["leak_summary"], j["leak_summary"])
    t.eq(name + ": threads, arenas, heaps", (e["threads"], e["arenas"], e["heaps"]),
         (j["summary"]["threads"], j["summary"]["arenas"], j["summary"]["heaps"]))
    t.eq(name + ": mmapped", (1, 0x2000), (j["summary"]["mmapped_chunks"], j["summary"]["mmapped_mem"]))
    t.eq(name + ": problems", [], j["problems"])
    t.eq(name + ": process", {"pid": 1000, "command": "synth --heap 2 arena", "signal": 6, "live": False},
         j["process"])


def main(t):
    for v in synth_core.LAYOUTS:
        core, e = synth_core.build(v)
        check_full(t, v, walk(t, v, core), e)
        core, e = synth_core.build(v, "xnum")
        check_full(t, v + " PN_XNUM", walk(t, v + "-xnum", core), e)
        core, e = synth_core.build(v, "no-banner")
        check_full(t, v + " no banner", walk(t, v + "-nobanner", core), e)

        # corruption: reported with its address, the rest still walked
        a = synth_core.build(v)[1]["addresses"]
        arena, ta = synth_core.MAIN_ARENA, synth_core.THEAP1 + synth_core.LAYOUTS[v][2]
        full = e["chunks"]
        for variant, problems, chunks in (
                ("fastbin-loop", ["arena %#x fastbin 0: bad entry %#x (loop)" % (arena, a["F1"])], full),
                ("tcache-loop", ["tcache %#x bin 1: bad entry %#x (loop)" % (a["tcs"], a["T1"] + 16)], full),
                ("arena-loop", ["arena ring loops at %#x without coming back to main_arena" % ta], full),
                ("mutex-held", ["arena %#x: its mutex is held (1): a thread was in malloc or free when the "
                                "memory was copied, its lists may be half updated" % arena], full),
                ("bad-size", ["bad size 0x3 of chunk %#x (heap %#x): rest of heap skipped"
                              % (a["C"], synth_core.HEAP),
                              "arena %#x fastbin 0: bad entry %#x (not a chunk)" % (arena, a["F2"]),
                              "arena %#x bin 1: bad entry %#x (not a chunk)" % (arena, a["U"]),
                              "arena %#x bin 17: bad entry %#x (not a chunk)" % (arena, a["SB"]),
                              "arena %#x bin 65: bad entry %#x (not a chunk)" % (arena, a["LB"])],
                 [c for c in full if c[3] != 0 or c[0] < a["C"]]),
                ("heap-loop", ["arena %#x: heap_info %#x met twice (prev loops)" % (ta, synth_core.THEAP2),
                               "arena %#x fastbin 1: bad entry %#x (not a chunk)" % (ta, a["FT"])],
                 [c for c in full if not synth_core.THEAP1 <= c[0] < synth_core.THEAP2])):
            core, _ = synth_core.build(v, variant)
            j = walk(t, v + "-" + variant, core)
            t.eq("%s %s: problems" % (v, variant), problems, j["problems"])
            got = chunk_list(j)
            if variant in ("bad-size", "heap-loop"):  # leak states change with what is left
                got = [c[:4] for c in got]
                chunks = [c[:4] for c in chunks]
            t.eq("%s %s: chunks" % (v, variant), chunks, got)
            if variant in ("fastbin-loop", "tcache-loop", "arena-loop", "mutex-held"):
                t.eq("%s %s: mallinfo2" % (v, variant), e["mallinfo2"], j["mallinfo2"])

        # nothing found at all (qsort(NULL, 0) was undefined behaviour here)
        core, _ = synth_core.build(v, "no-chunks")
        j = walk(t, v + "-no-chunks", core)
        t.eq(v + " no chunks: chunks", [], j["chunks"])
        t.eq(v + " no chunks: problems", [
            "bad size 0x3 of chunk %#x (heap %#x): rest of heap skipped" % (synth_core.HEAP, synth_core.HEAP),
            "arena %#x fastbin 0: bad entry %#x (not a chunk)" % (arena, a["F1"]),
            "arena %#x bin 1: bad entry %#x (not a chunk)" % (arena, a["U"]),
            "arena %#x bin 17: bad entry %#x (not a chunk)" % (arena, a["SB"]),
            "arena %#x bin 65: bad entry %#x (not a chunk)" % (arena, a["LB"])], j["problems"])

        # refused, exit 1, with the reason
        for variant, message in (
                ("glibc-2.42", "unknown glibc layout: the core's libc is glibc 2.42 (from its memory), "
                               "heapscope core reads the malloc layouts of glibc 2.30 to 2.41 on x86-64"),
                ("glibc-2.28", "the core's libc is glibc 2.28"),
                ("unused-arena", "no glibc malloc heap found in this core: main_arena (%#x, found by its "
                                 "structure) is not initialised: the program had not called malloc" % arena),
                ("libc-not-dumped", "no glibc malloc heap found in this core: libc's writable data is not "
                                    "in the core"),
                ("no-libc", "no glibc malloc heap found in this core: no libc.so.6 is mapped")):
            core, _ = synth_core.build(v, variant)
            rc, out, err = run(t, v + "-" + variant, core)
            t.eq("%s %s: exit status" % (v, variant), 1, rc)
            t.true("%s %s: message" % (v, variant), message in err, "wanted %r in %r" % (message, err))
            t.eq("%s %s: no report" % (v, variant), "", out)

    # structure-aware corruption: chunk addresses, user pointers, mangled
    # pointers, sizes written over dumped words; never a signal or a
    # sanitizer report (this test also runs under ASan/UBSan).  Most go
    # through the fuzz entry point in one process (fz_core_replay), a few
    # through the command.
    d = os.path.join(t.dir, "mutants")
    os.mkdir(d)
    for name, core in synth_core.mutants(MUTANTS, 6):
        with open(os.path.join(d, name), "wb") as f:
            f.write(core)
    r = subprocess.run([t.prog("fz_core_replay"), d], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=300)
    log = r.stdout.decode(errors="replace")
    t.eq("%d mutants replayed: exit status" % MUTANTS, 0, r.returncode)
    t.true("%d mutants replayed: all, no sanitizer report" % MUTANTS,
           "%d inputs replayed" % MUTANTS in log and "runtime error" not in log and "Sanitizer" not in log,
           log[-2000:])
    bad = []
    for name, core in synth_core.mutants(CLI_MUTANTS, 7):
        rc, out, err = run(t, "mutant", core, ["--json", "--summary", "--fragmentation", "--leaks", "--chunks"])
        if rc not in (0, 1) or "runtime error" in err or "Sanitizer" in err or (rc == 0 and not json.loads(out)):
            bad.append((name, rc, err[-300:]))
    t.eq("%d mutants through heapscope core: exit 0 or 1, no sanitizer report" % CLI_MUTANTS, [], bad)

    # the text report of one of them, as a reader sees it
    core, e = synth_core.build("2.36")
    rc, out, err = run(t, "text", core, ["--summary", "--leaks"])
    t.eq("text: exit status", 0, rc)
    lines = out.splitlines()
    mi = " ".join("%s %d" % (k, e["mallinfo2"][k]) for k in MI)
    for want in ("core of process 1000 'synth --heap 2 arena', signal SIGABRT",
                 "glibc 2.36 (version string in the process's memory)",
                 "glibc malloc: main_arena %#x (found by structure), mp_ %#x" % (synth_core.MAIN_ARENA,
                                                                               synth_core.MP),
                 "  tcache yes, safe-linking yes, heap_info 48 bytes, mp_ with hugepage fields (2.35+)",
                 "arenas: 2   heaps: 3   threads: 2",
                 "mallinfo2: " + mi,
                 "leak candidates: definitely lost 3 chunks 224 bytes, indirectly lost 2 chunks 112 bytes, "
                 "reachable 11 chunks"):
        t.true("text: line %r" % want, want in lines, out)


hstest.main(main)
