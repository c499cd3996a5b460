/*
 * cli_layout.c - `tpuplan layout`: tiled layout and padding of XLA shapes.
 *
 *   tpuplan layout 'SHAPE' ['SHAPE'...] [--chip CHIP] [--text]
 *   tpuplan layout [-] [--chip CHIP] [--text]      one shape per line on stdin
 *
 * JSON (default): one object for one shape, an array of objects for two or more (the
 * count of shapes decides, not where they came from). A tuple is one object with
 * "elements" and the totals. --text prints XLA's own out-of-memory report lines (Size,
 * Unpadded size, Extra memory due to padding) with the same byte formatter.
 *
 * Every input is parsed before anything is printed: on bad input nothing goes to stdout,
 * each error goes to stderr naming the shape by its 1-based index, and the exit status is 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cli/cli.h"
#include "planner/layout.h"

#define LAYOUT_STDIN_MAX (64u << 20) /* bytes of shapes accepted on stdin */

static const char layout_usage[] =
    "usage: tpuplan layout SHAPE... [--chip CHIP] [--text]\n"
    "       tpuplan layout [-] [--chip CHIP] [--text] < shapes.txt\n"
    "\n"
    "Prints the TPU tiled layout, padded size and padding of each XLA shape, e.g.\n"
    "  tpuplan layout 'f32[2000,5000]' 'bf16[8,1024]{1,0:T(8,128)(2,1)}'\n"
    "Shapes come one per argument, or one per line on stdin (no SHAPE or \"-\"; blank lines\n"
    "and lines starting with # are skipped). A tuple \"(s32[], f32[8,128])\" counts as one.\n"
    "\n"
    "  --chip CHIP  generation whose default tiles apply when a shape has no tile\n"
    "               (default v5e; see `tpuplan chips`)\n"
    "  --text       XLA's report lines (Size / Unpadded size / Extra memory due to padding)\n"
    "               instead of JSON\n"
    "\n"
    "JSON: one object for one shape, an array of objects for two or more. Fields: shape,\n"
    "dtype, dims, minor_to_major, tiles, padded_dims, logical_bytes, padded_bytes,\n"
    "padding_bytes, expansion, size/unpadded_size/extra (XLA's formatting), layout_source\n"
    "(\"given\" or the default rule's name), order_source (given|default), confidence\n"
    "(given|confirmed|assumed), chip, and assumption for assumed rules.\n"
    "Exit status: 0 ok, 2 bad input (message names the shape index and character offset).\n";

/* One input: a pointer into argv or the stdin buffer, not NUL-terminated. */
struct input {
    const char *s;
    size_t len;
    size_t line; /* 1-based stdin line, 0 for arguments */
};

struct ctx {
    const struct chip *chip;
    int text;
    struct shape_list list; /* scratch, reused per input (large: kept off the stack) */
    char buf[SHAPE_MAX_TEXT * (SHAPE_LIST_MAX + 1)]; /* room for the longest tuple */
};

static struct json_object *jnum(double v)
{
    char s[32];
    size_t n;

    /* Short decimal for ratios: "12.8", "128", "21.333". */
    snprintf(s, sizeof(s), "%.3f", v);
    n = strlen(s);
    while (n > 0 && s[n - 1] == '0')
        s[--n] = '\0';
    if (n > 0 && s[n - 1] == '.')
        s[--n] = '\0';
    return json_object_new_double_s(v, s);
}

static struct json_object *jfmt(uint64_t b)
{
    char s[32];
    return json_object_new_string(layout_format_bytes(b, s, sizeof(s)));
}

static void add_sizes(struct json_object *o, uint64_t logical, uint64_t padded)
{
    uint64_t pad = padded > logical ? padded - logical : 0;
    double x = logical ? (double)padded / (double)logical : 1.0;

    json_object_object_add(o, "logical_bytes", json_object_new_uint64(logical));
    json_object_object_add(o, "padded_bytes", json_object_new_uint64(padded));
    json_object_object_add(o, "padding_bytes", json_object_new_uint64(pad));
    json_object_object_add(o, "expansion", jnum(x));
    json_object_object_add(o, "size", jfmt(padded));
    json_object_object_add(o, "unpadded_size", jfmt(logical));
    json_object_object_add(o, "extra", jfmt(pad));
}

