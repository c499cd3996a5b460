/*
 * stablehlo.h - import StableHLO / MHLO text (MLIR), what jax.jit(f).lower(*args).as_text()
 * prints, by translating it to HLO text and applying the HLO rules (hlo_model.h).
 *
 *   module @jit_f attributes {mhlo.num_partitions = 1 : i32} {
 *     func.func public @main(%arg0: tensor<8x128xf32> {mhlo.sharding = "{replicated}"})
 *         -> (tensor<8x128xf32>) {
 *       %0 = stablehlo.exponential %arg0 : tensor<8x128xf32>
 *       return %0 : tensor<8x128xf32>
 *     }
 *   }
 *
 * Translation:
 * - Each func.func is a computation; the entry is @main (else the first public function,
 *   else the first). Its arguments are parameters, in order; an argument's mhlo.sharding
 *   becomes its sharding, tf.aliasing_output = N its donation (input_output_alias {N}).
 * - Shardy: a module-level `sdy.mesh @m = <["x"=4, "y"=2]>` and an argument's
 *   `sdy.sharding = #sdy.sharding<@m, [{"x"}, {}]>` (or an inline mesh<[..]>; open dims ?,
 *   priorities pN, sub-axes "x":(1)2 spanning their size) become the HLO sharding
 *   {devices=[4,1,2]<=[8] last_tile_dim_replicate}: per dim the devices its axes span, the
 *   mesh's devices no dim spans a replicated last tile dim ({replicated} when no dim is
 *   split), so the argument is planned per device as with mhlo.sharding. An unknown mesh or
 *   axis, an axis used twice, a dim count other than the rank and a mesh of more than 2^20
 *   devices are errors naming line:column.
 * - Order is SSA order. `%r = dialect.op operands ... : types` becomes one instruction named
 *   r (the SSA name without '%') whose opcode is the op's in XLA's own translation (the table
 *   in import/stablehlo_ops.c: stablehlo.add -> add, broadcast_in_dim -> broadcast,
 *   dot_general -> dot, custom_call @t -> custom-call with custom_call_target="t",
 *   get_tuple_element %t[1] -> get-tuple-element with index=1); an op with no HLO opcode
 *   (einsum, chlo.acosh, another dialect's) is a custom-call whose target is its name. Its
 *   operands are the %values used before the type (outside attribute dictionaries and
 *   regions). A result group %r:N is a tuple-shaped instruction r (buffers r{i}); %r#i
 *   reads its element i. Named results %a, %b = op are one too, named after the first
 *   (a{0}, a{1}). A symbol @"quoted" is the HLO name of its text when that is a bare
 *   identifier, else "_q" and the text with each other byte written "-XX" (hex):
 *   @"<lambda>" -> _q-3clambda-3e.
 * - Types: the results' follow the last "->" of the type, else they are the types written
 *   (select's pretty form writes the predicate's type first: `: tensor<2x3xi1>,
 *   tensor<2x3xf32>`). tensor<AxBxT> -> T[A,B] with XLA's element type names (i1 -> pred,
 *   i8 -> s8, ui8 -> u8, f8E4M3FN -> f8e4m3fn, complex<f32> -> c64), tuple<T, ..> -> (S, ..)
 *   (nested up to 8 deep), !stablehlo.token -> token[], tensor<4x!quant.uniform<i8:f32, ..>>
 *   -> s8[4] (quantized types take their storage type). No layouts: the chip's defaults
 *   apply. Dynamic dims (?), unranked tensors and element types XLA has no name for are
 *   rejected.
 * - Shardings: an op's own mhlo.sharding = "{..}" or sdy.sharding =
 *   #sdy.sharding_per_value<[<@m, [..]>, ..]> is its sharding=; sdy.sharding_constraint
 *   %x <@m, [..]> a custom-call "Sharding" with it; the function's results' shardings are
 *   the ROOT tuple's ({replicated} for one without).
 * - sdy.manual_computation (shard_map; import/stablehlo_manual.c): each operand through a
 *   custom-call SPMDFullToShardShape to its shape on one device, the body a computation
 *   FUNC.R.manual called on them, each result through a custom-call SPMDShardToFullShape
 *   with its out_sharding: the HLO XLA's GSPMD partitioner reads for a shard_map. The body's
 *   argument types must be the operands' divided by the manual axes of in_shardings.
 * - func.call / call is an HLO call (its temporaries planned recursively).
 * - A while, pretty (`stablehlo.while(%a = %x, ..) : T, .. cond { .. } do { .. }`) or generic
 *   (`"stablehlo.while"(%x, ..) ({ ^bb0(%a: T, ..): .. }, { ^bb0(..): .. }) : (..) -> (..)`),
 *   becomes an HLO while whose condition and body are computations over a tuple of the loop
 *   variables (r#init the tuple of initial values).
 * - `"stablehlo.case"(%i) ({ .. }, { .. }, ..) : (tensor<i32>) -> T` and
 *   `"stablehlo.if"(%p) ({ .. }, { .. })` (also pretty: `stablehlo.case(%i) ({ .. }) : T`,
 *   `stablehlo.if %p ({ .. }, { .. }) : T`) become an HLO conditional with
 *   branch_computations (true_computation/false_computation for if) whose result is a tuple
 *   (buffers r{i}); hlo_model.h sizes its temps by its largest branch.
 * - Regions are computations named FUNC.R.KIND (KIND cond, body, true, false, branchK;
 *   FUNC.R.KIND.N, N the region's number, for a region inside a region). A value a region
 *   reads from an enclosing one is a parameter of it and of every region between (HLO
 *   computations read nothing from outside), and the op that owns the regions reads it as
 *   an extra operand: the owner's captured values in definition order, once each.
 * - optimization_barrier aliases its operands (a tuple). Other regions (reduce bodies, sort
 *   comparators) are not planned: their ops are scalar.
 * - *.constant is a constant; `return` / func.return / stablehlo.return (also generic:
 *   `"stablehlo.return"(%a) : (T) -> ()`) is the ROOT, a tuple of the values returned, as
 *   many as its types. Lists (operands, results, loop variables) have any length up to 4096.
 * - Locations name ops (the op_name): loc("name") and loc("name"(..)); loc(#locN) through
 *   the file's `#locN = loc(..)` lines (MLIR prints them after the module);
 *   loc(callsite(X at Y)) X's name; loc(fused[..]) the first part that has one. A file
 *   position loc("f.py":3:0), loc(unknown) and an alias that does not resolve (undefined,
 *   cyclic) give none. An argument's loc(..) after its type and attributes names its
 *   parameter: `%arg0: tensor<8xf32> loc("x")`.
 * Errors name line:column of the MLIR text. Bounded like the HLO parser (the translated text
 * is at most 8 times the input plus 64 KiB).
 */
