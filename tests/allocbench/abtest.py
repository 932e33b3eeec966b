"""abtest.py - what the `heapscope bench` end-to-end tests share: running
`heapscope bench` with the workloads' directory, reading its CSV, and
finding the allocators on this machine independently of heapscope (from
`ldconfig -p`), so a test can say which path each run must have used."""

import csv
import os
import subprocess

import hstest

CSV_COLUMNS = [
    "workload", "allocator", "allocator_path", "allocator_version", "verified",
    "malloc_from", "repetition", "threads", "scale", "ops", "wall_s", "user_s",
    "sys_s", "peak_rss_kb", "minor_faults", "major_faults",
    "rss_after_free_kb", "brk_calls", "mmap_calls", "munmap_calls",
    "madvise_calls", "peak_live_bytes", "rss_at_peak_kb", "fragmentation",
]

SONAMES = {
    "jemalloc": ["libjemalloc.so.2"],
    "tcmalloc": ["libtcmalloc.so.4", "libtcmalloc_minimal.so.4"],
    "mimalloc": ["libmimalloc.so.2"],
}


def ldconfig_paths():
    """soname -> path of the 64-bit entries of `ldconfig -p`."""
    for exe in ("ldconfig", "/sbin/ldconfig", "/usr/sbin/ldconfig"):
        try:
            out = subprocess.run([exe, "-p"], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, check=True).stdout
            break
        except (OSError, subprocess.CalledProcessError):
            out = b""
    paths = {}
    for line in out.decode("utf-8", "replace").splitlines():
        if "=>" not in line or "64" not in line:
            continue
        name = line.split()[0]
        paths.setdefault(name, line.split("=>", 1)[1].strip())
    return paths


def installed_allocators():
    """{name: expected path} of the allocators installed here; glibc is
    the libc of ldconfig's cache."""
    paths = ldconfig_paths()
    found = {"glibc": paths.get("libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6")}
    for name, sonames in SONAMES.items():
        for so in sonames:
            if so in paths:
                found[name] = paths[so]
                break
    return found


def same_file(a, b):
    return os.path.realpath(a) == os.path.realpath(b)


def bench(t, args, expect_rc=0, timeout=120):
    """Run `heapscope bench ARGS` with the bench directory of the --prog
    workloads; returns the CompletedProcess (stdout/stderr as text)."""
    bench_dir = os.path.dirname(t.prog("wl-plateau"))
    env = t.env({"HEAPSCOPE_BENCH_DIR": bench_dir})
    cp = subprocess.run([t.heapscope, "bench"] + list(args), env=env,
                        cwd=t.dir, stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, timeout=timeout)
    cp.out = cp.stdout.decode("utf-8", "replace")
    cp.err = cp.stderr.decode("utf-8", "replace")
    if expect_rc is not None and cp.returncode != expect_rc:
        raise hstest.HsError("heapscope bench %s exited %d, expected %d:\n%s"
                             % (" ".join(args), cp.returncode, expect_rc, cp.err))
    return cp


def read_csv(path):
    """(header, rows as dicts) of a bench CSV."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    return header, [dict(zip(header, r)) for r in rows[1:]]
