/* an_flame.h - the merged frame tree behind `heapscope flamegraph` and the
 * flamegraph of `heapscope html`.
 *
 * Every stack of a profile is symbolised (inlined calls become frames of
 * their own) and walked from its outermost frame to the allocation site
 * (or the other way round for --reverse); frames with the same function
 * name under the same parent merge into one node that carries the sums of
 * the five costs of the stacks passing through it.  Node 0 is the root
 * ("all"), and nodes are numbered so that a parent always comes before
 * its children, which lets the writers lay the tree out in one pass.
 */
#ifndef AN_FLAME_H
#define AN_FLAME_H

#include <stddef.h>
#include <stdint.h>

#include "analyse/an_report.h"

/* The costs a flamegraph can size frames by (--cost). */
typedef enum an_flame_cost {
    AN_FLAME_ALLOCATIONS,
    AN_FLAME_BYTES,
    AN_FLAME_LEAKED,
    AN_FLAME_PEAK,
    AN_FLAME_TEMPORARY,
    AN_FLAME_NCOSTS
} an_flame_cost_t;

/* Which kind of module a frame's code lives in; it picks the colours. */
typedef enum an_flame_class {
    AN_FLAME_PROGRAM,      /* the executable itself */
    AN_FLAME_LIBC,         /* libc.so.6 and the dynamic loader */
    AN_FLAME_LIBSTDCXX,    /* libstdc++ / libgcc_s */
    AN_FLAME_OTHER,        /* any other library, or no module */
} an_flame_class_t;

typedef struct an_flame_node {
    uint32_t name;         /* index into names */
    uint32_t parent;       /* node index; the root is its own parent */
    uint32_t depth;        /* 0 for the root */
    uint8_t cls;           /* an_flame_class_t of the first frame merged here */
    uint64_t cost[AN_FLAME_NCOSTS]; /* sums over the stacks through it */
} an_flame_node_t;

typedef struct an_flame {
    an_flame_node_t *nodes;
    size_t n_nodes, cap_nodes;
    char **names;          /* distinct function names */
    size_t n_names, cap_names;
    /* open-addressing indexes: name -> names[], (parent, name) -> node */
    uint32_t *name_hash, *node_hash;
    size_t name_hash_cap, node_hash_cap;
} an_flame_t;

/* Names of the costs as --cost spells them ("bytes", ...), and parsing. */
const char *an_flame_cost_name(an_flame_cost_t c);
int an_flame_cost_parse(const char *s, an_flame_cost_t *c);

/* The cost figures of one stack, in an_flame_cost_t order. */
void an_flame_stack_costs(const an_stats_t *s, uint64_t cost[AN_FLAME_NCOSTS]);

/* The class of module `module` of profile p (-1: no module). */
an_flame_class_t an_flame_module_class(const pf_profile_t *p, int32_t module);

/* Intern a function name; returns its index or UINT32_MAX (no memory). */
uint32_t an_flame_intern(an_flame_t *f, const char *name);

/* Build the tree of all stacks of r (loaded by an_report_load).  reverse:
 * the root's children are the allocation sites (an icicle of callers).
 * Returns PF_OK or PF_ENOMEM; either way an_flame_free() releases it. */
int an_flame_build(an_flame_t *f, an_report_t *r, int reverse);

void an_flame_free(an_flame_t *f);

/* `heapscope flamegraph [--cost C] [--reverse] [--title T] [--width PX]
 * -o OUT.svg FILE`; argv[0] is "flamegraph".  Returns the exit status:
 * 0 written, 1 the profile cannot be read or OUT cannot be written, 2 bad
 * usage (message on stderr). */
int an_flame_main(int argc, char **argv);

#endif
