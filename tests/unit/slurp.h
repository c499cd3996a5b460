/*
 * slurp.h - a whole file read into memory, for the tests that read samples from tests/data
 * (run from the repository root, as tests/run.sh does). Header-only, for tests/unit; include
 * after cmocka.h.
 */
#ifndef TPUPLAN_TESTS_SLURP_H
#define TPUPLAN_TESTS_SLURP_H

#include <stdio.h>
#include <stdlib.h>

/* The whole file, malloc'd and NUL-terminated (caller frees), *len its length; fails the
 * test when it cannot be read. */
static inline char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n = -1;

    *len = 0;
    if (f == NULL) {
        fail_msg("%s: cannot open (run from the repository root)", path);
        return NULL;
    }
    if (fseek(f, 0, SEEK_END) == 0)
        n = ftell(f);
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0)
        buf = malloc((size_t)n + 1);
    if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(buf);
        fail_msg("%s: cannot read", path);
        return NULL;
    }
    fclose(f);
    buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

#endif
