/*
 * suggest.h - concrete fixes for tile padding, each with the exact bytes it saves.
 *
 * For a tensor whose resolved layout pads, suggest_tensor() tries reshapes that keep the
 * element count and dtype and are common ways to avoid padding:
 *   - fold the j minor-most physical dims into [M/128, 128] (when M is a multiple of 128),
 *     e.g. u32[12582912,1] -> u32[98304,128];
 *   - merge the dims above the minor dim into one second-minor dim, e.g.
 *     f32[29184,1,2560] -> f32[29184,2560] (a size-1 second-minor pads to the tile height);
 *   - make another dim the minor-most one (a transpose), e.g. f32[1024,64,245] with 245
 *     minor -> 64 minor.
 * Every candidate is sized with layout_resolve() on the same chip with the default layout,
 * so the saving is computed by the same rules as the tensor itself, never estimated. Only a
 * candidate that saves bytes is returned; the one that saves the most wins.
 *
 * suggest_model() chooses which tensors of a model get a fix (the result's "suggestions",
 * server/planner/RESULT.md#fields): the policy lives here, beside the fixes, so the result writer
 * only prints.
 */
#ifndef TPUPLAN_SUGGEST_H
#define TPUPLAN_SUGGEST_H

#include <stddef.h>
#include <stdint.h>

#include "planner/chip.h"
#include "planner/err.h"
#include "planner/layout.h"
#include "planner/model.h"
#include "planner/shape.h"

struct suggestion {
    uint64_t padded_bytes;                /* the tensor as it is */
    uint64_t suggested_padded_bytes;      /* after the fix */
    uint64_t saves_bytes;                 /* padded_bytes - suggested_padded_bytes > 0 */
    const char *action;                   /* static: "fold-minor", "merge-major", "reorder" */
    char suggested_shape[SHAPE_MAX_TEXT]; /* with its default layout */
    char text[ERR_MSG_MAX];               /* "minor dim 1 (size 1) pads to 128 under ..." */
};

/*
 * sh must be a resolved shape (with a layout). Returns 1 and fills *out when a fix saves
 * bytes, 0 when none does, or a negative ERR_* code.
 */
ERR_MUST_CHECK int suggest_tensor(const struct shape *sh, const struct chip *chip,
                                  struct suggestion *out, struct err *e);

/*
 * For a sharded tensor whose minor dim is split across devices
 * (server/planner/SOURCES.md#per-device-layout: 256 over 4 devices is 64 per device, which pads
 * back to 128 lanes): try moving those mesh axes to
 * each other dim instead. local is the resolved per-device shape, global_dims the dims as
 * written and parts[d] the number of shards of dim d. Returns 1 with *out filled (action
 * "reshard") when that saves at least 1% of the tensor, 0 when not, or an ERR_* code.
 */
ERR_MUST_CHECK int suggest_sharding(const struct shape *local, const int64_t *global_dims,
                                    const uint64_t *parts, const struct chip *chip,
                                    struct suggestion *out, struct err *e);

#define SUGGEST_MAX_FIXES 10 /* fixes suggest_model reports at most */

/* A fix for one tensor of a model, and how many tensors it applies to. */
struct suggest_fix {
    size_t tensor;        /* index into the model's tensors */
    size_t same_shape;    /* tensors with this shape (for "reshard": and this sharding) */
    uint64_t total_saves; /* s.saves_bytes over those tensors */
    struct suggestion s;
};

/*
 * The fixes for a resolved model (model_resolve on chip): the tensors with the most
 * padding are tried in that order, each with suggest_tensor and, when sharded,
 * suggest_sharding (the larger saving wins); one fix per distinct shape, at most
 * SUGGEST_MAX_FIXES into out[], *nout of them. Raw (CSV) tensors get none. ERR_OK or an
 * ERR_* code from the two above.
 */
ERR_MUST_CHECK int suggest_model(const struct model *m, const struct chip *chip,
                                 struct suggest_fix out[SUGGEST_MAX_FIXES], size_t *nout,
                                 struct err *e);

/* "T(8,128)(2,1)": the tile chain of sh's layout ("" when untiled). Returns buf. */
char *suggest_tiles_text(const struct shape *sh, char *buf, size_t cap);

#endif
