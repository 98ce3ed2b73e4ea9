#!/usr/bin/env bash
# diff.sh NN: the unified diff of stage NN's code against stage NN-1's, coloured on a terminal.
# What an instructor projects: consecutive stages differ only by their lesson.
set -u
step=$(printf '%02d' "$((10#${1:-x}))" 2>/dev/null) || step=bad
cur=$(ls -d step"$step"_*/ 2>/dev/null | head -n 1)
prev=$(ls -d step"$(printf '%02d' $((10#$step - 1)))"_*/ 2>/dev/null | head -n 1)
if [ -z "$cur" ] || [ -z "$prev" ]; then
    echo "make diff: STEP must be a stage from 01 to 07 (got '${1:-}')." >&2
    exit 2
fi
color=never
[ -t 1 ] && color=always
diff -u --color="$color" "$prev"reduce.c* "$cur"reduce.c*
[ $? -le 1 ] # 1 means "they differ", which is the point
