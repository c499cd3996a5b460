#!/usr/bin/env bash
# wings.sh - the planner's layering rules (server/README.md#the-planners-wings), checked
# over the tracked files; `make lint` runs it. Prints each violation as FILE:LINE: why,
# and exits 1 when there is one.
#
#   1. server/planner/ holds headers only: every .c lives in a wing folder.
#   2. server/cli and server/service include only the public headers, planner/*.h.
#   3. A planner file includes nothing from a wing above its own. Wings, lowest first, are
#      WINGS below; a public header belongs to the wing of the .c of the same name (pack.h to
#      pack/pack.c), a header without one to base.
#   4. A *_int.h is included only from its own wing (and by the unit tests).
set -uo pipefail
cd "$(dirname "$0")/../.."

WINGS="base xla pack model import results plan"
bad=0
say() {
    echo "$1"
    bad=1
}

rank() { # rank WING: its index in WINGS, or nothing
    local i=0 w
    for w in $WINGS; do
        [ "$w" = "$1" ] && echo $i && return
        i=$((i + 1))
    done
}

# wing_of PATH: the wing of a planner file (by folder, or the same-name .c for a public header)
wing_of() {
    local p=${1#server/planner/} base c
    case "$p" in
    */*) echo "${p%%/*}" ;;
    *)
        base=${p%.h}
        c=$(git ls-files "server/planner/*/$base.c" | head -1)
        if [ -n "$c" ]; then
            c=${c#server/planner/}
            echo "${c%%/*}"
        else
            echo base
        fi
        ;;
    esac
}

files=$(git ls-files 'server/*.c' 'server/*.h')
[ -n "$files" ] || {
    echo "wings.sh: no tracked sources (is this a checkout?)"
    exit 1
}

for f in $(git ls-files 'server/planner/*.c'); do
    rel=${f#server/planner/}
    case "$rel" in */*) ;; *) say "$f:1: a source file outside the wings (move it into a wing folder)" ;; esac
done

for w in $(git ls-files 'server/planner/*/*' | sed 's#server/planner/\([^/]*\)/.*#\1#' | sort -u); do
    [ -n "$(rank "$w")" ] || say "server/planner/$w:1: a folder that is not a wing ($WINGS)"
done

for f in $files; do
    while IFS=: read -r line inc; do
        [ -n "$inc" ] || continue
        case "$f" in
        server/cli/* | server/service/*)
            case "$inc" in
            planner/*/*) say "$f:$line: includes $inc; cli and service use only the public planner/*.h" ;;
            esac
            ;;
        server/planner/*)
            case "$inc" in planner/*) ;; *) continue ;; esac
            own=$(wing_of "$f")
            them=$(wing_of "server/$inc")
            if [ "$(rank "$them")" -gt "$(rank "$own")" ]; then
                say "$f:$line: the $own wing includes $inc from the $them wing above it"
            fi
            case "$inc" in
            *_int.h) [ "$them" = "$own" ] || say "$f:$line: $inc is private to the $them wing" ;;
            esac
            ;;
        esac
    done < <(grep -n '^#include "[^"]*"' "$f" | sed 's/^\([0-9]*\):#include "\([^"]*\)".*/\1:\2/')
done

for f in $(git ls-files 'tests/bench/*.c' 'tests/fuzz/*.c'); do
    grep -n '^#include "planner/[^"]*_int\.h"' "$f" | while IFS=: read -r line rest; do
        echo "$f:$line: private header ($rest); only the unit tests may include one"
    done
done | grep . && bad=1

exit $bad
