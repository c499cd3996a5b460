/*
 * lifetime.c - tensor lifetimes from explicit intervals or program order (see lifetime.h).
 */
#include "planner/lifetime.h"

#include <stdio.h>
#include <stdlib.h>

static bool is_argument(enum tensor_kind k)
{
    return k == TENSOR_PARAM || k == TENSOR_OPTIMIZER || k == TENSOR_INPUT || k == TENSOR_KV_CACHE;
}

static int terr(struct err *e, const struct model *m, size_t i, const char *field, const char *what)
{
    char where[48];
    snprintf(where, sizeof(where), "tensors[%zu]%s%s", i, field[0] ? "." : "", field);
    return err_set(e, ERR_INVALID, where, "tensors[%zu] \"%.200s\": %s%s%s", i, m->tensors[i].name,
                   field, field[0] ? ": " : "", what);
}

int lifetime_derive(struct model *m, struct err *e)
{
    int64_t *def = NULL, *last = NULL;
    int64_t nsteps = (int64_t)m->nops;
    size_t unreferenced = 0;
    int rc = ERR_OK;

    for (size_t i = 0; i < m->n; i++) {
        const struct model_tensor *t = &m->tensors[i];
        if (t->donated && !is_argument(t->kind) && !t->raw)
            return terr(e, m, i, "donated",
                        "only arguments (kind param, optimizer, input or kv_cache) "
                        "can be donated");
        if (t->live_given && t->live_end > nsteps)
            nsteps = t->live_end;
    }
    if (nsteps < 1)
        nsteps = 1;
    m->nsteps = nsteps;

    if (m->nops > 0) {
        size_t cnt = m->n > 0 ? m->n : 1;
        def = malloc(cnt * sizeof(*def));
        last = malloc(cnt * sizeof(*last));
        if (def == NULL || last == NULL) {
            rc = err_set(e, ERR_NOMEM, "ops", "out of memory deriving lifetimes");
            goto out;
        }
        for (size_t i = 0; i < m->n; i++)
            def[i] = last[i] = -1;
        for (size_t k = 0; k < m->nops; k++) {
            const struct model_op *op = &m->ops[k];
            for (uint32_t j = 0; j < op->ninputs; j++)
                last[op->inputs[j]] = (int64_t)k;
            for (uint32_t j = 0; j < op->noutputs; j++) {
                uint32_t t = op->outputs[j];
                char where[48], what[ERR_MSG_MAX];
                if (is_argument(m->tensors[t].kind))
                    continue; /* an in-place update of an argument */
                snprintf(where, sizeof(where), "ops[%zu].outputs[%u]", k, j);
                if (def[t] >= 0) {
                    snprintf(what, sizeof(what), "produced twice, by ops[%lld] and ops[%zu]",
                             (long long)def[t], k);
                    rc = err_set(e, ERR_INVALID, where,
                                 "ops[%zu] \"%.200s\": outputs[%u]: "
                                 "tensors[%u] \"%.200s\" is %s",
                                 k, op->name, j, t, m->tensors[t].name, what);
                    goto out;
                }
                /* last[t] == k means the op reads what it writes: allowed only as an
                 * update, which for non-arguments is a use before definition. */
                if (last[t] >= 0) {
                    rc = err_set(e, ERR_INVALID, where,
                                 "ops[%zu] \"%.200s\": outputs[%u]: "
                                 "tensors[%u] \"%.200s\" is used by ops[%lld] before this op "
                                 "produces it",
                                 k, op->name, j, t, m->tensors[t].name, (long long)last[t]);
                    goto out;
                }
                def[t] = (int64_t)k;
            }
        }
    }

    for (size_t i = 0; i < m->n; i++) {
        struct model_tensor *t = &m->tensors[i];
        if (t->live_given)
            continue;
        t->live_start = 0;
        t->live_end = nsteps;
        if (m->nops == 0 || t->kind == TENSOR_OUTPUT || t->kind == TENSOR_CONSTANT)
            continue;
        if (is_argument(t->kind)) {
            if (t->donated && last[i] >= 0)
                t->live_end = last[i] + 1;
            continue;
        }
        if (def[i] < 0 && last[i] < 0) {
            unreferenced++;
            continue;
        }
        t->live_start = def[i] >= 0 ? def[i] : 0;
        t->live_end = (last[i] > t->live_start ? last[i] : t->live_start) + 1;
    }
    if (unreferenced > 0)
        model_warn(m,
                   "%zu non-argument tensors are not mentioned by any op and are assumed "
                   "live for the whole program",
                   unreferenced);
out:
    free(def);
    free(last);
    return rc;
}
