/*
 * stablehlo_sdy.c - Shardy meshes and argument shardings of the StableHLO translator
 * (stablehlo_int.h), written as HLO shardings.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/import/stablehlo_int.h"
#include "planner/shape.h"

/* ---- Shardy shardings -------------------------------------------------------------- */

/*
 * openxla/shardy (shardy/dialect/sdy/ir/attrs.td, MeshAttr and TensorShardingAttr; the
 * syntax as its tests parse and print it: ir/test/mesh_parse_print.mlir,
 * tensor_sharding_parse_print.mlir). A mesh <["x"=4, "y"=2]> (older: <"x"=4, "y"=2>; an
 * optional ", device_ids=[..]" after, which does not change how many devices a dim spans).
 * A sharding #sdy.sharding<@mesh or mesh<[..]>, [{"x"}, {"y", "z"}, {}, {"x":(1)2, ?}p0],
 * replicated={..}>: per dim the axes it is split over (a sub-axis "x":(pre)size spans size
 * devices), "?" an open dim, pN a priority; replicated= and unreduced= axes are not split.
 */

/* A quoted name at the cursor: off and len inside the quotes. */
static int sdy_name(struct sh_translator *t, uint32_t *off, uint32_t *len)
{
    struct cursor *c = &t->c;
    cursor_skip_blanks(c);
    if (cursor_peek(c) != '"')
        return cursor_fail(c, "expected a quoted axis name");
    size_t e = sh_string_end(t, c->i);
    if (e == 0)
        return cursor_fail(c, "unterminated string");
    *off = (uint32_t)c->i + 1;
    *len = (uint32_t)(e - c->i - 2);
    c->i = e;
    return ERR_OK;
}

/* The mesh at the cursor, "<" to its closing ">". */
static int sdy_mesh_body(struct sh_translator *t, struct sdy_mesh *m)
{
    struct cursor *c = &t->c;
    bool bracket;
    int rc;

    m->naxes = 0;
    m->devices = 1;
    if ((rc = sh_expect(c, '<', "'<' to open the mesh")) != ERR_OK)
        return rc;
    cursor_skip_blanks(c);
    bracket = cursor_peek(c) == '[';
    c->i += bracket;
    for (;;) {
        struct sdy_axis a = {0, 0, 0};
        int64_t size;
        cursor_skip_blanks(c);
        if (cursor_peek(c) != '"')
            break;
        size_t line = c->line, col = cursor_col(c);
        if ((rc = sdy_name(t, &a.off, &a.len)) != ERR_OK)
            return rc;
        for (uint32_t k = 0; k < m->naxes; k++)
            if (m->axes[k].len == a.len && memcmp(c->s + m->axes[k].off, c->s + a.off, a.len) == 0)
                return cursor_fail_at(c->e, line, col, "the mesh names axis \"%.*s\" twice",
                                      (int)(a.len > 200 ? 200 : a.len), c->s + a.off);
        if ((rc = sh_expect(c, '=', "'=' and the axis size")) != ERR_OK)
            return rc;
        cursor_skip_blanks(c);
        if (!cursor_uint(c, &size) || size < 1)
            return cursor_fail(c, "expected the axis size (a number of devices, at least 1)");
        if (m->naxes == SDY_MAX_AXES)
            return cursor_fail_at(c->e, line, col, "a mesh of more than %d axes", SDY_MAX_AXES);
        if (size > SDY_MAX_DEVICES || m->devices * (uint64_t)size > SDY_MAX_DEVICES)
            return cursor_fail_at(c->e, line, col, "the mesh has more than %u devices",
                                  SDY_MAX_DEVICES);
        a.size = (uint32_t)size;
        m->devices *= (uint64_t)size;
        m->axes[m->naxes++] = a;
        cursor_skip_blanks(c);
        if (cursor_peek(c) != ',')
            break;
        c->i++;
    }
    if (bracket) {
        if (!cursor_accept(c, ']'))
            return cursor_fail(c, "expected ']' to close the mesh's axes");
    }
    cursor_skip_blanks(c);
    if (cursor_peek(c) == ',') { /* device_ids=[..] */
        while (c->i < c->len && c->s[c->i] != '>' && c->s[c->i] != '\n')
            c->i++;
    }
    if (!cursor_accept(c, '>'))
        return cursor_fail(c, "expected '>' to close the mesh");
    return ERR_OK;
}

