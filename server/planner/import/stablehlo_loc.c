/*
 * stablehlo_loc.c - location names of the StableHLO translator (stablehlo_int.h): an op's
 * loc(..), resolved through the file's #locN aliases, becomes its op_name.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "planner/import/stablehlo_int.h"

/* ---- locations --------------------------------------------------------------------- */

/*
 * Location names. An op's loc(..) names it (the op_name): loc("name") and loc("name"(child))
 * are names; loc("file.py":3:0) a file position, no name; loc(callsite(X at Y)) takes X's;
 * loc(fused[X, Y]) (or fused<..>[..]) the first of its parts that has one; loc(#locN) the
 * definition "#locN = loc(..)" the file writes after the module (MLIR prints location
 * aliases there). Locations are debug information: what cannot be resolved (an undefined or
 * cyclic alias, more than SH_LOC_STEPS expressions: fused lists of aliases of fused lists
 * would grow as a power) gives no name rather than an error.
 */
#define SH_LOC_STEPS 256 /* expressions a location's name may take to find */

static size_t skip_blank(const struct sh_translator *t, size_t q)
{
    const struct cursor *c = &t->c;
    while (q < c->len && (c->s[q] == ' ' || c->s[q] == '\t'))
        q++;
    return q;
}

static struct names_key loc_name(const void *ctx, uint32_t k)
{
    const struct sh_translator *t = ctx;

    return (struct names_key){t->c.s + t->locs[k].name_off, t->locs[k].name_len, 0};
}

/* The location aliases: every line "#NAME = loc(..)", NAME -> the offset of its "loc(". */
int sh_loc_table(struct sh_translator *t)
{
    struct cursor *c = &t->c;
    size_t n = 0;
    int rc;

    for (size_t q = 0; q < c->len; q++)
        n += c->s[q] == '#' && (q == 0 || c->s[q - 1] == '\n');
    if (n == 0)
        return ERR_OK;
    if ((t->locs = malloc(n * sizeof(*t->locs))) == NULL ||
        names_init(&t->loc_names, n, loc_name, t) != ERR_OK)
        return err_set(c->e, ERR_NOMEM, "", "out of memory translating StableHLO");
    for (size_t q = 0; q < c->len; q++) {
        uint32_t first;
        if (c->s[q] != '#' || (q > 0 && c->s[q - 1] != '\n'))
            continue;
        size_t name = q + 1, e = name;
        while (e < c->len && ident_ch(c->s[e]))
            e++;
        size_t v = skip_blank(t, e);
        if (e == name || v >= c->len || c->s[v] != '=')
            continue;
        v = skip_blank(t, v + 1);
        if (c->len - v < 4 || memcmp(c->s + v, "loc(", 4) != 0)
            continue;
        t->locs[t->nlocs] = (struct sh_loc_def){(uint32_t)name, (uint32_t)(e - name), (uint32_t)v};
        if ((rc = names_add(&t->loc_names, t->nlocs, &first)) != ERR_OK)
            return err_set(c->e, rc, "", "out of memory translating StableHLO");
        t->nlocs += first == NAMES_NONE; /* a repeated name: the first definition holds */
    }
    return ERR_OK;
}

/* The "loc(" of alias s[off..off+len) (without '#'), or SIZE_MAX. */
static size_t loc_find(const struct sh_translator *t, size_t off, size_t len)
{
    uint32_t k;

    if (t->locs == NULL || len == 0)
        return SIZE_MAX;
    k = names_find(&t->loc_names, (struct names_key){t->c.s + off, len, 0});
    return k != NAMES_NONE ? t->locs[k].at : SIZE_MAX;
}

