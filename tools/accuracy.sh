#!/usr/bin/env bash
# accuracy.sh BUILD STAGE...: the float32 lesson's two Markdown tables (make accuracy, FLOAT.md).
#   1. a large input (ACCURACY_N elements, default 2^26), each stage with its default block; the
#      single-block stages (02-04) cannot take it, and their rows say so;
#   2. one block's worth, n = 2048 with 1024 threads a block: every stage, the same input, this
#      time with both signs over 40 binary orders of magnitude (--values wide), so that the
#      orders round differently even in one block.
# Each row comes from BUILD/accuracy_stepNN (common/accuracy.cu), ACCURACY_REPS runs (default 20).
# Without a CUDA device it prints the step00 rows and says plainly that the GPU stages need one.
# Exit status: 0, or 1 when a program failed (a sum outside its bound, say).
set -u
build=$1
shift
stages=("$@")
n=${ACCURACY_N:-67108864}
reps=${ACCURACY_REPS:-20}
status=0 no_gpu=""

# table N BLOCK VALUES: the title and heads (from the first stage's program: the input and its
# double reference are the same for all), then one row a stage (BLOCK empty: each its default).
table() {
    local args=(--n "$1" --reps "$reps" --values "$3" ${2:+--block "$2"}) s out rc
    "$build/accuracy_${stages[0]}" "${args[@]}" --header || status=1
    for s in "${stages[@]}"; do
        out=$("$build/accuracy_$s" "${args[@]}" 2>&1)
        rc=$?
        if [ $rc -eq 3 ] && grep -q 'no CUDA device' <<<"$out"; then
            no_gpu=$(sed 's/^[^:]*: //; s/;.*//' <<<"$out")
            continue
        fi
        grep '^|' <<<"$out"
        if [ $rc -ne 0 ]; then
            echo "$s failed (exit status $rc): $(grep -v '^|' <<<"$out")" >&2
            status=1
        fi
    done
    echo
}

echo "### Each stage's float32 sum against a double-precision reference, $reps runs each"
echo
table "$n" "" uniform
echo "One block's worth, 1024 threads a block: every stage on the same 2048 elements, now of both"
echo "signs and 40 binary orders of magnitude, so that the orders round differently."
echo
table 2048 1024 wide
[ -z "$no_gpu" ] || echo "The GPU stages need a CUDA device: $no_gpu"
exit $status