/* sdy.mesh @name = <..> at the cursor (module level). */
int sh_sdy_mesh_def(struct sh_translator *t)
{
    struct cursor *c = &t->c;
    struct sdy_mesh *m;
    int rc;

    c->i += 8; /* sdy.mesh */
    if ((rc = sh_expect(c, '@', "@name after sdy.mesh")) != ERR_OK)
        return rc;
    if ((rc = vec_reserve(&t->meshes, t->meshes.n + 1)) != ERR_OK)
        return sh_grow_err(t, rc);
    m = vec_at(&t->meshes, t->meshes.n); /* counted once whole (below) */
    m->off = (uint32_t)c->i;
    m->len = (uint32_t)cursor_span(c, ident_ch);
    if (m->len == 0)
        return cursor_fail(c, "expected @name after sdy.mesh");
    if ((rc = sh_expect(c, '=', "'=' after the mesh's name")) != ERR_OK)
        return rc;
    if ((rc = sdy_mesh_body(t, m)) != ERR_OK)
        return rc;
    t->meshes.n++;
    return ERR_OK;
}

/* A sharding read: its mesh, and per dim the devices the dim is split over (tiles) and how
 * many of them are the manual axes' (manual: a manual_computation's). */
struct sdy_split {
    const struct sdy_mesh *m; /* the module's, or inline_mesh */
    struct sdy_mesh inline_mesh;
    uint32_t ndims;
    uint64_t all; /* the product of the tiles */
    uint64_t tiles[SHAPE_MAX_RANK], manual[SHAPE_MAX_RANK];
};

/* Whether the mesh's axis k is one of the manual axes (none when manual is NULL). */
static bool is_manual(const struct sh_translator *t, const struct sdy_mesh *m, uint32_t k,
                      const struct sdy_names *manual)
{
    const struct sdy_axis *a = &m->axes[k];
    for (uint32_t q = 0; manual != NULL && q < manual->n; q++)
        if (manual->len[q] == a->len &&
            memcmp(t->c.s + manual->off[q], t->c.s + a->off, a->len) == 0)
            return true;
    return false;
}

/* One axis of a dim, "x" or the sub-axis "x":(pre)size, at the cursor: *size the devices it
 * spans, *k its axis in the mesh; used[] marks the mesh's whole axes taken. */
static int sdy_axis_ref(struct sh_translator *t, const struct sdy_mesh *m, bool *used,
                        uint64_t *size, uint32_t *k)
{
    struct cursor *c = &t->c;
    size_t line = c->line, col = cursor_col(c);
    uint32_t off = 0, len = 0;
    int rc;

    if ((rc = sdy_name(t, &off, &len)) != ERR_OK)
        return rc;
    for (*k = 0; *k < m->naxes; ++*k)
        if (m->axes[*k].len == len && memcmp(c->s + m->axes[*k].off, c->s + off, len) == 0)
            break;
    if (*k == m->naxes)
        return cursor_fail_at(c->e, line, col, "the mesh has no axis \"%.*s\"",
                              (int)(len > 200 ? 200 : len), c->s + off);
    *size = m->axes[*k].size;
    if (cursor_peek(c) == ':') { /* "x":(pre)size, a sub-axis */
        int64_t pre = 0, sub = 0;
        c->i++;
        if (cursor_peek(c) != '(' || (c->i++, !cursor_uint(c, &pre)) || cursor_peek(c) != ')' ||
            (c->i++, !cursor_uint(c, &sub)) || pre < 1 || sub < 1 ||
            (uint64_t)pre * (uint64_t)sub > *size || *size % ((uint64_t)pre * (uint64_t)sub) != 0)
            return cursor_fail_at(c->e, line, col,
                                  "expected a sub-axis \"%.*s\":(pre)size that divides its "
                                  "axis of %llu",
                                  (int)(len > 200 ? 200 : len), c->s + off,
                                  (unsigned long long)*size);
        *size = (uint64_t)sub;
    } else if (used[*k]) {
        return cursor_fail_at(c->e, line, col, "axis \"%.*s\" is used twice",
                              (int)(len > 200 ? 200 : len), c->s + off);
    } else {
        used[*k] = true;
    }
    return ERR_OK;
}

