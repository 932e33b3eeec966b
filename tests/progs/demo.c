/* demo.c - the program `make demo` profiles: a small word-frequency counter.
 *
 * It makes up a text of 200000 words from a fixed vocabulary (the text
 * buffer grows with realloc), counts the words in two threads, each into its
 * own hash table that doubles when it gets full (calloc + free), lower-cases
 * every word into a temporary buffer (malloc + free: the report's temporary
 * allocations), merges the tables, and prints the ten most frequent words.
 * leaky_history_add keeps a copy of every 1000th word and never frees them:
 * the leak the report should point at.  Deterministic. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WORDS 200000

/* ---- text ---------------------------------------------------------------- */

typedef struct {
    char *data;
    size_t len, cap;
} text_t;

static void text_append(text_t *t, const char *s, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *d = realloc(t->data, cap);
        if (!d)
            abort();
        t->data = d;
        t->cap = cap;
    }
    memcpy(t->data + t->len, s, n);
    t->len += n;
    t->data[t->len] = '\0';
}

static uint32_t rng = 12345;

static uint32_t next_random(void)
{
    rng = rng * 1103515245u + 12345u;
    return (rng >> 16) & 0x7fff;
}

/* A made-up word from two or three syllables; low numbers are common. */
static void make_word(char *out, uint32_t id)
{
    static const char *syl[] = {"Ka", "lo", "Mi", "nu", "Re", "ta", "Vo", "si"};
    out[0] = '\0';
    do {
        strcat(out, syl[id % 8]);
        id /= 8;
    } while (id);
}

static void make_text(text_t *t)
{
    char word[32];
    for (int i = 0; i < WORDS; i++) {
        uint32_t r = next_random();
        uint32_t id = (r * r) >> 21; /* skewed towards small ids */
        make_word(word, id);
        text_append(t, word, strlen(word));
        text_append(t, (i % 12 == 11) ? ".\n" : " ", (i % 12 == 11) ? 2 : 1);
    }
}

/* ---- hash table ---------------------------------------------------------- */

typedef struct entry {
    struct entry *next;
    char *word;
    long count;
} entry_t;

typedef struct {
    entry_t **buckets;
    size_t nbuckets, nentries;
} table_t;

static size_t hash_word(const char *s)
{
    size_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void table_grow(table_t *t)
{
    size_t n = t->nbuckets ? t->nbuckets * 2 : 16;
    entry_t **b = calloc(n, sizeof *b);
    if (!b)
        abort();
    for (size_t i = 0; i < t->nbuckets; i++) {
        entry_t *e = t->buckets[i];
        while (e) {
            entry_t *next = e->next;
            size_t j = hash_word(e->word) & (n - 1);
            e->next = b[j];
            b[j] = e;
            e = next;
        }
    }
    free(t->buckets);
    t->buckets = b;
    t->nbuckets = n;
}

static entry_t *entry_new(const char *word)
{
    entry_t *e = malloc(sizeof *e);
    if (!e)
        abort();
    e->word = strdup(word);
    if (!e->word)
        abort();
    e->count = 0;
    return e;
}

static void table_add(table_t *t, const char *word, long count)
{
    if (t->nentries >= t->nbuckets * 3 / 4)
        table_grow(t);
    size_t i = hash_word(word) & (t->nbuckets - 1);
    entry_t *e = t->buckets[i];
    while (e && strcmp(e->word, word) != 0)
        e = e->next;
    if (!e) {
        e = entry_new(word);
        e->next = t->buckets[i];
        t->buckets[i] = e;
        t->nentries++;
    }
    e->count += count;
}

static void table_free(table_t *t)
{
    for (size_t i = 0; i < t->nbuckets; i++) {
        entry_t *e = t->buckets[i];
        while (e) {
            entry_t *next = e->next;
            free(e->word);
            free(e);
            e = next;
        }
    }
    free(t->buckets);
}

/* ---- counting ------------------------------------------------------------ */

typedef struct history {
    struct history *next;
    char *word;
} history_t;

static history_t *history;
static pthread_mutex_t history_lock = PTHREAD_MUTEX_INITIALIZER;

/* Remembers a word "for later" and never frees it: the demo's leak. */
static void leaky_history_add(const char *word)
{
    history_t *h = malloc(sizeof *h);
    if (!h)
        abort();
    h->word = strdup(word);
    pthread_mutex_lock(&history_lock);
    h->next = history;
    history = h;
    pthread_mutex_unlock(&history_lock);
}

/* Lower-cased copy of s[0..n): a temporary the caller frees at once. */
static char *normalize_word(const char *s, size_t n)
{
    char *w = malloc(n + 1);
    if (!w)
        abort();
    for (size_t i = 0; i < n; i++)
        w[i] = (char)tolower((unsigned char)s[i]);
    w[n] = '\0';
    return w;
}

typedef struct {
    const char *begin, *end;
    table_t table;
} job_t;

static void *count_words(void *arg)
{
    job_t *job = arg;
    const char *p = job->begin;
    long seen = 0;
    while (p < job->end) {
        while (p < job->end && !isalpha((unsigned char)*p))
            p++;
        const char *w = p;
        while (p < job->end && isalpha((unsigned char)*p))
            p++;
        if (p == w)
            continue;
        char *word = normalize_word(w, (size_t)(p - w));
        table_add(&job->table, word, 1);
        if (++seen % 1000 == 0)
            leaky_history_add(word);
        free(word);
    }
    return NULL;
}

static int by_count(const void *a, const void *b)
{
    const entry_t *x = *(entry_t *const *)a, *y = *(entry_t *const *)b;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    return strcmp(x->word, y->word);
}

int main(void)
{
    text_t text = {0};
    make_text(&text);

    /* split at a space near the middle */
    const char *mid = text.data + text.len / 2;
    while (*mid && *mid != ' ')
        mid++;
    job_t jobs[2] = {{text.data, mid, {0}}, {mid, text.data + text.len, {0}}};
    pthread_t tid[2];
    for (int i = 0; i < 2; i++)
        if (pthread_create(&tid[i], NULL, count_words, &jobs[i]) != 0)
            abort();
    for (int i = 0; i < 2; i++)
        pthread_join(tid[i], NULL);

    table_t all = {0};
    for (int j = 0; j < 2; j++)
        for (size_t i = 0; i < jobs[j].table.nbuckets; i++)
            for (entry_t *e = jobs[j].table.buckets[i]; e; e = e->next)
                table_add(&all, e->word, e->count);

    entry_t **sorted = malloc(all.nentries * sizeof *sorted);
    if (!sorted)
        abort();
    size_t n = 0;
    for (size_t i = 0; i < all.nbuckets; i++)
        for (entry_t *e = all.buckets[i]; e; e = e->next)
            sorted[n++] = e;
    qsort(sorted, n, sizeof *sorted, by_count);

    printf("%zu words, %zu distinct; the ten most frequent:\n", (size_t)WORDS, n);
    for (size_t i = 0; i < n && i < 10; i++)
        printf("  %-12s %6ld\n", sorted[i]->word, sorted[i]->count);

    free(sorted);
    table_free(&all);
    table_free(&jobs[0].table);
    table_free(&jobs[1].table);
    free(text.data);
    return 0;
}
