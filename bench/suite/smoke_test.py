#!/usr/bin/env python3
"""smoke_test.py - CTest smoke tests of the bench suite (label `bench`).

  smoke_test.py workload BUILD NAME   run build/bench/wl-NAME at 1 and 2
      threads, scale 1, and check the exit status and the exact result line,
      whose ops must equal the allocation count README.md documents for
      NAME (the formulas are restated here, independently of the C code);
      also check that bad arguments give exit status 2 and a usage line;
      for hash-table, that its exact peak under heapscope at 16 threads
      holds every worker's table at once (ws_hold).
  smoke_test.py runner BUILD          run bench/run in its quickest mode and
      check the CSV's columns and rows, and the targets summary under its
      table against the CSV; then with jemalloc, its profilers and
      heapscope on it: each slowdown against its own allocator, and the
      RSS cap of a peer.
  smoke_test.py targets               bench/targets.py on a CSV whose
      verdicts are known (limits met exactly, a timed-out cell, the
      single-thread cells heaptrack is not compared on), and on bad input.
  smoke_test.py overhead BUILD        run bench/overhead --against BUILD (the
      build against itself) once and check its CSV's modes and the table of
      changes; a missing --against build must be a clear error.
  smoke_test.py floor BUILD           run workloads and hs_realloc under the
      floor libraries (bench/floor/floor.c) and check the allocations,
      frees, sites and heap balance they report; run bench/floor/run and
      check its CSV and tables.
  smoke_test.py replace BUILD         run bench/replace's programs (every
      padding) and check their result lines, usage errors, the exact
      allocations, frees and bytes heapscope records of one, and
      bench/replace/run's table and CSV.
  smoke_test.py sampled BUILD         run bench/sampled/run twice and check
      heapscope's leaks of a program with known leaks, exact in both runs,
      and that jemalloc's sampled dumps were read.
  smoke_test.py ablate BUILD          bench/ablate/run with one piece and one
      repetition: its patch still applies to the committed collector, the
      builds with and without the piece work, and the table has its row;
      an unknown piece is refused.
Each script's output must carry the line that names this
machine (bench/machine.py).
No timing is asserted: this machine is small and shared."""
import csv, html, json, math, os, re, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# Allocations per run as a function of threads P and scale S (README.md).
EXPECTED_OPS = {
    "threadtest": lambda p, s: p * 200 * s * (30000 // p),
    "linux-scalability": lambda p, s: p * 10 * (300000 * s // p),
    "shbench": lambda p, s: p * (4000000 * s // p),
    "binary-trees": lambda p, s: 32 * s * 65535,
    "hash-table": lambda p, s: 2 * p * (1000000 * s // p),
    "json": lambda p, s: p + 20 * s * (22 * 10000 + 1),
    "queue": lambda p, s: p * (1500000 * s // p),
    "list": lambda p, s: p * 1000000 * s,
    "larson": lambda p, s: p * 1000 + p * 10 * (500000 * s // p),
    "deep": lambda p, s: p * 64 * ((8000000 * s // p) // 64),
    "churn": lambda p, s: p * (320 * s // p) * 200,
}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check_rejected(cmd, word):
    """cmd, given a bad argument `word`, must exit non-zero naming it."""
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    if r.returncode == 0 or word not in r.stderr:
        fail(f"{' '.join(cmd)}: exit {r.returncode}, {r.stderr!r}")


def check_usage(prog, bad_args):
    """prog, given each of bad_args, must print a usage line on stderr,
    nothing on stdout, and exit with status 2."""
    for bad in bad_args:
        r = subprocess.run([prog] + bad, capture_output=True, text=True, timeout=10)
        if r.returncode != 2 or "usage:" not in r.stderr or r.stdout:
            fail(f"{os.path.basename(prog)} {' '.join(bad)}: exit {r.returncode}, "
                 f"stderr {r.stderr!r}, stdout {r.stdout!r}")


def check_workload(build, name):
    prog = os.path.join(build, "bench", "wl-" + name)
    for p in (1, 2):
        r = subprocess.run([prog, "-t", str(p), "-s", "1"], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            fail(f"wl-{name} -t {p} exited {r.returncode}: {r.stderr}")
        m = re.fullmatch(rf"wl-{re.escape(name)} threads=(\d+) ops=(\d+) checksum=(\d+)\n", r.stdout)
        if not m:
            fail(f"wl-{name} -t {p} printed {r.stdout!r}")
        want = EXPECTED_OPS[name](p, 1)
        if int(m.group(1)) != p or int(m.group(2)) != want:
            fail(f"wl-{name} -t {p}: threads={m.group(1)} ops={m.group(2)}, want threads={p} ops={want}")
        print(r.stdout.strip())
    check_usage(prog, (["-t", "0"], ["-s", "x"], ["-q"], ["-t"]))
    if name == "hash-table":
        check_hash_table_peak(build, prog, 16)


def ws_rand_stream(tid):
    """wl_suite.h's xorshift64* of worker tid: its outputs, in order."""
    mask = (1 << 64) - 1
    s = (0x9E3779B97F4A7C15 * (tid + 1) & mask) | 1
    while True:
        s ^= s >> 12
        s ^= (s << 25) & mask
        s ^= s >> 27
        yield s * 0x2545F4914F6CDD1D & mask


def hash_table_live(p):
    """wl-hash-table -t p (scale 1), replayed: the bytes every worker holds
    at ws_hold (its bucket array and its table's entries and arrays), summed
    over the workers, and the sum of each worker's most ever (an upper bound
    of the program's peak before any worker frees its table)."""
    held = most = 0
    for tid in range(p):
        nb = max(1024, 65536 // p)
        table, live = {}, nb * 8
        top = live
        rng = ws_rand_stream(tid)
        for _ in range(1000000 // p):
            r = next(rng)
            b, size = r % nb, 24 + 8 + (r >> 20) % 505  # the entry (24 bytes) and its array
            live += size
            top = max(top, live)
            live -= table.get(b, 0)
            table[b] = size
        held += live
        most += top
    return held, most


def check_hash_table_peak(build, prog, p):
    """Under heapscope, wl-hash-table -t p's exact peak heap is at least what
    its workers hold at once at ws_hold (so the workload's peak does not
    depend on scheduling, and heapscope's peak is exact with p threads on
    this machine's two CPUs), within the error the profile states."""
    held, most = hash_table_live(p)
    with tempfile.TemporaryDirectory() as d:
        hsp = os.path.join(d, "h.hsp")
        env = dict(os.environ, LD_PRELOAD=os.path.join(build, "lib", "libheapscope.so"),
                   HEAPSCOPE_OUTPUT=hsp, HEAPSCOPE_QUIET="1")
        r = subprocess.run([prog, "-t", str(p)], env=env, capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            fail(f"wl-hash-table -t {p} under heapscope: exit {r.returncode}, {r.stderr!r}")
        rep = subprocess.run([os.path.join(build, "bin", "heapscope"), "report", "--json", hsp],
                             capture_output=True, text=True, timeout=60)
        summary = json.loads(rep.stdout)["summary"] if rep.returncode == 0 else {}
    peak, err = summary.get("peak_bytes", 0), summary.get("peak_error", 0)
    # besides the workers' data: the slots of ws_run (p x 128 bytes) and
    # what libc allocates for threads and stdio, a few KiB
    if not held - err <= peak <= most + p * 128 + 65536 + err or err > p * 32768:
        fail(f"wl-hash-table -t {p}: peak {peak} (error {err}), workers hold {held} at once, "
             f"at most {most}")
    print(f"wl-hash-table -t {p}: peak {peak} (error {err}), workers hold {held} at once, at most {most}")


def check_machine(script, out):
    """A benchmark script's output says which machine it ran on
    (bench/machine.py): this one's CPU count, kernel and C library, and the
    tree's commit where git can tell it (not in an unpacked tarball, nor
    in a checkout git refuses as another user's)."""
    m = re.search(r"^machine: (.+)$", out, re.M)
    want = [f", {os.cpu_count()} CPUs", f", Linux {os.uname().release}",
            f", {os.confstr('CS_GNU_LIBC_VERSION')}"]
    head = subprocess.run(["git", "-C", os.path.join(HERE, "..", ".."), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True)
    tree = re.compile(rf"; tree {re.escape(head.stdout.strip())}(\+changes)?$" if head.returncode == 0
                      else r"^[^;]*$")
    if not m or not all(w in m.group(1) for w in want) or not tree.search(m.group(1)):
        fail(f"{script}: no machine line with {want} and {tree.pattern!r} in {out!r}")
    return m.group(0)


def check_runner(build):
    run = os.path.join(HERE, "..", "run")
    with tempfile.TemporaryDirectory() as d:
        out_csv, out_svg = os.path.join(d, "r.csv"), os.path.join(d, "r.svg")
        r = subprocess.run([run, "--build-dir", build, "--workloads", "list", "--threads", "1",
                            "--repeat", "1", "--modes", "base,fp", "--quiet", "--csv", out_csv,
                            "--svg", out_svg], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            fail(f"bench/run exited {r.returncode}: {r.stdout}{r.stderr}")
        with open(out_csv) as f:
            rows = list(csv.reader(f))
        want = ["workload", "threads", "mode", "runs", "timeouts", "median_s", "min_s", "max_s",
                "slowdown", "cpu_s", "cpu_ratio", "peak_rss_kib", "rss_min_kib", "rss_max_kib",
                "rss_ratio", "profile_bytes", "ops", "speedup_vs_heaptrack", "speedup_vs_massif",
                "slowdown_own", "speedup_vs_jeprof_all", "speedup_vs_gperf_heap"]
        if rows[0] != want:
            fail(f"CSV header {rows[0]}, want {want}")
        recs = [dict(zip(want, row)) for row in rows[1:]]
        if [(x["workload"], x["threads"], x["mode"]) for x in recs] != [("list", "1", "base"), ("list", "1", "fp")]:
            fail(f"CSV rows {rows[1:]}")
        for x in recs:
            if x["runs"] != "1" or x["timeouts"] != "0" or x["ops"] != "1000000" or float(x["median_s"]) <= 0 \
                    or int(x["peak_rss_kib"]) <= 0 \
                    or not int(x["rss_min_kib"]) == int(x["peak_rss_kib"]) == int(x["rss_max_kib"]) \
                    or float(x["cpu_s"]) <= 0:
                fail(f"CSV row {x}")
        if recs[0]["slowdown"] != "1.0000" or recs[0]["profile_bytes"] != "" or int(recs[1]["profile_bytes"]) <= 0:
            fail(f"CSV base/fp columns {recs}")
        with open(out_svg) as f:
            svg = f.read()
        if not svg.startswith("<svg") or "list 1T fp" not in svg:
            fail("SVG lacks the fp bar of list at 1 thread")
        if "list" not in r.stdout or "slowdown" not in r.stdout:
            fail(f"table missing: {r.stdout}")
        host = check_machine("bench/run", r.stdout)
        if html.escape(host) not in svg:
            fail(f"SVG lacks the machine line {host!r}")
        # the summary's line of the one fp cell agrees with the CSV's
        # slowdown (which the CSV rounds to 4 decimals: a value within
        # 0.001 of the limit may count either way)
        fp = float(recs[1]["slowdown"])
        m = re.search(r"^  fp    slowdown <= 1\.25x: ([01]) of 1 cells without binary-trees; "
                      r"median (\d+\.\d\d)x$", r.stdout, re.M)
        if not m or abs(float(m.group(2)) - fp) > 0.0051 or \
                (abs(fp - 1.25) > 0.001 and int(m.group(1)) != int(fp <= 1.25)):
            fail(f"targets summary: no fp slowdown line agreeing with {fp} in {r.stdout}")
        # bad input: clear error and non-zero exit
        check_rejected([run, "--build-dir", build, "--workloads", "nosuch"], "nosuch")
        check_alloc_modes(build, run, d)


def check_alloc_modes(build, run, d):
    """The allocators' profilers: jemalloc's as users run it writes its
    dump, heapscope on jemalloc writes its profile, each slowdown_own is
    over the same allocator unprofiled, and a peer over --peer-rss-cap is
    killed and reported as such (jeprof-all gives each of list's 1,000,000
    live nodes a 4 KiB page)."""
    out_csv = os.path.join(d, "a.csv")
    r = subprocess.run([run, "--build-dir", build, "--workloads", "list", "--threads", "1",
                        "--repeat", "1", "--modes", "base,fp,jemalloc,jeprof,jeprof-all,hs-jemalloc",
                        "--peer-rss-cap", "200", "--quiet", "--csv", out_csv],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        fail(f"bench/run with allocator modes exited {r.returncode}: {r.stdout}{r.stderr}")
    with open(out_csv) as f:
        recs = {x["mode"]: x for x in csv.DictReader(f)}
    if sorted(recs) != ["base", "fp", "hs-jemalloc", "jemalloc", "jeprof", "jeprof-all"]:
        fail(f"allocator modes' CSV rows: {sorted(recs)}")
    je, fp = recs["jemalloc"], recs["fp"]
    jm = float(je["median_s"])
    for m in ("jeprof", "hs-jemalloc"):
        prof = recs[m]
        # the CSV rounds medians to 4 decimals (0.00005 s each way), so the
        # ratio of the rounded ones is off by up to that much relatively
        pm = float(prof["median_s"])
        own, slack = pm / jm, pm / jm * (0.0001 / pm + 0.0001 / jm) + 0.0001
        if abs(float(prof["slowdown_own"]) - own) > slack or int(prof["profile_bytes"]) <= 0 \
                or prof["ops"] != "1000000":
            fail(f"allocator modes' CSV: jemalloc {je}, {m} {prof}")
    if je["slowdown_own"] != "1.0000" or fp["slowdown_own"] != fp["slowdown"] \
            or je["profile_bytes"] != "0":
        fail(f"allocator modes' CSV: jemalloc {je}, fp {fp}")
    capped, hsje = recs["jeprof-all"], recs["hs-jemalloc"]
    if capped["timeouts"] != "1" or capped["median_s"] != "" or fp["speedup_vs_jeprof_all"] != "timeout" \
            or hsje["speedup_vs_jeprof_all"] != "timeout":
        fail(f"jeprof-all over the RSS cap: {capped}, fp {fp}, hs-jemalloc {hsje}")
    if not re.search(r"^list +1 +jeprof-all +RSS cap ", r.stdout, re.M) or "own alloc" not in r.stdout:
        fail(f"table lacks the RSS cap or the own-allocator column: {r.stdout}")


TARGETS_CSV = """workload,threads,mode,runs,timeouts,median_s,min_s,max_s,slowdown,cpu_s,cpu_ratio,peak_rss_kib,rss_min_kib,rss_max_kib,rss_ratio,profile_bytes,ops,speedup_vs_heaptrack,speedup_vs_massif
threadtest,1,base,3,0,0.1000,0.1,0.1,1.0000,0.1,1.0,2000,2000,2000,1.0000,,600,,
threadtest,1,fp,3,0,0.1250,0.1,0.1,1.2500,0.1,1.2,2500,2500,2500,1.2500,1000,600,8.0000,
threadtest,2,fp,3,0,0.1350,0.1,0.1,1.3500,0.1,1.3,2600,2600,2600,1.3000,2048,600,10.0000,
binary-trees,2,fp,3,0,0.3000,0.3,0.3,3.0000,0.3,3.0,5000,5000,5000,2.5000,3145728,600,40.0000,
larson,4,fp,3,3,,,,,,,,,,,,,timeout,
threadtest,2,dwarf,3,0,0.1500,0.1,0.1,1.5000,0.1,1.5,2000,2000,2000,1.0000,1500,600,9.5000,
"""

TARGETS_WANT = """issue 5's targets, cells of this run:
  fp    slowdown <= 1.25x: 1 of 3 cells without binary-trees; median 1.30x; 1 not measured
  fp    binary-trees <= 3x: 1 of 1 cells (3.00x)
  fp    heaptrack >= 10x slower: 2 of 3 cells of 2+ threads; median 25.0x, lowest 10.0x; 1 not measured
  fp    peak RSS <= 1.25x: 1 of 4 cells (1.25x-2.50x); 1 not measured
  fp    profile sizes: 1000 B-2.0 KiB; binary-trees 3.0 MiB
  dwarf slowdown <= 1.5x: 1 of 1 cells without binary-trees; median 1.50x
  dwarf heaptrack >= 10x slower: 0 of 1 cells of 2+ threads; median 9.5x, lowest 9.5x
  dwarf peak RSS <= 1.25x: 1 of 1 cells (1.00x)
  dwarf profile sizes: 1.5 KiB
"""


def check_targets():
    tool = os.path.join(HERE, "..", "targets.py")
    with tempfile.TemporaryDirectory() as d:
        good = os.path.join(d, "suite.csv")
        with open(good, "w") as f:
            f.write(TARGETS_CSV)
        r = subprocess.run([tool, good], capture_output=True, text=True, timeout=60)
        if r.returncode != 0 or r.stdout != TARGETS_WANT:
            fail(f"bench/targets.py exited {r.returncode}:\n{r.stdout}{r.stderr}\nwant:\n{TARGETS_WANT}")
        bad = {"notcsv.csv": "root:x:0:0\nuser:x:1:1\n", "nomodes.csv": TARGETS_CSV.splitlines()[0] + "\n",
               "badnum.csv": TARGETS_CSV.replace("1.3500", "fast")}
        words = {"notcsv.csv": "not a row of bench/run's CSV", "nomodes.csv": "no fp or dwarf rows",
                 "badnum.csv": "slowdown is 'fast', not a number"}
        for name, text in bad.items():
            path = os.path.join(d, name)
            with open(path, "w") as f:
                f.write(text)
            r = subprocess.run([tool, path], capture_output=True, text=True, timeout=60)
            if r.returncode != 1 or words[name] not in r.stderr or r.stdout:
                fail(f"bench/targets.py {name}: exit {r.returncode}, stderr {r.stderr!r}")
        r = subprocess.run([tool, os.path.join(d, "missing.csv")], capture_output=True, text=True, timeout=60)
        if r.returncode != 1 or "missing.csv" not in r.stderr:
            fail(f"bench/targets.py on a missing file: exit {r.returncode}, {r.stderr!r}")


def check_overhead(build):
    overhead = os.path.join(HERE, "..", "overhead")
    prog = [os.path.join(build, "bench", "wl-list"), "-t", "1", "-s", "1"]
    with tempfile.TemporaryDirectory() as d:
        out_csv = os.path.join(d, "o.csv")
        r = subprocess.run([overhead, "--build", build, "--against", build, "--repeat", "1",
                            "--modes", "base,fp", "--csv", out_csv, "--"] + prog,
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            fail(f"bench/overhead --against exited {r.returncode}: {r.stdout}{r.stderr}")
        with open(out_csv) as f:
            recs = list(csv.DictReader(f))
        if [x["mode"] for x in recs] != ["base", "fp", "OLD:fp"]:
            fail(f"bench/overhead CSV modes {[x['mode'] for x in recs]}")
        if any(float(x["cpu_s"]) <= 0 or float(x["wall_s"]) <= 0 for x in recs) or \
                float(recs[1]["profile_kb"]) <= 0 or float(recs[2]["profile_kb"]) <= 0:
            fail(f"bench/overhead CSV rows {recs}")
        check_machine("bench/overhead", r.stdout)
        table = r.stdout[r.stdout.find("this build"):]
        if not re.search(r"^fp +[+-]\d+\.\d% +[+-]\d+\.\d% +[+-]\d+\.\d% +[+-]\d+\.\d%$", table,
                         re.M):
            fail(f"bench/overhead: no change table for fp: {r.stdout}")
        check_rejected([overhead, "--build", build, "--against", os.path.join(d, "nosuch"),
                        "--repeat", "1", "--modes", "base,fp", "--"] + prog, "nosuch")
        check_rejected([overhead, "--build", build, "--alloc", "nosuchalloc", "--repeat", "1",
                        "--modes", "base", "--"] + prog, "nosuchalloc")


def floor_report(build, level, prog, threads=None):
    """What libfloor-LEVEL.so reports at the exit of prog (a workload NAME,
    run at `threads` and scale 1, or a path): a dict of its numbers, and
    the workload's ops (None for a path)."""
    env = dict(os.environ, FLOOR_REPORT="1",
               LD_PRELOAD=os.path.join(build, "bench", "floor", f"libfloor-{level}.so"))
    cmd = [prog] if threads is None else \
        [os.path.join(build, "bench", "wl-" + prog), "-t", str(threads), "-s", "1"]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    m = re.search(r"^libfloor: level=\d (allocs=\d+ frees=\d+ sites=\d+ publishes=\d+ "
                  r"balance=-?\d+)$", r.stderr, re.M)
    if r.returncode != 0 or not m:
        fail(f"{' '.join(cmd)} under libfloor-{level}.so: exit {r.returncode}, stderr {r.stderr!r}")
    print(f"libfloor-{level} {os.path.basename(cmd[0])}: {m.group(1)}")
    got = {k: int(v) for k, v in (x.split("=") for x in m.group(1).split())}
    ops = None
    if threads is not None:
        ops = EXPECTED_OPS[prog](threads, 1)
        if f"ops={ops} " not in r.stdout:
            fail(f"wl-{prog} -t {threads} under libfloor-{level}.so printed {r.stdout!r}, want ops={ops}")
    return got, ops


def check_floor(build):
    # level 0 passes everything through (the workload's own line is checked)
    floor_report(build, "pass", "threadtest", 2)
    # every level that keeps live blocks sees every allocation and free:
    # the balance of usable bytes, published every 64 KiB, ends at what is
    # live at exit (a few KiB of stdio), not at millions of blocks' bytes;
    # the counting levels count each event once (the workload's, and the few
    # of its start-up), larson's frees mostly on threads that allocated
    # nothing before; level 2 has one site, level 3 one per hashed stack
    # (binary-trees: 65,535 stacks hashed into 1,024 sites, nearly all used)
    for level in ("live", "count", "stack"):
        for name in ("threadtest", "larson", "binary-trees"):
            got, ops = floor_report(build, level, name, 2)
            if got["publishes"] < 10 or abs(got["balance"]) > 256 << 10:
                fail(f"libfloor-{level}.so on wl-{name}: balance {got}")
            if level == "live":
                continue
            sites = (1, 1) if level == "count" else (1000, 1024) if name == "binary-trees" else (2, 8)
            if not (ops <= got["allocs"] <= ops + 64 and ops <= got["frees"] <= got["allocs"] and
                    sites[0] <= got["sites"] <= sites[1]):
                fail(f"libfloor-{level}.so on wl-{name}: {got}, ops {ops}, sites wanted in {sites}")
    # realloc's edge cases (tests/progs/hs_realloc.c: 24 allocations, 24
    # frees, a failed realloc that leaves its block live, realloc(p, 0))
    got, _ = floor_report(build, "count", os.path.join(build, "tests", "progs", "hs_realloc"))
    if (got["allocs"], got["frees"], got["balance"]) != (24, 24, 0):
        fail(f"libfloor-count.so on hs_realloc: {got}, want 24 allocs, 24 frees, balance 0")
    run = os.path.join(HERE, "..", "floor", "run")
    with tempfile.TemporaryDirectory() as d:
        out_csv = os.path.join(d, "f.csv")
        r = subprocess.run([run, "--build-dir", build, "--workloads", "threadtest", "--threads", "1",
                            "--modes", "base,pass,stack,fp", "--repeat", "2", "--scale", "1",
                            "--csv", out_csv], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            fail(f"bench/floor/run exited {r.returncode}: {r.stdout}{r.stderr}")
        with open(out_csv) as f:
            recs = list(csv.DictReader(f))
        ratios = [recs[0].get(f"{m}_{k}_ratio", "") for m in ("pass", "stack", "fp")
                  for k in ("cpu", "wall", "rss")] if len(recs) == 1 else []
        if len(recs) != 1 or recs[0]["workload"] != "threadtest" or recs[0]["threads"] != "1" or \
                len(ratios) != 9 or not all(math.isfinite(float(x)) and float(x) > 0 for x in ratios) \
                or "stack_share_of_fp" not in recs[0]:
            fail(f"bench/floor/run CSV {recs}")
        if not re.search(r"^threadtest +1 +\d+\.\d+ +(\d+\.\d\dx +){3}", r.stdout, re.M):
            fail(f"bench/floor/run table: {r.stdout}")
        check_machine("bench/floor/run", r.stdout)
        check_rejected([run, "--build-dir", build, "--workloads", "nosuch"], "nosuch")


def check_replace(build):
    n, rounds = 3000, 2
    ops = 1 + n + rounds * n  # the slot array, the blocks, the replacements
    progs = {pad: os.path.join(build, "bench", "replace", f"replace-pad{pad}")
             for pad in (0, 48, 100, 148, 200)}
    for pad, prog in progs.items():
        r = subprocess.run([prog, "-n", str(n), "-r", str(rounds)], capture_output=True, text=True,
                           timeout=60)
        want = rf"replace pad={pad} blocks={n} rounds={rounds} ops={ops} ns_per_replace=\d+\.\d\n"
        if r.returncode != 0 or not re.fullmatch(want, r.stdout):
            fail(f"replace-pad{pad}: exit {r.returncode}, printed {r.stdout!r}")
    check_usage(progs[0], (["-n", "0"], ["-r", "x"], ["-q"], ["-n"]))
    # heapscope records every allocation and free of it, and their bytes:
    # blocks of 16 + (i % 7) * 16 bytes, the same sizes in every round,
    # plus stdout's buffer (allocated by printf, never freed)
    sizes = sum(16 + (i % 7) * 16 for i in range(n))
    with tempfile.TemporaryDirectory() as d:
        hsp = os.path.join(d, "r.hsp")
        env = dict(os.environ, LD_PRELOAD=os.path.join(build, "lib", "libheapscope.so"),
                   HEAPSCOPE_OUTPUT=hsp, HEAPSCOPE_QUIET="1")
        r = subprocess.run([progs[0], "-n", str(n), "-r", str(rounds)], env=env, capture_output=True,
                           text=True, timeout=60)
        if r.returncode != 0:
            fail(f"replace under heapscope: exit {r.returncode}, {r.stderr!r}")
        rep = subprocess.run([os.path.join(build, "bin", "heapscope"), "report", "--json", hsp],
                             capture_output=True, text=True, timeout=60)
        summary = json.loads(rep.stdout)["summary"] if rep.returncode == 0 else {}
        got = {k: summary.get(k) for k in ("allocations", "frees", "bytes_allocated", "bytes_freed",
                                          "unknown_frees", "lost_allocations")}
        stdio = summary.get("leaked_bytes", 0)
        want = {"allocations": ops + 1, "frees": ops, "bytes_allocated": 8 * n + (rounds + 1) * sizes + stdio,
                "bytes_freed": 8 * n + (rounds + 1) * sizes, "unknown_frees": 0, "lost_allocations": 0}
        if got != want or not 1024 <= stdio <= 65536:
            fail(f"replace under heapscope: {got}, leaked {stdio}, want {want}")
        out_csv = os.path.join(d, "r.csv")
        run = os.path.join(HERE, "..", "replace", "run")
        r = subprocess.run([run, "--build-dir", build, "--modes", "base,pad48,stack,fp", "--repeat", "2",
                            "--blocks", "2000", "--rounds", "1", "--csv", out_csv],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            fail(f"bench/replace/run exited {r.returncode}: {r.stdout}{r.stderr}")
        with open(out_csv) as f:
            recs = list(csv.DictReader(f))
        if [x["mode"] for x in recs] != ["base", "pad48", "stack", "fp"] or \
                any(x["runs"] != "2" or not float(x["ns_median"]) > 0 for x in recs) or \
                recs[0]["ratio"] != "1.000":
            fail(f"bench/replace/run CSV {recs}")
        for m in ("base", "pad48", "stack", "fp"):
            if not re.search(rf"^{m} +\d+\.\d +\d+\.\d +\d+\.\d\dx$", r.stdout, re.M):
                fail(f"bench/replace/run table has no {m} row: {r.stdout}")
        check_rejected([run, "--build-dir", build, "--modes", "nosuch"], "nosuch")


def check_sampled(build):
    """bench/sampled/run: heapscope's leaks of hs-sampled-leaks are the
    true ones in every run; jemalloc's sampled dump is read (its 1 MiB
    blocks are each sampled with probability 1 - e^-2: all 8 missed in a
    run has odds of 1e-7)."""
    run = os.path.join(HERE, "..", "sampled", "run")
    with tempfile.TemporaryDirectory() as d:
        out_csv = os.path.join(d, "s.csv")
        r = subprocess.run([run, "--build-dir", build, "--runs", "2", "--csv", out_csv],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            fail(f"bench/sampled/run exited {r.returncode}: {r.stdout}{r.stderr}")
        with open(out_csv) as f:
            recs = {x["site"]: x for x in csv.DictReader(f)}
        want = {"tiny_leak": (100, 4800), "small_leak": (10000, 800000),
                "big_leak": (8, 8388608), "churn": (0, 0)}
        if sorted(recs) != sorted(want):
            fail(f"bench/sampled/run sites {sorted(recs)}")
        for site, (blocks, nbytes) in want.items():
            x = recs[site]
            if (int(x["true_blocks"]), int(x["true_bytes"])) != (blocks, nbytes) or \
                    float(x["heapscope_bytes"]) != nbytes or x["exact"] != "2" or x["runs"] != "2":
                fail(f"bench/sampled/run {site}: {x}")
        if recs["big_leak"]["jemalloc_seen"] != "2" or not float(recs["big_leak"]["jemalloc_median"]) > 0 \
                or float(recs["churn"]["jemalloc_median"]) != 0:
            fail(f"bench/sampled/run jemalloc columns: {recs}")
        if not re.search(r"^big_leak +8 +8,388,608 +8,388,608 +2/2 +2/2 ", r.stdout, re.M):
            fail(f"bench/sampled/run table: {r.stdout}")
        check_rejected([run, "--build-dir", build, "--runs", "0"], "--runs")


def check_programs(build):
    """bench/programs/run on perl (Debian's perl-base: always installed),
    one repetition: a row of ratios in its CSV; an unknown name refused."""
    run = os.path.join(HERE, "..", "programs", "run")
    with tempfile.TemporaryDirectory() as d:
        out_csv = os.path.join(d, "p.csv")
        r = subprocess.run([run, "--build", build, "--repeat", "1", "--only", "perl",
                            "--no-heaptrack", "--csv", out_csv], capture_output=True, text=True,
                           timeout=120)
        if r.returncode != 0:
            fail(f"bench/programs/run exited {r.returncode}: {r.stdout}{r.stderr}")
        with open(out_csv) as f:
            recs = list(csv.DictReader(f))
        if [x["program"] for x in recs] != ["perl"]:
            fail(f"bench/programs/run CSV rows {recs}")
        x = recs[0]
        if float(x["base_s"]) <= 0 or not all(float(x[k]) > 0.5 for k in ("fp_cpu", "dwarf_cpu", "fp_rss", "dwarf_rss")) \
                or float(x["dwarf_profile_kib"]) <= 0 or "heaptrack_cpu" in x:
            fail(f"bench/programs/run CSV row {x}")
        if not re.search(r"^perl +\d+\.\d\d +\d+\.\d +\| +\d+\.\d\dx +\d+\.\d\dx", r.stdout, re.M):
            fail(f"bench/programs/run: no table row for perl: {r.stdout}")
        check_rejected([run, "--build", build, "--repeat", "1", "--only", "nosuchprogram"], "nosuchprogram")


def check_ablate(build):
    run = os.path.join(HERE, "..", "ablate", "run")
    check_rejected([run, "--pieces", "nosuch"], "nosuch")
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "a.csv")
        r = subprocess.run([run, "--build-dir", build, "--workloads", "threadtest", "--threads", "1",
                            "--pieces", "chk", "--repeat", "1", "--csv", out],
                           capture_output=True, text=True, timeout=600)
        row = re.search(r"^threadtest\s+1\s+\d+\.\d+\s+(\d+\.\d+)x\s+(\d+\.\d+)x \(\s*-?\d+%\)$",
                        r.stdout, re.M)
        if r.returncode != 0 or not row:
            fail(f"bench/ablate/run: exit {r.returncode}, stdout {r.stdout!r}, "
                 f"stderr {r.stderr[-1500:]!r}")
        check_machine("bench/ablate/run", r.stdout)
        with open(out) as f:
            rows = list(csv.DictReader(f))
        if [(x["workload"], x["threads"]) for x in rows] != [("threadtest", "1")] or \
                abs(float(rows[0]["heapscope_ratio"]) - float(row.group(1))) > 0.006 or \
                abs(float(rows[0]["chk_ratio"]) - float(row.group(2))) > 0.006:
            fail(f"bench/ablate/run's CSV {rows} does not match its table {row.group(0)!r}")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "workload" and sys.argv[3] in EXPECTED_OPS:
        check_workload(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "runner":
        check_runner(sys.argv[2])
    elif len(sys.argv) == 2 and sys.argv[1] == "targets":
        check_targets()
    elif len(sys.argv) == 3 and sys.argv[1] == "overhead":
        check_overhead(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "floor":
        check_floor(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "replace":
        check_replace(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "sampled":
        check_sampled(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "programs":
        check_programs(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "ablate":
        check_ablate(sys.argv[2])
    else:
        fail(f"usage: {sys.argv[0]} workload BUILD NAME | runner BUILD | targets | overhead BUILD"
             " | floor BUILD | replace BUILD | sampled BUILD | programs BUILD | ablate BUILD")
    print("ok")


if __name__ == "__main__":
    main()
