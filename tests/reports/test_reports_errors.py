"""e2e_reports_errors: bad options of `heapscope report`'s views give a
clear message and exit 2 (1 for a stack id the profile does not have);
the default report and its --json are unchanged by the views."""
import hstest
import rptest

BAD = [
    (["--leaks", "--peak"], "one view at a time"),
    (["--merge", "line"], "--merge needs 'function' or 'caller'"),
    (["--merge"], "--merge needs"),
    (["--top", "x"], "--top needs a number"),
    (["--min-bytes", "-1"], "--min-bytes needs a number"),
    (["--min-count", "1k"], "--min-count needs a number"),
    (["--tree", "--sort", "size"], "--sort needs allocations, bytes, leaked, peak or temporary"),
    (["--tree", "--threshold", "101"], "--threshold needs a percentage"),
    (["--bottom-up"], "--bottom-up goes with --tree"),
    (["--peak", "--sort", "bytes"], "--sort and --threshold go with --tree"),
    (["--stack", "3"], "--stack goes with --histogram"),
    (["--histogram", "--stack", "x"], "--stack needs a stack id"),
    (["--suppressions", "x.supp"], "go with --leaks"),
    (["--function", ""], "--function needs"),
    (["--width", "5"], "--width needs"),
    (["--mprof", "--function", "x"], "--mprof shows whole tables"),
    (["--bogus"], "unknown option '--bogus'"),
]


def main(t):
    path = rptest.run_views(t)
    for args, msg in BAD:
        rc, err = rptest.bad(t, args + [path])
        t.eq("%s: exit" % " ".join(args), 2, rc)
        t.true("%s: message" % " ".join(args), msg in err, err)
    rc, err = rptest.bad(t, ["--histogram", "--stack", "999999", path])
    t.eq("unknown stack id: exit", 1, rc)
    t.true("unknown stack id: message", "no stack with id 999999" in err, err)
    rc, err = rptest.bad(t, ["--leaks", "/nonexistent.hsp"])
    t.eq("missing profile: exit", 1, rc)
    # the default --json keeps its shape (a public interface)
    p = t.report(path)
    t.eq("default --json keys", ["summary", "stacks", "timeline", "modules"], list(p.data.keys()))
    t.eq("default --json summary allocations", 47, p.summary["allocations"])
    txt = rptest.text(t, path)
    t.true("default text report", txt.startswith("heapscope report of ") and
           "top stacks by allocations" in txt, txt[:200])


if __name__ == "__main__":
    hstest.main(main)
