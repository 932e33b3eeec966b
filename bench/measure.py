"""measure.py - one timed run of a command, shared by bench/run and
bench/overhead: wall time, CPU time of the command and its descendants,
peak RSS, exit status and output.

Wall time is taken when wait4 returns, blocking: a polling loop would add
up to one sleep to every run, a few percent of the suite's 0.03-0.1 s
runs.  A run over its time cap is killed by a timer and reported as a
timeout.  Only when the peak RSS must be polled (a peer whose program
runs in a child: bench/run's fallback without hs-peakrss; or a peer with
an RSS cap, whose program is killed when its VmHWM passes the cap) does
the run poll, every 20 ms."""
import os, signal, subprocess, tempfile, threading, time

import peakrss as hs_peakrss

GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


class Run:
    """wall, cpu: seconds (None on timeout); rss: peak KiB or None;
    hwm: the polled VmHWM (KiB) of the watched process, or None; status:
    the exit status (negative: killed by that signal); out: stdout;
    over_rss: killed for passing its RSS cap (wall is None then too)."""

    def __init__(self, wall=None, cpu=None, rss=None, hwm=None, status=None, out="",
                 over_rss=False):
        self.wall, self.cpu, self.rss, self.hwm, self.status, self.out = \
            wall, cpu, rss, hwm, status, out
        self.over_rss = over_rss

    @property
    def timed_out(self):
        return self.wall is None


def vm_hwm_kib(pid):
    """Peak RSS (VmHWM) of a live process in KiB, or None."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def parent_of(pid):
    """The parent PID of pid, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            # the command name, in parentheses, may hold spaces
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def descends_from(pid, root):
    """Is pid root or one of root's descendants?"""
    for _ in range(32):
        if pid == root:
            return True
        pid = parent_of(pid)
        if not pid:
            return False
    return False


def find_process(exe, root=None):
    """PID of a running process whose executable is exe, or None; with root,
    only among root and its descendants (other commands, such as a test
    run beside this one, may run the same executable)."""
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if os.readlink(f"/proc/{d}/exe") == exe and \
                        (root is None or descends_from(int(d), root)):
                    return int(d)
            except OSError:
                continue
    return None


def run_once(cmd, env, timeout, cwd, peakrss=None, gnu_time=False, watch_exe=None,
             capture=False, rss_cap=None):
    """Run cmd in cwd.  The peak RSS is hs-peakrss's when peakrss is given
    ((path, exe): the VmHWM at exit of the process running exe), else GNU
    time's %M with gnu_time (when installed), else wait4's ru_maxrss of the
    whole command; watch_exe (without peakrss) also polls the VmHWM of the
    process running it.  capture: keep stdout (else discarded).  rss_cap
    ((exe, KiB)): the process running exe is killed when its VmHWM passes
    KiB, and the run is reported as over_rss."""
    rss_file = os.path.join(cwd, ".maxrss")
    if peakrss:
        cmd = hs_peakrss.wrap(peakrss[0], peakrss[1], rss_file, cmd)
        watch_exe = None
    elif gnu_time and GNU_TIME:
        cmd = [GNU_TIME, "-f", "%M", "-o", rss_file] + cmd
    else:
        gnu_time = False
    out = tempfile.TemporaryFile(mode="w+") if capture else subprocess.DEVNULL
    killed = threading.Event()
    start = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=subprocess.DEVNULL)

    def kill():
        killed.set()
        proc.kill()

    timer = threading.Timer(timeout, kill)
    timer.start()
    hwm = None
    over_rss = False
    poll_exe = watch_exe or (rss_cap[0] if rss_cap else None)
    try:
        if poll_exe:
            watched = None
            while True:
                pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                if watched is None:
                    watched = find_process(poll_exe, proc.pid)
                if watched is not None:
                    h = vm_hwm_kib(watched)
                    if h is None:
                        watched = None  # gone (an exec'd wrapper): look again
                    if h is not None:
                        hwm = max(hwm or 0, h)
                    if rss_cap and h is not None and h > rss_cap[1] and not over_rss:
                        over_rss = True
                        try:
                            os.kill(watched, signal.SIGKILL)
                        except OSError:
                            pass
                time.sleep(0.02)
        else:
            pid, status, ru = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
    finally:
        timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    text = ""
    if capture:
        out.seek(0)
        text = out.read()
        out.close()
    rss = ru.ru_maxrss
    if peakrss:
        rss = hs_peakrss.read_kib(rss_file)  # None: no process ran the executable
    elif gnu_time:
        try:
            with open(rss_file) as f:
                rss = int(f.read().split()[-1])
        except (OSError, ValueError, IndexError):
            pass
    if os.path.exists(rss_file):
        os.unlink(rss_file)  # not part of the profile's size
    if killed.is_set() or over_rss:
        return Run(over_rss=over_rss)
    if not watch_exe:
        hwm = None  # polled only for the cap
    return Run(wall, ru.ru_utime + ru.ru_stime, rss, hwm, proc.returncode, text)
