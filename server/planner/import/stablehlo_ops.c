/*
 * stablehlo_ops.c - the operations the StableHLO translator knows (stablehlo_int.h): each
 * MLIR op's HLO opcode and how its pretty form lists types.
 *
 * The opcodes are those XLA's own translation gives (xla/hlo/translate/mhlo_to_hlo,
 * mlir_hlo_to_hlo.cc; the HLO opcode names are xla/hlo/ir/hlo_opcode.h): mostly the op's name
 * with '_' written '-', except broadcast_in_dim (broadcast), dot_general (dot), create_token
 * (after-all), optimization_barrier (opt-barrier) and cross-replica-sum (all-reduce). The
 * type forms are the ops' assembly formats (openxla/stablehlo stablehlo/dialect/
 * StablehloOps.td and AssemblyFormat.cpp at 3c9301c1): every pretty form but select's gives
 * the result types last (after "->", or alone); select's `: tensor<2x3xi1>, tensor<2x3xf32>`
 * is the predicate's type and then the result's (SelectOpType, AssemblyFormat.cpp 603-641).
 *
 * StableHLO ops without an HLO opcode (einsum, the dynamic-shape ops, uniform_quantize, ..),
 * CHLO ops (JAX leaves a few: acosh, erf_inv, lgamma, top_k, ..; XLA decomposes them into
 * HLO, elementwise ops whose memory is their result) and any other dialect's op become a
 * custom-call whose target is the op's MLIR name: one buffer per result, as XLA's parser
 * reads it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "planner/import/stablehlo_int.h"

/* The stablehlo (and mhlo) ops, by name after the dialect: the HLO opcode, or NULL for an
 * op HLO has no opcode for (a custom-call). */
static const struct sh_op OPS[] = {
    {"abs", "abs", SH_OP_PLAIN},
    {"add", "add", SH_OP_PLAIN},
    {"add_dependency", "add-dependency", SH_OP_PLAIN}, /* mhlo */
    {"after_all", "after-all", SH_OP_PLAIN},
    {"all_gather", "all-gather", SH_OP_PLAIN},
    {"all_reduce", "all-reduce", SH_OP_PLAIN},
    {"all_to_all", "all-to-all", SH_OP_PLAIN},
    {"and", "and", SH_OP_PLAIN},
    {"async_done", "async-done", SH_OP_PLAIN},
    {"async_start", "async-start", SH_OP_PLAIN},
    {"atan2", "atan2", SH_OP_PLAIN},
    {"batch_norm_grad", "batch-norm-grad", SH_OP_PLAIN},
    {"batch_norm_inference", "batch-norm-inference", SH_OP_PLAIN},
    {"batch_norm_training", "batch-norm-training", SH_OP_PLAIN},
    {"bitcast", "bitcast", SH_OP_PLAIN}, /* mhlo */
    {"bitcast_convert", "bitcast-convert", SH_OP_PLAIN},
    {"broadcast", "broadcast", SH_OP_PLAIN},
    {"broadcast_in_dim", "broadcast", SH_OP_PLAIN},
    {"call", "call", SH_OP_CALL}, /* func.call, call */
    {"cbrt", "cbrt", SH_OP_PLAIN},
    {"ceil", "ceil", SH_OP_PLAIN},
    {"cholesky", "cholesky", SH_OP_PLAIN},
    {"clamp", "clamp", SH_OP_PLAIN},
    {"collective_broadcast", "collective-broadcast", SH_OP_PLAIN},
    {"collective_permute", "collective-permute", SH_OP_PLAIN},
    {"compare", "compare", SH_OP_PLAIN},
    {"complex", "complex", SH_OP_PLAIN},
    {"composite", "call", SH_OP_COMPOSITE},
    {"concatenate", "concatenate", SH_OP_PLAIN},
    {"constant", "constant", SH_OP_CONSTANT},
    {"convert", "convert", SH_OP_PLAIN},
    {"convolution", "convolution", SH_OP_PLAIN},
    {"copy", "copy", SH_OP_PLAIN}, /* mhlo */
    {"cosine", "cosine", SH_OP_PLAIN},
    {"count_leading_zeros", "count-leading-zeros", SH_OP_PLAIN},
    {"create_token", "after-all", SH_OP_PLAIN},
    {"cross-replica-sum", "all-reduce", SH_OP_PLAIN},
    {"custom_call", "custom-call", SH_OP_CUSTOM_CALL},
    {"divide", "divide", SH_OP_PLAIN},
    {"dot", "dot", SH_OP_PLAIN},
    {"dot_general", "dot", SH_OP_PLAIN},
    {"dynamic_slice", "dynamic-slice", SH_OP_PLAIN},
    {"dynamic_update_slice", "dynamic-update-slice", SH_OP_PLAIN},
    {"erf", "erf", SH_OP_PLAIN}, /* mhlo */
    {"exponential", "exponential", SH_OP_PLAIN},
    {"exponential_minus_one", "exponential-minus-one", SH_OP_PLAIN},
    {"fft", "fft", SH_OP_PLAIN},
    {"floor", "floor", SH_OP_PLAIN},
    {"gather", "gather", SH_OP_PLAIN},
    {"get_dimension_size", "get-dimension-size", SH_OP_PLAIN},
    {"get_tuple_element", "get-tuple-element", SH_OP_GET_TUPLE_ELEMENT},
    {"imag", "imag", SH_OP_PLAIN},
    {"infeed", "infeed", SH_OP_PLAIN},
    {"iota", "iota", SH_OP_PLAIN},
    {"is_finite", "is-finite", SH_OP_PLAIN},
    {"log", "log", SH_OP_PLAIN},
    {"log_plus_one", "log-plus-one", SH_OP_PLAIN},
    {"logistic", "logistic", SH_OP_PLAIN},
    {"map", "map", SH_OP_PLAIN},
    {"maximum", "maximum", SH_OP_PLAIN},
    {"minimum", "minimum", SH_OP_PLAIN},
    {"multiply", "multiply", SH_OP_PLAIN},
    {"negate", "negate", SH_OP_PLAIN},
    {"not", "not", SH_OP_PLAIN},
    {"optimization_barrier", "opt-barrier", SH_OP_PLAIN},
    {"or", "or", SH_OP_PLAIN},
    {"outfeed", "outfeed", SH_OP_PLAIN},
    {"pad", "pad", SH_OP_PLAIN},
    {"partition_id", "partition-id", SH_OP_PLAIN},
    {"popcnt", "popcnt", SH_OP_PLAIN},
    {"power", "power", SH_OP_PLAIN},
    {"real", "real", SH_OP_PLAIN},
    {"recv", "recv", SH_OP_PLAIN},
    {"reduce", "reduce", SH_OP_PLAIN},
    {"reduce_precision", "reduce-precision", SH_OP_PLAIN},
    {"reduce_scatter", "reduce-scatter", SH_OP_PLAIN},
    {"reduce_window", "reduce-window", SH_OP_PLAIN},
    {"remainder", "remainder", SH_OP_PLAIN},
    {"replica_id", "replica-id", SH_OP_PLAIN},
    {"reshape", "reshape", SH_OP_PLAIN},
    {"reverse", "reverse", SH_OP_PLAIN},
    {"rng", "rng", SH_OP_PLAIN},
    {"rng_bit_generator", "rng-bit-generator", SH_OP_PLAIN},
    {"round_nearest_afz", "round-nearest-afz", SH_OP_PLAIN},
    {"round_nearest_even", "round-nearest-even", SH_OP_PLAIN},
    {"rsqrt", "rsqrt", SH_OP_PLAIN},
    {"scatter", "scatter", SH_OP_PLAIN},
    {"select", "select", SH_OP_SELECT},
    {"select_and_scatter", "select-and-scatter", SH_OP_PLAIN},
    {"send", "send", SH_OP_PLAIN},
    {"set_dimension_size", "set-dimension-size", SH_OP_PLAIN},
    {"shift_left", "shift-left", SH_OP_PLAIN},
    {"shift_right_arithmetic", "shift-right-arithmetic", SH_OP_PLAIN},
    {"shift_right_logical", "shift-right-logical", SH_OP_PLAIN},
    {"sign", "sign", SH_OP_PLAIN},
    {"sine", "sine", SH_OP_PLAIN},
    {"slice", "slice", SH_OP_PLAIN},
    {"sort", "sort", SH_OP_PLAIN},
    {"sqrt", "sqrt", SH_OP_PLAIN},
    {"subtract", "subtract", SH_OP_PLAIN},
    {"tan", "tan", SH_OP_PLAIN},
    {"tanh", "tanh", SH_OP_PLAIN},
    {"transpose", "transpose", SH_OP_PLAIN},
    {"triangular_solve", "triangular-solve", SH_OP_PLAIN},
    {"tuple", "tuple", SH_OP_PLAIN},
    {"xor", "xor", SH_OP_PLAIN},
};

