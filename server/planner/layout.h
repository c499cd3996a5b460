/*
 * layout.h - TPU tiled layouts: default layout choice and padded byte size.
 *
 * Byte size follows XLA's ShapeUtil::ArraySize as server/planner/SOURCES.md#array-size and
 * server/planner/SOURCES.md#report-rules describe it: only the first tile pads, and it pads the
 * minor-most *physical* dimensions; sub-tiles only pack; E(n) sets the stored element
 * width; leading dimensions are never padded. Every size is computed with checked 64-bit
 * arithmetic.
 */
#ifndef TPUPLAN_LAYOUT_H
#define TPUPLAN_LAYOUT_H

#include <stdint.h>

#include "planner/chip.h"
#include "planner/err.h"
#include "planner/shape.h"

enum layout_confidence {
    LAYOUT_CONF_GIVEN = 0, /* the layout came with the input */
    LAYOUT_CONF_CONFIRMED, /* default rule reproduced by real XLA:TPU reports for this generation */
    LAYOUT_CONF_ASSUMED,   /* default rule not confirmed for this generation: labelled an assumption
                            */
};

/* Stable name for the JSON output: "given", "confirmed", "assumed". */
const char *layout_confidence_name(enum layout_confidence c);

struct layout_info {
    int64_t padded_dims[SHAPE_MAX_RANK]; /* logical order, after tile padding */
    uint64_t elements;                   /* logical element count */
    uint64_t logical_bytes;              /* elements x dtype bits / 8, rounded up (pred = 1 B) */
    uint64_t padded_bytes;               /* XLA ArraySize of the tiled layout */
    uint64_t padding_bytes;              /* padded - logical (widening by E(n) counts) */
    double expansion;                    /* padded / logical (1.0 for empty arrays) */
    const char *rule;                    /* static string: "given" or the default rule's name */
    const char *assumption; /* static sentence when confidence is LAYOUT_CONF_ASSUMED, else NULL */
    enum layout_confidence confidence;
};

/*
 * Fills in sh's layout (minor_to_major, tiles) with what XLA:TPU chooses by default for
 * its dtype, rank, second-minor extent and the chip's generation, when sh has no layout.
 * A layout given with tiles (or E(n)) is left alone (*rule "given", LAYOUT_CONF_GIVEN). A layout
 * given as a bare order such as {1,0} keeps that order and gets the default tiles: XLA:TPU
 * always tiles HBM arrays, and old TF-era reports printed the order without the tile
 * (server/planner/SOURCES.md#report-rules). *rule and *conf say which rule applied (see layout.c
 * for the table and its sources); rule and conf may be NULL. chip may be NULL (then the v4 rules,
 * the best-confirmed).
 */
ERR_MUST_CHECK int layout_default(struct shape *sh, const struct chip *chip, const char **rule,
                                  enum layout_confidence *conf, struct err *e);

/*
 * Computes sizes of sh as laid out (a shape without layout is sized untiled, like XLA's
 * ByteSizeOfElements; call layout_default or layout_resolve first for TPU sizes). Fills
 * padded_dims, elements and the byte counts; leaves rule/assumption/confidence to the
 * caller (layout_resolve sets them). Fails with ERR_OVERFLOW when any product passes
 * 2^64-1 and ERR_INVALID (via shape_validate) when a tile does not fit the shape.
 * Allocation-free.
 */
ERR_MUST_CHECK int layout_size(const struct shape *sh, struct layout_info *out, struct err *e);

/*
 * layout_default + layout_size in one call, on a copy: *resolved gets the shape with its
 * layout (resolved may be NULL, or equal to sh; on error its contents are unspecified). Also
 * sets out->rule, out->confidence and out->assumption.
 * This is what the CLI, the model planner and the tests use. Allocation-free.
 */
ERR_MUST_CHECK int layout_resolve(const struct shape *sh, const struct chip *chip,
                                  struct shape *resolved, struct layout_info *out, struct err *e);

/*
 * XLA's byte formatter (TSL HumanReadableNumBytes without "iB"), as printed in OOM reports:
 * "512B", "64.0K", "1.17G". Truncating integer division, not rounding: see
 * server/planner/SOURCES.md#report-format. Writes at most cap bytes; returns buf.
 */
char *layout_format_bytes(uint64_t bytes, char *buf, size_t cap);

#endif
