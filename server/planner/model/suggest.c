/*
 * suggest.c - padding fixes sized exactly with layout_resolve (see suggest.h).
 */
#include "planner/suggest.h"

#include <stdio.h>
#include <string.h>

#define LANES 128 /* NUM_LANES of every generation: server/planner/SOURCES.md#tpu_info */

/* suggest_sharding's action; count_same tells a reshard by this pointer. */
static const char action_reshard[] = "reshard";

/* v in decimal at p; returns the end. */
static char *put_dec(char *p, int64_t v)
{
    char tmp[24];
    size_t n = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (v < 0)
        *p++ = '-';
    while (n > 0)
        *p++ = tmp[--n];
    return p;
}

/* Written whole into text (at most SHAPE_MAX_TILES tiles of SHAPE_MAX_TILE_RANK dims of
 * 20 digits and a sign each), then cut to cap as snprintf would: every tensor of a result
 * prints one, so no snprintf per number. */
char *suggest_tiles_text(const struct shape *sh, char *buf, size_t cap)
{
    char text[SHAPE_MAX_TILES * (3 + SHAPE_MAX_TILE_RANK * 22)], *p = text;
    size_t n;

    if (cap == 0)
        return buf;
    for (unsigned k = 0; k < sh->ntiles && k < SHAPE_MAX_TILES; k++) {
        if (k == 0)
            *p++ = 'T';
        *p++ = '(';
        for (unsigned d = 0; d < sh->tiles[k].rank && d < SHAPE_MAX_TILE_RANK; d++) {
            if (d > 0)
                *p++ = ',';
            if (sh->tiles[k].dims[d] == SHAPE_TILE_COMBINE)
                *p++ = '*';
            else
                p = put_dec(p, sh->tiles[k].dims[d]);
        }
        *p++ = ')';
    }
    n = (size_t)(p - text) < cap ? (size_t)(p - text) : cap - 1;
    memcpy(buf, text, n);
    buf[n] = '\0';
    return buf;
}

/* A shape without layout whose logical dims are phys[0..r) (major to minor). */
static void make_shape(struct shape *out, enum dtype dt, const int64_t *phys, unsigned r)
{
    memset(out, 0, sizeof(*out));
    out->dtype = dt;
    out->rank = (uint8_t)r;
    memcpy(out->dims, phys, r * sizeof(*phys));
}

struct best {
    uint64_t padded;
    struct shape shape;
    const char *action;
    bool found;
};

static void try_candidate(const struct shape *cand, const struct chip *chip, const char *action,
                          struct best *b)
{
    struct shape resolved;
    struct layout_info info;
    struct err ignore;

    if (layout_resolve(cand, chip, &resolved, &info, &ignore) != ERR_OK)
        return; /* a candidate that cannot be sized is simply not suggested */
    if (info.padded_bytes < b->padded) {
        b->padded = info.padded_bytes;
        b->shape = resolved;
        b->action = action;
        b->found = true;
    }
}

/*
 * Reshapes of sh (physical dims phys, major to minor) into b, in order of how little they
 * change the program; on a tie the first wins.
 */
static void try_reshapes(const struct shape *sh, const int64_t *phys, const struct chip *chip,
                         struct best *b)
{
    int64_t cand[SHAPE_MAX_RANK];
    unsigned r = sh->rank;
    struct shape s;

