/*
 * cli_util.c - helpers shared by the subcommands.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"

int cli_read_file(const char *path, size_t max, char **buf, size_t *len)
{
    FILE *f = NULL;
    char *data = NULL;
    size_t n = 0, cap = 0;
    int rc = -1;
    struct stat st;

    f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "tpuplan: %s: %s\n", path, strerror(errno));
        goto out;
    }
    /* Refuse an oversized regular file before reading a byte of it. */
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size > max) {
        fprintf(stderr, "tpuplan: %s: file is %lld bytes, the limit is %zu\n", path,
                (long long)st.st_size, max);
        goto out;
    }
    for (;;) {
        if (n == cap) {
            size_t ncap = cap == 0 ? 65536 : cap * 2;
            char *p;
            if (ncap > max + 1)
                ncap = max + 1;
            if (ncap <= n) {
                fprintf(stderr, "tpuplan: %s: input is larger than the limit of %zu bytes\n", path,
                        max);
                goto out;
            }
            p = realloc(data, ncap + 1);
            if (p == NULL) {
                fprintf(stderr, "tpuplan: %s: out of memory\n", path);
                goto out;
            }
            data = p;
            cap = ncap;
        }
        size_t got = fread(data + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) {
                fprintf(stderr, "tpuplan: %s: read error\n", path);
                goto out;
            }
            break;
        }
    }
    if (n > max) {
        fprintf(stderr, "tpuplan: %s: input is larger than the limit of %zu bytes\n", path, max);
        goto out;
    }
    if (data == NULL && (data = malloc(1)) == NULL)
        goto out;
    data[n] = '\0';
    *buf = data;
    *len = n;
    data = NULL;
    rc = 0;
out:
    if (f != NULL && f != stdin)
        fclose(f);
    free(data);
    return rc;
}

/* "17179869184", "16G", "15.75G" (powers of 1024). 0 on success. */
int cli_parse_bytes(const char *s, uint64_t *out)
{
    char *end;
    double v;
    uint64_t mul = 1;

    errno = 0;
    v = strtod(s, &end);
    if (end == s || errno != 0 || !(v > 0))
        return -1;
    switch (*end) {
    case 'T':
        mul <<= 10;
        /* fallthrough */
    case 'G':
        mul <<= 10;
        /* fallthrough */
    case 'M':
        mul <<= 10;
        /* fallthrough */
    case 'K':
        mul <<= 10;
        end++;
        if (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0)
            end += strlen(end);
        break;
    case 'B':
        end++;
        break;
    default:
        break;
    }
    if (*end != '\0' || v * (double)mul >= 18446744073709551615.0)
        return -1;
    *out = (uint64_t)(v * (double)mul);
    return *out > 0 ? 0 : -1;
}

json_object *cli_json_get(json_object *o, const char *key)
{
    json_object *v = NULL;
    json_object_object_get_ex(o, key, &v);
    return v;
}

const char *cli_json_str(json_object *o, const char *key)
{
    json_object *v = cli_json_get(o, key);
    return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "-";
}
