#!/usr/bin/env bash
# layout.sh - bin/tpuplan layout and chips end to end (TAP).
set -uo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/cli/lib.sh
. tests/cli/lib.sh

# pyjson EXPR : evaluates a Python expression over the JSON in $tmp/out as `d`
pyjson() {
    python3 -c "import json,sys; d=json.load(open('$tmp/out')); sys.exit(0 if ($1) else 1)"
}

# --- --text: XLA's own report lines -------------------------------------------------
run layout --text 'f32[2000,5000]{1,0:T(8,128)}'
ok $((rc != 0)) "layout --text exits 0"
grep -qx 'Size: 39.06M' "$tmp/out"
ok $? "f32[2000,5000] Size: 39.06M"
grep -qx 'Unpadded size: 38.15M' "$tmp/out"
ok $? "f32[2000,5000] Unpadded size: 38.15M"
grep -qx 'Extra memory due to padding: 937.5K (1.0x expansion)' "$tmp/out"
ok $? "f32[2000,5000] Extra memory due to padding: 937.5K (1.0x expansion)"

run layout --text 's32[29360128,10]{1,0:T(8,128)}'
grep -qx 'Size: 14.00G' "$tmp/out" && grep -qx 'Extra memory due to padding: 12.91G (12.8x expansion)' "$tmp/out"
ok $? "s32[29360128,10] 14.00G 12.8x"

run layout --text 'f32[246534,1280]' --chip v4
grep -qx 'Size: 1.17G' "$tmp/out" && grep -qx 'Extra memory due to padding: 10.0K (1.0x expansion)' "$tmp/out"
ok $? "f32[246534,1280] default tile: 1.17G (truncating formatter), Extra 10.0K"
grep -q 'Layout: 32bit-T(8,128) (confirmed on v4)' "$tmp/out"
ok $? "rule and confidence named in --text"

run layout --text 'bf16[128,4096,352]{2,1,0:T(16,128)(2,1)}'
grep -qx 'Size: 384.00M' "$tmp/out" && grep -qx 'Unpadded size: 352.00M' "$tmp/out"
ok $? "bf16 T(16,128)(2,1) 384.00M"

run layout --text 'u8[256,384,1024]{2,1,0:T(8,128)(4,1)}'
grep -q 'Extra memory' "$tmp/out"
ok $((!$?)) "no Extra line when padding is 0"

run layout --text 'pred[64,512,2048]{2,1,0:T(8,128)E(32)}'
grep -qx 'Size: 256.00M' "$tmp/out" && grep -q '(4.0x expansion)' "$tmp/out"
ok $? "pred E(32) 256.00M 4.0x"

# --- JSON ------------------------------------------------------------------------------
run layout 'f32[128,6]{1,0}' --chip v3
ok $rc "layout JSON exits 0"
pyjson "d['shape']=='f32[128,6]{1,0:T(8,128)}' and d['padded_bytes']==65536 and d['logical_bytes']==3072 and d['padding_bytes']==62464 and d['size']=='64.0K' and d['extra']=='61.0K'"
ok $? "f32[128,6]{1,0}: tiles filled in, 64.0K, Extra 61.0K"
pyjson "abs(d['expansion']-21.333)<0.001 and d['dims']==[128,6] and d['minor_to_major']==[1,0] and d['tiles']==[[8,128]] and d['padded_dims']==[128,128]"
ok $? "JSON fields: expansion, dims, minor_to_major, tiles, padded_dims"
pyjson "d['layout_source']=='32bit-T(8,128)' and d['confidence']=='confirmed' and d['chip']=='v3' and 'assumption' not in d and d['dtype']=='f32'"
ok $? "JSON layout_source/confidence/chip on v3 (confirmed, no assumption)"

run layout 'bf16[64,64]' --chip tpu7x
pyjson "d['chip']=='v7' and d['confidence']=='assumed' and len(d['assumption'])>20 and d['shape']=='bf16[64,64]{1,0:T(16,128)(2,1)}'"
ok $? "v7 (alias tpu7x): bf16 T(16,128)(2,1), assumed with a sentence"

run layout 'f32[3,5]{0,1}' --chip 'TPU v4'
pyjson "d['chip']=='v4' and d['order_source']=='given' and d['layout_source']=='32bit-T(8,128)' and d['padded_dims']==[128,8]"
ok $? "bare order kept (order_source given), tiles by rule; --chip takes a JAX device_kind"

run layout 'f32[8]'
pyjson "d['chip']=='v5e' and d['confidence']=='assumed' and 'assumption' in d"
ok $? "default chip v5e; default rules there are assumptions"

run layout 'f32[8,128]{1,0:T(8,128)}' 'bf16[]{:T(512)(2,1)}'
pyjson "isinstance(d,list) and len(d)==2 and d[0]['confidence']=='given' and d[1]['padded_bytes']==1024 and d[1]['layout_source']=='given'"
ok $? "two shapes -> JSON array, given layouts"