/* One dim's axes "{"x", "y":(1)2, ?}" (and a priority pN after): *tiles the devices it is
 * split over, *mtiles those of them the manual axes span. */
static int sdy_dim(struct sh_translator *t, const struct sdy_mesh *m, bool *used,
                   const struct sdy_names *manual, uint64_t *tiles, uint64_t *mtiles)
{
    struct cursor *c = &t->c;
    int rc;

    *tiles = *mtiles = 1;
    c->i++; /* '{' */
    for (;;) {
        cursor_skip_blanks(c);
        if (cursor_peek(c) == '}')
            break;
        if (cursor_peek(c) == '?') { /* open: propagation may add axes; none yet */
            c->i++;
        } else {
            size_t line = c->line, col = cursor_col(c);
            uint64_t size = 1;
            uint32_t k = 0;
            if ((rc = sdy_axis_ref(t, m, used, &size, &k)) != ERR_OK)
                return rc;
            *tiles *= size; /* at most the mesh's devices: sub-axes divide their axis */
            *mtiles *= is_manual(t, m, k, manual) ? size : 1;
            if (*tiles > m->devices)
                return cursor_fail_at(c->e, line, col,
                                      "the dim is split over more devices than the mesh has");
        }
        cursor_skip_blanks(c);
        if (cursor_peek(c) != ',')
            break;
        c->i++;
    }
    if (!cursor_accept(c, '}'))
        return cursor_fail(c, "expected '}' to close the dim's axes");
    if (cursor_peek(c) == 'p') { /* priority */
        int64_t p;
        c->i++;
        if (!cursor_uint(c, &p))
            return cursor_fail(c, "expected a priority p<number>");
    }
    return ERR_OK;
}

/* The sharding's mesh at the cursor: @name (a sdy.mesh of the module) or mesh<..>. */
static int sdy_mesh_ref(struct sh_translator *t, struct sdy_split *sp)
{
    struct cursor *c = &t->c;

    sp->m = NULL;
    if (cursor_peek(c) == '@') {
        size_t line = c->line, col = cursor_col(c);
        uint32_t off = (uint32_t)++c->i, len;
        len = (uint32_t)cursor_span(c, ident_ch);
        for (size_t k = 0; k < t->meshes.n && sp->m == NULL; k++) {
            const struct sdy_mesh *q = vec_at(&t->meshes, k);
            if (q->len == len && memcmp(c->s + q->off, c->s + off, len) == 0)
                sp->m = q;
        }
        if (sp->m == NULL)
            return cursor_fail_at(c->e, line, col, "no sdy.mesh @%.*s before this sharding",
                                  (int)(len > 200 ? 200 : len), c->s + off);
        return ERR_OK;
    }
    if (cursor_starts(c, "mesh<")) {
        int rc;
        c->i += 4;
        if ((rc = sdy_mesh_body(t, &sp->inline_mesh)) != ERR_OK)
            return rc;
        sp->m = &sp->inline_mesh;
        return ERR_OK;
    }
    return cursor_fail(c, "expected @mesh or mesh<..> in the sharding");
}