    /* Merge the j dims just above the minor dim into one second-minor dim. */
    for (unsigned j = 2; j < r; j++) {
        uint64_t mprod = 1;
        bool ok = true;
        for (unsigned k = r - 1 - j; k < r - 1 && ok; k++)
            ok = !__builtin_mul_overflow(mprod, (uint64_t)phys[k], &mprod);
        if (!ok || mprod > INT64_MAX)
            continue;
        memcpy(cand, phys, (r - 1 - j) * sizeof(*cand));
        cand[r - 1 - j] = (int64_t)mprod;
        cand[r - j] = phys[r - 1];
        make_shape(&s, sh->dtype, cand, r - j + 1);
        try_candidate(&s, chip, "merge-major", b);
    }
    /* Fold the j minor-most physical dims into [M/128, 128]. */
    for (unsigned j = 1; j <= r; j++) {
        uint64_t mprod = 1;
        bool ok = true;
        for (unsigned k = r - j; k < r && ok; k++)
            ok = !__builtin_mul_overflow(mprod, (uint64_t)phys[k], &mprod);
        if (!ok || mprod == 0 || mprod % LANES != 0 || (j == 1 && phys[r - 1] == LANES))
            continue;
        memcpy(cand, phys, (r - j) * sizeof(*cand));
        cand[r - j] = (int64_t)(mprod / LANES);
        cand[r - j + 1] = LANES;
        make_shape(&s, sh->dtype, cand, r - j + 2);
        try_candidate(&s, chip, "fold-minor", b);
    }
    /* Make dim k the minor-most one. */
    for (unsigned k = 0; k + 1 < r; k++) {
        unsigned n = 0;
        for (unsigned q = 0; q < r; q++)
            if (q != k)
                cand[n++] = phys[q];
        cand[n] = phys[k];
        make_shape(&s, sh->dtype, cand, r);
        try_candidate(&s, chip, "reorder", b);
    }
}

/* Where sh's padding comes from (info is its layout_size), into cause. */
static void explain_padding(const struct shape *sh, const struct layout_info *info, char *cause,
                            size_t cap)
{
    char tiles[64];
    size_t n = 0;
    unsigned minor = sh->minor_to_major[0];

    suggest_tiles_text(sh, tiles, sizeof(tiles));
    if (info->padded_dims[minor] != sh->dims[minor])
        n += (size_t)snprintf(cause + n, cap - n, "minor dim %u (size %lld) pads to %lld under %s",
                              minor, (long long)sh->dims[minor],
                              (long long)info->padded_dims[minor], tiles[0] ? tiles : "its tile");
    if (sh->rank >= 2) {
        unsigned second = sh->minor_to_major[1];
        if (info->padded_dims[second] != sh->dims[second] && n < cap)
            n += (size_t)snprintf(
                cause + n, cap - n, "%ssecond-minor dim %u (size %lld) pads to %lld%s%s",
                n ? "; " : "", second, (long long)sh->dims[second],
                (long long)info->padded_dims[second], n ? "" : " under ", n ? "" : tiles);
    }
    if (n == 0)
        snprintf(cause, cap, "elements are stored wider than %s under %s", dtype_name(sh->dtype),
                 tiles[0] ? tiles : "its layout");
}

/*
 * The figures and shapes of the winning candidate b against the tensor as it is (info),
 * into *out; plain gets the suggested shape without its layout, for the caller's text. 0 when no
 * candidate recovers 1% of the tensor (noise next to the real fixes), 1 when filled, or
 * ERR_INTERNAL.
 */
static int fill_fix(const struct layout_info *info, const struct best *b, struct suggestion *out,
                    char plain[SHAPE_MAX_TEXT], struct err *e)
{
    struct shape no_layout = b->shape;

    if (!b->found || (info->padded_bytes - b->padded) < info->padded_bytes / 100)
        return 0;
    out->padded_bytes = info->padded_bytes;
    out->suggested_padded_bytes = b->padded;
    out->saves_bytes = info->padded_bytes - b->padded;
    out->action = b->action;
    no_layout.has_layout = false;
    if (shape_print(&no_layout, plain, SHAPE_MAX_TEXT) < 0 ||
        shape_print(&b->shape, out->suggested_shape, sizeof(out->suggested_shape)) < 0)
        return err_set(e, ERR_INTERNAL, NULL, "suggest: shape does not print");
    return 1;
}

int suggest_tensor(const struct shape *sh, const struct chip *chip, struct suggestion *out,
                   struct err *e)
{
    struct layout_info info;
    struct best b = {0};
    int64_t phys[SHAPE_MAX_RANK];
    char cause[256], plain[SHAPE_MAX_TEXT], saves[32];
    unsigned r = sh->rank;
    int rc;

