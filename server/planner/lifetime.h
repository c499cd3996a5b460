/*
 * lifetime.h - when each tensor of a model is live, in program steps.
 *
 * Rules (documented for users in static/schema/model.schema.json):
 * - A tensor with an explicit "live": [start, end) keeps it.
 * - Without "ops" the program is one segment [0, nsteps) with nsteps = max(1, largest
 *   given end), and every other tensor lives for all of it.
 * - With "ops" (program order, step k = ops[k]) nsteps = max(number of ops, largest given
 *   end). Arguments (kinds param, optimizer, input, kv_cache) live for the whole program, as
 *   XLA keeps entry parameters for the whole execution, unless "donated": then they die
 *   after their last use, [0, last_use + 1) (server/planner/SOURCES.md#donation). Outputs
 *   live for the whole program too (XLA assigns live-out buffers their own allocations), and
 *   so do constants (XLA gives them their own allocations too). Every other tensor lives
 *   from the op that produces it (or step 0 when no op does) to its last use:
 *   [def, last_use + 1); a tensor that no op mentions lives for the whole program.
 * - Errors: a non-argument tensor produced by two ops or used before the op that produces
 *   it; "donated" on a tensor that is not an argument.
 */
#ifndef TPUPLAN_LIFETIME_H
#define TPUPLAN_LIFETIME_H

#include "planner/err.h"
#include "planner/model.h"

/* Fills live_start/live_end of every tensor and m->nsteps. */
ERR_MUST_CHECK int lifetime_derive(struct model *m, struct err *e);

/*
 * After lifetime_derive: the tensors in host memory (t->host, a JSON model's "memory_space":
 * "host") leave m->tensors for m->program.spaces[MODEL_SPACE_HOST] (their count, padded bytes
 * and own peak over the same steps), as an XLA program's S(5) buffers do: never added to HBM,
 * and a warning line says so. The ops' references to them are dropped (their lifetimes are
 * already set). ERR_OVERFLOW when their bytes pass 2^64-1, ERR_NOMEM.
 */
ERR_MUST_CHECK int lifetime_set_apart(struct model *m, struct err *e);

#endif
