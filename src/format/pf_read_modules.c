/* pf_read_modules.c - MODULE_LOAD / MODULE_UNLOAD and the map of loaded
 * modules used to place return addresses.
 *
 * docs/FORMAT.md: a return address belongs to the module whose
 * [start, end) contains it at the position of its NODES record, so the
 * reader applies loads and unloads in file order.  The loaded set is an
 * array of module indexes sorted by start; lookups are a binary search.
 * Module ids must increase strictly (they are assigned in load order and
 * never reused), which also lets an unload find its module by bisection.
 */
#include <string.h>

#include "format/pf_read_int.h"

/* Index in prof->modules of the module with this id, -1 if none. */
static ptrdiff_t pf_read_module_by_id(const pf_profile_t *p, uint64_t id)
{
    size_t lo = 0, hi = p->n_modules;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->modules[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->n_modules && p->modules[lo].id == id ? (ptrdiff_t)lo : -1;
}

/* First position in the active array whose module starts above `addr`. */
static size_t pf_read_active_upper(const pf_parse_t *ps, uint64_t addr)
{
    size_t lo = 0, hi = ps->n_active;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ps->prof->modules[ps->active[mid]].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int32_t pf_read_module_find(const pf_parse_t *ps, uint64_t ip)
{
    size_t pos = pf_read_active_upper(ps, ip);
    if (!pos)
        return -1;
    uint32_t idx = ps->active[pos - 1];
    const pf_module_t *m = &ps->prof->modules[idx];
    return ip >= m->start && ip < m->end ? (int32_t)idx : -1;
}

/* Decode the fields of one MODULE_LOAD into *m (strings owned by *m). */
static int pf_read_module_fields(pf_cur_t *c, pf_module_t *m)
{
    int rc;
    if ((rc = pf_cur_u(c, "module_id", &m->id)) || (rc = pf_cur_u(c, "t", &m->t_load)) ||
        (rc = pf_cur_u(c, "load_bias", &m->load_bias)) || (rc = pf_cur_u(c, "start", &m->start)) ||
        (rc = pf_cur_u(c, "end", &m->end)) || (rc = pf_cur_str(c, "path", &m->path)) ||
        (rc = pf_cur_bytes(c, "build_id", &m->build_id, &m->build_id_len)))
        return rc;
    return PF_OK;
}

int pf_read_module_load(pf_cur_t *c)
{
    pf_parse_t *ps = c->ps;
    pf_profile_t *p = ps->prof;
    pf_module_t *mods = pf_read_grow(p->modules, &ps->cap_modules, p->n_modules + 1, sizeof *mods);
    if (!mods)
        return PF_NOMEM(ps);
    p->modules = mods;
    pf_module_t *m = &mods[p->n_modules];
    memset(m, 0, sizeof *m);
    p->n_modules++; /* owned from here on, so pf_reader_free releases its strings */
    int rc = pf_read_module_fields(c, m);
    if (rc)
        return rc;
    if (p->n_modules > 1 && m->id <= mods[p->n_modules - 2].id)
        return PF_CORRUPT(ps, "module id %llu is not above the previous module id %llu",
                          (unsigned long long)m->id,
                          (unsigned long long)mods[p->n_modules - 2].id);
    if (m->start >= m->end)
        return PF_CORRUPT(ps, "module %llu (%s) has start 0x%llx not below end 0x%llx",
                          (unsigned long long)m->id, m->path, (unsigned long long)m->start,
                          (unsigned long long)m->end);
    if (ps->n_active >= PF_READ_MAX_ACTIVE_MODULES)
        return PF_CORRUPT(ps, "more than %u modules loaded at once", PF_READ_MAX_ACTIVE_MODULES);
    uint32_t *act = pf_read_grow(ps->active, &ps->cap_active, ps->n_active + 1, sizeof *act);
    if (!act)
        return PF_NOMEM(ps);
    ps->active = act;
    size_t pos = pf_read_active_upper(ps, m->start);
    memmove(&act[pos + 1], &act[pos], (ps->n_active - pos) * sizeof *act);
    act[pos] = (uint32_t)(p->n_modules - 1);
    ps->n_active++;
    return PF_OK;
}

int pf_read_module_unload(pf_cur_t *c)
{
    pf_parse_t *ps = c->ps;
    pf_profile_t *p = ps->prof;
    uint64_t id, t;
    int rc;
    if ((rc = pf_cur_u(c, "module_id", &id)) || (rc = pf_cur_u(c, "t", &t)))
        return rc;
    ptrdiff_t idx = pf_read_module_by_id(p, id);
    if (idx < 0)
        return PF_CORRUPT(ps, "unload of module %llu, which no earlier MODULE_LOAD defines",
                          (unsigned long long)id);
    pf_module_t *m = &p->modules[idx];
    if (m->unloaded)
        return PF_CORRUPT(ps, "module %llu (%s) is unloaded twice", (unsigned long long)id, m->path);
    m->unloaded = 1;
    m->t_unload = t;
    for (size_t i = 0; i < ps->n_active; i++) {
        if (ps->active[i] == (uint32_t)idx) {
            memmove(&ps->active[i], &ps->active[i + 1], (ps->n_active - i - 1) * sizeof *ps->active);
            ps->n_active--;
            break;
        }
    }
    return PF_OK;
}
