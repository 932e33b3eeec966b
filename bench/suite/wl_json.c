/* wl_json.c - a JSON-parsing-like workload (in place of the thesis's
 * nlohmann/json parse of a 170 MB file): each thread writes a JSON document
 * of 10,000 records into one buffer, then parses it into a tree of nodes
 * with a recursive-descent parser (every key and string value a separate
 * small string, every value a node, children in linked lists), walks the
 * tree and frees it.  Many small blocks from several call sites and
 * recursion depths.  A record is
 *   {"id":N,"name":"item-N","tags":["t..","t..","t.."],"pos":{"x":N,"y":N},"ok":true}
 * and parses into exactly 22 allocations (1 object, 7 keys, 10 value nodes,
 * 4 string values), the document into 22 * 10000 + 1.  20 x SCALE documents
 * in total, document i parsed by thread i mod P.
 * ops = P (the text buffers) + 20 * SCALE * 220001. */
#include "wl_suite.h"

#define RECORDS 10000
#define DOCS 20

enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

typedef struct jnode {
    int type;
    char *key;            /* member name inside an object, else NULL */
    char *str;            /* J_STR */
    double num;           /* J_NUM, J_BOOL */
    struct jnode *child;  /* J_ARR, J_OBJ: first element */
    struct jnode *next;   /* next sibling */
} jnode_t;

typedef struct jparser {
    const char *p;
    uint64_t allocs;
} jparser_t;

static void *j_alloc(jparser_t *jp, size_t n)
{
    jp->allocs++;
    return ws_check(malloc(n));
}

static void j_ws(jparser_t *jp)
{
    while (*jp->p == ' ' || *jp->p == '\n' || *jp->p == '\t' || *jp->p == '\r')
        jp->p++;
}

/* Parse a string literal at jp->p (at the opening quote) into a new block. */
__attribute__((noinline)) static char *j_string(jparser_t *jp)
{
    const char *s = ++jp->p;
    while (*jp->p && *jp->p != '"')
        jp->p += (*jp->p == '\\' && jp->p[1]) ? 2 : 1;
    size_t n = (size_t)(jp->p - s);
    char *out = (char *)j_alloc(jp, n + 1);
    memcpy(out, s, n);
    out[n] = 0;
    if (*jp->p == '"')
        jp->p++;
    return out;
}

static jnode_t *j_value(jparser_t *jp);

/* Parse an array or object (at '[' or '{'): children in a linked list. */
__attribute__((noinline)) static jnode_t *j_container(jparser_t *jp, int type)
{
    jnode_t *n = (jnode_t *)j_alloc(jp, sizeof *n);
    memset(n, 0, sizeof *n);
    n->type = type;
    char close = type == J_OBJ ? '}' : ']';
    jnode_t **tail = &n->child;
    jp->p++;
    j_ws(jp);
    while (*jp->p && *jp->p != close) {
        char *key = NULL;
        if (type == J_OBJ) {
            key = j_string(jp);
            j_ws(jp);
            if (*jp->p == ':')
                jp->p++;
        }
        jnode_t *c = j_value(jp);
        c->key = key;
        *tail = c;
        tail = &c->next;
        j_ws(jp);
        if (*jp->p == ',')
            jp->p++;
        j_ws(jp);
    }
    if (*jp->p)
        jp->p++;
    return n;
}

/* Parse any value at jp->p into a new node. */
__attribute__((noinline)) static jnode_t *j_value(jparser_t *jp)
{
    j_ws(jp);
    if (*jp->p == '{')
        return j_container(jp, J_OBJ);
    if (*jp->p == '[')
        return j_container(jp, J_ARR);
    jnode_t *n = (jnode_t *)j_alloc(jp, sizeof *n);
    memset(n, 0, sizeof *n);
    if (*jp->p == '"') {
        n->type = J_STR;
        n->str = j_string(jp);
    } else if (*jp->p == 't' || *jp->p == 'f') {
        n->type = J_BOOL;
        n->num = *jp->p == 't';
        jp->p += *jp->p == 't' ? 4 : 5;
    } else if (*jp->p == 'n') {
        jp->p += 4;
    } else {
        char *end;
        n->type = J_NUM;
        n->num = strtod(jp->p, &end);
        jp->p = end > jp->p ? end : jp->p + 1;
    }
    return n;
}

/* Sum of numbers and string lengths of the tree (the checksum); frees it. */
static uint64_t j_free(jnode_t *n)
{
    uint64_t sum = 0;
    while (n) {
        jnode_t *next = n->next;
        sum += (uint64_t)n->num + (n->str ? strlen(n->str) : 0) + (n->key ? strlen(n->key) : 0);
        sum += j_free(n->child);
        free(n->key);
        free(n->str);
        free(n);
        n = next;
    }
    return sum;
}

static char *j_generate(ws_worker_t *w)
{
    size_t cap = (size_t)RECORDS * 160 + 16, len = 0;
    char *text = (char *)ws_check(malloc(cap));
    uint64_t rng = ws_seed(w->tid);
    len += (size_t)sprintf(text + len, "[\n");
    for (int i = 0; i < RECORDS; i++) {
        uint64_t r = ws_rand(&rng);
        len += (size_t)sprintf(text + len,
                               "%s{\"id\": %d, \"name\": \"item-%llu\", \"tags\": [\"t%u\", \"tag%u\", \"label-%u\"], "
                               "\"pos\": {\"x\": %u, \"y\": %u}, \"ok\": %s}",
                               i ? ",\n " : " ", i, (unsigned long long)(r % 100000), (unsigned)(r >> 8 & 15),
                               (unsigned)(r >> 12 & 255), (unsigned)(r >> 20 & 4095), (unsigned)(r >> 32 & 1023),
                               (unsigned)(r >> 42 & 1023), (r >> 60 & 1) ? "true" : "false");
    }
    sprintf(text + len, "\n]\n");
    return text;
}

static void *worker(void *arg)
{
    ws_worker_t *w = (ws_worker_t *)arg;
    char *text = j_generate(w);
    w->ops = 1;
    for (long d = w->tid; d < (long)DOCS * w->scale; d += w->threads) {
        jparser_t jp = {text, 0};
        jnode_t *root = j_value(&jp);
        w->sum += j_free(root);
        w->ops += jp.allocs;
    }
    free(text);
    return NULL;
}

int main(int argc, char **argv)
{
    ws_args_t a = {1, 1};
    ws_parse(argc, argv, &a);
    return ws_run("wl-json", &a, worker);
}
