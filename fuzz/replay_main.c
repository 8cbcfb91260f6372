/* replay_main.c — runs a harness without libFuzzer: every file named on the command line, and
 * every file inside every directory named, is passed once to LLVMFuzzerTestOneInput (files of a
 * directory in name order, so runs are reproducible). A failed check aborts, so CTest sees any
 * finding as a failed test. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 0;
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "replay: out of memory reading %s\n", path);
        return 0;
    }
    /* An exact-size copy, so an overread of the input is caught as it would be under libFuzzer. */
    uint8_t *exact = malloc(len ? len : 1);
    memcpy(exact, buf, len);
    free(buf);
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 1;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, int *failed) {
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open directory %s\n", dir);
        (*failed)++;
        return 0;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) names = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof *names);
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, by_name); /* an empty directory: names is NULL */
    int ran = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(dir) + strlen(names[i]) + 2;
        char *path = malloc(len);
        snprintf(path, len, "%s/%s", dir, names[i]);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            if (run_file(path))
                ran++;
            else
                (*failed)++;
        }
        free(path);
        free(names[i]);
    }
    free(names);
    return ran;
}

int main(int argc, char **argv) {
    int ran = 0, failed = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s does not exist\n", argv[i]);
            failed++;
        } else if (S_ISDIR(st.st_mode)) {
            ran += run_dir(argv[i], &failed);
        } else if (run_file(argv[i])) {
            ran++;
        } else {
            failed++;
        }
    }
    printf("replayed %d inputs, %d unreadable\n", ran, failed);
    return failed || ran == 0 ? 1 : 0;
}
