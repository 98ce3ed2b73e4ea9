#!/usr/bin/env bash
# run_all.sh BUILD STAGE...: runs each stage program on its default input and prints one table.
# Without a CUDA device it runs the CPU stage (step00) and says plainly that the GPU stages need
# one.
set -u
build=$1
shift
rows=() status=0 no_gpu=""
cpu=$(python3 "$(dirname "$0")/stages.py" list --kind cpu --short) # the reference loop: no GPU
for s in "$@"; do
    [ -n "$no_gpu" ] && [ "$s" != "$cpu" ] && continue
    out=$("$build/$s" 2>&1)
    rc=$?
    if [ $rc -eq 3 ] && grep -q 'no CUDA device' <<<"$out"; then
        no_gpu=$(sed 's/^[^:]*: //; s/;.*//' <<<"$out")
    elif grep -q '^stage=' <<<"$out"; then
        [ $rc -eq 0 ] || status=1
        rows+=("$(grep '^stage=' <<<"$out")")
    else
        echo "$s failed (exit status $rc): $out" >&2
        status=1
    fi
done
printf '%s\n' "${rows[@]}" | awk '
    function get(key,   i) { for (i = 1; i <= NF; i++) if (index($i, key "=") == 1) return substr($i, length(key) + 2); return "" }
    BEGIN { printf "%-20s %12s %14s %14s %-8s %10s %9s %7s\n", "stage", "n", "sum", "reference", "result", "median ms", "GB/s", "% peak" }
    { if (match($0, /device="[^"]*"/)) dev = substr($0, RSTART + 8, RLENGTH - 9)
      printf "%-20s %12s %14s %14s %-8s %10s %9s %7s\n", get("stage"), get("n"), get("sum"), get("ref"), get("result"), get("median_ms"), get("GB/s"), get("peak%")
      if (dev != "CPU") gpu = dev }
    END { if (gpu != "") print "device: " gpu }'
[ -z "$no_gpu" ] || echo "The GPU stages ($2 to ${!#}) need a CUDA device: $no_gpu"
exit $status
