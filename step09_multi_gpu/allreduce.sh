#!/usr/bin/env bash
# allreduce.sh BUILD [GPUS]: `make bench-step09`. Runs BUILD/step09 --bench (on GPUS GPUs, default
# every visible one) into results/<gpu name>/allreduce.csv, where the rows of runs on other numbers
# of GPUs are kept and those of the same number replaced (all rows, where its header is an older
# step09's), then draws results/<gpu name>/allreduce.png (plot_allreduce.py, beside it) and
# prints its table. NCCL_NVLS_ENABLE=0 unless set (see step09).
set -euo pipefail
build=$1 gpus=${2:-}
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
tmp=$(mktemp /tmp/reduction-allreduce-XXXXXX.csv)
rm -f "$tmp" # step09 writes the header into a new file
"$build/step09" --bench --csv "$tmp" ${gpus:+--gpus "$gpus"}
IFS=, read -r gpu g _ < <(sed -n 2p "$tmp")
dir=results/${gpu//[^A-Za-z0-9._-]/_}
csv=$dir/allreduce.csv
mkdir -p "$dir"
if [ -f "$csv" ] && [ "$(head -n 1 "$csv")" != "$(head -n 1 "$tmp")" ]; then
    # Rows of an older step09, with other columns, cannot be kept beside these.
    echo "allreduce.sh: $csv has another header (an older step09): its rows are replaced" >&2
elif [ -f "$csv" ]; then
    { awk -F, -v g="$g" 'NR == 1 || $2 != g' "$csv"; tail -n +2 "$tmp"; } >"$tmp.merged"
    mv "$tmp.merged" "$tmp"
fi
mv "$tmp" "$csv"
echo "wrote $csv"
py=$(bash tools/bench/python.sh) || {
    echo "no matplotlib: run python3 step09_multi_gpu/plot_allreduce.py $csv where it is" >&2
    exit 0
}
"$py" step09_multi_gpu/plot_allreduce.py "$csv" --table
