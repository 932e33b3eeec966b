"""machine.py - the line that says where a benchmark ran, printed at the
head of bench/run's, bench/overhead's, bench/floor/run's and
bench/ablate/run's results.

The sessions that made docs/BENCHMARKS.md ran on VMs that changed from one
day to the next (an AMD EPYC, then two Intel Xeon models with 48 and 32 KB
of L1d), and the same collector reads 1.34x on one and 1.47x on another:
a ratio means little without its host.  So each result says which CPU
(model name, family and model, as /proc/cpuinfo gives them), how many of
them, their caches (sysfs), the memory, the kernel, the C library and the
commit of the tree the script ran from (with "+changes" when tracked
files differ from it)."""
import os
import platform
import subprocess


def _cpuinfo():
    """The first processor's fields of /proc/cpuinfo ({} where there is
    none)."""
    out = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break
                k, _, v = line.partition(":")
                out[k.strip()] = v.strip()
    except OSError:
        pass
    return out


def _read(path):
    with open(path) as f:
        return f.read().strip()


def _caches():
    """CPU 0's caches as "L1d 32K, L2 1024K, ..." from sysfs, data and
    unified ones only (the instruction cache says nothing of a heap)."""
    base = "/sys/devices/system/cpu/cpu0/cache"
    found = []
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return []
    for name in names:
        d = os.path.join(base, name)
        try:
            kind, level, size = _read(os.path.join(d, "type")), _read(os.path.join(d, "level")), \
                _read(os.path.join(d, "size"))
        except OSError:
            continue
        if kind == "Instruction":
            continue
        found.append(f"L{level}{'d' if kind == 'Data' else ''} {size}")
    return found


def _memory():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return f"{int(line.split()[1]) / (1024 * 1024):.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return None


def _commit(root):
    """The short commit of the tree at root, "+changes" when its tracked
    files differ from it; None outside a git checkout."""
    try:
        head = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


def describe(root):
    """One line: "machine: CPU (family F, model M), N CPUs, caches, memory,
    kernel, C library; tree COMMIT"."""
    info = _cpuinfo()
    cpu = info.get("model name") or platform.processor() or platform.machine()
    if "cpu family" in info and "model" in info:
        cpu += f" (family {info['cpu family']}, model {info['model']})"
    parts = [cpu, f"{os.cpu_count()} CPUs"] + _caches()
    mem = _memory()
    if mem:
        parts.append(mem)
    parts.append(f"{platform.system()} {platform.release()}")
    libc = os.confstr("CS_GNU_LIBC_VERSION") if "CS_GNU_LIBC_VERSION" in os.confstr_names else None
    if libc:
        parts.append(libc)
    commit = _commit(root)
    return "machine: " + ", ".join(parts) + (f"; tree {commit}" if commit else "")