    if (!sh->has_layout || r == 0)
        return 0;
    if ((rc = layout_size(sh, &info, e)) != ERR_OK)
        return rc;
    if (info.padded_bytes <= info.logical_bytes)
        return 0;
    b.padded = info.padded_bytes;
    for (unsigned k = 0; k < r; k++)
        phys[k] = sh->dims[sh->minor_to_major[r - 1 - k]];
    try_reshapes(sh, phys, chip, &b);
    if ((rc = fill_fix(&info, &b, out, plain, e)) != 1)
        return rc;
    /* Explain where the padding comes from, then the fix. */
    explain_padding(sh, &info, cause, sizeof(cause));
    /* Shapes are at most a few hundred bytes in practice; a longer text is cut, not lost. */
    if (snprintf(out->text, sizeof(out->text), "%s; storing it as %s saves %s", cause, plain,
                 layout_format_bytes(out->saves_bytes, saves, sizeof(saves))) >=
        (int)sizeof(out->text))
        out->text[sizeof(out->text) - 1] = '\0';
    return 1;
}

int suggest_sharding(const struct shape *local, const int64_t *global_dims, const uint64_t *parts,
                     const struct chip *chip, struct suggestion *out, struct err *e)
{
    struct layout_info info;
    struct best b = {0};
    char tiles[64], plain[SHAPE_MAX_TEXT], saves[32];
    unsigned r = local->rank, minor, best_dim = 0;
    int rc;

    if (!local->has_layout || r < 2)
        return 0;
    minor = local->minor_to_major[0];
    if (parts[minor] <= 1)
        return 0;
    if ((rc = layout_size(local, &info, e)) != ERR_OK)
        return rc;
    if (info.padded_dims[minor] == local->dims[minor])
        return 0; /* the minor dim does not pad: resharding cannot help it */
    b.padded = info.padded_bytes;
    for (unsigned k = 0; k < r; k++) {
        uint64_t pk;
        if (k == minor || __builtin_mul_overflow(parts[k], parts[minor], &pk) ||
            pk > (uint64_t)INT64_MAX)
            continue;
        struct shape s = *local;
        s.has_layout = false;
        s.ntiles = 0;
        s.dims[minor] = global_dims[minor];
        s.dims[k] = global_dims[k] == 0 ? 0 : (global_dims[k] - 1) / (int64_t)pk + 1;
        uint64_t before = b.padded;
        try_candidate(&s, chip, action_reshard, &b);
        if (b.padded < before)
            best_dim = k;
    }
    if ((rc = fill_fix(&info, &b, out, plain, e)) != 1)
        return rc;
    suggest_tiles_text(local, tiles, sizeof(tiles));
    if (snprintf(out->text, sizeof(out->text),
                 "minor dim %u is sharded %llu ways (%lld -> %lld per device), which pads to "
                 "%lld under %s; sharding dim %u over those mesh axes instead (%s per device) "
                 "saves %s",
                 minor, (unsigned long long)parts[minor], (long long)global_dims[minor],
                 (long long)local->dims[minor], (long long)info.padded_dims[minor],
                 tiles[0] ? tiles : "its tile", best_dim, plain,
                 layout_format_bytes(out->saves_bytes, saves, sizeof(saves))) >=
        (int)sizeof(out->text))
        out->text[sizeof(out->text) - 1] = '\0';
    return 1;
}

/* ---- fixes for a whole model --------------------------------------------------------- */

#define SUGGEST_TOP_PADDING 64 /* tensors examined, most padding first */

static bool shape_same(const struct model_shape *a, const struct model_shape *b)
{
    if (a->dtype != b->dtype || a->rank != b->rank || a->ntiles != b->ntiles ||
        a->element_size_bits != b->element_size_bits || a->memory_space != b->memory_space)
        return false;
    for (unsigned d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d] || a->minor_to_major[d] != b->minor_to_major[d])
            return false;
    for (unsigned k = 0; k < a->ntiles; k++) {
        if (a->tiles[k].rank != b->tiles[k].rank)
            return false;
        for (unsigned d = 0; d < a->tiles[k].rank; d++)
            if (a->tiles[k].dims[d] != b->tiles[k].dims[d])
                return false;
    }
    return true;
}

static uint64_t padding_of(const struct model_tensor *t)
{
    return t->padded_bytes - t->logical_bytes;
}

/* The tensors with the most padding, most first (insertion into a sorted top list);
 * returns how many. */
