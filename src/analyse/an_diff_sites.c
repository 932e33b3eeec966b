/* an_diff_sites.c - collect each profile's stacks under a key made of their
 * symbolised frames, and match the keys of the two profiles.  Two stacks
 * of one profile with the same frames (e.g. that differ only in frames
 * heapscope drops) are summed. */
#include "analyse/an_diff_sites.h"

#include <stdlib.h>
#include <string.h>

static int append(char **buf, size_t *len, size_t *cap, const char *s)
{
    size_t n = strlen(s);
    if (*len + n + 1 > *cap) {
        size_t nc = (*cap ? *cap : 128);
        while (nc < *len + n + 1)
            nc *= 2;
        char *nb = realloc(*buf, nc);
        if (!nb)
            return PF_ENOMEM;
        *buf = nb;
        *cap = nc;
    }
    memcpy(*buf + *len, s, n + 1);
    *len += n;
    return PF_OK;
}

int df_collect(df_sites_t *s, an_report_t *r, int side)
{
    const an_model_t *m = &r->model;
    for (size_t i = 0; i < m->n_stats; i++) {
        const an_stats_t *st = &m->stats[i];
        int rc = an_frames_get(&r->frames, r->prof, r->syms, &r->prof->stacks[st->stack]);
        if (rc != PF_OK)
            return rc;
        char *key = NULL;
        size_t len = 0, cap = 0;
        rc = append(&key, &len, &cap, "");
        for (size_t f = 0; f < r->frames.n && rc == PF_OK; f++) {
            const an_frame_t *fr = &r->frames.v[f];
            char line[32];
            snprintf(line, sizeof line, "\x1f%u\x1e", (unsigned)fr->line);
            rc = append(&key, &len, &cap, fr->function ? fr->function : "??");
            if (rc == PF_OK)
                rc = append(&key, &len, &cap, "\x1f");
            if (rc == PF_OK)
                rc = append(&key, &len, &cap, fr->file ? fr->file : "");
            if (rc == PF_OK)
                rc = append(&key, &len, &cap, line);
        }
        if (rc == PF_OK && s->n == s->cap) {
            size_t nc = s->cap ? s->cap * 2 : 64;
            df_site_t *nv = realloc(s->v, nc * sizeof *nv);
            if (!nv)
                rc = PF_ENOMEM;
            else {
                s->v = nv;
                s->cap = nc;
            }
        }
        if (rc != PF_OK) {
            free(key);
            return rc;
        }
        df_site_t *d = &s->v[s->n++];
        memset(d, 0, sizeof *d);
        d->key = key;
        d->side = side;
        d->in[side] = 1;
        d->fig[side][DF_ALLOCS] = st->allocations;
        d->fig[side][DF_BYTES] = st->bytes_allocated;
        d->fig[side][DF_LEAKED] = st->leaked_bytes;
        d->fig[side][DF_PEAK] = st->peak_bytes;
    }
    return PF_OK;
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const df_site_t *)a)->key, ((const df_site_t *)b)->key);
}

int df_match(df_sites_t *s)
{
    if (s->n == 0)
        return PF_OK;
    qsort(s->v, s->n, sizeof *s->v, by_key);
    size_t out = 0;
    for (size_t i = 1; i < s->n; i++) {
        df_site_t *d = &s->v[out], *x = &s->v[i];
        if (!strcmp(d->key, x->key)) {
            for (int side = 0; side < 2; side++) {
                d->in[side] |= x->in[side];
                for (int k = 0; k < DF_NFIG; k++)
                    d->fig[side][k] += x->fig[side][k];
            }
            free(x->key);
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
        free(s->v[i].key);
    free(s->v);
    memset(s, 0, sizeof *s);
}
