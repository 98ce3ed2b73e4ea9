#!/usr/bin/env bash
# diff.sh [--color=WHEN] NN[a]: the unified diff of stage NN's code against the code of the stage it
# follows (its stage.ini's follows, tools/stages.py), from the first #include on (the lesson's
# opening comment is prose; its README says what changed). What an instructor projects and what
# the slides show: consecutive stages differ only by their lesson, one change a diff. Where a
# stage's lesson is two changes, its stage.ini's [diff] first names the variant that makes the
# first (one of its variants/*.patch): NNa is the stage it follows against that variant, NN the
# variant against the stage. Colour: auto (on a terminal), always or never.
set -u
color=auto
case "${1:-}" in --color=*) color=${1#--color=}; shift ;; esac
here=$(dirname "$0")
stages=$here/stages.py
harness=$(python3 "$stages" list --kind cpu,gpu --short)
first=$(sed -n 2p <<<"$harness") last=$(tail -n 1 <<<"$harness")
cur= prev= own= part=
if [[ "${1:-}" =~ ^([0-9]{1,2})(a?)$ ]] &&
    own=$(python3 "$stages" get "${BASH_REMATCH[1]}" name 2>/dev/null); then
    part=${BASH_REMATCH[2]}
    cur=$(python3 "$stages" get "$own" source 2>/dev/null)
    before=$(python3 "$stages" previous "$own" 2>/dev/null) &&
        prev=$(python3 "$stages" get "$before" source 2>/dev/null)
fi
if [ -n "$own" ] && [ -z "$cur" ] && [ -n "${before:-}" ]; then
    echo "make diff: stage ${own:4:2} ($own) is a program of its own, not a change to stage" \
         "${before:4:2}'s kernel: read $own/README.md." >&2
    exit 2
elif [ -z "$cur" ] || [ -z "$prev" ]; then
    echo "make diff: STEP must be a stage from ${first:4:2} to ${last:4:2}, or NNa for the first" \
         "change of a stage whose lesson is two (got '${1:-}')." >&2
    exit 2
fi
prev_label=$prev cur_label=$cur
if variant=$(python3 "$stages" get "$own" first 2>/dev/null); then
    # The variant's file, built as make builds it (tools/bench/variant.sh), in a scratch folder.
    tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
    patch_file=$own/variants/${variant#*_}.patch
    bash "$here/bench/variant.sh" "$patch_file" "$tmp/reduce.cu" || exit 2
    if [ "$part" = a ]; then
        cur=$tmp/reduce.cu cur_label="$variant ($patch_file)"
    else
        prev=$tmp/reduce.cu prev_label="$variant ($patch_file)"
    fi
elif [ "$part" = a ]; then
    echo "make diff: stage ${own:4:2}'s lesson is one change: make diff STEP=${own:4:2}." >&2
    exit 2
fi
code() { sed -n '/^#include/,$p' "$1"; }
diff -u --color="$color" --label "$prev_label" --label "$cur_label" <(code "$prev") <(code "$cur")
[ $? -le 1 ] # 1 means "they differ", which is the point
