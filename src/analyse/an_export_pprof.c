/* an_export_pprof.c - the profile as pprof's profile.proto (gzipped
 * protobuf), the format pprof, Pyroscope and Parca read.
 *
 * The message is built with the C code protoc-c generates from
 * pprof/profile.proto and compressed with zlib in gzip framing:
 *   sample_type  alloc_objects/count, alloc_space/bytes,
 *                inuse_objects/count, inuse_space/bytes (live at the end)
 *   sample       one per stack: its locations leaf first and the 4 values
 *   mapping      one per module (id = module index + 1), with its build ID
 *                in hex, address range, file offset and path
 *   location     one per distinct return address; its Line entries are
 *                the inlined calls, innermost first, then the function
 *                that holds the address
 *   function     one per (name, file); names are demangled already, so
 *                system_name repeats the name
 * The string table starts with "" as the format requires.
 */
#include "analyse/an_export.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "analyse/an_export_stacks.h"
#include "pprof/profile.pb-c.h"
#include "common/ut_grow.h"

typedef Perftools__Profiles__Profile pp_profile_t;
typedef Perftools__Profiles__Sample pp_sample_t;
typedef Perftools__Profiles__Location pp_location_t;
typedef Perftools__Profiles__Line pp_line_t;
typedef Perftools__Profiles__Function pp_function_t;
typedef Perftools__Profiles__Mapping pp_mapping_t;
typedef Perftools__Profiles__ValueType pp_valuetype_t;

/* Everything the message points to, freed together by pp_free(). */
typedef struct pp_build {
    an_xintern_t strings;     /* the string table */
    an_xintern_t funcs;       /* key "name\x1ffile" -> function id - 1 */
    an_xintern_t locs;        /* key "module:address" -> location id - 1 */
    pp_function_t *fn;        /* fn[funcs.n] */
    size_t fn_cap;
    pp_location_t *loc;       /* loc[locs.n] */
    size_t loc_cap;
    size_t n_loc_init;        /* loc[0 .. n_loc_init) initialised */
    pp_sample_t *samples;
    size_t n_samples;
    pp_mapping_t *maps;
    int64_t *values;          /* 4 per sample */
    uint64_t *loc_ids;        /* location ids of all samples */
    size_t n_loc_ids, cap_loc_ids;
} pp_build_t;

/* String index of s; -1 when out of memory. */
static int64_t pp_str(pp_build_t *b, const char *s)
{
    uint32_t i = an_xintern_str(&b->strings, s);
    return i == UINT32_MAX ? -1 : (int64_t)i;
}

/* The function id of (name, file), adding it when new; 0 on no memory. */
static uint64_t pp_function(pp_build_t *b, const char *name, const char *file)
{
    char key[1024];
    int len = snprintf(key, sizeof key, "%s\x1f%s", name, file ? file : "");
    if (len < 0)
        return 0;
    if ((size_t)len >= sizeof key)
        len = sizeof key - 1;
    int added;
    uint32_t i = an_xintern_add(&b->funcs, key, (size_t)len, &added);
    if (i == UINT32_MAX)
        return 0;
    if (added) {
        if (ut_grow((void **)&b->fn, &b->fn_cap, (size_t)i + 1, sizeof *b->fn))
            return 0;
        pp_function_t *f = &b->fn[i];
        perftools__profiles__function__init(f);
        f->id = (uint64_t)i + 1;
        int64_t n = pp_str(b, name), fl = pp_str(b, file ? file : "");
        if (n < 0 || fl < 0)
            return 0;
        f->name = f->system_name = n;
        f->filename = fl;
    }
    return (uint64_t)i + 1;
}

/* The location id of frames v[0..n) (one return address: its inlined
 * calls, then the function holding it); 0 when out of memory. */
static uint64_t pp_location(pp_build_t *b, const an_frame_t *v, size_t n)
{
    char key[64];
    int len = snprintf(key, sizeof key, "%" PRId32 ":%" PRIx64, v[0].module, v[0].address);
    int added;
    uint32_t i = an_xintern_add(&b->locs, key, (size_t)len, &added);
    if (i == UINT32_MAX)
        return 0;
    if (added) {
        if (ut_grow((void **)&b->loc, &b->loc_cap, (size_t)i + 1, sizeof *b->loc))
            return 0;
        pp_location_t *l = &b->loc[i];
        perftools__profiles__location__init(l);
        b->n_loc_init = (size_t)i + 1;
        l->id = (uint64_t)i + 1;
        l->mapping_id = v[0].module >= 0 ? (uint64_t)v[0].module + 1 : 0;
        l->address = v[0].address;
        l->line = calloc(n, sizeof *l->line);
        pp_line_t *lines = calloc(n, sizeof *lines);
        if (!l->line || !lines) {
            free(lines);
            return 0;
        }
        l->n_line = n;
        for (size_t k = 0; k < n; k++) {
            perftools__profiles__line__init(&lines[k]);
            lines[k].function_id = pp_function(b, v[k].function, v[k].file);
            if (!lines[k].function_id) {
                free(lines);
                l->n_line = 0;
                return 0;
            }
            lines[k].line = v[k].line;
            l->line[k] = &lines[k];
        }
    }
    return (uint64_t)i + 1;
}