static size_t top_padding(const struct model *m, size_t top[SUGGEST_TOP_PADDING])
{
    const struct model_tensor *ts = m->tensors;
    size_t ntop = 0;

    for (size_t i = 0; i < m->n; i++) {
        uint64_t pad = padding_of(&ts[i]);
        if (ts[i].raw || pad == 0)
            continue;
        if (ntop == SUGGEST_TOP_PADDING && pad <= padding_of(&ts[top[ntop - 1]]))
            continue;
        size_t k = ntop < SUGGEST_TOP_PADDING ? ntop++ : ntop - 1;
        while (k > 0 && padding_of(&ts[top[k - 1]]) < pad) {
            top[k] = top[k - 1];
            k--;
        }
        top[k] = i;
    }
    return ntop;
}

/* The best fix of tensor t: a reshape, or for a sharded tensor moving the minor dim's mesh
 * axes elsewhere when that saves at least as much. 1 with *out filled, 0 none, or < 0. */
static int fix_tensor(const struct model *m, const struct model_tensor *t, const struct chip *chip,
                      struct suggestion *out, struct err *e)
{
    /* zeroed: clang-analyzer cannot tell that suggest_sharding fills it whenever it returns 1 */
    struct suggestion alt = {0};
    uint64_t parts[SHAPE_MAX_RANK];
    struct shape sh;
    int rc, r2;

    model_tensor_shape(t, &sh);
    if ((rc = suggest_tensor(&sh, chip, out, e)) < 0 || !t->sharded)
        return rc;
    for (unsigned d = 0; d < sh.rank; d++) {
        parts[d] = 1;
        for (size_t a = 0; a < m->naxes; a++)
            if (t->shard_mask[d] & (1u << a))
                parts[d] *= (uint64_t)m->axis_sizes[a]; /* checked by the parser */
    }
    if ((r2 = suggest_sharding(&sh, t->global_dims, parts, chip, &alt, e)) < 0)
        return r2;
    if (r2 == 1 && (rc == 0 || alt.saves_bytes >= out->saves_bytes)) {
        *out = alt;
        rc = 1;
    }
    return rc;
}

/* How many tensors fix f applies to: those of its shape (for a reshard: and sharding). */
static void count_same(const struct model *m, struct suggest_fix *f)
{
    const struct model_tensor *ts = m->tensors, *ref = &ts[f->tensor];
    bool reshard = f->s.action == action_reshard;

    f->same_shape = 0;
    f->total_saves = 0;
    for (size_t i = 0; i < m->n; i++)
        if (!ts[i].raw && shape_same(&ts[i].shape, &ref->shape) &&
            (!reshard || (ts[i].sharded &&
                          memcmp(ts[i].shard_mask, ref->shard_mask,
                                 ref->shape.rank * sizeof(*ref->shard_mask)) == 0 &&
                          memcmp(ts[i].global_dims, ref->global_dims,
                                 ref->shape.rank * sizeof(*ref->global_dims)) == 0))) {
            f->same_shape++;
            /* each saving is below that tensor's padded bytes, whose sum is checked */
            f->total_saves += f->s.saves_bytes;
        }
}

int suggest_model(const struct model *m, const struct chip *chip,
                  struct suggest_fix out[SUGGEST_MAX_FIXES], size_t *nout, struct err *e)
{
    size_t top[SUGGEST_TOP_PADDING], ntop = top_padding(m, top);
    const struct model_tensor *ts = m->tensors;

    *nout = 0;
    for (size_t k = 0; k < ntop && *nout < SUGGEST_MAX_FIXES; k++) {
        const struct model_tensor *t = &ts[top[k]];
        bool seen = false;
        for (size_t q = 0; q < *nout; q++)
            seen |= shape_same(&ts[out[q].tensor].shape, &t->shape);
        if (seen)
            continue;
        int rc = fix_tensor(m, t, chip, &out[*nout].s, e);
        if (rc < 0)
            return rc;
        if (rc == 1)
            out[(*nout)++].tensor = top[k];
    }
    for (size_t q = 0; q < *nout; q++)
        count_same(m, &out[q]);
    return ERR_OK;
}