static struct json_object *json_shape(struct ctx *c, const struct shape *sh,
                                      const struct layout_info *li, int order_given)
{
    struct json_object *o = json_object_new_object();
    struct json_object *a;

    if (shape_print(sh, c->buf, sizeof(c->buf)) < 0)
        c->buf[0] = '\0'; /* not reached: buf holds the longest tuple */
    json_object_object_add(o, "shape", json_object_new_string(c->buf));
    json_object_object_add(o, "dtype", json_object_new_string(dtype_name(sh->dtype)));
    a = json_object_new_array();
    for (unsigned i = 0; i < sh->rank; i++)
        json_object_array_add(a, json_object_new_int64(sh->dims[i]));
    json_object_object_add(o, "dims", a);
    a = json_object_new_array();
    for (unsigned i = 0; i < sh->rank && sh->has_layout; i++)
        json_object_array_add(a, json_object_new_int(sh->minor_to_major[i]));
    json_object_object_add(o, "minor_to_major", a);
    a = json_object_new_array();
    for (unsigned t = 0; t < sh->ntiles; t++) {
        struct json_object *tile = json_object_new_array();
        for (unsigned k = 0; k < sh->tiles[t].rank; k++)
            json_object_array_add(tile, json_object_new_int64(sh->tiles[t].dims[k]));
        json_object_array_add(a, tile);
    }
    json_object_object_add(o, "tiles", a);
    if (sh->element_size_bits != 0)
        json_object_object_add(o, "element_size_bits", json_object_new_int(sh->element_size_bits));
    json_object_object_add(o, "memory_space", json_object_new_int(sh->memory_space));
    a = json_object_new_array();
    for (unsigned i = 0; i < sh->rank; i++)
        json_object_array_add(a, json_object_new_int64(li->padded_dims[i]));
    json_object_object_add(o, "padded_dims", a);
    json_object_object_add(o, "elements", json_object_new_uint64(li->elements));
    add_sizes(o, li->logical_bytes, li->padded_bytes);
    json_object_object_add(o, "layout_source", json_object_new_string(li->rule));
    json_object_object_add(o, "order_source",
                           json_object_new_string(order_given ? "given" : "default"));
    json_object_object_add(o, "confidence",
                           json_object_new_string(layout_confidence_name(li->confidence)));
    json_object_object_add(o, "chip", json_object_new_string(c->chip->name));
    if (li->assumption != NULL)
        json_object_object_add(o, "assumption", json_object_new_string(li->assumption));
    return o;
}

static void text_sizes(uint64_t logical, uint64_t padded, const char *prefix)
{
    char a[32], b[32];
    uint64_t pad = padded > logical ? padded - logical : 0;

    printf("%sSize: %s\n", prefix, layout_format_bytes(padded, a, sizeof(a)));
    printf("%sUnpadded size: %s\n", prefix, layout_format_bytes(logical, a, sizeof(a)));
    /* XLA leaves the Extra line out when nothing is padded
     * (server/planner/SOURCES.md#report-format). */
    if (pad != 0)
        printf("%sExtra memory due to padding: %s (%.1fx expansion)\n", prefix,
               layout_format_bytes(pad, b, sizeof(b)),
               logical ? (double)padded / (double)logical : 1.0);
}

static void text_shape(struct ctx *c, const struct shape *sh, const struct layout_info *li)
{
    if (shape_print(sh, c->buf, sizeof(c->buf)) < 0)
        c->buf[0] = '\0'; /* not reached: buf holds the longest tuple */
    printf("Shape: %s\n", c->buf);
    text_sizes(li->logical_bytes, li->padded_bytes, "");
    if (li->confidence == LAYOUT_CONF_GIVEN)
        printf("Layout: given\n");
    else
        printf("Layout: %s (%s on %s)\n", li->rule, layout_confidence_name(li->confidence),
               c->chip->name);
    if (li->assumption != NULL)
        printf("Assumption: %s\n", li->assumption);
}

