#!/usr/bin/env bash
# hlo.sh - `tpuplan plan` on XLA HLO and StableHLO text end to end (TAP): detected from content, names,
# kinds, lifetimes, in_place and op_name in the result, the peak worked out by hand, the
# layout view's op_name column, errors with line:column, and the result schema.
set -uo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/cli/lib.sh
. tests/cli/lib.sh
data=tests/data/hlo

# pyjson EXPR : evaluates a Python expression over the JSON in $tmp/out as `d`
pyjson() {
    python3 -c "import json,sys; d=json.load(open('$tmp/out')); T={t['name']: t for t in d['tensors']}; sys.exit(0 if ($1) else 1)"
}

# --- a while loop: the body's peak becomes one temp (see test_hlo.c for the arithmetic)
run plan $data/while.hlo --strategies xla-default
ok $rc "while.hlo plans (exit 0)"
pyjson 'd["model"]["source_format"] == "hlo" and d["model"]["name"] == "jit_loop"'
ok $? "detected as hlo, named after the module"
pyjson 'sorted(T) == ["a", "w/temps", "w{0}", "w{1}", "z"]'
ok $? "buffers named by instruction, tuple elements name{i}, the call temp NAME/temps"
pyjson 'T["w/temps"]["padded_bytes"] == 4608 and T["w/temps"]["dtype"] is None and T["w/temps"]["live"] == [3, 4]'
ok $? "while temps: the body's peak 4608 B at the while's step"
pyjson 'T["w{1}"]["kind"] == "output" and T["w{1}"]["live"] == [3, 5] and T["z"]["kind"] == "constant"'
ok $? "kinds and lifetimes"
pyjson 'd["summary"]["peak_bytes"] == 13824'
ok $? "peak 13824 B by hand"

# --- a scheduled dump with donation, fusions and metadata
run plan $data/donate_scheduled.hlo
ok $rc "donate_scheduled.hlo plans (exit 0)"
pyjson 'T["fusion.4"]["in_place"] == ["fusion.5"] and T["fusion.4"]["op_name"] == "jit(f)/add"'
ok $? "in_place and op_name in the result"
pyjson 'T["Arg_0.1"]["donated"] and T["Arg_0.1"]["live"] == [0, 6]'
ok $? "donated parameter dies after its last use"
pyjson 'any("in-place" in w for w in d["warnings"])'
ok $? "a warning says the in-place rule was applied"

# --- StableHLO (jax .as_text()): a while with a captured value, a call, donation. The hand
# counts follow the text (--reading written); the compiler's reading is below.
run plan $data/jax_while_call.mlir --strategies xla-default --reading written
ok $rc "jax_while_call.mlir plans (exit 0)"
pyjson 'd["model"]["source_format"] == "stablehlo" and d["summary"]["peak_bytes"] == 233984'
ok $? "detected as stablehlo; peak 233984 B by hand (see test_stablehlo.c)"
pyjson 'T["3/temps"]["padded_bytes"] == 4608 and T["arg0"]["in_place"] == ["4{0}"] and T["2"]["op_name"] == "jit(f)/dot_general"'
ok $? "while temps, donation and the loc op_name"
run plan $data/jax_cond_while.mlir --strategies xla-default --reading written
ok $rc "jax_cond_while.mlir plans (exit 0)"
pyjson 'd["summary"]["peak_bytes"] == 144384 and T["1/temps"]["padded_bytes"] == 65536 and T["2/temps"]["padded_bytes"] == 4608'
ok $? "generic case and while: peak 144384 B, the conditional's temps its largest branch (see test_stablehlo.c)"
# The compiler's reading (the default): the same program fused and ordered by XLA's rules,
# the written reading's figures beside it (server/planner/RESULT.md#the-compile-estimate).
run plan $data/jax_while_call.mlir --strategies xla-default
pyjson 'd["compile"]["chosen"] == "compiler" and d["compile"]["written"]["peak_bytes"] == 233984 and d["compile"]["compiler"]["peak_bytes"] == d["summary"]["lower_bound_bytes"] < 233984 and d["compile"]["fused"]["total"] == 4'
ok $? "compile: the written peak 233984 B beside the compiler's, lower, with 4 values fused away"
run plan $data/jax_while_call.mlir --strategies xla-default --format text
grep -q '^  written   peak 228.5K, 10 buffers, 14 steps' "$tmp/out"
ok $? "text report: the written reading under program"
run plan $data/while.hlo
pyjson '"compile" not in d'
ok $? "a tiled, scheduled-looking module has no compile section"
printf 'module @m {\n  func.func @main(%%a: tensor<4xf32>) -> tensor<4xf32> {\n    %%0 = stablehlo.add %%a, %%b : tensor<4xf32>\n' >"$tmp/bad.mlir"
run plan "$tmp/bad.mlir"
grep -q 'line 3:28: %b is not defined before its use' "$tmp/err"
ok $? "StableHLO error names line 3:28"

