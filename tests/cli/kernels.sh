#!/usr/bin/env bash
# kernels.sh - bin/tpuplan plan on Pallas kernels end to end (TAP): the exit status, XLA's
# E1001 text on stderr, the text report's kernels section, and bad kernels named.
set -uo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/cli/lib.sh
. tests/cli/lib.sh
model=tests/data/models/pallas-kernels.json

pyjson() {
    python3 -c "import json,sys; d=json.load(open('$tmp/out')); sys.exit(0 if ($1) else 1)"
}

# --- a kernel over its scoped limit makes the plan not fit ---------------------------
run plan "$model"
ok $((rc != 1)) "a kernel over its VMEM limit: exit 1"
grep -qx 'tpuplan: E1001 CompileTimeScopedVmemOom: kernel "attention": Ran out of memory in memory space vmem. Scoped allocation with size 74.00M and limit 32.00M exceeded scoped vmem limit by 42.00M.' "$tmp/err"
ok $? "stderr carries XLA's E1001 text with the kernel's name and overflow"
pyjson 'd["summary"]["hbm_fits"] and not d["summary"]["fits"] and d["summary"]["kernels_over_limit"] == 1'
ok $? "summary: HBM fits, the plan does not (one kernel over)"
# matmul: 2 x 512x512 bf16 (x, w) + 2 x 512x512 f32 (y) + 512x512 f32 acc
pyjson 'd["kernels"][0]["vmem_bytes"] == 2*524288*2 + 2*1048576 + 1048576 and d["kernels"][0]["fits"]'
ok $? "matmul: 5.00M of VMEM, fits"
# attention: 4 blocks of 2048x1024 f32 double-buffered + m, l (2048x128) + acc (2048x1024)
pyjson 'd["kernels"][1]["vmem_bytes"] == 4*2*8388608 + 2*1048576 + 8388608'
ok $? "attention: 74.00M of VMEM by the padding rule"
pyjson 'all(s["vmem_bytes"] <= 32*2**20 for s in d["kernels"][1]["suggestions"] if s["kind"] == "blocks")'
ok $? "every block suggestion fits the 32 MiB limit"

# --- within the limit: exit 0 ------------------------------------------------------
python3 - "$model" "$tmp/fits.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["kernels"][1]["vmem_limit_bytes"] = 96 * 2**20
json.dump(m, open(sys.argv[2], "w"))
PY
run plan "$tmp/fits.json"
ok $((rc != 0)) "a raised vmem_limit_bytes makes it fit: exit 0"
ok $(($(wc -c <"$tmp/err") != 0)) "nothing on stderr when every kernel fits"

# --- text report -------------------------------------------------------------------
run plan "$model" --format text
ok $((rc != 1)) "--format text: exit 1 too"
grep -q '^kernels (VMEM per TensorCore)$' "$tmp/out"
ok $? "text: a kernels section"
grep -q '^  attention: vmem 74.00M + margin 0B against limit 32.00M .*DOES NOT FIT, over by 42.00M$' "$tmp/out"
ok $? "text: the kernel's fit line"
grep -q 'set pltpu.CompilerParams(vmem_limit_bytes=77594624) and --xla_tpu_scoped_vmem_limit_kib=75777' "$tmp/out"
ok $? "text: the exact raised limit and flag"

# --- bad kernels: a clear error naming the field, exit 2 -----------------------------
printf '{"tensors":[],"kernels":[{"name":"k","grid":[2],"inputs":[{"name":"x","block":[8,128],"dtype":"f32","index_map":[0,3]}]}]}' >"$tmp/bad.json"
run plan "$tmp/bad.json"
ok $((rc != 2)) "bad index_map: exit 2"
grep -q 'kernels\[0\] "k": inputs\[0\].index_map\[1\]: must be null or an integer from 0 to 0' "$tmp/err"
ok $? "bad index_map: the message names kernels[0].inputs[0].index_map[1]"

echo "1..$n"
[ "$fails" -eq 0 ]