/* The name of the location expression at q (inside loc(..)): *off, *len (0: none). */
static void loc_expr(const struct sh_translator *t, size_t q, unsigned *steps, uint32_t *off,
                     uint32_t *len)
{
    const struct cursor *c = &t->c;
    q = skip_blank(t, q);
    if (*steps == 0 || q >= c->len)
        return;
    --*steps;
    if (c->s[q] == '"') {
        size_t e = sh_string_end(t, q);
        if (e == 0 || (e < c->len && c->s[e] == ':')) /* a file position */
            return;
        *off = (uint32_t)q + 1;
        *len = (uint32_t)(e - q - 2);
        return;
    }
    if (c->s[q] == '#') {
        size_t n = q + 1, at;
        while (n < c->len && ident_ch(c->s[n]))
            n++;
        at = loc_find(t, q + 1, n - q - 1);
        if (at != SIZE_MAX)
            loc_expr(t, at + 4, steps, off, len);
        return;
    }
    if (c->len - q > 9 && memcmp(c->s + q, "callsite(", 9) == 0) {
        loc_expr(t, q + 9, steps, off, len);
        return;
    }
    if (c->len - q > 5 && memcmp(c->s + q, "fused", 5) == 0) {
        unsigned depth = 0;
        for (q += 5; q < c->len && c->s[q] != '\n'; q++) { /* fused<"meta">[ */
            if (c->s[q] == '"') {
                size_t e = sh_string_end(t, q);
                if (e == 0)
                    return;
                q = e - 1;
            } else if (c->s[q] == '<')
                depth++;
            else if (c->s[q] == '>' && depth > 0)
                depth--;
            else if (c->s[q] == '[' && depth == 0)
                break;
        }
        /* the parts, "," between at depth 0, until one has a name */
        while (q < c->len && (c->s[q] == '[' || c->s[q] == ',') && *len == 0) {
            loc_expr(t, q + 1, steps, off, len);
            for (q++, depth = 0; q < c->len && c->s[q] != '\n'; q++) {
                if (c->s[q] == '"') {
                    if ((q = sh_string_end(t, q)) == 0)
                        return;
                    q--;
                } else if (c->s[q] == '(' || c->s[q] == '[' || c->s[q] == '<') {
                    depth++;
                } else if ((c->s[q] == ')' || c->s[q] == ']' || c->s[q] == '>') && depth > 0) {
                    depth--;
                } else if ((c->s[q] == ',' && depth == 0) || c->s[q] == ']') {
                    break;
                }
            }
        }
    }
}

/* The name of the loc(..) at q ("loc(" there), *len 0 when it has none. */
void sh_loc_name(const struct sh_translator *t, size_t q, uint32_t *off, uint32_t *len)
{
    const struct cursor *c = &t->c;
    unsigned steps = SH_LOC_STEPS;
    *off = *len = 0;
    if (c->len - q >= 4 && memcmp(c->s + q, "loc(", 4) == 0)
        loc_expr(t, q + 4, &steps, off, len);
}

/* The name of the first loc(..) in s[from..to) outside strings. */
void sh_loc_in(const struct sh_translator *t, size_t from, size_t to, uint32_t *off, uint32_t *len)
{
    const struct cursor *c = &t->c;
    *off = *len = 0;
    for (size_t q = from; q + 4 <= to; q++) {
        if (c->s[q] == '"') {
            size_t e = sh_string_end(t, q);
            if (e == 0)
                return;
            q = e - 1;
        } else if (memcmp(c->s + q, "loc(", 4) == 0) {
            sh_loc_name(t, q, off, len);
            return;
        }
    }
}

/* ", metadata={op_name="NAME"}" for a loc name (nothing for none). */
int sh_put_op_name(struct sh_translator *t, struct sh_buf *b, uint32_t off, uint32_t len)
{
    int rc;
    if (len == 0)
        return ERR_OK;
    if ((rc = sh_buf_add(t, b, ", metadata={op_name=\"", 21)) != ERR_OK ||
        (rc = sh_put_unescaped(t, b, off, (size_t)off + len)) != ERR_OK)
        return rc;
    return sh_buf_add(t, b, "\"}", 2);
}