/* Ops of the other dialects the translation knows by their whole name. */
static const struct sh_op NAMED[] = {
    {"func.call", "call", SH_OP_CALL},
    {"call", "call", SH_OP_CALL},
    {"chlo.constant", "constant", SH_OP_CONSTANT},
    /* Shardy's constraint and reshard as JAX's GSPMD path writes them: a "Sharding" custom
     * call carrying the sharding (jax/_src/interpreters/mlir.py wrap_with_sharding_op) */
    {"sdy.sharding_constraint", "custom-call", SH_OP_SHARDING},
    {"sdy.reshard", "custom-call", SH_OP_SHARDING},
};

/* A custom-call for what HLO has no opcode for: its target is the op's name. */
static const struct sh_op OTHER = {"", "custom-call", SH_OP_FOREIGN};

const struct sh_op *sh_op_find(const char *name, size_t len)
{
    const char *dot = memchr(name, '.', len);

    for (size_t k = 0; k < sizeof(NAMED) / sizeof(NAMED[0]); k++)
        if (strlen(NAMED[k].mlir) == len && memcmp(NAMED[k].mlir, name, len) == 0)
            return &NAMED[k];
    if (dot != NULL && ((dot - name == 9 && memcmp(name, "stablehlo", 9) == 0) ||
                        (dot - name == 4 && memcmp(name, "mhlo", 4) == 0))) {
        size_t n = len - (size_t)(dot + 1 - name);
        for (size_t k = 0; k < sizeof(OPS) / sizeof(OPS[0]); k++)
            if (strlen(OPS[k].mlir) == n && memcmp(OPS[k].mlir, dot + 1, n) == 0)
                return &OPS[k];
    }
    return &OTHER;
}