/* Add one sample for stack statistics s.  Returns 0 or PF_ENOMEM. */
static int pp_sample(pp_build_t *b, an_report_t *r, const an_stats_t *s)
{
    if (!s->allocations && !s->leaked_allocations)
        return PF_OK; /* nothing to show (a stack seen only in frees) */
    if (an_frames_get(&r->frames, r->prof, r->syms, &r->prof->stacks[s->stack]))
        return PF_ENOMEM;
    const an_frames_t *f = &r->frames;
    size_t first = b->n_loc_ids;
    for (size_t i = 0; i < f->n;) {
        size_t j = i;
        while (j + 1 < f->n && f->v[j].inlined)
            j++;
        uint64_t id = pp_location(b, &f->v[i], j - i + 1);
        if (!id || ut_grow((void **)&b->loc_ids, &b->cap_loc_ids, b->n_loc_ids + 1, sizeof *b->loc_ids))
            return PF_ENOMEM;
        b->loc_ids[b->n_loc_ids++] = id;
        i = j + 1;
    }
    pp_sample_t *sm = &b->samples[b->n_samples];
    perftools__profiles__sample__init(sm);
    /* loc_ids may move while growing: store the offset, fix up later */
    sm->location_id = (uint64_t *)(uintptr_t)first;
    sm->n_location_id = b->n_loc_ids - first;
    int64_t *val = &b->values[4 * b->n_samples];
    val[0] = (int64_t)(s->allocations > INT64_MAX ? INT64_MAX : s->allocations);
    val[1] = (int64_t)(s->bytes_allocated > INT64_MAX ? INT64_MAX : s->bytes_allocated);
    val[2] = (int64_t)(s->leaked_allocations > INT64_MAX ? INT64_MAX : s->leaked_allocations);
    val[3] = (int64_t)(s->leaked_bytes > INT64_MAX ? INT64_MAX : s->leaked_bytes);
    sm->value = val;
    sm->n_value = 4;
    b->n_samples++;
    return PF_OK;
}

static void pp_free(pp_build_t *b)
{
    for (size_t i = 0; i < b->n_loc_init; i++) {
        if (b->loc[i].n_line)
            free(b->loc[i].line[0]);
        free(b->loc[i].line);
    }
    free(b->loc);
    free(b->fn);
    free(b->samples);
    free(b->maps);
    free(b->values);
    free(b->loc_ids);
    an_xintern_free(&b->strings);
    an_xintern_free(&b->funcs);
    an_xintern_free(&b->locs);
}

/* gzip `len` bytes of `data` to out.  Returns 0, PF_ENOMEM or PF_EIO. */
static int pp_gzip(const uint8_t *data, size_t len, FILE *out)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    /* windowBits 15 + 16: gzip framing, as pprof expects */
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return PF_ENOMEM;
    uint8_t buf[65536];
    int rc = PF_OK, zr;
    z.next_in = (Bytef *)(uintptr_t)data;
    z.avail_in = (uInt)len; /* profiles stay far below 4 GiB of protobuf */
    do {
        z.next_out = buf;
        z.avail_out = sizeof buf;
        zr = deflate(&z, Z_FINISH);
        if (zr == Z_STREAM_ERROR) {
            rc = PF_ENOMEM;
            break;
        }
        size_t have = sizeof buf - z.avail_out;
        if (have && fwrite(buf, 1, have, out) != have) {
            rc = PF_EIO;
            break;
        }
    } while (zr != Z_STREAM_END);
    deflateEnd(&z);
    return rc;
}

