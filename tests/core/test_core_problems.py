"""test_core_problems.py - the thesis's three problem programs (leak, pinned
peak memory, fragmentation), core_problems.c, read live with --pid: the
program prints its blocks and mallinfo2; the test checks heapscope core's
mallinfo2 field by field and each mode's exact figures."""
import json
import subprocess

import hstest

MI_FIELDS = ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
             "fsmblks", "uordblks", "fordblks", "keepcost")


def run_mode(t, mode):
    p = subprocess.Popen([t.prog("core_problems"), mode], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE)
    try:
        blocks, mi = [], {}
        for line in p.stdout:
            w = line.decode().split()
            if w[0] == "block":
                blocks.append((int(w[1], 16), w[2]))
            elif w[0] == "mallinfo2":
                mi = {k: int(v) for k, v in (x.split("=") for x in w[1:])}
            elif w[0] == "READY":
                break
        r = subprocess.run([t.heapscope, "core", "--json", "--leaks", "--chunks",
                            "--fragmentation", "--pid", str(p.pid)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    finally:
        p.stdin.close()
        p.wait(timeout=60)
    if r.returncode:
        raise hstest.HsError("%s: exit %d: %s" % (mode, r.returncode, r.stderr.decode()))
    j = json.loads(r.stdout)
    for k in MI_FIELDS:
        t.eq("%s: mallinfo2.%s" % (mode, k), mi[k], j["mallinfo2"][k])
    t.eq(mode + ": no problems", [], j["problems"])
    return blocks, j


def main(t):
    blocks, j = run_mode(t, "leak")
    leaks = {x["address"]: x["kind"] for x in j["leaks"]}
    for addr, kind in blocks:
        t.eq("leak: %#x" % addr, None if kind == "reachable" else kind, leaks.get(addr))
    t.eq("leak: definite", 21, j["leak_summary"]["definite_chunks"])
    t.eq("leak: indirect", 99, j["leak_summary"]["indirect_chunks"])

    blocks, j = run_mode(t, "pinned")
    pin = [a for a, k in blocks if k == "pin"][0]
    main_heap = [p for p in j["fragmentation"]["pinned"] if p["arena"] == 0][0]
    t.eq("pinned: pinning chunk", pin - 16, main_heap["pinned_by"]["address"])
    t.eq("pinned: pinned bytes", 999 * 1008, main_heap["pinned_bytes"])
    fb = j["fragmentation"]["free_bytes"]
    t.eq("pinned: tcache bytes", 7 * 1008, fb["tcache"])
    t.eq("pinned: the 992 others coalesced in unsorted", 992 * 1008, fb["unsorted"])
    t.eq("pinned: largest free", 992 * 1008, j["fragmentation"]["largest_free"])

    blocks, j = run_mode(t, "frag")
    fr = j["fragmentation"]
    t.eq("frag: unsorted bytes", 993 * 1008, fr["free_bytes"]["unsorted"])
    t.eq("frag: tcache bytes", 7 * 1008, fr["free_bytes"]["tcache"])
    hist = {h["min"]: h["chunks"] for h in fr["histogram"]}
    t.eq("frag: 1000 holes in [512, 1024)", 1000, hist.get(512))
    t.true("frag: fragmentation above 0.8", fr["fragmentation"] > 0.8, str(fr["fragmentation"]))
    t.eq("frag: largest free is the top", j["arenas"][0]["top_size"], fr["largest_free"])
    chunks = {c["address"]: c["class"] for c in j["chunks"]}
    for addr, kind in blocks:
        t.eq("frag: class of %#x" % addr, kind, chunks.get(addr - 16))


hstest.main(main)
