/*
 * dtype.c - XLA element types: spellings and storage widths (see dtype.h).
 *
 * Spellings follow XLA's primitive_util::LowercasePrimitiveTypeName (the names the HLO
 * printer writes); widths are primitive_util::BitWidth. One static table, no state.
 */
#include "planner/dtype.h"

#include <string.h>

struct dtype_def {
    const char *name;
    unsigned len; /* strlen(name), so parsing compares lengths first */
    unsigned bits;
};

#define D(name, bits)                                                                              \
    {                                                                                              \
        name, sizeof(name) - 1, bits                                                               \
    }

static const struct dtype_def defs[DT_COUNT] = {
    [DT_INVALID] = D("invalid", 0),
    [DT_PRED] = D("pred", 8), /* one byte: server/planner/SOURCES.md#report-format */
    [DT_S2] = D("s2", 2),
    [DT_U2] = D("u2", 2),
    [DT_S4] = D("s4", 4),
    [DT_U4] = D("u4", 4),
    [DT_S8] = D("s8", 8),
    [DT_U8] = D("u8", 8),
    [DT_S16] = D("s16", 16),
    [DT_U16] = D("u16", 16),
    [DT_S32] = D("s32", 32),
    [DT_U32] = D("u32", 32),
    [DT_S64] = D("s64", 64),
    [DT_U64] = D("u64", 64),
    [DT_F16] = D("f16", 16),
    [DT_BF16] = D("bf16", 16),
    [DT_F32] = D("f32", 32),
    [DT_F64] = D("f64", 64),
    [DT_C64] = D("c64", 64),
    [DT_C128] = D("c128", 128),
    [DT_F4E2M1FN] = D("f4e2m1fn", 4),
    [DT_F8E3M4] = D("f8e3m4", 8),
    [DT_F8E4M3] = D("f8e4m3", 8),
    [DT_F8E4M3FN] = D("f8e4m3fn", 8),
    [DT_F8E4M3B11FNUZ] = D("f8e4m3b11fnuz", 8),
    [DT_F8E4M3FNUZ] = D("f8e4m3fnuz", 8),
    [DT_F8E5M2] = D("f8e5m2", 8),
    [DT_F8E5M2FNUZ] = D("f8e5m2fnuz", 8),
    [DT_F8E8M0FNU] = D("f8e8m0fnu", 8),
    [DT_TOKEN] = D("token", 0),
};

const char *dtype_name(enum dtype t)
{
    if ((unsigned)t >= DT_COUNT)
        return "invalid";
    return defs[t].name;
}

enum dtype dtype_parse(const char *s, size_t len)
{
    for (int t = DT_INVALID + 1; t < DT_COUNT; t++)
        if (defs[t].len == len && memcmp(defs[t].name, s, len) == 0)
            return (enum dtype)t;
    return DT_INVALID;
}

/* Other names for XLA's types, as NumPy, JAX (jnp) and PyTorch spell them. Not "float" or
 * "int": torch.float is f32 where NumPy's float is f64. */
static const struct {
    const char *name;
    enum dtype dtype;
} aliases[] = {
    {"bfloat16", DT_BF16},
    {"float16", DT_F16},
    {"half", DT_F16},
    {"float32", DT_F32},
    {"float64", DT_F64},
    {"double", DT_F64},
    {"int4", DT_S4},
    {"int8", DT_S8},
    {"int16", DT_S16},
    {"short", DT_S16},
    {"int32", DT_S32},
    {"int64", DT_S64},
    {"long", DT_S64},
    {"uint4", DT_U4},
    {"uint8", DT_U8},
    {"uint16", DT_U16},
    {"uint32", DT_U32},
    {"uint64", DT_U64},
    {"bool", DT_PRED},
    {"complex64", DT_C64},
    {"complex128", DT_C128},
    {"float8_e4m3fn", DT_F8E4M3FN},
    {"float8_e5m2", DT_F8E5M2},
    {"float8_e4m3fnuz", DT_F8E4M3FNUZ},
    {"float8_e5m2fnuz", DT_F8E5M2FNUZ},
    {"fp32", DT_F32},
    {"fp16", DT_F16},
    {"fp8", DT_F8E4M3FN},
};

/* The module prefixes a dtype is written with in Python. */
static const char *const prefixes[] = {"jax.numpy.", "numpy.", "torch.", "jnp.", "np."};

enum dtype dtype_parse_alias(const char *s, size_t len)
{
    enum dtype d = dtype_parse(s, len);

    if (d != DT_INVALID)
        return d;
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
        size_t n = strlen(prefixes[i]);
        if (len > n && memcmp(s, prefixes[i], n) == 0) {
            s += n;
            len -= n;
            break;
        }
    }
    for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
        if (strlen(aliases[i].name) == len && memcmp(aliases[i].name, s, len) == 0)
            return aliases[i].dtype;
    return DT_INVALID;
}

unsigned dtype_bits(enum dtype t)
{
    if ((unsigned)t >= DT_COUNT)
        return 0;
    return defs[t].bits;
}

unsigned dtype_bytes(enum dtype t)
{
    unsigned bits = dtype_bits(t);

    /* ShapeUtil::ByteSizeOfPrimitiveType rounds sub-byte types up to one byte. */
    return (bits + 7) / 8;
}