/* The dims' axes "[{..}, {..}]" at the cursor (just past '['), for an array of rank dims. */
static int sdy_dims(struct sh_translator *t, uint32_t rank, const struct sdy_names *manual,
                    struct sdy_split *sp)
{
    struct cursor *c = &t->c;
    bool used[SDY_MAX_AXES] = {false};
    int rc;

    sp->all = 1;
    for (sp->ndims = 0;; sp->ndims++) {
        cursor_skip_blanks(c);
        if (cursor_peek(c) != '{')
            break;
        if (sp->ndims == SHAPE_MAX_RANK)
            return cursor_fail(c, "a sharding of more than %d dims", SHAPE_MAX_RANK);
        if ((rc = sdy_dim(t, sp->m, used, manual, &sp->tiles[sp->ndims], &sp->manual[sp->ndims])) !=
            ERR_OK)
            return rc;
        sp->all *= sp->tiles[sp->ndims];
        if (sp->all > sp->m->devices)
            return cursor_fail(c, "the dims are split over more devices than the mesh has");
        cursor_skip_blanks(c);
        if (cursor_peek(c) != ',') {
            sp->ndims++;
            break;
        }
        c->i++;
    }
    if (!cursor_accept(c, ']'))
        return cursor_fail(c, "expected ']' to close the dims' axes");
    if (sp->ndims != rank)
        return cursor_fail(c, "the sharding has %u dims but the array %u", sp->ndims, rank);
    if (sp->m->devices % sp->all != 0) /* sub-axes of one axis overlapping */
        return cursor_fail(
            c, "the dims span %llu of the mesh's %llu devices, which does not divide it",
            (unsigned long long)sp->all, (unsigned long long)sp->m->devices);
    return ERR_OK;
}

/* The sharding <@mesh, [..], replicated={..}> at the cursor for an array of rank dims. */
static int sdy_split_read(struct sh_translator *t, uint32_t rank, const struct sdy_names *manual,
                          struct sdy_split *sp)
{
    struct cursor *c = &t->c;
    int rc;

    memset(sp, 0, sizeof(*sp));
    if (!cursor_accept(c, '<'))
        return cursor_fail(c, "expected '<' to open the sharding");
    cursor_skip_blanks(c);
    if ((rc = sdy_mesh_ref(t, sp)) != ERR_OK || sp->m == NULL)
        return rc != ERR_OK ? rc : ERR_INTERNAL;
    cursor_skip_blanks(c);
    if (cursor_peek(c) != ',' || (c->i++, cursor_skip_blanks(c), cursor_peek(c) != '['))
        return cursor_fail(c, "expected ', [' and the dims' axes");
    c->i++;
    if ((rc = sdy_dims(t, rank, manual, sp)) != ERR_OK)
        return rc;
    while (cursor_skip_blanks(c), cursor_accept(c, ',')) { /* replicated={..}, unreduced={..} */
        cursor_skip_blanks(c);
        (void)cursor_span(c, ident_ch);
        cursor_skip_blanks(c);
        if (!cursor_accept(c, '=') || (cursor_skip_blanks(c), cursor_peek(c) != '{') ||
            sh_skip_group(c) != ERR_OK)
            return cursor_fail(c, "expected replicated={..} or unreduced={..} in the sharding");
    }
    if (!cursor_accept(c, '>'))
        return cursor_fail(c, "expected '>' to close the sharding");
    return ERR_OK;
}

/*
 * The HLO sharding of sp: "{devices=[a,b,..]<=[N]}" (N the mesh's devices), with a last
 * replicated tile dim when the dims span fewer devices than the mesh has
 * (last_tile_dim_replicate: xla/hlo/ir/hlo_sharding.h, PartialTile), {replicated} when no
 * dim is split. Only the tile counts matter here (hlo_model.h: ceil(dim / tiles)), so the
 * device order is iota.
 */
