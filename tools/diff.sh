#!/usr/bin/env bash
# diff.sh [--color=WHEN] NN: the unified diff of stage NN's code against the code of the stage it
# follows (its stage.ini's follows, tools/stages.py), from the first #include on (the lesson's
# opening comment is prose; its README says what changed). What an instructor projects and what
# the slides show: consecutive stages differ only by their lesson. Colour: auto (on a terminal),
# always or never.
set -u
color=auto
case "${1:-}" in --color=*) color=${1#--color=}; shift ;; esac
stages=$(dirname "$0")/stages.py
harness=$(python3 "$stages" list --kind cpu,gpu --short)
first=$(sed -n 2p <<<"$harness") last=$(tail -n 1 <<<"$harness")
cur= prev= own=
if [[ "${1:-}" =~ ^[0-9]{1,2}$ ]] && own=$(python3 "$stages" get "$1" name 2>/dev/null); then
    cur=$(python3 "$stages" get "$own" source 2>/dev/null)
    before=$(python3 "$stages" previous "$own" 2>/dev/null) &&
        prev=$(python3 "$stages" get "$before" source 2>/dev/null)
fi
if [ -n "$own" ] && [ -z "$cur" ] && [ -n "${before:-}" ]; then
    echo "make diff: stage ${own:4:2} ($own) is a program of its own, not a change to stage" \
         "${before:4:2}'s kernel: read $own/README.md." >&2
    exit 2
elif [ -z "$cur" ] || [ -z "$prev" ]; then
    echo "make diff: STEP must be a stage from ${first:4:2} to ${last:4:2} (got '${1:-}')." >&2
    exit 2
fi
code() { sed -n '/^#include/,$p' "$1"; }
diff -u --color="$color" --label "$prev" --label "$cur" <(code "$prev") <(code "$cur")
[ $? -le 1 ] # 1 means "they differ", which is the point
