/* fz_core.c - libFuzzer target for the core reader and the glibc heap walk.
 *
 * Each input is read as an x86-64 ELF core (cw_core_open_mem) with
 * no_files set: a mutated core names arbitrary paths, and nothing it names
 * is opened (libc's symbols, its version from its file, vtable labels all
 * fail at once; opening a FIFO would block).  glibc's malloc state is then
 * found by its structure (cw_walk_run(core, 0, ...)) and what `heapscope
 * core` does with a walk follows: fragmentation, the conservative leak
 * mark, and the text and JSON reports of every view (summary,
 * fragmentation, leaks with their groups, chunks).  Output goes to
 * /dev/null.
 *
 * Built like fz_profile (tests/fuzz/CMakeLists.txt): with clang
 * -fsanitize=fuzzer as fz_core (label `fuzz`), and with the project's
 * compiler plus fz_replay.c as fz_core_replay over tests/corpus/core
 * (label `fuzz-replay`).  Seeds: a real core shrunk by fz_core_seed.py and
 * the cores of tests/core/synth_core.py (glibc 2.31, 2.33, 2.36 layouts).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "corewalk/cw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *null;
    if (!null && !(null = fopen("/dev/null", "w")))
        return 0;
    char err[256];
    cw_core_t *core = NULL;
    if (cw_core_open_mem(data, size, &core, err, sizeof err) != 0)
        return 0;
    core->no_files = 1;
    cw_walk_t *walk = NULL;
    if (cw_walk_run(core, 0, &walk, err, sizeof err) == 0) {
        cw_frag_t frag;
        cw_leaks_t leaks;
        cw_frag_compute(walk, &frag);
        cw_mark_run(walk, &leaks);
        int views = CW_VIEW_SUMMARY | CW_VIEW_FRAG | CW_VIEW_LEAKS | CW_VIEW_CHUNKS;
        cw_report_text(null, walk, views, &frag, &leaks);
        cw_report_json(null, walk, views, &frag, &leaks);
        cw_frag_free(&frag);
        cw_walk_free(walk);
    }
    cw_core_close(core);
    return 0;
}
