/* an_filter.c - stack filters, template folding and the allocation site
 * (an_filter.h). */
#include "analyse/an_filter.h"

#include <string.h>

const char *an_filter_module_name(const pf_profile_t *p, int32_t m)
{
    if (m < 0 || (size_t)m >= p->n_modules || !p->modules[m].path)
        return "?";
    const char *s = strrchr(p->modules[m].path, '/');
    return s ? s + 1 : p->modules[m].path;
}

/* Length of an operator token starting with '<' or '-' right after
 * "operator" ending at name+i, or 0 when name[i] opens a template list. */
static size_t operator_len(const char *name, size_t i)
{
    if (i < 8 || strncmp(name + i - 8, "operator", 8))
        return 0;
    if (name[i] == '<')
        return name[i + 1] == '<' ? (name[i + 2] == '=' ? 3 : 2) : (name[i + 1] == '=' ? 2 : 1);
    return 0;
}

char *an_filter_fold(const char *name, char *out, size_t outsz)
{
    size_t o = 0;
    if (!outsz)
        return out;
    for (size_t i = 0; name[i] && o + 1 < outsz;) {
        size_t op = name[i] == '<' ? operator_len(name, i) : 0;
        if (op) {
            for (size_t k = 0; k < op && o + 1 < outsz; k++)
                out[o++] = name[i + k];
            i += op;
            continue;
        }
        if (name[i] != '<') {
            out[o++] = name[i++];
            continue;
        }
        /* skip to the matching '>' (an unbalanced list runs to the end) */
        int depth = 0;
        size_t j = i;
        for (; name[j]; j++) {
            if (name[j] == '<')
                depth++;
            else if (name[j] == '>' && --depth == 0)
                break;
        }
        for (const char *d = "<...>"; *d && o + 1 < outsz; d++)
            out[o++] = *d;
        i = name[j] ? j + 1 : j;
    }
    out[o] = '\0';
    return out;
}

int an_filter_frames(const an_filter_t *f, const pf_profile_t *p, const an_frames_t *fr)
{
    if (f->function) {
        int hit = 0;
        char buf[1024];
        for (size_t i = 0; i < fr->n && !hit; i++) {
            const char *fn = fr->v[i].function;
            hit = strstr(fn, f->function) != NULL ||
                  (f->fold_templates && strstr(an_filter_fold(fn, buf, sizeof buf), f->function));
        }
        if (!hit)
            return 0;
    }
    if (f->module) {
        int hit = 0;
        for (size_t i = 0; i < fr->n && !hit; i++)
            hit = fr->v[i].module >= 0 &&
                  strstr(an_filter_module_name(p, fr->v[i].module), f->module) != NULL;
        if (!hit)
            return 0;
    }
    return 1;
}

size_t an_filter_site(const an_frames_t *fr)
{
    for (size_t i = 0; i < fr->n; i++)
        if (strncmp(fr->v[i].function, "operator new", 12))
            return i;
    return 0;
}

int an_filter_active(const an_filter_t *f)
{
    return f->function || f->module || f->min_bytes || f->min_count || f->fold_templates ||
           f->merge != AN_MERGE_NONE;
}
