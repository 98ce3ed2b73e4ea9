#!/usr/bin/env bash
# run.sh BUILD STAGE... [NAME=PATH[:ARGS]...]: `make metrics`, the hardware counters that explain
# each stage's time (tools/metrics/README.md: the sizes, NAME=PATH:ARGS, NCU=, PYTHON=,
# METRICS_OUT=). Profiles the first launch of reduce_kernel of each program with ncu, writes
# <METRICS_OUT>/<gpu name>/metrics.csv and metrics.md (tools/metrics/table.py makes both), prints
# the table; each run's output and report stay in BUILD/metrics/NAME.log and NAME.ncu-rep. Exit
# status: 0 ok; 1 a program failed (a wrong sum, an error) or ncu profiled nothing; 2 bad usage; 3
# no ncu, no CUDA device, or the GPU's counters restricted to admin users.
set -uo pipefail
here=$(dirname "$0")
py=${PYTHON:-python3}
die() { # die STATUS SENTENCE
    echo "metrics: $2" >&2
    exit "$1"
}
fail() { # fail SENTENCE: this program's rows are not written, nor results/
    echo "metrics: $1" >&2
    status=1
}
[ $# -ge 2 ] || die 2 "usage: tools/metrics/run.sh BUILD STAGE... [NAME=PATH[:ARGS]...] (make metrics runs it)"
build=$1
shift
logs=$build/metrics
mkdir -p "$logs" || die 2 "cannot create $logs."
command -v "$py" >/dev/null || die 2 "the tables need Python 3 ($py not found; PYTHON=/path/to/python3 chooses another)."

ncu=${NCU:-ncu}
command -v "$ncu" >/dev/null || [ -n "${NCU:-}" ] || ncu=/usr/local/cuda/bin/ncu
ncu=$(command -v "$ncu") ||
    die 3 "Nsight Compute's ncu was not found (${NCU:-not on PATH, not /usr/local/cuda/bin/ncu}); it ships with the CUDA toolkit, e.g. /usr/local/cuda/bin/ncu: put its folder on PATH or set NCU=/path/to/ncu."
version=$("$ncu" --version 2>/dev/null | sed -n 's/^Version \([^ ]*\).*/\1/p')
no_permission="the GPU's performance counters are restricted to admin users (ERR_NVGPUCTRPERM): run as root (sudo make metrics), or have an administrator set the NVIDIA driver option NVreg_RestrictProfilingToAdminUsers=0; see https://developer.nvidia.com/ERR_NVGPUCTRPERM"

# The counters this GPU has: ncu ignores a name it does not know, so table.py checks each first.
"$ncu" --query-metrics >"$logs/query.txt" 2>&1
grep -q ERR_NVGPUCTRPERM "$logs/query.txt" && die 3 "$no_permission"
metrics=$("$py" "$here/table.py" names "$logs/query.txt") || die 2 "$py $here/table.py failed."
profile=("$ncu" --clock-control none -k regex:reduce_kernel -c 1 --metrics "$metrics")

rows=$logs/rows.part # results/ gets them once every program has given its rows
echo "gpu,stage,n,block,metric,value,unit" >"$rows"
status=0 gpu=""
for spec in "$@"; do
    if [[ $spec == *=* ]]; then # NAME=PATH[:ARGS]
        name=${spec%%=*} prog=${spec#*=} args=""
        [[ $prog == *:* ]] && args=${prog#*:} prog=${prog%%:*}
        args=${args//,/ }
        [[ $args == *--reps* ]] || args+=" --reps 1"
    else
        name=$spec prog=$build/$spec args="--n ${METRICS_N:-16777216} --reps 1"
        # A single-block stage (its --stage-info says) takes n <= 2 x block: one block of 1024.
        if [[ -x $prog ]] && "$prog" --stage-info 2>/dev/null | grep -q ' single_block=1 '; then
            args="--n 2048 --block 1024 --reps 1"
        fi
    fi
    [[ $name =~ ^[A-Za-z0-9._-]+$ ]] || die 2 "'$name' is not a usable name: letters, digits, '.', '_', '-'."
    [[ -x $prog && ! -d $prog ]] || die 2 "$name: $prog is not a program (make ARCH=... all builds the stages)."
    log=$logs/$name.log
    rm -f "$logs/$name.ncu-rep"
    # shellcheck disable=SC2086 # ARGS are words
    "${profile[@]}" -o "$logs/$name" -f "$prog" $args >"$log" 2>&1
    rc=$?
    grep -q ERR_NVGPUCTRPERM "$log" && die 3 "$no_permission"
    grep -q "no CUDA device" "$log" &&
        die 3 "$(grep -m 1 -o 'no CUDA device[^;]*' "$log"): Nsight Compute needs an NVIDIA GPU."
    line=$(grep -m 1 '^stage=' "$log")
    if [[ $line == *" result=MISMATCH"* ]]; then
        fail "$name gave a wrong sum (exit status $rc): $line"
    elif [ $rc -ne 0 ] || [[ $line != *" result=ok"* ]]; then # the program's own words, else ncu's
        why=$(grep -v '^==' "$log" | head -n 2 | tr '\n' ' ')
        why=${why:-$(grep -m 1 '^==ERROR==' "$log")}
        fail "$name failed (exit status $rc): ${why:-no output} (see $log)"
    elif [ ! -f "$logs/$name.ncu-rep" ]; then
        fail "ncu profiled no kernel named reduce_kernel in $name (see $log)."
    else
        "$ncu" --import "$logs/$name.ncu-rep" --csv --page raw --print-units base \
            --print-metric-instances details >"$logs/$name.csv" 2>>"$log"
        stage=$(sed -n 's/^stage=\([^ ]*\).*/\1/p' <<<"$line")
        [[ $spec == *=* ]] && stage=$name # a variant goes by the name it was given
        n=$(sed -n 's/.* n=\([0-9]*\).*/\1/p' <<<"$line")
        device=$(sed -n 's/.* device="\([^"]*\)".*/\1/p' <<<"$line")
        gpu=${gpu:-$device}
        "$py" "$here/table.py" rows "$stage" "$n" "$device" "$logs/$name.csv" >>"$rows" || status=1
    fi
done
[ $status -eq 0 ] || die 1 "not writing results/: a program above failed."

top=$(dirname "$(dirname "$here")") # the repository, whose results/ holds what is measured
[ "$top" = . ] && top=results || top=$top/results
dir=${METRICS_OUT:-$top}/${gpu//[^A-Za-z0-9._-]/_}
mkdir -p "$dir"
cp "$rows" "$dir/metrics.csv"
command="ncu --clock-control none -k regex:reduce_kernel -c 1 --metrics <metric column of metrics.csv> $build/stepNN --n N [--block 1024] --reps 1"
"$py" "$here/table.py" markdown "$dir/metrics.csv" "${version:-(unknown version)}" "$command" >"$dir/metrics.md"
echo "wrote $dir/metrics.csv and $dir/metrics.md"
echo
cat "$dir/metrics.md"
