/* an_export_speedscope.c - speedscope's JSON file format
 * (https://www.speedscope.app/file-format-schema.json).
 *
 * One "sampled" profile per cost (allocations, bytes, leaked, peak,
 * temporary), all sharing one frame table: every distinct (function, file,
 * line) of the symbolised stacks, inlined calls included.  Each stack with
 * a non-zero cost is one sample, its frame indexes listed root first as
 * speedscope expects, and its weight is the stack's cost; endValue is the
 * sum of the weights.  Units are "bytes" or "none" (counts).
 */
#include "analyse/an_export.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/an_export_stacks.h"
#include "analyse/an_json.h"
#include "common/ut_grow.h"

typedef struct ss_stacks {
    an_xintern_t frames;      /* key "function\x1f file\x1f line" */
    uint32_t *idx;            /* frame indexes of all stacks, root first */
    size_t n_idx, cap_idx;
    size_t *first;            /* stack i: idx[first[i] .. first[i+1]) */
} ss_stacks_t;

/* Symbolise every stack of r into s.  Returns 0 or PF_ENOMEM. */
static int ss_collect(ss_stacks_t *s, an_report_t *r)
{
    const an_model_t *m = &r->model;
    s->first = malloc((m->n_stats + 1) * sizeof *s->first);
    if (!s->first)
        return PF_ENOMEM;
    for (size_t i = 0; i < m->n_stats; i++) {
        s->first[i] = s->n_idx;
        if (an_frames_get(&r->frames, r->prof, r->syms, &r->prof->stacks[m->stats[i].stack]))
            return PF_ENOMEM;
        const an_frames_t *f = &r->frames;
        if (ut_grow((void **)&s->idx, &s->cap_idx, s->n_idx + f->n, sizeof *s->idx))
            return PF_ENOMEM;
        for (size_t k = f->n; k-- > 0;) {
            char key[1024];
            int len = snprintf(key, sizeof key, "%s\x1f%s\x1f%" PRIu32, f->v[k].function,
                               f->v[k].file ? f->v[k].file : "", f->v[k].line);
            if (len < 0)
                return PF_ENOMEM;
            if ((size_t)len >= sizeof key)
                len = sizeof key - 1;
            uint32_t id = an_xintern_add(&s->frames, key, (size_t)len, NULL);
            if (id == UINT32_MAX)
                return PF_ENOMEM;
            s->idx[s->n_idx++] = id;
        }
    }
    s->first[m->n_stats] = s->n_idx;
    return PF_OK;
}

/* The frame table: each key split back into name, file and line. */
static void ss_write_frames(an_json_t *j, const ss_stacks_t *s)
{
    an_json_key(j, "frames");
    an_json_array_begin(j);
    for (size_t i = 0; i < s->frames.n; i++) {
        const char *k = s->frames.strs[i];
        const char *sep1 = strchr(k, '\x1f');
        const char *sep2 = sep1 ? strchr(sep1 + 1, '\x1f') : NULL;
        an_json_object_begin(j);
        an_json_key(j, "name");
        an_json_strn(j, k, sep1 ? (size_t)(sep1 - k) : strlen(k));
        if (sep1 && sep2 && sep2 > sep1 + 1) {
            an_json_key(j, "file");
            an_json_strn(j, sep1 + 1, (size_t)(sep2 - sep1 - 1));
            unsigned long line = strtoul(sep2 + 1, NULL, 10);
            if (line)
                an_json_kv_u64(j, "line", line);
        }
        an_json_object_end(j);
    }
    an_json_array_end(j);
}

static void ss_write_profile(an_json_t *j, an_report_t *r, const ss_stacks_t *s,
                             an_export_cost_t c)
{
    const an_model_t *m = &r->model;
    uint64_t total = 0;
    for (size_t i = 0; i < m->n_stats; i++)
        total = an_add(total, an_export_cost_of(&m->stats[i], c));
    an_json_object_begin(j);
    an_json_kv_str(j, "type", "sampled");
    an_json_kv_str(j, "name", an_export_cost_name(c));
    an_json_kv_str(j, "unit", strcmp(an_export_cost_unit(c), "bytes") ? "none" : "bytes");
    an_json_kv_u64(j, "startValue", 0);
    an_json_kv_u64(j, "endValue", total);
    an_json_key(j, "samples");
    an_json_array_begin(j);
    for (size_t i = 0; i < m->n_stats; i++) {
        if (!an_export_cost_of(&m->stats[i], c))
            continue;
        an_json_array_begin(j);
        for (size_t k = s->first[i]; k < s->first[i + 1]; k++)
            an_json_u64(j, s->idx[k]);
        an_json_array_end(j);
    }
    an_json_array_end(j);
    an_json_key(j, "weights");
    an_json_array_begin(j);
    for (size_t i = 0; i < m->n_stats; i++) {
        uint64_t v = an_export_cost_of(&m->stats[i], c);
        if (v)
            an_json_u64(j, v);
    }
    an_json_array_end(j);
    an_json_object_end(j);
}

int an_export_speedscope(an_report_t *r, FILE *out)
{
    ss_stacks_t s;
    memset(&s, 0, sizeof s);
    int rc = ss_collect(&s, r);
    if (!rc) {
        an_json_t j;
        an_json_init(&j, out);
        an_json_object_begin(&j);
        an_json_kv_str(&j, "$schema", "https://www.speedscope.app/file-format-schema.json");
        an_json_kv_str(&j, "exporter", "heapscope");
        char name[512];
        snprintf(name, sizeof name, "heapscope: %s",
                 r->prof->info.exe ? an_export_basename(r->prof->info.exe) : r->path);
        an_json_kv_str(&j, "name", name);
        an_json_kv_u64(&j, "activeProfileIndex", AN_EXPORT_BYTES);
        an_json_key(&j, "shared");
        an_json_object_begin(&j);
        ss_write_frames(&j, &s);
        an_json_object_end(&j);
        an_json_key(&j, "profiles");
        an_json_array_begin(&j);
        for (int c = 0; c < AN_EXPORT_NCOSTS; c++)
            ss_write_profile(&j, r, &s, (an_export_cost_t)c);
        an_json_array_end(&j);
        an_json_object_end(&j);
        fputc('\n', out);
        if (ferror(out))
            rc = PF_EIO;
    }
    an_xintern_free(&s.frames);
    free(s.idx);
    free(s.first);
    return rc;
}
