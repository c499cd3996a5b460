/*
 * recipe_stage.c - one pipeline stage of a recipe made and measured (recipe_int.h): the
 * emitter (recipe_gen.c) run through the training or the serving step program
 * (recipe_train.c, recipe_serve.c), then the finished model's bytes by category and its
 * live peak.
 */
#include <stdlib.h>
#include <string.h>

#include "planner/arith.h"
#include "planner/lifetime.h"
#include "planner/import/recipe_int.h"

/* The most padded bytes live at one step, and when. */
static int live_peak(const struct model *m, struct recipe_stage *st, struct err *e)
{
    int64_t *delta = calloc((size_t)m->nsteps + 1, sizeof(*delta));
    int64_t live = 0;

    if (delta == NULL)
        return err_set(e, ERR_NOMEM, "", "recipe: out of memory measuring a stage");
    for (size_t i = 0; i < m->n; i++) {
        const struct model_tensor *t = &m->tensors[i];
        if (t->live_start < 0 || t->live_end > m->nsteps || t->live_start > t->live_end)
            continue; /* lifetime_derive keeps them in [0, nsteps] */
        delta[t->live_start] += (int64_t)t->padded_bytes;
        delta[t->live_end] -= (int64_t)t->padded_bytes;
    }
    st->live_peak = 0;
    for (int64_t s = 0; s < m->nsteps; s++) {
        live += delta[s];
        if ((uint64_t)live > st->live_peak) {
            st->live_peak = (uint64_t)live;
            st->peak_step = s;
        }
    }
    free(delta);
    return ERR_OK;
}

static int measure(struct model *m, const uint8_t *cats, const struct chip *chip,
                   struct recipe_stage *st, struct err *e)
{
    int rc;

    if (cats == NULL)
        return err_set(e, ERR_INTERNAL, "", "recipe: a stage measured without its categories");
    if ((rc = model_resolve(m, chip, 1, e)) != ERR_OK || (rc = lifetime_derive(m, e)) != ERR_OK)
        return rc;
    st->tensors = m->n;
    for (size_t i = 0; i < m->n; i++) {
        struct recipe_bytes *b = &st->cat[cats[i]];
        b->count++;
        if (arith_add(b->logical, m->tensors[i].logical_bytes, &b->logical) ||
            arith_add(b->padded, m->tensors[i].padded_bytes, &b->padded) ||
            arith_add(st->total_padded, m->tensors[i].padded_bytes, &st->total_padded))
            return err_set(e, ERR_OVERFLOW, "", "recipe: a stage's bytes pass 2^64");
    }
    return live_peak(m, st, e);
}

int recipe_stage_model(const struct recipe *r, int64_t k, const struct chip *chip,
                       const struct model_limits *l, struct model *m, struct recipe_stage *st,
                       struct err *e)
{
    struct rg g;
    uint8_t *cats = NULL;
    int rc;

    memset(m, 0, sizeof(*m));
    rg_init(&g, r, k, l, e);
    if (r->is_train)
        recipe_train_emit(&g);
    else
        recipe_serve_emit(&g);
    rc = rg_finish(&g, m, st != NULL ? &cats : NULL, e);
    if (rc == ERR_OK && st != NULL) {
        memset(st, 0, sizeof(*st));
        recipe_stage_layers(r, k, &st->first_layer, &st->layers);
        st->in_flight = recipe_in_flight(r, k);
        st->host_bytes = g.host_bytes;
        rc = measure(m, cats, chip, st, e);
    }
    free(cats);
    rg_free(&g);
    if (rc != ERR_OK)
        model_free(m);
    return rc;
}
