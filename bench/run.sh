#!/usr/bin/env bash
# run.sh BUILD STAGE...: runs each GPU stage's benchmark (BUILD/bench_stepNN) into one CSV, keeps
# it as bench/<gpu name>/results.csv, and draws bench/<gpu name>/bandwidth.png from it.
# BENCH_CSV=variants.csv (make variants): the CSV's name instead, and no plot.
set -euo pipefail
build=$1
shift
tmp=$(mktemp /tmp/reduction-bench-XXXXXX.csv)
rm -f "$tmp" # each program appends, and writes the header into a new file
for s in "$@"; do
    "$build/bench_$s" --csv "$tmp" ${BENCH_ARGS:-}
done
gpu=$(sed -n 2p "$tmp" | cut -d, -f1)
dir="bench/$(printf '%s' "$gpu" | tr -c 'A-Za-z0-9._-' '_')"
mkdir -p "$dir"
csv=${BENCH_CSV:-results.csv}
mv "$tmp" "$dir/$csv"
echo "wrote $dir/$csv"
[ "$csv" = results.csv ] || exit 0
py=$(bash bench/python.sh) || { echo "no matplotlib: run make plot where it is" >&2; exit 0; }
"$py" bench/plot.py "$dir/results.csv" --table
