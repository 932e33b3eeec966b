"""peakrss.py - the benchmark scripts' side of hs-peakrss (bench/peakrss.c),
shared by bench/run and bench/overhead: whether it can run here, the
command line that wraps a command in it, and the peak it wrote."""
import os, shutil, subprocess, tempfile


def works(path):
    """Whether hs-peakrss is built at path and may trace here (ptrace can be
    forbidden in containers): it must find `true`'s own peak."""
    if not os.access(path, os.X_OK):
        return False
    with tempfile.TemporaryDirectory(prefix="hs-bench-") as d:
        f = os.path.join(d, "rss")
        true = shutil.which("true") or "/bin/true"
        r = subprocess.run(wrap(path, true, f, [true]), stderr=subprocess.DEVNULL)
        return r.returncode == 0 and read_kib(f) is not None


def wrap(path, exe, rss_file, cmd):
    """cmd run under hs-peakrss at path, which writes to rss_file the peak
    RSS of the process running exe (an absolute path)."""
    return [path, "-o", rss_file, "-e", exe, "--"] + cmd


def read_kib(rss_file):
    """The peak hs-peakrss wrote, in KiB; None if unreadable or 0 (no
    process ran the executable)."""
    try:
        with open(rss_file) as f:
            return int(f.read()) or None
    except (OSError, ValueError):
        return None
