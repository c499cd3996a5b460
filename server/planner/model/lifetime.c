/*
 * lifetime.c - tensor lifetimes from explicit intervals or program order (see lifetime.h).
 */
#include "planner/lifetime.h"

#include <stdint.h>
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

int lifetime_set_apart(struct model *m, struct err *e)
{
    struct model_space_use *u = &m->program.spaces[MODEL_SPACE_HOST];
    uint32_t *to = NULL; /* old index -> new, UINT32_MAX for a tensor set apart */
    uint64_t *delta = NULL, live = 0;
    size_t n = 0, host = 0;

    for (size_t i = 0; i < m->n; i++)
        host += m->tensors[i].host;
    if (host == 0)
        return ERR_OK;
    to = malloc(m->n * sizeof(*to));
    delta = calloc((size_t)m->nsteps + 1, sizeof(*delta));
    if (to == NULL || delta == NULL) {
        free(to);
        free(delta);
        return err_set(e, ERR_NOMEM, "", "out of memory setting host tensors apart");
    }
    for (size_t i = 0; i < m->n; i++) {
        const struct model_tensor *t = &m->tensors[i];
        to[i] = t->host ? UINT32_MAX : (uint32_t)n;
        if (!t->host) {
            m->tensors[n++] = *t;
            continue;
        }
        if (__builtin_add_overflow(u->bytes, t->padded_bytes, &u->bytes)) {
            free(to);
            free(delta);
            return err_set(e, ERR_OVERFLOW, "", "the host tensors' bytes pass 2^64-1");
        }
        u->buffers++;
        delta[t->live_start] += t->padded_bytes; /* modulo 2^64: every partial sum is exact */
        delta[t->live_end] -= t->padded_bytes;
    }
    for (int64_t s = 0; s < m->nsteps; s++) {
        live += delta[s];
        u->peak_bytes = live > u->peak_bytes ? live : u->peak_bytes;
    }
    m->n = n;
    for (size_t k = 0; k < m->nops; k++) {
        struct model_op *op = &m->ops[k];
        uint32_t a = 0, b = 0;
        for (uint32_t j = 0; j < op->ninputs; j++)
            if (to[op->inputs[j]] != UINT32_MAX)
                op->inputs[a++] = to[op->inputs[j]];
        for (uint32_t j = 0; j < op->noutputs; j++)
            if (to[op->outputs[j]] != UINT32_MAX)
                op->outputs[b++] = to[op->outputs[j]];
        op->ninputs = a;
        op->noutputs = b;
    }
    model_warn(m,
               "%zu tensors in host memory (memory_space \"host\": %llu bytes, peak %llu bytes) "
               "are planned apart: never added to HBM (see memory_spaces)",
               u->buffers, (unsigned long long)u->bytes, (unsigned long long)u->peak_bytes);
    free(to);
    free(delta);
    return ERR_OK;
}
