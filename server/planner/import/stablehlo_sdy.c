/*
 * stablehlo_sdy.c - Shardy meshes and argument shardings of the StableHLO translator
 * (stablehlo_int.h), written as HLO shardings.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "planner/import/stablehlo_int.h"

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

/* One dim's axes "{"x", "y":(1)2, ?}" (and a priority pN after): *tiles the devices it is
 * split over; used[] marks the mesh's whole axes taken (each at most once). */
static int sdy_dim(struct sh_translator *t, const struct sdy_mesh *m, bool *used, uint64_t *tiles)
{
    struct cursor *c = &t->c;
    int rc;

    *tiles = 1;
    c->i++; /* '{' */
    for (;;) {
        cursor_skip_blanks(c);
        if (cursor_peek(c) == '}')
            break;
        if (cursor_peek(c) == '?') { /* open: propagation may add axes; none yet */
            c->i++;
        } else {
            size_t line = c->line, col = cursor_col(c);
            uint32_t off = 0, len = 0, k;
            if ((rc = sdy_name(t, &off, &len)) != ERR_OK)
                return rc;
            for (k = 0; k < m->naxes; k++)
                if (m->axes[k].len == len && memcmp(c->s + m->axes[k].off, c->s + off, len) == 0)
                    break;
            if (k == m->naxes)
                return cursor_fail_at(c->e, line, col, "the mesh has no axis \"%.*s\"",
                                      (int)(len > 200 ? 200 : len), c->s + off);
            uint64_t size = m->axes[k].size;
            if (cursor_peek(c) == ':') { /* "x":(pre)size, a sub-axis */
                int64_t pre = 0, sub = 0;
                c->i++;
                if (cursor_peek(c) != '(' || (c->i++, !cursor_uint(c, &pre)) ||
                    cursor_peek(c) != ')' || (c->i++, !cursor_uint(c, &sub)) || pre < 1 ||
                    sub < 1 || (uint64_t)pre * (uint64_t)sub > size ||
                    size % ((uint64_t)pre * (uint64_t)sub) != 0)
                    return cursor_fail_at(c->e, line, col,
                                          "expected a sub-axis \"%.*s\":(pre)size that divides its "
                                          "axis of %llu",
                                          (int)(len > 200 ? 200 : len), c->s + off,
                                          (unsigned long long)size);
                size = (uint64_t)sub;
            } else if (used[k]) {
                return cursor_fail_at(c->e, line, col, "axis \"%.*s\" is used twice",
                                      (int)(len > 200 ? 200 : len), c->s + off);
            } else {
                used[k] = true;
            }
            *tiles *= size; /* at most the mesh's devices: sub-axes divide their axis */
            if (*tiles > m->devices)
                return cursor_fail_at(c->e, line, col,
                                      "the dim is split over more devices than "
                                      "the mesh has");
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

/*
 * #sdy.sharding<..> at the cursor (just past "#sdy.sharding") for an argument of rank dims,
 * as the HLO sharding ", sharding={devices=[a,b,..]<=[N]}" (N the mesh's devices), with a
 * last replicated tile dim when the dims span fewer devices than the mesh has
 * (last_tile_dim_replicate: xla/hlo/ir/hlo_sharding.h, PartialTile), {replicated} when no
 * dim is split. Only the tile counts matter here (hlo_model.h: ceil(dim / tiles)), so the
 * device order is iota.
 */
int sh_sdy_sharding(struct sh_translator *t, uint32_t rank, struct sh_buf *out)
{
    struct cursor *c = &t->c;
    struct sdy_mesh inline_mesh;
    const struct sdy_mesh *m = NULL;
    bool used[SDY_MAX_AXES] = {false};
    uint64_t all = 1;
    uint32_t ndims = 0;
    struct sh_buf dims = {0};
    int rc = ERR_OK;

    if (cursor_peek(c) != '<') {
        rc = cursor_fail(c, "expected '<' after #sdy.sharding");
        goto out;
    }
    c->i++;
    cursor_skip_blanks(c);
    if (cursor_peek(c) == '@') {
        size_t line = c->line, col = cursor_col(c);
        uint32_t off = (uint32_t)++c->i, len;
        len = (uint32_t)cursor_span(c, ident_ch);
        for (size_t k = 0; k < t->meshes.n && m == NULL; k++) {
            const struct sdy_mesh *q = vec_at(&t->meshes, k);
            if (q->len == len && memcmp(c->s + q->off, c->s + off, len) == 0)
                m = q;
        }
        if (m == NULL) {
            rc = cursor_fail_at(c->e, line, col, "no sdy.mesh @%.*s before this sharding",
                                (int)(len > 200 ? 200 : len), c->s + off);
            goto out;
        }
    } else if (cursor_starts(c, "mesh<")) {
        c->i += 4;
        if ((rc = sdy_mesh_body(t, &inline_mesh)) != ERR_OK)
            goto out;
        m = &inline_mesh;
    } else {
        rc = cursor_fail(c, "expected @mesh or mesh<..> in the sharding");
        goto out;
    }
    cursor_skip_blanks(c);
    if (cursor_peek(c) != ',' || (c->i++, cursor_skip_blanks(c), cursor_peek(c) != '[')) {
        rc = cursor_fail(c, "expected ', [' and the dims' axes");
        goto out;
    }
    c->i++;
    for (;;) {
        uint64_t tiles;
        cursor_skip_blanks(c);
        if (cursor_peek(c) != '{')
            break;
        if ((rc = sdy_dim(t, m, used, &tiles)) != ERR_OK ||
            (rc = sh_buf_printf(t, &dims, "%s%llu", ndims > 0 ? "," : "",
                                (unsigned long long)tiles)) != ERR_OK)
            goto out;
        all *= tiles;
        if (all > m->devices) {
            rc = cursor_fail(c, "the dims are split over more devices than the mesh has");
            goto out;
        }
        ndims++;
        cursor_skip_blanks(c);
        if (cursor_peek(c) != ',')
            break;
        c->i++;
    }
    if (cursor_peek(c) != ']') {
        rc = cursor_fail(c, "expected ']' to close the dims' axes");
        goto out;
    }
    c->i++;
    if (ndims != rank) {
        rc = cursor_fail(c, "the sharding has %u dims but the argument %u", ndims, rank);
        goto out;
    }
    if (m->devices % all != 0) { /* sub-axes of one axis overlapping */
        rc = cursor_fail(c,
                         "the dims span %llu of the mesh's %llu devices, which does not divide it",
                         (unsigned long long)all, (unsigned long long)m->devices);
        goto out;
    }
    if (all == 1)
        rc = sh_buf_add(t, out, ", sharding={replicated}", 23);
    else if (all == m->devices)
        rc = sh_buf_printf(t, out, ", sharding={devices=[%s]<=[%llu]}", dims.p,
                           (unsigned long long)m->devices);
    else
        rc = sh_buf_printf(t, out, ", sharding={devices=[%s,%llu]<=[%llu] last_tile_dim_replicate}",
                           dims.p, (unsigned long long)(m->devices / all),
                           (unsigned long long)m->devices);
out:
    free(dims.p);
    return rc;
}