static int sdy_split_put(struct sh_translator *t, const struct sdy_split *sp, struct sh_buf *out)
{
    unsigned long long n = sp->m->devices;
    int rc;

    if (sp->all <= 1) /* sdy_dims made it at least 1 */
        return sh_buf_add(t, out, "{replicated}", 12);
    if ((rc = sh_buf_add(t, out, "{devices=[", 10)) != ERR_OK)
        return rc;
    for (uint32_t d = 0; d < sp->ndims; d++)
        if ((rc = sh_buf_printf(t, out, "%s%llu", d > 0 ? "," : "",
                                (unsigned long long)sp->tiles[d])) != ERR_OK)
            return rc;
    if (sp->all == n)
        return sh_buf_printf(t, out, "]<=[%llu]}", n);
    return sh_buf_printf(t, out, ",%llu]<=[%llu] last_tile_dim_replicate}",
                         n / (unsigned long long)sp->all, n);
}

int sh_sdy_sharding(struct sh_translator *t, uint32_t rank, struct sh_buf *out)
{
    struct sdy_split sp;
    int rc = sdy_split_read(t, rank, NULL, &sp);
    if (rc != ERR_OK)
        return rc;
    return sp.m != NULL ? sdy_split_put(t, &sp, out) : ERR_INTERNAL;
}

/* What a list of shardings does with value k: its shape sh (NUL-terminated; "" when the
 * list has no shapes), its sharding at the cursor, at the cursor's place at its '<' (for
 * errors that name the value). */
typedef int (*sdy_each_fn)(struct sh_translator *t, void *ctx, uint32_t k, const char *sh,
                           const struct cursor *at);

/*
 * The list "[<@mesh, [..]>, ..]" at the cursor, one sharding per value of shapes ("S, ..":
 * shapes points past a tuple's '('; NULL: no shapes), n values: writes open into out, then
 * each(ctx) per value with ", " between them in out, then close. The one reading of the list
 * that sh_sdy_list and sh_sdy_manual share.
 */
static int sdy_each(struct sh_translator *t, const char *shapes, uint32_t n, struct sh_buf *out,
                    const char *open, const char *close, sdy_each_fn each, void *ctx)
{
    struct cursor *c = &t->c;
    const char *p = shapes;
    uint32_t k = 0;
    int rc;

    cursor_skip_blanks(c);
    if (!cursor_accept(c, '['))
        return cursor_fail(c, "expected '[' and a sharding per value");
    if ((rc = sh_buf_add(t, out, open, strlen(open))) != ERR_OK)
        return rc;
    for (cursor_skip_blanks(c); cursor_peek(c) == '<';) {
        size_t len = 0;
        const char *e = p != NULL ? sh_next_elem(&p, &len) : "";
        char sh[SHAPE_MAX_TEXT];
        struct cursor at = *c;
        if (k == n)
            return cursor_fail(c, "more shardings than the %u values", n);
        snprintf(sh, sizeof(sh), "%.*s", (int)(len < sizeof(sh) ? len : sizeof(sh) - 1), e);
        if ((k > 0 && (rc = sh_buf_add(t, out, ", ", 2)) != ERR_OK) ||
            (rc = each(t, ctx, k, sh, &at)) != ERR_OK)
            return rc;
        k++;
        cursor_skip_blanks(c);
        if (!cursor_accept(c, ','))
            break;
        cursor_skip_blanks(c);
    }
    if (!cursor_accept(c, ']'))
        return cursor_fail(c, "expected ']' to close the shardings");
    if (k != n)
        return cursor_fail(c, "%u shardings for %u values", k, n);
    return sh_buf_add(t, out, close, strlen(close));
}

static int list_one(struct sh_translator *t, void *out, uint32_t k, const char *sh,
                    const struct cursor *at)
{
    (void)k;
    (void)at;
    return sh_sdy_sharding(t, sh_rank_of(sh), out);
}

int sh_sdy_list(struct sh_translator *t, const char *shape, bool tuple, uint32_t n,
                struct sh_buf *out)
{
    const char *p = tuple && shape != NULL ? shape + 1 : shape;
    return sdy_each(t, p, n, out, tuple ? "{" : "", tuple ? "}" : "", list_one, out);
}

