/* an_diff_sites.c - collect each profile's stacks under a key made of their
 * symbolised frames, and match the keys of the two profiles.  Two stacks
 * of one profile with the same frames (e.g. that differ only in frames
 * heapscope drops) are summed.
 *
 * Each distinct frame is stored once and a key is an array of pointers to
 * them: two profiles of 65,539 stacks of 17 frames (binary-trees) held 160
 * MB of keys as strings, one copy of every frame per stack. */
#include "analyse/an_diff_sites.h"
#include "common/ut_grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int append(char **buf, size_t *len, size_t *cap, const char *s)
{
    size_t n = strlen(s);
    if (ut_grow((void **)buf, cap, *len + n + 1, 1))
        return PF_ENOMEM;
    memcpy(*buf + *len, s, n + 1);
    *len += n;
    return PF_OK;
}

int df_collect(df_sites_t *s, an_report_t *r, int side)
{
    const an_model_t *m = &r->model;
    char *buf = NULL; /* one frame's string, reused */
    size_t cap = 0;
    int rc = PF_OK;
    for (size_t i = 0; i < m->n_stats && rc == PF_OK; i++) {
        const an_stats_t *st = &m->stats[i];
        rc = an_frames_get(&r->frames, r->prof, r->syms, &r->prof->stacks[st->stack]);
        if (rc == PF_OK)
            rc = ut_grow((void **)&s->v, &s->cap, s->n + 1, sizeof *s->v) ? PF_ENOMEM : PF_OK;
        if (rc != PF_OK)
            break;
        size_t nf = r->frames.n;
        const char **frames = nf ? malloc(nf * sizeof *frames) : NULL;
        if (nf && !frames) {
            rc = PF_ENOMEM;
            break;
        }
        for (size_t f = 0; f < nf && rc == PF_OK; f++) {
            const an_frame_t *fr = &r->frames.v[f];
            char line[32];
            size_t len = 0;
            snprintf(line, sizeof line, "\x1f%u\x1e", (unsigned)fr->line);
            rc = append(&buf, &len, &cap, fr->function ? fr->function : "??");
            if (rc == PF_OK)
                rc = append(&buf, &len, &cap, "\x1f");
            if (rc == PF_OK)
                rc = append(&buf, &len, &cap, fr->file ? fr->file : "");
            if (rc == PF_OK)
                rc = append(&buf, &len, &cap, line);
            if (rc == PF_OK) {
                /* the interned copies stay where they are as the table grows */
                uint32_t id = an_xintern_add(&s->frames, buf, len, NULL);
                if (id == UINT32_MAX)
                    rc = PF_ENOMEM;
                else
                    frames[f] = s->frames.strs[id];
            }
        }
        if (rc != PF_OK) {
            free(frames);
            break;
        }
        df_site_t *d = &s->v[s->n++];
        memset(d, 0, sizeof *d);
        d->frames = frames;
        d->nframes = nf;
        d->side = side;
        d->in[side] = 1;
        d->fig[side][DF_ALLOCS] = st->allocations;
        d->fig[side][DF_BYTES] = st->bytes_allocated;
        d->fig[side][DF_LEAKED] = st->leaked_bytes;
        d->fig[side][DF_PEAK] = st->peak_bytes;
    }
    free(buf);
    return rc;
}

/* Every frame string ends with its one \x1e, so the first frame that
 * differs decides as it would in the concatenation; a key that is a
 * prefix of the other comes first. */
int df_key_cmp(const df_site_t *a, const df_site_t *b)
{
    size_t n = a->nframes < b->nframes ? a->nframes : b->nframes;
    for (size_t i = 0; i < n; i++)
        if (a->frames[i] != b->frames[i]) /* interned: equal strings, one pointer */
            return strcmp(a->frames[i], b->frames[i]);
    return a->nframes < b->nframes ? -1 : a->nframes > b->nframes;
}

static int by_key(const void *a, const void *b)
{
    return df_key_cmp(a, b);
}

void df_site_drop(df_site_t *d)
{
    free(d->frames);
    d->frames = NULL;
    d->nframes = 0;
}

int df_match(df_sites_t *s)
{
    if (s->n == 0)
        return PF_OK;
    qsort(s->v, s->n, sizeof *s->v, by_key);
    size_t out = 0;
    for (size_t i = 1; i < s->n; i++) {
        df_site_t *d = &s->v[out], *x = &s->v[i];
        if (!df_key_cmp(d, x)) {
            for (int side = 0; side < 2; side++) {
                d->in[side] |= x->in[side];
                for (int k = 0; k < DF_NFIG; k++)
                    d->fig[side][k] += x->fig[side][k];
            }
            df_site_drop(x);
        } else {
            s->v[++out] = *x;
        }
    }
    s->n = out + 1;
    return PF_OK;
}

void df_free(df_sites_t *s)
{
    for (size_t i = 0; i < s->n; i++)
        df_site_drop(&s->v[i]);
    free(s->v);
    an_xintern_free(&s->frames);
    memset(s, 0, sizeof *s);
}
