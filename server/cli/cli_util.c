/*
 * cli_util.c - helpers shared by the subcommands.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "planner/plan_options.h"

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
    /* Refuse an oversized regular file before reading a byte of it; read a regular file
     * into one buffer of its size and a byte more (to see the end), not a doubling one:
     * the copies and page faults of growing it cost a 87 MB model 0.1 s. */
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode)) {
        if ((size_t)st.st_size > max) {
            fprintf(stderr, "tpuplan: %s: file is %lld bytes, the limit is %zu\n", path,
                    (long long)st.st_size, max);
            goto out;
        }
        cap = (size_t)st.st_size + 1;
        if ((data = malloc(cap + 1)) == NULL) {
            fprintf(stderr, "tpuplan: %s: out of memory\n", path);
            goto out;
        }
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

int cli_plan_opt(const char *cmd, unsigned surface, const char *flag, const char *val,
                 struct plan_opts *o)
{
    const struct plan_opt *opt = plan_opt_find(surface, flag);
    struct err e;

    if (opt == NULL)
        return 1;
    err_clear(&e);
    /* --bind is repeatable: each adds to the list ("NAME=VALUE,NAME=VALUE"), joined here (the
     * process plans one input; the table bounds the list's length, checked on setting) */
    static char binds[8192];
    char joined[sizeof(binds)];
    if (strcmp(flag, "--bind") == 0 && o->bind != NULL) {
        int n = snprintf(joined, sizeof(joined), "%s,%s", o->bind, val);
        if (n >= 0 && (size_t)n < sizeof(joined))
            memcpy(binds, joined, (size_t)n + 1); /* o->bind may be binds itself */
        if (n < 0 || (size_t)n >= sizeof(binds)) {
            fprintf(stderr, "tpuplan %s: --bind: the bindings are longer than %zu bytes\n", cmd,
                    sizeof(binds) - 1);
            return -1;
        }
        val = binds;
    }
    if (plan_opt_set_typed(o, opt, surface, flag, val, &e) != ERR_OK) {
        fprintf(stderr, "tpuplan %s: %s\n", cmd, e.msg);
        return -1;
    }
    return 0;
}

#define HELP_WIDTH  88 /* columns of a usage text */
#define HELP_INDENT 27 /* where an option's description starts */

/* text from column `col` on, its words wrapped at HELP_WIDTH under HELP_INDENT. */
static void print_wrapped(FILE *f, const char *text, int col)
{
    for (const char *p = text; *p != '\0';) {
        int n = (int)strcspn(p, " ");
        if (col > HELP_INDENT && col + 1 + n > HELP_WIDTH) {
            fprintf(f, "\n%*s", HELP_INDENT, "");
            col = HELP_INDENT;
        } else if (col > HELP_INDENT) {
            fputc(' ', f);
            col++;
        }
        fprintf(f, "%.*s", n, p);
        col += n;
        p += n;
        p += *p == ' ';
    }
    fputc('\n', f);
}

void cli_print_opts(FILE *f, unsigned surface)
{
    for (size_t i = 0; i < plan_opt_count(); i++) {
        const struct plan_opt *opt = plan_opt_at(i);
        char text[512], range[256];
        if (!(opt->surfaces & surface))
            continue;
        int col = fprintf(f, "  %s %s", opt->flag, opt->metavar);
        /* the description beside a short flag, under a long one */
        if (col >= HELP_INDENT - 1)
            fprintf(f, "\n%*s", HELP_INDENT, "");
        else
            fprintf(f, "%*s", HELP_INDENT - col, "");
        snprintf(text, sizeof(text), "%s: %s (default: %s)", opt->doc,
                 plan_opt_range(opt, range, sizeof(range)), opt->dflt);
        print_wrapped(f, text, HELP_INDENT);
    }
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

int cli_name_width(json_object *arr, const char *key, int min)
{
    int width = min;

    for (size_t i = 0; arr != NULL && i < json_object_array_length(arr); i++) {
        size_t n = strlen(cli_json_str(json_object_array_get_idx(arr, i), key));
        if (n > (size_t)width)
            width = n > 1000 ? 1000 : (int)n;
    }
    return width;
}