run layout '(s32[]{:T(256)}, f32[8,128]{1,0:T(8,128)})'
pyjson "d['tuple'] and len(d['elements'])==2 and d['padded_bytes']==1024+4096 and d['logical_bytes']==4+4096 and d['shape']=='(s32[]{:T(256)}, f32[8,128]{1,0:T(8,128)})'"
ok $? "tuple: elements and total"
run layout --text '(s32[]{:T(256)}, f32[8,128]{1,0:T(8,128)})'
grep -q '^Tuple total (2 elements):' "$tmp/out" && grep -qx 'Size: 5.0K' "$tmp/out"
ok $? "tuple --text total 5.0K"

long=$(python3 -c "e='f32[123456789,123,45,67,8]{4,3,2,1,0:T(8,128)}'; print('(' + ''.join((', ' if i else '') + ('/*index=%d*/' % i if i and i % 5 == 0 else '') + e for i in range(64)) + ')')")
run layout "$long"
python3 -c "import json,sys; d=json.load(open('$tmp/out')); sys.exit(0 if d['shape']==sys.argv[1] and len(d['elements'])==64 and len(d['shape'])>2048 else 1)" "$long"
ok $? "64-element tuple prints whole, with XLA's /*index=N*/ marks (longer than one shape's buffer)"

printf 'f32[2000,5000]{1,0:T(8,128)}\n\n# comment\n  u32[12582912,1]{1,0:T(8,128)}  \n' | "$bin" layout >"$tmp/out" 2>"$tmp/err"
rc=$?
ok $rc "stdin: exit 0"
pyjson "len(d)==2 and d[1]['size']=='6.00G' and d[1]['unpadded_size']=='48.00M' and d[1]['expansion']==128"
ok $? "stdin: one shape per line, blanks and comments skipped; u32 6.00G 128.0x"
printf 'f32[1]\n' | "$bin" layout - --text >"$tmp/out" 2>"$tmp/err"
grep -qx 'Size: 1.0K' "$tmp/out"
ok $? "\"-\" reads stdin"

# --- errors: exit 2, shape index and offset ---------------------------------------------
run layout 'f32[2,3]' 'f32[2,-3]'
[ $rc -eq 2 ] && [ ! -s "$tmp/out" ] && grep -q 'shape 2 of 2: negative dimension at offset 6' "$tmp/err"
ok $? "negative dim: exit 2, nothing on stdout, names shape 2 and offset 6"
refused "unknown dtype: exit 2" "shape 1 of 1: unknown element type 'f33' at offset 0" layout 'f33[2]'
refused "layout not a permutation: exit 2" 'permutation' layout 'f32[2,3]{1,1}'
refused "huge dim: exit 2" 'larger than 2^63-1' layout 'f32[99999999999999999999]'
refused "byte size overflow: exit 2" 'overflows 64 bits' layout 'f32[4294967296,4294967296]'
refused "truncated: exit 2 with offset" 'offset 5' layout 'f32[2' --text
printf 'f32[1]\nbf16[2,\n' | "$bin" layout >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] && grep -q 'shape 2 of 2 (stdin line 2)' "$tmp/err"
ok $? "stdin error names the line"
refused "unknown chip: exit 2" "unknown chip 'v9'" layout 'f32[1]' --chip v9
run layout --bogus 'f32[1]'
[ $rc -eq 2 ]
ok $? "unknown option: exit 2"
printf '\n# nothing\n' | "$bin" layout >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q 'no shape given' "$tmp/err"
ok $? "empty stdin: exit 2"
run layout --help
[ $rc -eq 0 ] && grep -q 'one object for one shape, an array' "$tmp/out"
ok $? "--help documents the JSON shape"

# --- chips --------------------------------------------------------------------------------
run chips
[ $rc -eq 0 ] && grep -q '^v5e ' "$tmp/out" && grep -q 'usable HBM per device   15.75G' "$tmp/out"
ok $? "chips text: v5e usable 15.75G"
grep -q 'usable HBM per device   30.75G' "$tmp/out" && grep -q 'uncertain' "$tmp/out"
ok $? "chips text: v4 30.75G, uncertainty legend"
grep -A12 '^v7 ' "$tmp/out" | grep -q 'VMEM / SMEM per core    64.00M \*'
ok $? "chips text: v7 VMEM 64 MiB starred"
run chips --json
pyjson "[c['name'] for c in d]==['v2','v3','v4','v5e','v5p','v6e','v7'] and all('uncertain' in c and 'notes' in c for c in d)"
ok $? "chips --json: 7 chips with uncertain/notes"
pyjson "[c for c in d if c['name']=='v5p'][0]['uncertain'].count('usable_hbm')==1 and [c for c in d if c['name']=='v5e'][0]['usable_hbm_bytes']==16911433728"
ok $? "chips --json: v5p usable HBM flagged; v5e usable bytes"
run chips --xml
[ $rc -eq 2 ]
ok $? "chips bad option: exit 2"

echo "1..$n"
[ "$fails" -eq 0 ]