/* Fill the message p from r into b.  Returns 0 or PF_ENOMEM. */
static int pp_fill(pp_build_t *b, an_report_t *r, pp_profile_t *p, pp_valuetype_t st[4],
                   pp_valuetype_t **stp, pp_valuetype_t *period, pp_mapping_t ***mp,
                   int64_t *comment)
{
    const pf_profile_t *prof = r->prof;
    const an_model_t *m = &r->model;
    if (pp_str(b, "") != 0)
        return PF_ENOMEM;
    static const char *const types[4][2] = {
        {"alloc_objects", "count"}, {"alloc_space", "bytes"},
        {"inuse_objects", "count"}, {"inuse_space", "bytes"},
    };
    for (int i = 0; i < 4; i++) {
        perftools__profiles__value_type__init(&st[i]);
        st[i].type = pp_str(b, types[i][0]);
        st[i].unit = pp_str(b, types[i][1]);
        stp[i] = &st[i];
    }
    p->n_sample_type = 4;
    p->sample_type = stp;
    perftools__profiles__value_type__init(period);
    period->type = pp_str(b, "space");
    period->unit = pp_str(b, "bytes");
    p->period_type = period;
    p->period = 1; /* every allocation is recorded, none sampled */
    p->default_sample_type = pp_str(b, "inuse_space");
    char text[512];
    snprintf(text, sizeof text, "heapscope profile of %s (pid %" PRIu64 ")",
             prof->info.exe ? prof->info.exe : "?", prof->info.pid);
    *comment = pp_str(b, text);
    p->comment = comment;
    p->n_comment = 1;
    p->time_nanos = (int64_t)(prof->info.start_real_ns > INT64_MAX ? 0 : prof->info.start_real_ns);
    p->duration_nanos = (int64_t)(m->sum.run_time_ns > INT64_MAX ? 0 : m->sum.run_time_ns);

    b->maps = calloc(prof->n_modules ? prof->n_modules : 1, sizeof *b->maps);
    *mp = calloc(prof->n_modules ? prof->n_modules : 1, sizeof **mp);
    if (!b->maps || !*mp)
        return PF_ENOMEM;
    for (size_t i = 0; i < prof->n_modules; i++) {
        const pf_module_t *md = &prof->modules[i];
        pp_mapping_t *mm = &b->maps[i];
        perftools__profiles__mapping__init(mm);
        mm->id = i + 1;
        mm->memory_start = md->start;
        mm->memory_limit = md->end;
        mm->file_offset = an_sub(md->start, md->load_bias);
        mm->filename = pp_str(b, md->path ? md->path : "");
        char hex[2 * 64 + 1] = "";
        for (size_t k = 0; k < md->build_id_len && k < 64; k++)
            snprintf(hex + 2 * k, 3, "%02x", md->build_id[k]);
        mm->build_id = pp_str(b, hex);
        mm->has_functions = mm->has_filenames = mm->has_line_numbers = mm->has_inline_frames = 1;
        (*mp)[i] = mm;
    }
    p->mapping = *mp;
    p->n_mapping = prof->n_modules;

    size_t n = m->n_stats ? m->n_stats : 1;
    b->samples = calloc(n, sizeof *b->samples);
    b->values = calloc(4 * n, sizeof *b->values);
    if (!b->samples || !b->values)
        return PF_ENOMEM;
    for (size_t i = 0; i < m->n_stats; i++)
        if (pp_sample(b, r, &m->stats[i]))
            return PF_ENOMEM;
    for (size_t i = 0; i < b->n_samples; i++)
        b->samples[i].location_id = b->loc_ids + (uintptr_t)b->samples[i].location_id;
    return b->strings.n && (int64_t)b->strings.n > *comment && *comment >= 0 ? PF_OK : PF_ENOMEM;
}

int an_export_pprof(an_report_t *r, FILE *out)
{
    pp_build_t b;
    memset(&b, 0, sizeof b);
    pp_profile_t p;
    perftools__profiles__profile__init(&p);
    pp_valuetype_t st[4], *stp[4], period;
    pp_mapping_t **maps = NULL;
    pp_sample_t **samples = NULL;
    pp_location_t **locs = NULL;
    pp_function_t **fns = NULL;
    int64_t comment = -1;
    uint8_t *packed = NULL;
    int rc = pp_fill(&b, r, &p, st, stp, &period, &maps, &comment);
    if (!rc) {
        samples = calloc(b.n_samples + 1, sizeof *samples);
        locs = calloc(b.locs.n + 1, sizeof *locs);
        fns = calloc(b.funcs.n + 1, sizeof *fns);
        if (!samples || !locs || !fns)
            rc = PF_ENOMEM;
    }
    if (!rc) {
        for (size_t i = 0; i < b.n_samples; i++)
            samples[i] = &b.samples[i];
        for (size_t i = 0; i < b.locs.n; i++)
            locs[i] = &b.loc[i];
        for (size_t i = 0; i < b.funcs.n; i++)
            fns[i] = &b.fn[i];
        p.sample = samples;
        p.n_sample = b.n_samples;
        p.location = locs;
        p.n_location = b.locs.n;
        p.function = fns;
        p.n_function = b.funcs.n;
        p.string_table = b.strings.strs;
        p.n_string_table = b.strings.n;
        size_t len = perftools__profiles__profile__get_packed_size(&p);
        packed = malloc(len ? len : 1);
        if (!packed)
            rc = PF_ENOMEM;
        else {
            perftools__profiles__profile__pack(&p, packed);
            rc = pp_gzip(packed, len, out);
        }
    }
    free(packed);
    free(samples);
    free(locs);
    free(fns);
    free(maps);
    pp_free(&b);
    return rc;
}
