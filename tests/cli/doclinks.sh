#!/usr/bin/env bash
# doclinks.sh - every document citation resolves (tests/cli/doclinks.py), in three parts:
#   1. the repository's tracked files: PATH.md#anchor in code, strings and documents names a
#      file that exists and a heading of it; Markdown links resolve; nothing cites the
#      research notes that do not ship, or a section by its quoted title;
#   2. what users see: the CLI's output (chip notes, the result's assumptions and kernel
#      warnings, error messages) cites only headings of files that ship;
#   3. the checker itself, on a small repository with good and broken citations: it must
#      fail, and name each broken one.
cd "$(dirname "$0")/../.." || exit 1
bin=${TPUPLAN_BIN:-bin/tpuplan}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
checker=tests/cli/doclinks.py
n=0

# run_checker OUTFILE ARGS...: the checker's TAP lines, numbered on from n.
run_checker() {
    local o=$1
    shift
    python3 "$checker" "$@" >"$o" 2>&1
    local rc=$?
    cat "$o"
    n=$((n + $(grep -cE '^(not )?ok [0-9]+' "$o")))
    if [ "$rc" -ne 0 ] && ! grep -q '^not ok' "$o"; then
        n=$((n + 1))
        echo "not ok $n - the checker exited $rc without naming a broken citation"
    fi
}

ok() { # ok CONDITION-EXIT-STATUS NAME
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}

# --- 1. the repository
run_checker "$tmp/repo.txt" . 1

# --- 2. what users see
out=$tmp/out
mkdir -p "$out"
kernel() { # kernel NAME SED-EXPRESSION: a one-kernel model, edited, planned
    sed "$2" >"$tmp/$1.json" <<'EOF'
{"name": "k", "chip": "v6e", "tensors": [],
 "kernels": [{"name": "w", "grid": [2],
   "inputs": [{"name": "a", "block": [100, 100], "array": [200, 200], "dtype": "f32", "index_map": [0, null]},
              {"name": "b", "block": [256], "array": [1000], "dtype": "s4"}],
   "outputs": [{"name": "y", "block": [8, 128], "array": [16, 128], "dtype": "f32", "index_map": [0, null]}],
   "vmem_limit_bytes": 268435456}]}
EOF
    "$bin" plan "$tmp/$1.json" >"$out/$1" 2>&1
}
"$bin" chips >"$out/chips" 2>&1
"$bin" chips --json >"$out/chips-json" 2>&1
"$bin" plan tests/data/models/pallas-kernels.json >"$out/pallas" 2>&1
"$bin" plan tests/data/models/pallas-kernels.json --chip v4 --format text >"$out/pallas-v4" 2>&1
"$bin" layout 's8[16,256]' --chip v5e >"$out/layout-s8" 2>&1
kernel warnings 's/x/x/'
kernel dtype 's/"dtype": "s4"/"dtype": "f64"/'
kernel buffers 's/"name": "y", /"name": "y", "buffers": 3, /'
kernel rank0 's/"block": \[256\], "array": \[1000\]/"block": [], "array": []/'
run_checker "$tmp/out.txt" . "$((n + 1))" --output "$out"/*
# Each kind of citation the product prints, so that none goes unchecked by accident.
cited=$(cat "$out"/* | grep -o 'server/planner/SOURCES\.md#[a-z0-9_-]*' | sort -u |
    sed 's/.*#//' | tr '\n' ' ')
[ "$cited" = "block-shapes buffering conflicts scoped-vmem tiles-per-dtype tpu_info vmem-estimate " ]
ok $? "the output cites SOURCES.md entries: $cited"

# --- 3. the checker on a repository of three files: a document, a source citing it, a README
fx=$tmp/fixture
mkdir -p "$fx/docs" "$fx/src"
cat >"$fx/docs/GUIDE.md" <<'EOF'
# The guide

## Byte counts, and budgets

## What-if: overrides

## What-if: overrides

See [the budgets](#byte-counts-and-budgets) and [the source](../src/main.c).
EOF
cat >"$fx/src/main.c" <<'EOF'
/* good: docs/GUIDE.md#byte-counts-and-budgets and docs/GUIDE.md#what-if-overrides-1 */
/* broken: docs/GUIDE.md#byte-counts (no such heading), docs/NONE.md#x (no such file) */
/* broken: see README "Limits" */
EOF
printf '# R\n' >"$fx/README.md"
git -C "$fx" init -q && git -C "$fx" add -A
python3 "$checker" "$fx" >"$tmp/fx.txt" 2>&1
fxrc=$?
ok "$([ "$fxrc" -eq 1 ] && echo 0 || echo 1)" "checker: a repository with broken citations fails (exit $fxrc)"
grep -q '^ok [0-9]* - docs/GUIDE.md: 2 citation(s) resolve' "$tmp/fx.txt"
ok $? "checker: Markdown links to a heading and to a file resolve"
grep -q '^not ok [0-9]* - src/main.c:2 cites docs/GUIDE.md#byte-counts: docs/GUIDE.md has no heading with the anchor #byte-counts' "$tmp/fx.txt"
ok $? "checker: a missing anchor is named with its file and line"
grep -q '^not ok [0-9]* - src/main.c:2 cites docs/NONE.md#x: no file docs/NONE.md' "$tmp/fx.txt"
ok $? "checker: a missing file is named"
grep -q '^not ok [0-9]* - src/main.c:3 cites a section by its title' "$tmp/fx.txt"
ok $? "checker: a section cited by its quoted title is refused"
[ "$(grep -c '^not ok' "$tmp/fx.txt")" -eq 3 ] && ! grep -q 'src/main.c:1' "$tmp/fx.txt"
ok $? "checker: the good citations (a repeated heading's -1 anchor included) pass: exactly 3 broken"
printf 'printf("see tpu-%s 2c\\n");\n' facts >"$tmp/leak.txt"
python3 "$checker" . 1 --output "$tmp/leak.txt" | grep -q "^not ok 1 - output leak.txt:1 cites 'tpu-facts', a document that does not ship"
ok $? "checker: output citing the research notes that do not ship is refused"

! grep -q '^not ok' "$tmp/repo.txt" "$tmp/out.txt"