/* Parses input i (0-based); on error prints it and returns 2. */
static int parse_one(struct ctx *c, const struct input *in, size_t i, size_t n)
{
    struct err e;

    err_clear(&e);
    if (shape_list_parse(in->s, in->len, &c->list, &e) == 0)
        return 0;
    if (in->line != 0)
        fprintf(stderr, "tpuplan layout: shape %zu of %zu (stdin line %zu): %s\n", i + 1, n,
                in->line, e.msg);
    else
        fprintf(stderr, "tpuplan layout: shape %zu of %zu: %s\n", i + 1, n, e.msg);
    return 2;
}

/* Resolves every element of c->list; returns 2 after printing an error. */
static int resolve_all(struct ctx *c, struct layout_info *infos, struct shape *res, size_t i,
                       size_t n)
{
    struct err e;

    for (size_t k = 0; k < c->list.n; k++) {
        err_clear(&e);
        if (layout_resolve(&c->list.elems[k], c->chip, &res[k], &infos[k], &e) != 0) {
            if (c->list.is_tuple)
                fprintf(stderr, "tpuplan layout: shape %zu of %zu: tuple element %zu: %s\n", i + 1,
                        n, k, e.msg);
            else
                fprintf(stderr, "tpuplan layout: shape %zu of %zu: %s\n", i + 1, n, e.msg);
            return 2;
        }
    }
    return 0;
}

static int total(const struct layout_info *infos, size_t n, uint64_t *logical, uint64_t *padded)
{
    *logical = 0;
    *padded = 0;
    for (size_t k = 0; k < n; k++)
        if (__builtin_add_overflow(*logical, infos[k].logical_bytes, logical) ||
            __builtin_add_overflow(*padded, infos[k].padded_bytes, padded))
            return -1;
    return 0;
}

/* Emits input i; c->list holds its parse. */
static int emit_one(struct ctx *c, size_t i, size_t n, struct layout_info *infos, struct shape *res)
{
    uint64_t logical = 0, padded = 0;
    int rc;

    if ((rc = resolve_all(c, infos, res, i, n)) != 0)
        return rc;
    if (c->list.is_tuple && total(infos, c->list.n, &logical, &padded) != 0) {
        fprintf(stderr, "tpuplan layout: shape %zu of %zu: tuple total overflows 64 bits\n", i + 1,
                n);
        return 2;
    }
    if (c->text) {
        if (i > 0)
            putchar('\n');
        if (!c->list.is_tuple) {
            text_shape(c, &res[0], &infos[0]);
            return 0;
        }
        for (size_t k = 0; k < c->list.n; k++) {
            printf("Tuple element %zu:\n", k);
            text_shape(c, &res[k], &infos[k]);
        }
        printf("Tuple total (%zu elements):\n", c->list.n);
        text_sizes(logical, padded, "");
        return 0;
    }
    struct json_object *o;
    if (!c->list.is_tuple) {
        o = json_shape(c, &res[0], &infos[0], c->list.elems[0].has_layout);
    } else {
        struct json_object *elems = json_object_new_array();
        struct shape_list printed = c->list;
        for (size_t k = 0; k < c->list.n; k++) {
            json_object_array_add(elems,
                                  json_shape(c, &res[k], &infos[k], c->list.elems[k].has_layout));
            printed.elems[k] = res[k];
        }
        o = json_object_new_object();
        if (shape_list_print(&printed, c->buf, sizeof(c->buf)) < 0)
            c->buf[0] = '\0'; /* not reached: buf holds the longest tuple */
        json_object_object_add(o, "shape", json_object_new_string(c->buf));
        json_object_object_add(o, "tuple", json_object_new_boolean(1));
        json_object_object_add(o, "elements", elems);
        add_sizes(o, logical, padded);
        json_object_object_add(o, "chip", json_object_new_string(c->chip->name));
    }
    if (n > 1)
        fputs(i == 0 ? "[\n" : ",\n", stdout);
    fputs(
        json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
        stdout);
    json_object_put(o);
    return 0;
}

