#!/usr/bin/env bash
# diff.sh [--color=WHEN] NN: the unified diff of stage NN's code against stage NN-1's, from the
# first #include on (the lesson's opening comment is prose; its README says what changed).
# What an instructor projects and what the slides show: consecutive stages differ only by their
# lesson. Colour: auto (on a terminal), always or never.
set -u
color=auto
case "${1:-}" in --color=*) color=${1#--color=}; shift ;; esac
last=$(bash "$(dirname "$0")/stages.sh" | tail -n 1)
step=x cur= prev=
if [[ "${1:-}" =~ ^[0-9]{1,2}$ ]] && ((10#$1 >= 1)); then
    printf -v step '%02d' "$((10#$1))"
    printf -v before '%02d' "$((10#$1 - 1))"
    cur=$(ls step"$step"_*/reduce.c* 2>/dev/null | head -n 1)
    prev=$(ls step"$before"_*/reduce.c* 2>/dev/null | head -n 1)
fi
own=$(ls -d step"$step"_*/ 2>/dev/null | head -n 1)
if [ -z "$cur" ] && [ -n "$own" ]; then
    echo "make diff: stage $step (${own%/}) is a program of its own, not a change to stage" \
         "$before's kernel: read ${own}README.md." >&2
    exit 2
elif [ -z "$cur" ] || [ -z "$prev" ]; then
    echo "make diff: STEP must be a stage from 01 to ${last:4:2} (got '${1:-}')." >&2
    exit 2
fi
code() { sed -n '/^#include/,$p' "$1"; }
diff -u --color="$color" --label "$prev" --label "$cur" <(code "$prev") <(code "$cur")
[ $? -le 1 ] # 1 means "they differ", which is the point
