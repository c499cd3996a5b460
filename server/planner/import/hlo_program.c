/*
 * hlo_program.c - what an HLO module is (hlo_program_int.h).
 *
 * Stage. XLA's optimization passes fuse instructions (fusion), assign layouts (TPU layouts
 * are tiled, T(..)), assign memory spaces (S(1) is VMEM) and schedule the module (the
 * scheduler's last step sets is_scheduled=true, which HloModule::ToString prints). A module
 * with none of these is before optimization: what `jax.jit(f).lower(..).as_text("hlo")`
 * and an XLA `*.before_optimizations.txt` dump hold.
 *
 * Sources: server/planner/SOURCES.md#partitioned-programs and
 * server/planner/SOURCES.md#host-memory.
 *
 * Partitioning. XLA's SPMD partitioner rewrites the entry computation into one named
 * NAME_spmd (xla/service/spmd/spmd_partitioner.cc, SpmdPartitioningVisitor:
 * `SpmdBuilder(computation->name() + "_spmd", ..)`), with per-device shapes and the
 * collectives that exchange them; it runs before fusion and scheduling, so an optimized
 * module is partitioned. A collective outside a shard_map region (which the custom call
 * SPMDFullToShardShape opens) exchanges per-device shapes too. Any of these means the shapes
 * are per device and a sharding must not divide them again.
 *
 * Memory spaces (xla/layout.h: kDefaultMemorySpace 0, kGenericFastMemorySpace 1,
 * kHostMemorySpace 5). JAX's memory kinds reach XLA as the entry_computation_layout's S(5)
 * (an argument or result with mhlo.memory_kind "pinned_host" or "unpinned_host"), and
 * activation offloading as custom calls: annotate_device_placement with the frontend
 * attribute _xla_buffer_placement "pinned_host" / "unpinned_host" (to host) or "device",
 * which XLA's ConvertMemoryPlacementToInternalAnnotations rewrites into MoveToHost and
 * MoveToDevice, whose results the host offloader (xla/service/host_offloader.cc,
 * HandleMoveToHostCustomCall) puts in S(5) (names from
 * xla/service/host_memory_offload_annotations.h).
 */
#include "planner/import/hlo_program_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "planner/model/model_build.h"

static bool is(const struct hlo_module *h, struct hlo_span sp, const char *w)
{
    return hlo_span_is(h, sp, w);
}

static bool has(const struct hlo_module *h, struct hlo_span sp, const char *w)
{
    return sp.len > 0 && memmem(h->text + sp.off, sp.len, w, strlen(w)) != NULL;
}

