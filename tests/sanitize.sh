#!/usr/bin/env bash
# sanitize.sh BUILD STAGE...: NVIDIA compute-sanitizer's four tools on every GPU stage given, then
# proof that they catch the two deliberately wrong kernels of tests/broken/ (make sanitize):
#   memcheck   bad and misaligned accesses, failed CUDA calls (no --leak-check full: the harness
#              never frees its L2-flush buffer, a "leak" in every stage)
#   racecheck  shared-memory hazards, warp-synchronous ones included: its warnings count, since a
#              warp-level hazard is a real race since Volta
#   synccheck  barriers not reached by every thread that should reach them
#   initcheck  reads of device memory that nothing wrote; of shared memory too where the tool has
#              --initcheck-address-space (newer than 2025.3.1)
# Each stage runs at two sizes with a partial last block, --reps 1 (the warm-up and the L2 flush
# kernel are checked too): single-block stages (02-04) at n = 2047 and 33, the others at 100003
# and 1000. A stage passes a tool when compute-sanitizer exits 0 (a wrong sum, exit status 1,
# passes through) and its summary counts nothing; a broken kernel passes when the tool reports it.
# Prints a line per check, then "sanitize: N passed, N failed" (the reports: BUILD/sanitize/).
# Exit status: 0 all passed, 1 some check failed, 2 no compute-sanitizer or no CUDA device.
# Environment: COMPUTE_SANITIZER (its path); SANITIZE_TIMEOUT (seconds a run, 600: a stage that
# times out is not run at the next size); SANITIZE_TOOLS; SANITIZE_BROKEN=0 skips tests/broken/;
# SANITIZE_REPORTS_ONLY=1 passes a run whose only fault is a wrong sum (make grade's tests judge
# sums); SANITIZE_PROBE=PROGRAM says whether there is a GPU (default: the first stage; none: no
# probe);
# SANITIZE_LOGS=DIR keeps the reports there (make grade: each submission's own folder).
set -u
build=${1:?usage: tests/sanitize.sh BUILD STAGE...}
shift
logs=${SANITIZE_LOGS:-$build/sanitize}
limit=${SANITIZE_TIMEOUT:-600}

# compute-sanitizer: COMPUTE_SANITIZER, on PATH, next to nvcc, or where the toolkit usually is.
cs=${COMPUTE_SANITIZER:-}
if [ -z "$cs" ]; then
    bin=$(dirname "$(readlink -f "$(command -v "${NVCC:-nvcc}" || echo /usr/local/cuda/bin/nvcc)")")
    for c in "$(command -v compute-sanitizer)" "$bin/compute-sanitizer" \
        "$bin/../compute-sanitizer/compute-sanitizer" /usr/local/cuda/bin/compute-sanitizer \
        /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
        [ -x "$c" ] && cs=$c && break
    done
fi
if [ ! -x "$cs" ]; then
    echo "compute-sanitizer not found: it ships with the CUDA toolkit, needs a GPU" \
         "(set COMPUTE_SANITIZER=/path/to/compute-sanitizer if it is installed elsewhere)." >&2
    exit 2
fi

# A GPU? The stage says so itself, in one sentence, before we spend minutes on nothing
# (SANITIZE_PROBE=none: the caller knows, as make grade does, and saves a CUDA context a run).
probe=""
if [ "${SANITIZE_PROBE:-}" != none ]; then
    probe=$(timeout "$limit" "${SANITIZE_PROBE:-$build/$1}" --n 1 --reps 1 2>&1)
    if [ $? -eq 3 ] && grep -q 'no CUDA device' <<<"$probe"; then
        why=${probe#*: }
        echo "sanitize: ${why%%;*}: compute-sanitizer needs a CUDA device; nothing was checked." >&2
        exit 2
    fi
fi
mkdir -p "$logs"
rm -f "$logs"/*.log
initcheck=() # shared memory for initcheck is newer than the tool itself
"$cs" --help 2>&1 | grep -q initcheck-address-space && initcheck=(--initcheck-address-space all)
version=$("$cs" --version 2>&1 | grep -Eo '[0-9]{4}\.[0-9]+\.[0-9]+' | head -n 1)
device=$(grep -o 'device="[^"]*"' <<<"$probe" | head -n 1 | sed 's/device=//')
echo "sanitize: $cs ${version:+(version $version) }${device:+on $device}; reports in $logs/"

# check TOOL LOG CMD...: runs CMD under compute-sanitizer's TOOL, the whole report into LOG; sets
# rc (compute-sanitizer's exit status, 124 past the time limit) and count (how many problems the
# report's summary counts, "ERROR SUMMARY: 3 errors", "RACECHECK SUMMARY: 5 hazards displayed
# (0 errors, 5 warnings)"; empty without a summary: the tool did not finish).
check() {
    local tool=$1 log=$2 flags=(--tool "$1" --error-exitcode 1)
    shift 2
    case $tool in
    racecheck) flags+=(--racecheck-detect-level warn) ;; # the default, said out loud: WARNING up
    initcheck) flags+=("${initcheck[@]}") ;;
    esac
    echo "\$ $cs ${flags[*]} $*" >"$log"
    timeout "$limit" "$cs" "${flags[@]}" "$@" >>"$log" 2>&1
    rc=$?
    count=$(grep -Eo '(ERROR|RACECHECK) SUMMARY: [0-9]+' "$log" | grep -Eo '[0-9]+$' |
        awk '{ s += $1; n++ } END { if (n) print s }')
}

# first_report LOG: the first thing the tool reported, on one line (with its source line when the
# report names one).
first_report() {
    sed -n 's/^========= *//p' "$1" |
        grep -E -m 1 -A 2 'Race reported|hazard detected|Barrier error|Invalid |Uninitialized|'\
'Program hit|Leaked|[Ee]rror' |
        grep -E -v '^(by thread|Saved host backtrace|Address )' | head -n 2 | tr -s ' \n' ' ' |
        cut -c 1-240
}

