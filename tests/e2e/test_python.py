"""e2e_python: a real program no one here wrote: Debian's python3 with
PYTHONMALLOC=malloc (every object allocation goes through malloc) running a
small script.

Its stdout and exit status (7) must equal those of a run without
heapscope; the profile must be complete (final, not truncated, no unknown
frees, stacks adding up to the summary) with allocations > 0; the text
report must work.
"""
import os

import hstest

SCRIPT = r'''
import collections, json, sys
words = ("alpha beta gamma delta " * 500).split()
counts = collections.Counter(words)
table = {str(i): [i] * (i % 17) for i in range(5000)}
print(json.dumps(sorted(counts.items())))
print(sum(len(v) for v in table.values()))
print("".join(sorted(set("heapscope profiles python"))))
sys.exit(7)
'''


def main(t):
    python = t.prog("python3")
    script = os.path.join(t.dir, "script.py")
    with open(script, "w") as f:
        f.write(SCRIPT)
    env = {"PYTHONMALLOC": "malloc", "PYTHONHASHSEED": "0",
           "PYTHONDONTWRITEBYTECODE": "1"}
    plain = t._exec([python, script], None, env, b"", t.dir, 120, None)
    t.eq("exit status without heapscope", 7, plain.rc)
    r = t.run(python, args=[script], out="python.hsp", env=env, expect_rc=None)
    t.eq("exit status under heapscope", 7, r.rc)
    t.eq("stdout under heapscope", plain.stdout.decode(), r.stdout.decode())
    p = t.report(r.out)
    s = p.summary
    t.true("allocations > 10000", int(s.get("allocations", 0)) > 10000, str(s))
    t.true("frees > 10000", int(s.get("frees", 0)) > 10000, str(s))
    t.true("more than 100 stacks", len(p.stacks) > 100, str(len(p.stacks)))
    t.check_summary(p, final=True, truncated=False, unknown_frees=0,
                    lost_allocations=0)
    t.check_consistent(p)
    t.true("a frame in the python executable",
           any(os.path.realpath(f.get("module") or "") == os.path.realpath(python)
               for st in p.stacks for f in st["frames"]))
    t.true("a Py* function among the frames (dynamic symbols)",
           any((f.get("function") or "").startswith("Py")
               for st in p.stacks for f in st["frames"]))
    t.true("text report", len(t.report_text(r.out)) > 0)


if __name__ == "__main__":
    hstest.main(main)