static void why(char (*lines)[HLO_WHY_LEN], unsigned *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void why(char (*lines)[HLO_WHY_LEN], unsigned *n, const char *fmt, ...)
{
    va_list ap;

    if (*n == MODEL_MAX_EVIDENCE)
        return;
    va_start(ap, fmt);
    vsnprintf(lines[(*n)++], HLO_WHY_LEN, fmt, ap);
    va_end(ap);
}

/* XLA's collectives (xla/hlo/ir/hlo_opcode.h), their asynchronous starts included. */
static const char *const COLLECTIVES[] = {"all-gather",
                                          "all-gather-start",
                                          "all-reduce",
                                          "all-reduce-start",
                                          "reduce-scatter",
                                          "all-to-all",
                                          "ragged-all-to-all",
                                          "collective-permute",
                                          "collective-permute-start",
                                          "collective-broadcast",
                                          NULL};

static bool is_collective(const struct hlo_module *h, const struct hlo_instr *in)
{
    for (const char *const *c = COLLECTIVES; *c != NULL; c++)
        if (is(h, in->opcode, *c))
            return true;
    return false;
}

/* What the module's instructions and leaves show. */
struct signs {
    size_t fusions, tiled, vmem, collectives, manual;
    const struct hlo_instr *collective; /* the first */
};

static void count_signs(const struct hlo_module *h, struct signs *s)
{
    memset(s, 0, sizeof(*s));
    for (uint32_t i = 0; i < h->ninstrs; i++) {
        const struct hlo_instr *in = &h->instrs[i];
        s->fusions += is(h, in->opcode, "fusion");
        s->manual += is(h, in->custom_call_target, "SPMDFullToShardShape");
        if (is_collective(h, in) && s->collectives++ == 0)
            s->collective = in;
    }
    for (uint32_t l = 0; l < h->nleaves; l++) {
        s->tiled += has(h, h->leaves[l].shape, "T(");
        s->vmem += h->leaves[l].memory_space == HLO_SPACE_VMEM;
    }
}

static void detect_stage(const struct hlo_module *h, const struct signs *s, struct hlo_program *p)
{
    if (h->scheduled)
        why(p->stage_why, &p->nstage,
            "is_scheduled=true: the text order is the schedule XLA made after optimizing");
    if (s->fusions > 0)
        why(p->stage_why, &p->nstage, "%zu fusion instructions: XLA's fusion passes have run",
            s->fusions);
    if (s->tiled > 0)
        why(p->stage_why, &p->nstage,
            "%zu arrays with tiled layouts (T(..)): XLA's layout assignment has run", s->tiled);
    if (s->vmem > 0)
        why(p->stage_why, &p->nstage,
            "%zu arrays in VMEM (S(1)): XLA's memory-space assignment has run", s->vmem);
    p->stage = p->nstage > 0 ? MODEL_STAGE_AFTER : MODEL_STAGE_BEFORE;
    if (p->nstage == 0)
        why(p->stage_why, &p->nstage,
            "no schedule (is_scheduled), no fusion and no tiled layout: XLA's optimization "
            "passes have not run");
}

static void detect_partitioning(const struct hlo_module *h, const struct signs *s,
                                struct hlo_program *p)
{
    struct hlo_span entry = h->comps[h->entry].name;
    static const char spmd[] = "_spmd";

    if (entry.len >= sizeof(spmd) - 1 &&
        memcmp(h->text + entry.off + entry.len - (sizeof(spmd) - 1), spmd, sizeof(spmd) - 1) == 0)
        why(p->part_why, &p->npart,
            "the entry computation %.*s is named by XLA's SPMD partitioner (NAME_spmd): its "
            "shapes are per device",
            (int)(entry.len > 120 ? 120 : entry.len), h->text + entry.off);
    if (p->stage == MODEL_STAGE_AFTER)
        why(p->part_why, &p->npart,
            "optimized: XLA partitions a program before it fuses and schedules it, so its "
            "shapes are per device");
    if (s->collectives > 0 && s->manual == 0)
        why(p->part_why, &p->npart,
            "%zu collectives (the first, %.*s, line %u) outside any shard_map region: they "
            "exchange per-device shapes",
            s->collectives, (int)(s->collective->name.len > 80 ? 80 : s->collective->name.len),
            h->text + s->collective->name.off, s->collective->line);
    p->partitioned = p->npart > 0;
    if (!p->partitioned)
        why(p->part_why, &p->npart,
            "no _spmd entry, not optimized, no collective outside shard_map: its shapes are "
            "global, and each array's sharding gives its per-device shape");
}

void hlo_program_detect(const struct hlo_module *h, struct hlo_program *p)
{
    struct signs s;

    memset(p, 0, sizeof(*p));
    count_signs(h, &s);
    detect_stage(h, &s, p);
    detect_partitioning(h, &s, p);
}

void hlo_program_stablehlo(struct model_program *mp)
{
    mp->stage = MODEL_STAGE_BEFORE;
    mp->stage_evidence[0] = "StableHLO: what JAX lowers, before XLA optimizes it";
    mp->nstage_evidence = 1;
}

/* ---- memory spaces ----------------------------------------------------------------- */

/* Where the entry layout's leaf (k, q) goes: parameter k's q-th leaf, or the ROOT's. */
struct layout_target {
    const struct hlo_module *h;
    int8_t *space;
    bool params;
};

static void set_entry_space(const struct layout_target *t, uint32_t k, uint32_t q, int8_t s)
{
    const struct hlo_module *h = t->h;
    const struct hlo_comp *cp = &h->comps[h->entry];
    const struct hlo_instr *in = NULL;

    if (t->params) {
        for (uint32_t i = 0; i < cp->n && in == NULL; i++) {
            const struct hlo_instr *x = &h->instrs[cp->first + i];
            if (is(h, x->opcode, "parameter") && x->index == (int64_t)k)
                in = x;
        }
    } else {
        in = &h->instrs[cp->root];
        /* a ROOT tuple's leaves are its operands': element q of a flat tuple is operand q */
        if (is(h, in->opcode, "tuple") && q < in->nopnds &&
            h->instrs[h->idx[in->opnd0 + q]].nleaves == 1) {
            in = &h->instrs[h->idx[in->opnd0 + q]];
            q = 0;
        }
    }
    if (in != NULL && q < in->nleaves && t->space[in->leaf0 + q] == HLO_SPACE_HBM)
        t->space[in->leaf0 + q] = s;
}

/* The S(n) of each array shape in an entry_computation_layout part sp: the parameters'
 * "(P0, P1, ..)" (element k is parameter k, whose leaves are its array shapes in order) or
 * the result's one shape. */
static void entry_layout_spaces(const struct layout_target *t, struct hlo_span sp)
{
    const char *s = t->h->text + sp.off;
    int paren = 0, bracket = 0, brace = 0, top = t->params ? 1 : 0;
    uint32_t k = 0, q = 0;

    for (size_t i = 0; i < sp.len; i++) {
        char ch = s[i];
        if (brace > 0 && ch == '(' && i > 0 && s[i - 1] == 'S' && q > 0) {
            size_t at = i + 1;
            int64_t n = 0;
            while (at < sp.len && s[at] >= '0' && s[at] <= '9' && n < 1000)
                n = n * 10 + (s[at++] - '0');
            if (n > 0 && n <= INT8_MAX)
                set_entry_space(t, k, q - 1, (int8_t)n);
        }
        if (brace > 0) {
            brace += (ch == '{') - (ch == '}');
            continue;
        }
        paren += (ch == '(') - (ch == ')');
        bracket += (ch == '[') - (ch == ']');
        brace += ch == '{';
        q += ch == '[' && bracket == 1;
        if (ch == ',' && paren == top && bracket == 0) {
            k++;
            q = 0;
        }
    }
}

/* The value of frontend attribute _xla_buffer_placement names host memory. */
static bool placed_on_host(const struct hlo_module *h, const struct hlo_instr *in)
{
    static const char key[] = "_xla_buffer_placement=\"";
    struct hlo_span fa = in->frontend_attributes;
    const char *p = fa.len > 0 ? memmem(h->text + fa.off, fa.len, key, sizeof(key) - 1) : NULL;
    size_t left;

    if (p == NULL)
        return false;
    p += sizeof(key) - 1;
    left = (size_t)(h->text + fa.off + fa.len - p);
    return (left > 12 && memcmp(p, "pinned_host\"", 12) == 0) ||
           (left > 14 && memcmp(p, "unpinned_host\"", 14) == 0);
}

void hlo_leaf_spaces(const struct hlo_module *h, int8_t *space)
{
    struct layout_target t = {.h = h, .space = space, .params = true};

    for (uint32_t l = 0; l < h->nleaves; l++)
        space[l] = h->leaves[l].memory_space;
    entry_layout_spaces(&t, h->entry_params);
    t.params = false;
    entry_layout_spaces(&t, h->entry_result);
    for (uint32_t i = 0; i < h->ninstrs; i++) {
        const struct hlo_instr *in = &h->instrs[i];
        bool host =
            is(h, in->custom_call_target, "MoveToHost") ||
            (is(h, in->custom_call_target, "annotate_device_placement") && placed_on_host(h, in));
        if (!host || !is(h, in->opcode, "custom-call"))
            continue;
        for (uint32_t l = 0; l < in->nleaves; l++)
            space[in->leaf0 + l] = HLO_SPACE_HOST;
    }
}

enum model_space hlo_space_of(int8_t s)
{
    return s == HLO_SPACE_HOST   ? MODEL_SPACE_HOST
           : s == HLO_SPACE_VMEM ? MODEL_SPACE_VMEM
                                 : MODEL_SPACE_OTHER;
}

int hlo_program_put(const struct hlo_program *p, struct model *m, struct err *e)
{
    struct model_program *mp = &m->program;

    mp->stage = p->stage;
    mp->partitioned = p->partitioned;
    for (unsigned k = 0; k < p->nstage; k++)
        if ((mp->stage_evidence[k] = model_strdup(m, p->stage_why[k], strlen(p->stage_why[k]))) ==
            NULL)
            return err_set(e, ERR_NOMEM, "", "out of memory");
    for (unsigned k = 0; k < p->npart; k++)
        if ((mp->partition_evidence[k] = model_strdup(m, p->part_why[k], strlen(p->part_why[k]))) ==
            NULL)
            return err_set(e, ERR_NOMEM, "", "out of memory");
    mp->nstage_evidence = p->nstage;
    mp->npartition_evidence = p->npart;
    return ERR_OK;
}