/* Splits buf into non-blank, non-comment lines. Returns the count; fills ins when not NULL. */
static size_t split_lines(const char *buf, size_t len, struct input *ins)
{
    size_t n = 0, line = 0, p = 0;

    while (p < len) {
        size_t q = p, a, b;
        while (q < len && buf[q] != '\n')
            q++;
        line++;
        a = p;
        b = q;
        while (a < b && (buf[a] == ' ' || buf[a] == '\t' || buf[a] == '\r'))
            a++;
        while (b > a && (buf[b - 1] == ' ' || buf[b - 1] == '\t' || buf[b - 1] == '\r'))
            b--;
        if (b > a && buf[a] != '#') {
            if (ins != NULL)
                ins[n] = (struct input){buf + a, b - a, line};
            n++;
        }
        p = q + 1;
    }
    return n;
}

int cli_layout(int argc, char **argv)
{
    struct ctx *c = NULL;
    struct input *ins = NULL;
    struct layout_info *infos = NULL;
    struct shape *res = NULL;
    char *data = NULL;
    size_t n = 0, len = 0;
    int rc = 2, use_stdin = 0, nargs = 0;
    const char *chip = NULL;

    c = calloc(1, sizeof(*c));
    ins = calloc((size_t)argc + 1, sizeof(*ins));
    infos = calloc(SHAPE_LIST_MAX, sizeof(*infos));
    res = calloc(SHAPE_LIST_MAX, sizeof(*res));
    if (c == NULL || ins == NULL || infos == NULL || res == NULL) {
        fputs("tpuplan layout: out of memory\n", stderr);
        goto out;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(layout_usage, stdout);
            rc = 0;
            goto out;
        } else if (strcmp(a, "--text") == 0) {
            c->text = 1;
        } else if (strcmp(a, "--json") == 0) {
            c->text = 0;
        } else if (strcmp(a, "--chip") == 0) {
            if (i + 1 >= argc) {
                fputs("tpuplan layout: --chip needs a value\n", stderr);
                goto out;
            }
            chip = argv[++i];
        } else if (strncmp(a, "--chip=", 7) == 0) {
            chip = a + 7;
        } else if (strcmp(a, "-") == 0) {
            use_stdin = 1;
        } else if (a[0] == '-' && a[1] == '-') {
            fprintf(stderr, "tpuplan layout: unknown option '%s'\n%s", a, layout_usage);
            goto out;
        } else {
            ins[nargs++] = (struct input){a, strlen(a), 0};
        }
    }
    c->chip = chip != NULL ? chip_find(chip) : chip_default();
    if (c->chip == NULL) {
        fprintf(stderr, "tpuplan layout: unknown chip '%s' (known: %s)\n", chip, chip_names());
        goto out;
    }
    if (nargs > 0 && use_stdin) {
        fputs("tpuplan layout: give shapes as arguments or on stdin, not both\n", stderr);
        goto out;
    }
    n = (size_t)nargs;
    if (nargs == 0) {
        if (cli_read_file("-", LAYOUT_STDIN_MAX, &data, &len) != 0)
            goto out;
        n = split_lines(data, len, NULL);
        free(ins);
        ins = calloc(n + 1, sizeof(*ins));
        if (ins == NULL) {
            fputs("tpuplan layout: out of memory\n", stderr);
            goto out;
        }
        split_lines(data, len, ins);
    }
    if (n == 0) {
        fprintf(stderr, "tpuplan layout: no shape given\n%s", layout_usage);
        goto out;
    }
    /* Pass 1: report every bad input before printing anything. */
    rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (parse_one(c, &ins[i], i, n) != 0 || resolve_all(c, infos, res, i, n) != 0)
            rc = 2;
    }
    if (rc != 0)
        goto out;
    /* Pass 2: print. */
    for (size_t i = 0; i < n && rc == 0; i++)
        if ((rc = parse_one(c, &ins[i], i, n)) == 0)
            rc = emit_one(c, i, n, infos, res);
    if (!c->text)
        fputs(n > 1 ? "\n]\n" : "\n", stdout);
    if (fflush(stdout) != 0) {
        perror("tpuplan layout: stdout");
        rc = 2;
    }
out:
    free(data);
    free(ins);
    free(infos);
    free(res);
    free(c);
    return rc;
}
