/* an_frames.c - expand a stack into printable frames (an_frames.h).
 *
 * The collector should already cut its own frames off; any that slip
 * through (a different unwinder, inlining of the hook) are recognised by
 * the module's file name and dropped, but only at the innermost end, so a
 * profile of heapscope itself still shows its frames further out.
 */
#include "analyse/an_frames.h"
#include "common/ut_grow.h"

#include <stdlib.h>
#include <string.h>

int an_frames_is_own(const pf_profile_t *p, int32_t module)
{
    if (module < 0 || (size_t)module >= p->n_modules)
        return 0;
    const char *path = p->modules[module].path;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strncmp(base, "libheapscope", 12) == 0;
}

/* Room for `more` frames after the current ones.  Returns 0 or -1. */
static int an_frames_reserve(an_frames_t *f, size_t more)
{
    return ut_grow((void **)&f->v, &f->cap, f->n + more, sizeof *f->v);
}

int an_frames_get(an_frames_t *f, const pf_profile_t *p, an_symbols_t *syms, const pf_stack_t *st)
{
    f->n = 0;
    if (!f->raw) {
        f->raw = malloc(PF_READ_MAX_DEPTH * sizeof *f->raw);
        if (!f->raw)
            return PF_ENOMEM;
    }
    uint32_t depth = pf_reader_stack_frames(p, st, f->raw, PF_READ_MAX_DEPTH);
    if (depth > PF_READ_MAX_DEPTH)
        depth = PF_READ_MAX_DEPTH;
    uint32_t i = 0;
    while (i < depth && an_frames_is_own(p, f->raw[i].module))
        i++;
    int rc = PF_OK;
    for (; i < depth; i++) {
        const an_sym_t *s;
        uint32_t n;
        rc |= an_symbols_lookup(syms, f->raw[i].ip, f->raw[i].module, &s, &n);
        if (an_frames_reserve(f, n))
            return PF_ENOMEM;
        for (uint32_t k = 0; k < n; k++)
            f->v[f->n++] = (an_frame_t){s[k].function, s[k].file,    s[k].line,
                                        s[k].inlined,  f->raw[i].ip, f->raw[i].module};
    }
    return rc ? PF_ENOMEM : PF_OK;
}

void an_frames_free(an_frames_t *f)
{
    free(f->v);
    free(f->raw);
    *f = (an_frames_t){0};
}
