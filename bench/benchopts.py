"""benchopts.py - what the benchmark scripts (bench/run, bench/overhead,
bench/floor/run, bench/replace/run, bench/sampled/run) share besides
timing a run (measure.py): their comma-separated list options, the order
of the modes in a repetition, how a script runs heapscope preloaded
directly, without `heapscope run`, and how it finds and configures the
other allocators' libraries and jemalloc's profiler."""
import argparse
import os


def csv_list(s, allowed=None, conv=str):
    """The items of a comma-separated option, converted by conv; each one
    of `allowed` when given.  argparse errors name what is wrong."""
    out = [conv(x) for x in s.split(",") if x]
    if allowed is not None:
        bad = [x for x in out if x not in allowed]
        if bad:
            raise argparse.ArgumentTypeError(f"unknown {','.join(bad)}; choose from {','.join(allowed)}")
    if not out:
        raise argparse.ArgumentTypeError("empty list")
    return out


def positive_ints(s):
    """A comma-separated list of thread counts, each at least 1."""
    try:
        out = csv_list(s, conv=int)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of numbers: {s}")
    if any(x < 1 for x in out):
        raise argparse.ArgumentTypeError(f"thread counts must be >= 1: {s}")
    return out


def rotated(modes, rep):
    """The modes in the order of repetition `rep` (from 0): the order
    rotates by one each time, so that no mode always runs first, or right
    after the same other one."""
    k = rep % len(modes)
    return modes[k:] + modes[:k]


def preload_lib(build, mode):
    """The library `heapscope run --unwind MODE` preloads from build:
    libheapscope-fp.so for fp where it is built (no libunwind), else
    libheapscope.so."""
    fp = os.path.join(build, "lib", "libheapscope-fp.so")
    if mode == "fp" and os.path.isfile(fp):
        return fp
    return os.path.join(build, "lib", "libheapscope.so")


def preload_env(env, lib, mode, out):
    """env (a dict, updated and returned) for a run with heapscope's `lib`
    preloaded in unwinder `mode`, quiet, writing its profile into the
    directory out."""
    env.update(LD_PRELOAD=lib, HEAPSCOPE_UNWIND=mode, HEAPSCOPE_QUIET="1",
               HEAPSCOPE_OUTPUT=os.path.join(out, "p.hsp"))
    return env


LIB_DIRS = ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"]
# The allocators the scripts preload, by name (tcmalloc with its heap
# profiler, which bench/run's gperf-heap mode needs; the same allocator).
ALLOCATOR_LIBS = {"jemalloc": "libjemalloc.so.2", "tcmalloc": "libtcmalloc.so.4",
                  "mimalloc": "libmimalloc.so.2"}


def system_lib(name):
    """The path of an installed library (libjemalloc.so.2, ...), or None."""
    for d in LIB_DIRS:
        if os.path.exists(os.path.join(d, name)):
            return os.path.join(d, name)
    return None


def jeprof_conf(prefix, lg_sample=None):
    """jemalloc's MALLOC_CONF for its heap profiler, dumping at exit to
    prefix.PID.0.f.heap; lg_sample: lg_prof_sample (None: jemalloc's
    default, 19, one sample per 512 KiB allocated on average)."""
    rate = "" if lg_sample is None else f"lg_prof_sample:{lg_sample},"
    return f"prof:true,{rate}prof_final:true,prof_prefix:{prefix}"
