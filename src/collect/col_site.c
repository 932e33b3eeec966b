/* col_site.c - allocation sites: a (stack node, size key) pair gets a
 * process-wide id, 1, 2, 3 ..., that fits the shadow value's 24 bits.
 *
 * The shadow map stores a live block's site, so a free finds the block's
 * stack and size class without any lookup, and every thread counts events
 * in an array indexed by site id (col_thread.c).  Site 1 is the
 * pseudo-site of the blocks no site could be made for (the table was
 * full): node 0 (no frames), size key 0, in the index like any other, so
 * that no second site has the same node and key.  Lookups (col_site_get, inline in
 * col_internal.h) take no lock; a new site takes the table's spinlock.
 * A node's first COL_NODE_CHAIN sites (size keys) are found by its list
 * (col_node_links, then each site's next), the others by the index. */
#include "collect/col_internal.h"

#define INDEX_INITIAL (1u << 8) /* slots; grows at 3/4 full */

col_site_t *col_sites;
col_idtab_t col_site_tab;
static uint32_t limit; /* ids below it can be made */

int col_site_init(void)
{
    limit = col_config_id_limit(col_config.fault_sites, COL_SITE_MAX);
    col_sites = col_vm_map_for(COL_VM_TREE, (size_t)COL_SITE_MAX * sizeof *col_sites);
    if (!col_sites || col_idtab_init(&col_site_tab, INDEX_INITIAL, col_site_key) != 0)
        return -1;
    col_idtab_put_locked(&col_site_tab, 0, 0, COL_SITE_LOST); /* its record: zeros */
    col_site_tab.last = COL_SITE_LOST;
    return 0;
}

uint32_t col_site_count(void)
{
    return __atomic_load_n(&col_site_tab.last, __ATOMIC_ACQUIRE);
}

/* The site (node, key), made now, unless another thread made it since
 * the caller's lookup (after the index's version `since`, read before the
 * node's list); 0 if the table is full.  As col_node_add: the node's first
 * COL_NODE_CHAIN sites go in its list, its others in the index. */
UT_COLD uint32_t col_site_add(uint32_t node, uint64_t key, uint32_t since)
{
    uint32_t *head = col_site_listed(node) ? &col_node_links[node].site : NULL;
    uint32_t id = col_listed_lock(&col_site_tab, head, key, node, col_site_key, col_site_next, &since);
    if (id != 0)
        return id; /* the holder made it */
    col_listed_at_t at;
    id = col_listed_find_locked(&col_site_tab, head, key, node, col_site_key, col_site_next, since,
                                &at);
    if (id == 0 && (id = col_listed_new_id_locked(&col_site_tab, &at, limit)) != 0) {
        col_sites[id].key = key;
        col_sites[id].node = node;
        col_listed_put_locked(&col_site_tab, &at, key, node, col_site_next, id);
    }
    col_idtab_unlock(&col_site_tab);
    return id;
}

void col_site_atfork_prepare(void)
{
    col_idtab_lock(&col_site_tab);
}

void col_site_atfork_parent(void)
{
    col_idtab_unlock(&col_site_tab);
}

void col_site_atfork_child(void)
{
    col_idtab_reset_lock(&col_site_tab);
}