passed=0 failed=0
row() { # row NAME TOOL TEXT...: one line of the report; counted as failed when TEXT is FAILED...
    [[ $3 == FAILED* ]] && failed=$((failed + 1)) || passed=$((passed + 1))
    printf '%-28s %-10s %s\n' "$1" "$2" "${*:3}"
}

# Every GPU stage must come out clean under every tool.
for stage in "$@"; do
    sizes=(100003 1000)
    if timeout "$limit" "$build/$stage" --stage-info 2>/dev/null | grep -q ' single_block=1 '; then
        sizes=(2047 33) # one block of 1024 threads takes n <= 2048
    fi
    for tool in ${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}; do
        if [ ! -x "$build/$stage" ]; then
            row "$stage" "$tool" "FAILED: $build/$stage is not built (make sanitize builds it)"
            continue
        fi
        problems=""
        for n in "${sizes[@]}"; do
            log=$logs/$stage.$tool.n$n.log
            check "$tool" "$log" "$build/$stage" --n "$n" --reps 1
            if [ $rc -eq 124 ]; then
                problems+="n=$n: timed out after ${limit} s ($log); "
                break # it would hang at the next size too
            elif [ -z "$count" ]; then
                problems+="n=$n: exit status $rc and no summary from the tool ($log); "
            elif [ "$count" -eq 0 ] && [ $rc -eq 1 ] && [ -n "${SANITIZE_REPORTS_ONLY:-}" ]; then
                continue # a wrong sum and nothing reported: the tests' finding, not the tool's
            elif [ "$count" -ne 0 ] || [ $rc -ne 0 ]; then
                problems+="n=$n: exit status $rc, $count reported: $(first_report "$log") ($log); "
            fi
        done
        if [ -z "$problems" ]; then
            row "$stage" "$tool" "ok (n = ${sizes[0]} and ${sizes[1]})"
        else
            row "$stage" "$tool" "FAILED: ${problems%; }"
        fi
    done
done

# The tools must catch the bugs the lessons warn about: each broken kernel under the tool that must
# report it.
for broken in volatile_warp_unroll:racecheck barrier_in_branch:synccheck; do
    [ "${SANITIZE_BROKEN:-1}" != 0 ] || break
    name=${broken%:*} tool=${broken#*:}
    bin=$build/broken/$name log=$logs/broken.$name.$tool.log
    if [ ! -x "$bin" ]; then
        row "broken/$name" "$tool" "FAILED: $bin is not built (make sanitize builds it)"
        continue
    fi
    check "$tool" "$log" "$bin"
    said=$(grep -m 1 "^$name:" "$log") # the program's own line: did its sum come out right?
    if [ "${count:-0}" -gt 0 ]; then
        row "broken/$name" "$tool" \
            "caught, as it must be ($count reported, exit status $rc): $(first_report "$log")"
    elif [ $rc -eq 124 ]; then
        row "broken/$name" "$tool" "FAILED: timed out after ${limit} s without a report ($log)"
    else
        row "broken/$name" "$tool" "FAILED: NOT caught (exit status $rc, summary count" \
            "${count:-missing}) ${said:+$said }($log)"
    fi
done

echo "sanitize: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
