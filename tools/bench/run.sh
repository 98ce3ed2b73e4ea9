#!/usr/bin/env bash
# run.sh BUILD STAGE...: runs each GPU stage's benchmark (BUILD/bench_stepNN) into one CSV, keeps
# it as results/<gpu name>/results.csv, and draws results/<gpu name>/bandwidth.png and harris.png
# (tools/bench/harris.py: the course's speed-up table as bars) from it.
# BENCH_CSV=variants.csv (make variants): the CSV's name instead, and no plot. BENCH_MERGE=1
# (make bench STEP=NN): the CSV keeps its rows of the other stages, and the stages run replace
# theirs (each stage's rows come with the CUB and copy rows timed in its own process).
set -euo pipefail
build=$1
shift
tmp=$(mktemp /tmp/reduction-bench-XXXXXX.csv)
rm -f "$tmp" # each program appends, and writes the header into a new file
for s in "$@"; do
    "$build/bench_$s" --csv "$tmp" ${BENCH_ARGS:-}
done
gpu=$(sed -n 2p "$tmp" | cut -d, -f1)
dir=results/${gpu//[^A-Za-z0-9._-]/_}
mkdir -p "$dir"
csv=${BENCH_CSV:-results.csv}
if [ -n "${BENCH_MERGE:-}" ] && [ -f "$dir/$csv" ]; then
    # The old file's rows, less those of the stages just run: a stage's row starts its block of
    # rows (stage, cub, copy), so drop every row from one of theirs to the next stage's.
    new=$(tail -n +2 "$tmp" | cut -d, -f2 | grep -vxE 'cub|copy' | sort -u | paste -sd '|' -)
    { awk -F, -v new="^($new)\$" 'NR == 1 { print; next }
        $2 != "cub" && $2 != "copy" { drop = ($2 ~ new) } !drop' "$dir/$csv"; tail -n +2 "$tmp"; } \
        >"$tmp.merged"
    mv "$tmp.merged" "$tmp"
fi
mv "$tmp" "$dir/$csv"
echo "wrote $dir/$csv"
[ "$csv" = results.csv ] || exit 0
py=$(bash tools/bench/python.sh) || { echo "no matplotlib: run make plot where it is" >&2; exit 0; }
"$py" tools/bench/plot.py "$dir/results.csv" --table
"$py" tools/bench/harris.py png "$dir/results.csv" -o "$dir/harris.png"
