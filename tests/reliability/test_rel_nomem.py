"""e2e_rel_nomem: malloc returning NULL.

- rl_nomem: impossible requests and RLIMIT_AS exhaustion fail exactly as
  without heapscope (same stdout); rl_nomem_site's allocations in the
  profile = the blocks the program got (its stderr), all freed, no unknown
  frees.  When RLIMIT_AS stops the collector mapping a shadow leaf it takes
  the leaf it mapped ahead (col_shadow.c); a block it still cannot mark
  live goes to the "lost" pseudo-stack, never to a false leak.
"""
import re

import hstest
import rltest


def main(t):
    # malloc returning NULL
    r = rltest.run_both(t, [t.prog("rl_nomem")], "nomem.hsp")
    t.true("rl_nomem: malloc failed under RLIMIT_AS", b"returned NULL: yes" in r.stdout,
           r.text())
    m = re.search(rb"blocks (\d+)", r.stderr)
    t.true("rl_nomem: blocks line on stderr", m is not None, r.stderr.decode(errors="replace"))
    p = rltest.check_profile(t, r.out, 2)
    if m:
        got = int(m.group(1))
        t.true("rl_nomem: some 1 MiB blocks before NULL (%d)" % got, got > 10)
        t.check_site(p, "rl_nomem_site", allocations=got, frees=got)



if __name__ == "__main__":
    hstest.main(main)
