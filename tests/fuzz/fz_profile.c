/* fz_profile.c - libFuzzer target for the profile reader and the analyser.
 *
 * Each input is handed to pf_reader_parse() twice: as it is, and with the
 * check of every record recomputed (docs/FORMAT.md), because a random
 * mutation almost always breaks a check and the reader would then stop at
 * the first record (a truncated profile) without ever decoding a mutated
 * payload.  Every input that parses is then run through what `heapscope
 * report` does with it: an_model_build(), the text and JSON reports and the
 * --tree, --timeline, --histogram and --leaks views, all written to
 * /dev/null.  Module paths and build IDs are cleared first, so that the symboliser takes
 * its "no usable file" path instead of opening whatever file a mutated
 * profile names (a FIFO or /dev/stdin would block the fuzzer).
 *
 * Built twice (tests/fuzz/CMakeLists.txt): with clang -fsanitize=fuzzer
 * (fz_profile, run for a bounded time by CTest label `fuzz`), and with the
 * project's compiler plus fz_replay.c (fz_profile_replay: calls the same
 * entry point on every file of tests/corpus/profile, label `fuzz-replay`).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/an_report.h"
#include "analyse/an_view.h"
#include "format/pf_check.h"
#include "format/pf_le.h"
#include "format/pf_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Rewrite the check of every whole record of buf[len] (header of 16 bytes,
 * then u32 type, u32 length, payload, u32 check). */
static void fz_fix_checks(uint8_t *buf, size_t len)
{
    unsigned major = len >= 10 ? pf_le16(buf + 8) : 0;
    size_t off = 16;
    while (off + 12 <= len) {
        uint32_t plen = pf_le32(buf + off + 4);
        if (plen > len - off - 12)
            break;
        pf_put_le32(buf + off + 8 + plen, pf_check(major, pf_le32(buf + off), buf + off + 8, plen));
        off += 12 + (size_t)plen;
    }
}

/* One view with default options (as the command line would set them). */
static void fz_view(an_report_t *r, an_view_kind_t kind, int json, FILE *out)
{
    an_view_opts_t o;
    memset(&o, 0, sizeof o);
    o.kind = kind;
    o.json = json;
    o.sort = AN_KEY_BYTES;
    o.threshold = 1.0;
    o.width = 100;
    o.filter.top = json ? SIZE_MAX : 10;
    switch (kind) {
    case AN_VIEW_TREE: an_view_tree(r, &o, out); break;
    case AN_VIEW_TIMELINE: an_view_timeline(r, &o, out); break;
    case AN_VIEW_HISTOGRAM: an_view_histogram(r, &o, out); break;
    default:
        if (kind == AN_VIEW_LEAKS)
            an_suppress_add_builtins(&o.sup);
        an_view_stacks(r, &o, out);
        break;
    }
    an_suppress_free(&o.sup);
}

/* Parse buf[len]; on success run the model and every report on it. */
static void fz_one(const uint8_t *buf, size_t len, FILE *out)
{
    char err[PF_ERRMSG_SIZE];
    pf_profile_t *p = NULL;
    if (pf_reader_parse(buf, len, &p, err, sizeof err) != PF_OK) {
        if (p || !err[0])
            abort(); /* a failure must leave no profile and say why */
        return;
    }
    for (size_t i = 0; i < p->n_modules; i++) {
        if (p->modules[i].path)
            p->modules[i].path[0] = '\0';
        p->modules[i].build_id_len = 0; /* no /usr/lib/debug/.build-id look-up */
    }
    an_report_t r;
    memset(&r, 0, sizeof r);
    r.path = "fuzz.hsp";
    r.top = 10;
    r.prof = p;
    if (an_model_build(&r.model, p) == PF_OK && an_symbols_open(p, &r.syms) == PF_OK) {
        an_report_text(&r, out);
        an_report_json(&r, out);
        fz_view(&r, AN_VIEW_TREE, 0, out);
        fz_view(&r, AN_VIEW_TREE, 1, out);
        fz_view(&r, AN_VIEW_TIMELINE, 0, out);
        fz_view(&r, AN_VIEW_HISTOGRAM, 1, out);
        fz_view(&r, AN_VIEW_LEAKS, 0, out);
        fz_view(&r, AN_VIEW_PEAK, 1, out);
    }
    an_report_close(&r); /* frees the profile too */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *null;
    if (!null && !(null = fopen("/dev/null", "w")))
        abort();
    fz_one(data, size, null);
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    fz_fix_checks(copy, size);
    if (size < 16 || memcmp(copy, data, size) != 0)
        fz_one(copy, size, null);
    free(copy);
    return 0;
}
