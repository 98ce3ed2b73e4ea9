#!/usr/bin/env bash
# model/bench.sh BUILD "ROWS" "ONE_BLOCK": make bench-model (the Makefile gives the lists, from the
# stages' stage.ini: ROW_STAGES and ONE_BLOCK_STAGES). The CPU model's speed on one core of this
# machine (taskset -c 0), each stage's kernels against step00's sequential loop on the same input
# (model/bench.c): the multi-block stages at n = 2^24 (block 256; stages 02 and 03 as their
# segmented variants, stepNN_name/variants/, since they take one block: n <= 2048), the single-block
# stages at their n = 2048 (block 1024), all with AddressSanitizer, the model's default build; then
# every stage at n = 2^16 with ThreadSanitizer (BUILD/thread/). Medians of 3 (1 under
# ThreadSanitizer). Writes results/cpu_model/model.csv and prints it.
set -euo pipefail
build=${1:?usage: model/bench.sh BUILD "ROWS" "ONE_BLOCK"} rows=${2:?} one_block=${3:?}
out=results/cpu_model/model.csv
mkdir -p "$(dirname "$out")"
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1 | tr -d ,)
tmp=$(mktemp)
echo "stage,n,block,sanitizer,model_ms,step00_ms,ratio,sum_ok,cpu" >"$tmp"
row() { taskset -c 0 "$@" | sed "s/\$/,$cpu/" | tee -a "$tmp"; }
for s in $rows; do # the speed-up table's rows: stages, and variants that time a one-block stage
    row "$build/model_bench_$s" 16777216 256 3
done
for s in $one_block; do
    row "$build/model_bench_$s" 2048 1024 3
done
for s in $rows; do
    [[ $s == *_* ]] || row "$build/thread/model_bench_$s" 65536 256 1
done
for s in $one_block; do
    row "$build/thread/model_bench_$s" 2048 1024 1
done
mv "$tmp" "$out"
echo "wrote $out"
