/*
 * dtype.h - XLA element types as XLA:TPU prints them.
 *
 * Names are XLA's primitive-type spellings (xla/primitive_util.cc LowercasePrimitiveTypeName):
 * pred, s4, u4, s8, ..., f8e4m3fn, c64. Widths are the unpacked storage widths XLA uses
 * (pred counts as 8 bits, as the "Unpadded size" lines of real OOM reports do; see
 * server/planner/SOURCES.md#report-format).
 */
#ifndef TPUPLAN_DTYPE_H
#define TPUPLAN_DTYPE_H

#include <stddef.h>

enum dtype {
    DT_INVALID = 0,
    DT_PRED,
    DT_S2,
    DT_U2,
    DT_S4,
    DT_U4,
    DT_S8,
    DT_U8,
    DT_S16,
    DT_U16,
    DT_S32,
    DT_U32,
    DT_S64,
    DT_U64,
    DT_F16,
    DT_BF16,
    DT_F32,
    DT_F64,
    DT_C64,
    DT_C128,
    DT_F4E2M1FN,
    DT_F8E3M4,
    DT_F8E4M3,
    DT_F8E4M3FN,
    DT_F8E4M3B11FNUZ,
    DT_F8E4M3FNUZ,
    DT_F8E5M2,
    DT_F8E5M2FNUZ,
    DT_F8E8M0FNU,
    DT_TOKEN, /* token[]: zero bytes */
    DT_COUNT
};

/* XLA spelling of t ("bf16"); "invalid" for DT_INVALID. Never NULL. */
const char *dtype_name(enum dtype t);

/* Parses the XLA spelling of length len (not NUL-terminated). DT_INVALID when unknown. */
enum dtype dtype_parse(const char *s, size_t len);

/*
 * The dtype a person wrote of length len: an XLA spelling, or a name from NumPy, JAX or
 * PyTorch (bfloat16, float32, float16, float64, half, double, int8 ... int64, short, long,
 * uint8 ... uint64, int4, uint4, bool, complex64, complex128, float8_e4m3fn, float8_e5m2,
 * fp32, fp16, fp8 = f8e4m3fn), optionally after "jnp.", "np.", "numpy.", "jax.numpy." or
 * "torch." (jnp.bfloat16, torch.bfloat16). DT_INVALID when none. What a model description, a
 * recipe and a what-if take; an HLO text's types stay dtype_parse's.
 */
enum dtype dtype_parse_alias(const char *s, size_t len);

/* Storage width in bits of one element without packing (pred 8, s4 4, bf16 16, c64 64). */
unsigned dtype_bits(enum dtype t);

/* Bytes of one element as XLA's ShapeUtil::ByteSizeOfPrimitiveType counts (sub-byte -> 1). */
unsigned dtype_bytes(enum dtype t);

#endif
