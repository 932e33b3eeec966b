#!/usr/bin/env python3
"""bench/targets.py - issue 5's targets, counted over the cells of one
suite run: how many cells are within each limit, and the medians and
ranges that docs/BENCHMARKS.md quotes.  bench/run prints this under its
table; run by hand it reads a CSV that bench/run wrote:

    bench/targets.py bench/suite/results/suite-DATE-xx.csv

The targets (issue 5): slowdown at most 1.25x in `fp` mode and 1.5x in
`dwarf` mode on every workload but binary-trees, which has its own limit
of 3x; heaptrack at least 10x slower on the multithreaded cells (2
threads or more); peak RSS at most 1.25x the unprofiled run's; profiles
of at most a few MB (the constants below: if the issue's limits change,
they change here).  A limit is met by a ratio equal to it.  A cell
that timed out or has no unprofiled run to compare with is not counted
as within, and the line says how many such cells there were."""
import csv
import statistics
import sys

SLOWDOWN_LIMIT = {"fp": 1.25, "dwarf": 1.5}
TREES = "binary-trees"
TREES_LIMIT = 3.0
HEAPTRACK_FACTOR = 10.0
RSS_LIMIT = 1.25
MODES = ("fp", "dwarf")

FLOATS = ("median_s", "min_s", "max_s", "slowdown", "cpu_s", "cpu_ratio", "rss_ratio",
          "speedup_vs_heaptrack", "speedup_vs_massif")
INTS = ("threads", "runs", "timeouts", "peak_rss_kib", "rss_min_kib", "rss_max_kib",
        "profile_bytes", "ops")


def from_csv(path):
    """bench/run's rows from its CSV: numbers as numbers, empty as None,
    a peer's "timeout" kept as the string."""
    rows = []
    with open(path, newline="") as f:
        for n, r in enumerate(csv.DictReader(f), start=2):
            if any(r.get(k) in (None, "") for k in ("workload", "threads", "mode")):
                raise ValueError(f"{path}:{n}: not a row of bench/run's CSV "
                                 "(no workload, threads or mode)")
            row = dict(r)
            for k in FLOATS + INTS:
                v = row.get(k)
                if v in (None, ""):
                    row[k] = None
                elif v == "timeout":
                    row[k] = v
                else:
                    try:
                        row[k] = float(v) if k in FLOATS else int(v)
                    except ValueError:
                        raise ValueError(f"{path}:{n}: {k} is {v!r}, not a number") from None
            rows.append(row)
    return rows


def _ratio(r, key):
    v = r.get(key)
    return v if isinstance(v, float) else None


def _count(rows, key, limit, at_least=False):
    """(within, cells, unmeasured, values) for the rows' ratio `key`."""
    vals = [_ratio(r, key) for r in rows]
    got = [v for v in vals if v is not None]
    within = sum(1 for v in got if (v >= limit if at_least else v <= limit))
    return within, len(rows), len(vals) - len(got), got


def _span(vals, fmt="{:.2f}x"):
    if not vals:
        return "none measured"
    lo, hi = min(vals), max(vals)
    return fmt.format(lo) if lo == hi else fmt.format(lo) + "-" + fmt.format(hi)


def _unmeasured(n):
    return f"; {n} not measured" if n else ""


def _size(n):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def lines(rows):
    """The summary, one target per line (empty when the rows have neither
    heapscope mode)."""
    out = []
    for m in MODES:
        mine = [r for r in rows if r["mode"] == m]
        if not mine:
            continue
        lim = SLOWDOWN_LIMIT[m]
        rest = [r for r in mine if r["workload"] != TREES]
        trees = [r for r in mine if r["workload"] == TREES]
        if rest:
            ok, n, miss, vals = _count(rest, "slowdown", lim)
            med = f"; median {statistics.median(vals):.2f}x" if vals else ""
            out.append(f"{m:5s} slowdown <= {lim}x: {ok} of {n} cells without {TREES}{med}"
                       f"{_unmeasured(miss)}")
        if trees:
            ok, n, miss, vals = _count(trees, "slowdown", TREES_LIMIT)
            out.append(f"{m:5s} {TREES} <= {TREES_LIMIT:g}x: {ok} of {n} cells ({_span(vals)})"
                       f"{_unmeasured(miss)}")
        multi = [r for r in mine if r["threads"] > 1]
        if any(r.get("speedup_vs_heaptrack") is not None for r in multi):
            ok, n, miss, vals = _count(multi, "speedup_vs_heaptrack", HEAPTRACK_FACTOR, at_least=True)
            med = f"; median {statistics.median(vals):.1f}x, lowest {min(vals):.1f}x" if vals else ""
            out.append(f"{m:5s} heaptrack >= {HEAPTRACK_FACTOR:g}x slower: {ok} of {n} cells of 2+ threads"
                       f"{med}{_unmeasured(miss)}")
        ok, n, miss, vals = _count(mine, "rss_ratio", RSS_LIMIT)
        out.append(f"{m:5s} peak RSS <= {RSS_LIMIT}x: {ok} of {n} cells ({_span(vals)}){_unmeasured(miss)}")
        sizes = [r["profile_bytes"] for r in rest if isinstance(r.get("profile_bytes"), int)]
        tsizes = [r["profile_bytes"] for r in trees if isinstance(r.get("profile_bytes"), int)]
        if sizes or tsizes:
            parts = []
            if sizes:
                lo, hi = _size(min(sizes)), _size(max(sizes))
                parts.append(lo if lo == hi else f"{lo}-{hi}")
            if tsizes:
                parts.append(f"{TREES} {_size(max(tsizes))}")
            out.append(f"{m:5s} profile sizes: " + "; ".join(parts))
    return out


def print_summary(rows, out):
    got = lines(rows)
    if got:
        out.write("issue 5's targets, cells of this run:\n")
        for l in got:
            out.write("  " + l + "\n")


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(f"usage: {argv[0]} SUITE.csv\n")
        return 2
    try:
        rows = from_csv(argv[1])
    except UnicodeDecodeError:
        sys.stderr.write(f"bench/targets.py: {argv[1]}: not a text file (a CSV of bench/run)\n")
        return 1
    except csv.Error as e:
        sys.stderr.write(f"bench/targets.py: {argv[1]}: not a CSV: {e}\n")
        return 1
    except (OSError, ValueError) as e:
        sys.stderr.write(f"bench/targets.py: {e}\n")
        return 1
    if not lines(rows):
        sys.stderr.write(f"bench/targets.py: {argv[1]}: no fp or dwarf rows\n")
        return 1
    print_summary(rows, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
