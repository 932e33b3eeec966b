"""e2e_rel_nomem: malloc returning NULL.

- rl_nomem: impossible requests and RLIMIT_AS exhaustion fail exactly as
  without heapscope (same stdout); rl_nomem_site's allocations in the
  profile = the blocks the program got (its stderr), all freed, no unknown
  frees, no false leak.  When RLIMIT_AS stops the collector mapping a
  shadow leaf it takes the leaf it mapped ahead (col_shadow.c), which
  usually covers the rest of the run; a block it still cannot mark live
  (glibc falls back to brk, in another leaf's range) is counted as
  `untracked_allocations` only, and its free as an unknown free: then
  site allocations + untracked = the blocks the program got, and
  unknown_frees = untracked.
"""
import re

import hstest
import rltest


def check_run(t, out, env=None):
    """rl_nomem under heapscope: same output as without; the profile
    accounts for every block the program got, tracked or untracked.
    Returns untracked_allocations."""
    r = rltest.run_both(t, [t.prog("rl_nomem")], out, env=env)
    t.true("rl_nomem: malloc failed under RLIMIT_AS", b"returned NULL: yes" in r.stdout,
           r.text())
    m = re.search(rb"blocks (\d+)", r.stderr)
    t.true("rl_nomem: blocks line on stderr", m is not None, r.stderr.decode(errors="replace"))
    p = t.report(r.out)
    untracked = int(p.summary.get("untracked_allocations", -1))
    t.true("%s: untracked_allocations reported (%d)" % (out, untracked), untracked >= 0)
    # every block heapscope could not mark live is one unknown free, and
    # nothing else is (check_profile asserts unknown_frees == 0 otherwise)
    t.eq("%s: unknown_frees = untracked_allocations" % out, untracked,
         int(p.summary.get("unknown_frees", -1)))
    if untracked == 0:
        rltest.check_profile(t, r.out, 2)
    if m:
        got = int(m.group(1))
        t.true("rl_nomem: some 1 MiB blocks before NULL (%d)" % got, got > 10)
        t.check_site(p, "rl_nomem_site", allocations=got - untracked, frees=got - untracked,
                     leaked_allocations=0)
    return untracked


def main(t):
    # malloc returning NULL; the spare leaf normally keeps every block tracked
    check_run(t, "nomem.hsp")
    # the collector's own mappings failing (as when the address space is
    # exhausted at the wrong moment): after 3 shadow leaves every new one
    # fails, so most 1 MiB blocks (each 32 MiB of addresses needs a leaf)
    # are untracked, reported as such, and their frees as unknown frees
    untracked = check_run(t, "nomem-fault.hsp", env={"HEAPSCOPE_FAULT_SHADOW_LEAVES": "3"})
    t.true("nomem-fault.hsp: blocks untracked under the fault (%d)" % untracked, untracked > 10)


if __name__ == "__main__":
    hstest.main(main)
