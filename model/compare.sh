#!/usr/bin/env bash
# model/compare.sh: the CPU model's sums against a GPU's, stage by stage, on the same inputs.
#   model/compare.sh sums BUILD > sums.csv         on a GPU machine (or anywhere): each stage of
#                                                   BUILD (build/ or build/float/) on every case
#   model/compare.sh check BUILD sums.csv           on the model: the same cases, compared
# A case is a stage, n, block size and seed (the stages' generated input: the same numbers on
# every machine, common/input.c). int32: every stage's sum must be the GPU's, bit for bit (integer
# + is associative: any order gives the same bits). float32: stage 8's too (its order is fixed,
# the same on every GPU and on the model); the other stages' float sums depend on the order in
# which their atomics land, so theirs are listed, equal or not, and not required.
# check prints one row a case that differs, then "compare: N equal, N differ (M required)" and
# exits 1 when a required one differs.
set -u
mode=${1:?usage: model/compare.sh sums|check BUILD [sums.csv]} build=${2:?BUILD}
gpu_stages=$(python3 "$(dirname "$0")/../tools/stages.py" list --kind gpu --short)
cases() { # stage n block seed, one a line
    for s in $gpu_stages; do
        info=$("$build/$s" --stage-info)
        if grep -q 'single_block=1' <<<"$info"; then
            for c in "1 32" "33 32" "64 32" "1025 1024" "2047 1024" "2048 1024"; do
                for seed in 1 2; do echo "$s $c $seed"; done
            done
        else
            blocks="32 256 1024"
            grep -q 'fixed_block=0' <<<"$info" ||
                blocks=$(sed 's/.*fixed_block=\([0-9]*\).*/\1/' <<<"$info")
            for n in 1 33 1000 100003 1048577 16777219; do
                for b in $blocks; do
                    for seed in 1 2; do echo "$s $n $b $seed"; done
                done
            done
        fi
    done
}
sum_of() { # stage n block seed: the sum the program prints
    "$build/$1" --n "$2" --block "$3" --seed "$4" --reps 1 | sed -n 's/.* sum=\([^ ]*\) .*/\1/p'
}
case $mode in
sums) # eight cases at a time, in the cases' order
    echo "stage,n,block,seed,sum"
    export -f sum_of
    export build
    cases | xargs -P 8 -L 1 bash -c 'echo "$0,$1,$2,$3,$(sum_of "$0" "$1" "$2" "$3")"' |
        sort -t, -k1,1 -k2,2n -k3,3n -k4,4n
    ;;
check)
    file=${3:?the sums.csv of a GPU}
    float=0
    "$build/${gpu_stages%%$'\n'*}" --help | grep -q float32 && float=1
    equal=0 differ=0 required=0
    while IFS=, read -r s n b seed gpu; do
        [ "$s" = stage ] && continue
        mine=$(sum_of "$s" "$n" "$b" "$seed")
        if [ "$mine" = "$gpu" ]; then
            equal=$((equal + 1))
            continue
        fi
        differ=$((differ + 1))
        need=yes
        # float32: only a stage of one fixed order (one block size: step08) owes the GPU its bits
        [ "$float" = 1 ] && "$build/$s" --stage-info | grep -q 'fixed_block=0' && need=no
        [ "$need" = yes ] && required=$((required + 1))
        echo "differs: $s n=$n block=$b seed=$seed: GPU $gpu, model $mine (required: $need)"
    done <"$file"
    echo "compare: $equal equal, $differ differ ($required required)"
    [ "$required" -eq 0 ]
    ;;
*) echo "usage: model/compare.sh sums|check BUILD [sums.csv]" >&2 && exit 2 ;;
esac
