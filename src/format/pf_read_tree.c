/* pf_read_tree.c - NODES and STACKS records, and walking a stack's frames.
 *
 * Node ids run 1, 2, 3 ... across the file, so each NODES record must
 * start right after the previous one, and a node's parent must be an
 * earlier node: that makes every parent chain strictly decreasing, so no
 * cycle can exist and a walk from any leaf ends.  Each node's depth is its
 * parent's plus one and is capped at PF_READ_MAX_DEPTH; the depths summed
 * over all stacks are capped at PF_READ_MAX_FRAMES so that a small crafted
 * file cannot make the report print billions of frames.
 *
 * Format 3 writes both records as deltas: a node as (id - parent, ip -
 * parent's ip), a stack as (id - the record's previous id, leaf - (id -
 * 1)).  1.x and 2.x write the absolute values.
 */
#include "common/ut_varint.h"
#include "format/pf_read_int.h"

int pf_read_nodes(pf_cur_t *c)
{
    pf_parse_t *ps = c->ps;
    pf_profile_t *p = ps->prof;
    uint64_t first, count;
    int rc;
    if ((rc = pf_cur_u(c, "first", &first)))
        return rc;
    if (first != p->n_nodes + 1)
        return PF_CORRUPT(ps, "NODES record starts at node %llu, but %zu nodes came before",
                          (unsigned long long)first, p->n_nodes);
    /* parent and ip take at least one byte each */
    if ((rc = pf_cur_count(c, "count", 2, &count)))
        return rc;
    if (count > (uint64_t)INT32_MAX - p->n_nodes)
        return PF_CORRUPT(ps, "more than %d nodes", INT32_MAX);
    pf_node_t *nodes = pf_read_grow(p->nodes, &ps->cap_nodes, p->n_nodes + count, sizeof *nodes);
    if (!nodes)
        return PF_NOMEM(ps);
    p->nodes = nodes;
    int deltas = p->major >= 3;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t id = p->n_nodes + 1, parent, ip;
        if ((rc = pf_cur_u(c, "parent", &parent)) || (rc = pf_cur_u(c, "ip", &ip)))
            return rc;
        if (deltas) {
            /* parent: how far back (0 would be the node itself); ip: zigzag
             * of the difference from the parent's, which wraps like the
             * writer's subtraction did */
            if (parent == 0 || parent > id)
                return PF_CORRUPT(ps, "node %llu has its parent %llu nodes back, which is not an "
                                      "earlier node or none",
                                  (unsigned long long)id, (unsigned long long)parent);
            parent = id - parent;
            ip = (parent ? nodes[parent - 1].ip : 0) + (uint64_t)ut_unzigzag(ip);
        }
        if (parent >= id)
            return PF_CORRUPT(ps,
                              "node %llu has parent %llu, which is not an earlier node "
                              "(forward reference or cycle)",
                              (unsigned long long)id, (unsigned long long)parent);
        uint32_t depth = parent ? nodes[parent - 1].depth + 1 : 1;
        if (depth > PF_READ_MAX_DEPTH)
            return PF_CORRUPT(ps, "node %llu is %u frames deep, more than the %u this reader accepts",
                              (unsigned long long)id, depth, PF_READ_MAX_DEPTH);
        pf_node_t *n = &nodes[p->n_nodes];
        n->parent = (uint32_t)parent;
        n->depth = depth;
        n->ip = ip;
        n->module = pf_read_module_find(ps, ip);
        p->n_nodes++;
    }
    return PF_OK;
}

int pf_read_stacks(pf_cur_t *c)
{
    pf_parse_t *ps = c->ps;
    pf_profile_t *p = ps->prof;
    uint64_t count;
    int rc;
    if ((rc = pf_cur_count(c, "count", 3, &count)))
        return rc;
    pf_stack_t *st = pf_read_grow(p->stacks, &ps->cap_stacks, p->n_stacks + count, sizeof *st);
    if (!st)
        return PF_NOMEM(ps);
    p->stacks = st;
    int deltas = p->major >= 3;
    uint64_t prev_id = 0;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t id, leaf, flags;
        uint32_t old;
        if ((rc = pf_cur_u(c, "stack_id", &id)) || (rc = pf_cur_u(c, "leaf", &leaf)) ||
            (rc = pf_cur_u(c, "flags", &flags)))
            return rc;
        if (deltas) {
            /* wrapping sums: whatever they make is checked below as an
             * absolute file would be */
            id = prev_id + (uint64_t)ut_unzigzag(id);
            leaf = id - 1 + (uint64_t)ut_unzigzag(leaf);
            prev_id = id;
        }
        if (leaf > p->n_nodes)
            return PF_CORRUPT(ps, "stack %llu has leaf node %llu, but only %zu nodes exist",
                              (unsigned long long)id, (unsigned long long)leaf, p->n_nodes);
        if (pf_map_get(&ps->stack_ids, id, 0, &old))
            return PF_CORRUPT(ps, "stack %llu is defined twice", (unsigned long long)id);
        if (p->n_stacks >= UINT32_MAX)
            return PF_CORRUPT(ps, "too many stacks");
        if (pf_map_put(&ps->stack_ids, id, 0, (uint32_t)p->n_stacks))
            return PF_NOMEM(ps);
        pf_stack_t *s = &st[p->n_stacks++];
        s->id = id;
        s->flags = flags;
        s->leaf = (uint32_t)leaf;
        s->depth = leaf ? p->nodes[leaf - 1].depth : 0;
        s->first_counter = 0;
        s->n_counters = 0;
        ps->total_frames += s->depth;
        if (ps->total_frames > PF_READ_MAX_FRAMES)
            return PF_CORRUPT(ps, "the stacks hold more than %u frames in total",
                              PF_READ_MAX_FRAMES);
    }
    return PF_OK;
}

uint32_t pf_reader_stack_frames(const pf_profile_t *p, const pf_stack_t *s, pf_frame_t *out,
                                uint32_t cap)
{
    uint32_t n = 0;
    /* Parents are strictly smaller ids, so this ends within `depth` steps. */
    for (uint32_t id = s->leaf; id && id <= p->n_nodes; id = p->nodes[id - 1].parent) {
        if (n < cap) {
            out[n].ip = p->nodes[id - 1].ip;
            out[n].module = p->nodes[id - 1].module;
        }
        n++;
    }
    return n;
}
