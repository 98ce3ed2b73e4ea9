#!/usr/bin/env bash
# stages.sh [DIR]: the stages, one folder name a line, in order: the folders stepNN_name/ of DIR
# (default: this repository) that hold a reduce.c or a reduce.cu. The one place the list is made:
# the Makefile, the scripts and the tests take it from here. step09_multi_gpu/ has neither file: it
# is a program of its own, not a stage of the harness.
cd "${1:-$(dirname "$0")/..}" || exit 1
for f in step[0-9][0-9]_*/reduce.c step[0-9][0-9]_*/reduce.cu; do
    [ -f "$f" ] && echo "${f%/reduce.c*}"
done | sort -u
