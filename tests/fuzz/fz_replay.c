/* fz_replay.c - replay driver for the fuzz targets, for builds without
 * libFuzzer (gcc, the sanitizer builds): calls LLVMFuzzerTestOneInput() on
 * every file named on the command line, and on every regular file of every
 * directory named, in sorted order, printing each name first so that a
 * crash names its input.
 *
 *   fz_profile_replay tests/corpus/profile        exit 0: all replayed
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Read the whole file into a new buffer.  Returns 0, or -1 with a message. */
static int fz_read(const char *path, uint8_t **buf, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *b = malloc(cap);
    size_t got;
    while (b && (got = fread(b + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *nb = realloc(b, cap *= 2);
            if (!nb)
                free(b);
            b = nb;
        }
    }
    int bad = ferror(f) || !b;
    fclose(f);
    if (bad) {
        fprintf(stderr, "%s: cannot read\n", path);
        free(b);
        return -1;
    }
    *buf = b;
    *len = n;
    return 0;
}

static int fz_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int fz_replay_file(const char *path, size_t *done)
{
    uint8_t *buf;
    size_t len;
    if (fz_read(path, &buf, &len))
        return -1;
    printf("replay %s (%zu bytes)\n", path, len);
    fflush(stdout);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    (*done)++;
    return 0;
}

int main(int argc, char **argv)
{
    size_t done = 0;
    int bad = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st)) {
            perror(argv[i]);
            return 2;
        }
        if (!S_ISDIR(st.st_mode)) {
            bad |= fz_replay_file(argv[i], &done);
            continue;
        }
        struct dirent **ents;
        int n = scandir(argv[i], &ents, NULL, NULL);
        if (n < 0) {
            perror(argv[i]);
            return 2;
        }
        char **names = malloc(sizeof *names * (size_t)(n ? n : 1));
        int m = 0;
        for (int k = 0; k < n; k++) {
            if (ents[k]->d_name[0] != '.' && names) {
                size_t l = strlen(argv[i]) + strlen(ents[k]->d_name) + 2;
                if ((names[m] = malloc(l)))
                    snprintf(names[m++], l, "%s/%s", argv[i], ents[k]->d_name);
            }
            free(ents[k]);
        }
        free(ents);
        if (!names)
            return 2;
        qsort(names, (size_t)m, sizeof *names, fz_cmp);
        for (int k = 0; k < m; k++) {
            if (!stat(names[k], &st) && S_ISREG(st.st_mode))
                bad |= fz_replay_file(names[k], &done);
            free(names[k]);
        }
        free(names);
    }
    printf("%zu inputs replayed\n", done);
    if (done == 0) {
        fprintf(stderr, "no input to replay\n");
        return 2;
    }
    return bad ? 1 : 0;
}