# --- StableHLO with dynamic dims (?): refused with how to bind them, planned once bound
# (tests/data/dynamic/tri.mlir: N = %arg0, every shape [N, N + 2]; test_stablehlo_refine.c)
run plan tests/data/dynamic/tri.mlir
ok $((rc != 2)) "a dynamic dim without --bind is refused (exit 2)"
grep -q "line 4:60: dim 0 of 'tensor<?x1xf32>' is dynamic (?): tpuplan plans static shapes; bind it with --bind arg1=Nx1" "$tmp/err"
ok $? "the refusal names the dim and how to bind it"
run plan tests/data/dynamic/tri.mlir --bind arg0=5 --bind arg1=5x1 --strategies xla-default --reading written
ok $rc "bound with a repeated --bind: plans (exit 0)"
pyjson 'T["27"]["shape"] == "f32[5,7]{1,0:T(8,128)}" and T["27"]["padded_bytes"] == 8 * 128 * 4 and T["26"]["padded_bytes"] == 8 * 128 and T["arg1"]["shape"] == "f32[5,1]{1,0:T(8,128)}"'
ok $? "N = 5: the results are 5x7, one (8,128) tile each: 4096 B f32, 1024 B pred"
run plan tests/data/dynamic/tri.mlir --bind arg0=5,arg1=5x1,n=3
ok $((rc != 2)) "a binding naming no argument exits 2"
grep -q "bind: 'n' names no argument of @main" "$tmp/err"
ok $? "the error names the binding"
run plan tests/data/dynamic/tri.mlir --bind arg0=5,arg1=5x2
grep -q "line 4:62: dim 1 of 'tensor<?x1xf32>' is 1, not 2 as the binding's dims give" "$tmp/err"
ok $? "a shape against a static dim is refused at its column"
run plan tests/data/dynamic/tri.mlir --bind arg1=5x1
grep -q "the result of stablehlo.dynamic_iota at 12:5, is dynamic (?) and not known: its shape operand %6" "$tmp/err"
ok $? "an unbound dimension argument: the op, its line:column and the shape operand named"
run plan tests/data/dynamic/tri.mlir --bind arg0=-3,arg1=5x1
ok $((rc != 2)) "a negative value exits 2"
run plan $data/while.hlo --bind a=4
grep -q "bind: only StableHLO has dynamic dims to bind" "$tmp/err"
ok $? "--bind on HLO is refused"

# --- stdin, --input hlo, the text report
run plan - --input hlo --format text <$data/while.hlo
ok $rc "stdin with --input hlo"
grep -q '^model      jit_loop (hlo, 5 tensors' "$tmp/out"
ok $? "text report names the hlo source"

# --- --input takes every name and alias of the planner's input table (import.h)
run plan - --input mlir --strategies xla-default <$data/jax_while_call.mlir
ok $rc "stdin with --input mlir (StableHLO's alias)"
run plan $data/while.hlo --input auto --format text
ok $rc "--input auto detects from content"
run plan $data/while.hlo --input mlir
ok $((rc != 2)) "--input mlir on HLO text reads it as StableHLO (exit 2)"

# --- errors name line:column
printf 'HloModule m\nENTRY e {\n  ROOT a = f32[2]{0} add(b, b)\n}\n' >"$tmp/bad.hlo"
run plan "$tmp/bad.hlo"
ok $((rc != 2)) "use before definition exits 2"
grep -q 'line 3:26: operand %b is not defined before its use' "$tmp/err"
ok $? "error names line 3:26"
printf 'HloModule m\nENTRY e {\n  a = f32[2]{0} parameter(0)\n' >"$tmp/bad.hlo"
run plan "$tmp/bad.hlo"
grep -q "line 4:1: expected '}' to close the computation, found the end of the input" "$tmp/err"
ok $? "truncated module: line 4:1, what was expected"

# --- the result validates against the published schema
if have_jsonschema; then
    for f in $data/*.hlo $data/*.mlir; do
        "$bin" plan "$f" >"$tmp/out" 2>/dev/null
        valid result.schema.json "$tmp/out"
        ok $? "schema: $f"
    done
else
    ok 0 "schema # SKIP python3 jsonschema is not installed"
fi

echo "1..$n"
[ "$fails" -eq 0 ]