int sh_sdy_axes(struct sh_translator *t, struct sdy_names *out)
{
    struct cursor *c = &t->c;
    int rc;

    out->n = 0;
    cursor_skip_blanks(c);
    if (!cursor_accept(c, '{'))
        return cursor_fail(c, "expected '{' and the manual axes");
    for (cursor_skip_blanks(c); cursor_peek(c) == '"';) {
        if (out->n == SDY_MAX_AXES)
            return cursor_fail(c, "more than %d manual axes", SDY_MAX_AXES);
        if ((rc = sdy_name(t, &out->off[out->n], &out->len[out->n])) != ERR_OK)
            return rc;
        out->n++;
        cursor_skip_blanks(c);
        if (!cursor_accept(c, ','))
            break;
        cursor_skip_blanks(c);
    }
    if (!cursor_accept(c, '}'))
        return cursor_fail(c, "expected '}' to close the manual axes");
    return ERR_OK;
}

/* Writes the array shape sh ("T[a,b]") into out with each dim divided by the manual axes'
 * devices that split it (sp->manual), which must divide it: the shape on one device. Errors
 * name c's place (the value's sharding). */
static int local_shape(struct sh_translator *t, const char *sh, size_t len,
                       const struct sdy_split *sp, uint32_t value, struct sh_buf *out,
                       const struct cursor *c)
{
    const char *open = memchr(sh, '[', len);
    size_t at = open != NULL ? (size_t)(open - sh) + 1 : len;
    int rc;

    if (open == NULL || sh[0] == '(')
        return cursor_fail(c, "value %u of the manual computation is not an array", value);
    if ((rc = sh_buf_add(t, out, sh, at)) != ERR_OK)
        return rc;
    for (uint32_t d = 0; d < sp->ndims; d++) {
        int64_t dim = 0;
        if (!text_uint(sh, len, &at, &dim))
            return cursor_fail(c, "value %u of the manual computation has no dim %u", value, d);
        if ((uint64_t)dim % sp->manual[d] != 0)
            return cursor_fail(c,
                               "dim %u of value %u (%lld) is not a multiple of the %llu devices "
                               "of its manual axes",
                               d, value, (long long)dim, (unsigned long long)sp->manual[d]);
        if ((rc = sh_buf_printf(t, out, "%s%llu", d > 0 ? "," : "",
                                (unsigned long long)((uint64_t)dim / sp->manual[d]))) != ERR_OK)
            return rc;
        at += at < len && sh[at] == ',';
    }
    return sh_buf_add(t, out, "]", 1);
}

struct manual_ctx {
    const struct sdy_names *manual;
    struct sh_buf *locals, *shardings;
};

static int manual_one(struct sh_translator *t, void *ctx, uint32_t k, const char *sh,
                      const struct cursor *at)
{
    const struct manual_ctx *m = ctx;
    struct sdy_split sp;
    int rc;

    if ((rc = sdy_split_read(t, sh_rank_of(sh), m->manual, &sp)) != ERR_OK)
        return rc;
    if (sp.m == NULL)
        return ERR_INTERNAL;
    if ((rc = local_shape(t, sh, strlen(sh), &sp, k, m->locals, at)) != ERR_OK ||
        m->shardings == NULL)
        return rc;
    if ((rc = sdy_split_put(t, &sp, m->shardings)) != ERR_OK)
        return rc;
    return sh_buf_add(t, m->shardings, "\n", 1);
}

int sh_sdy_manual(struct sh_translator *t, const char *shapes, uint32_t n,
                  const struct sdy_names *manual, struct sh_buf *locals, struct sh_buf *shardings)
{
    struct manual_ctx m = {manual, locals, shardings};
    return sdy_each(t, shapes != NULL ? shapes + 1 : "", n, locals, "(", ")", manual_one, &m);
}