#ifndef TPUPLAN_STABLEHLO_H
#define TPUPLAN_STABLEHLO_H

#include <stdbool.h>
#include <stddef.h>

#include "planner/chip.h"
#include "planner/err.h"
#include "planner/hlo_model.h"
#include "planner/model.h"

/* True when the text (after blank, comment and #loc lines) starts with "module" or
 * "func.func". */
bool stablehlo_detect(const char *s, size_t len);

/*
 * Translates s[0..len) to HLO text: *out is malloc'd and NUL-terminated (caller frees),
 * *out_len its length. Errors name the MLIR line:column.
 */
ERR_MUST_CHECK int stablehlo_to_hlo(const char *s, size_t len, char **out, size_t *out_len,
                                    struct err *e);

/*
 * stablehlo_to_hlo with the entry function's dynamic dims (?) bound: bind is
 * "NAME=VALUE,NAME=VALUE" (NULL or "": none), NAME an argument (%arg1 or arg1, or its
 * jax.arg_info or jax.global_constant name), VALUE its shape "8x20x20" or, for a scalar
 * integer argument (a dimension variable's value), an integer. The shapes are refined forward
 * as StableHLO's refine-shapes pass does (import/stablehlo_refine.c); a ? that stays unknown
 * is refused naming its op. Errors in the bindings name the field "bind".
 */
ERR_MUST_CHECK int stablehlo_to_hlo_bound(const char *s, size_t len, const char *bind, char **out,
                                          size_t *out_len, struct err *e);

/* stablehlo_to_hlo + hlo_import; m->source_format is "stablehlo". */
ERR_MUST_CHECK int stablehlo_import(const char *s, size_t len, const struct chip *chip,
                                    const struct model_limits *l, struct model *m, struct err *e);

/* stablehlo_import with hlo_model.h's options (NULL: as stablehlo_import). */
ERR_MUST_CHECK int stablehlo_import_opts(const char *s, size_t len, const struct chip *chip,
                                         const struct model_limits *l,
                                         const struct hlo_model_opts *o, struct model *m,
                                         struct err *e);

#endif
