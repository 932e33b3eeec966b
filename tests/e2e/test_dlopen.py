"""e2e_dlopen: allocations from a dlopen'ed module, symbolised after
dlclose (hs_dlopen.c, hs_plugin.c).

plugin_alloc_site (in libhs_plugin.so) makes 10 x 256 bytes, 4 are freed,
6 (1,536 bytes) stay allocated after dlclose.  The stack names
plugin_alloc_site <- hs_plugin_make in the plugin's module (its file and
line too) and main in hs_dlopen.  dlopen/dlclose's own allocations are not
asserted.  Valgrind: total heap usage 18 allocs, 12 frees, 6,412 bytes; in
use at exit 1,536 bytes in 6 blocks (definitely lost: the plugin's).
"""
import os

import hstest


def main(t):
    plugin = t.prog("hs_plugin")
    r = t.run("hs_dlopen", args=[plugin], out="dlopen.hsp")
    t.eq("program stdout", b"dlopen done\n", r.stdout)
    p = t.report(r.out)
    st = t.check_site(p, "plugin_alloc_site", allocations=10, bytes_allocated=2560,
                      frees=4, bytes_freed=1024, leaked_bytes=1536,
                      leaked_allocations=6)[0]
    t.check_sizes(p, st, [(256, 256, 10, 2560)])
    f = p.frame_of(st, "plugin_alloc_site")
    t.eq("plugin frame module", os.path.realpath(plugin),
         os.path.realpath(f.get("module") or ""))
    t.eq("plugin frame file", "hs_plugin.c", os.path.basename(f.get("file") or ""))
    t.eq("plugin frame line",
         hstest.source_line("hs_plugin.c", "if (!(held[i] = malloc(256)))"), f.get("line"))
    mk = p.frame_of(st, "hs_plugin_make")
    t.true("hs_plugin_make is a caller, in the plugin", mk is not None and
           os.path.realpath(mk.get("module") or "") == os.path.realpath(plugin),
           p.describe(st))
    m = p.frame_of(st, "main")
    t.true("main is a caller, in hs_dlopen", m is not None and
           os.path.realpath(m.get("module") or "") == os.path.realpath(t.prog("hs_dlopen")),
           p.describe(st))
    t.check_site(p, "after_dlclose_site", allocations=1, bytes_allocated=77, frees=1,
                 temporary_allocations=1)
    t.check_summary(p, final=True, unknown_frees=0)
    t.check_consistent(p)


if __name__ == "__main__":
    hstest.main(main)
