#!/usr/bin/env bash
# sanitize.sh BUILD STAGE...: NVIDIA compute-sanitizer's four tools on every GPU stage given, then
# proof that the tools catch the two deliberately wrong kernels of tests/broken/ (make sanitize).
#
#   memcheck   out-of-bounds and misaligned accesses, failed CUDA calls
#   racecheck  shared-memory hazards between threads, warp-synchronous ones included
#   synccheck  barriers not reached by every thread that should reach them
#   initcheck  reads of device memory that nothing wrote: global memory, and shared memory too
#              where the tool has --initcheck-address-space (newer than 2025.3.1)
#
# memcheck runs without --leak-check full: the harness keeps its L2-flush buffer (2 x the L2) for
# the whole run and never frees it, so every stage would report that one "leak".
#
# Each stage runs at two sizes that give a partial last block: single-block stages (02-04) at
# n = 2047 and 33 (one block of 1024 threads, padded by the harness), multi-block stages (01,
# 05-08) at n = 100003 (many blocks) and 1000 (two blocks or one). --reps 1 keeps it short; the
# harness still runs its warm-up and the L2 flush kernel, so those are checked too.
# A stage passes a tool when compute-sanitizer exits 0 (--error-exitcode 1 makes any reported error
# exit 1; the stage's own status, 1 for a wrong sum, passes through) and its summary counts
# nothing: racecheck warnings count, since a warp-level hazard is a real race since Volta.
# A broken kernel passes when the tool reports it: the check proves the tool is looking.
#
# Prints one line per stage and tool (and per broken kernel), then
# "sanitize: N passed, N failed" (34 checks: 8 stages x 4 tools, 2 broken kernels). Each run's
# full report stays in BUILD/sanitize/. It takes about half a minute on an H200.
# Exit status: 0 all passed, 1 some check failed, 2 no compute-sanitizer or no CUDA device.
# COMPUTE_SANITIZER=/path/to/compute-sanitizer picks the binary; SANITIZE_TIMEOUT (seconds, 600)
# bounds each run (a stage that times out at one size is not run at the next); SANITIZE_TOOLS
# picks the tools (make grade: "memcheck racecheck synccheck"), SANITIZE_BROKEN=0 skips
# tests/broken/, SANITIZE_REPORTS_ONLY=1 passes a run whose only fault is a wrong sum (exit status
# 1 with nothing reported: make grade's tests judge the sum), SANITIZE_PROBE=PROGRAM asks PROGRAM whether there is a GPU (default: the first
# stage), SANITIZE_LOGS=DIR keeps the reports there (make grade: each submission's own folder).
set -u
build=${1:?usage: tests/sanitize.sh BUILD STAGE...}
shift
stages=("$@") # the GPU stages, from the Makefile
logs=${SANITIZE_LOGS:-$build/sanitize}
limit=${SANITIZE_TIMEOUT:-600}

# ---- Where is compute-sanitizer? On PATH, next to nvcc, or in the usual toolkit places. ----
find_sanitizer()
{
    if [ -n "${COMPUTE_SANITIZER:-}" ]; then
        [ -x "$COMPUTE_SANITIZER" ] && echo "$COMPUTE_SANITIZER"
        return
    fi
    command -v compute-sanitizer && return
    local candidates=() nvcc
    if nvcc=$(command -v "${NVCC:-nvcc}"); then
        local bin
        bin=$(dirname "$(readlink -f "$nvcc")")
        candidates+=("$bin/compute-sanitizer" "$bin/../compute-sanitizer/compute-sanitizer")
    fi
    candidates+=(/usr/local/cuda/bin/compute-sanitizer
                 /usr/local/cuda/compute-sanitizer/compute-sanitizer)
    for c in "${candidates[@]}"; do
        if [ -x "$c" ]; then
            echo "$c"
            return
        fi
    done
}
cs=$(find_sanitizer)
if [ -z "$cs" ]; then
    echo "compute-sanitizer not found: it ships with the CUDA toolkit, needs a GPU" \
         "(set COMPUTE_SANITIZER=/path/to/compute-sanitizer if it is installed elsewhere)." >&2
    exit 2
fi

# ---- A GPU? The stage says so itself, in one sentence, before we spend minutes on nothing. ----
timeout_cmd=()
command -v timeout >/dev/null && timeout_cmd=(timeout "$limit")
probe=$("${timeout_cmd[@]}" "${SANITIZE_PROBE:-$build/${stages[0]}}" --n 1 --reps 1 2>&1)
if [ $? -eq 3 ] && grep -q 'no CUDA device' <<<"$probe"; then
    why=${probe#*: }
    echo "sanitize: ${why%%;*}: compute-sanitizer needs a CUDA device; nothing was checked." >&2
    exit 2
fi

mkdir -p "$logs"
rm -f "$logs"/*.log

# Options the installed version has: shared memory for initcheck is newer than the tool itself.
initcheck_flags=()
if "$cs" --help 2>&1 | grep -q -- '--initcheck-address-space'; then
    initcheck_flags=(--initcheck-address-space all)
fi
version=$("$cs" --version 2>&1 | grep -Eo '[0-9]{4}\.[0-9]+\.[0-9]+' | head -n 1)
echo "sanitize: $cs ${version:+(version $version) }on $(grep -o 'device="[^"]*"' <<<"$probe" | \
    head -n 1 | sed 's/device=//'); reports in $logs/"

# sanitize TOOL LOG CMD...: runs CMD under compute-sanitizer's TOOL, the whole report into LOG.
# Returns compute-sanitizer's exit status (124 when the run passed the time limit).
sanitize()
{
    local tool=$1 log=$2
    shift 2
    local flags=(--tool "$tool" --error-exitcode 1)
    case $tool in
    racecheck) flags+=(--racecheck-detect-level warn) ;; # the default, said out loud: WARNING and up
    initcheck) flags+=("${initcheck_flags[@]}") ;;
    esac
    echo "\$ $cs ${flags[*]} $*" >"$log"
    "${timeout_cmd[@]}" "$cs" "${flags[@]}" "$@" >>"$log" 2>&1
}

# reported LOG: how many problems the report's summary counts ("ERROR SUMMARY: 3 errors",
# "RACECHECK SUMMARY: 5 hazards displayed (0 errors, 5 warnings)"), or nothing when it has no
# summary (the tool did not finish).
reported()
{
    grep -Eo '(ERROR|RACECHECK) SUMMARY: [0-9]+' "$1" | grep -Eo '[0-9]+$' |
        awk '{ s += $1; n++ } END { if (n) print s }'
}

# first_report LOG: the first thing the tool reported, on one line (with its source line when the
# report names one), for the summary below.
first_report()
{
    sed -n 's/^========= *//p' "$1" |
        grep -E -m 1 -A 2 'Race reported|hazard detected|Barrier error|Invalid |Uninitialized|Program hit|Leaked|[Ee]rror' |
        grep -E -v '^(by thread|Saved host backtrace|Address )' | head -n 2 | tr -s ' \n' ' ' |
        cut -c 1-240
}

passed=0 failed=0
pass() { passed=$((passed + 1)); printf '%-28s %-10s %s\n' "$1" "$2" "$3"; }
fail() { failed=$((failed + 1)); printf '%-28s %-10s %s\n' "$1" "$2" "$3"; }

# ---- Every GPU stage must come out clean under every tool. ----
for stage in "${stages[@]}"; do
    sizes=(100003 1000)
    if "${timeout_cmd[@]}" "$build/$stage" --stage-info 2>/dev/null | grep -q ' single_block=1 '; then
        sizes=(2047 33) # one block of 1024 threads takes n <= 2048
    fi
    for tool in ${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}; do
        if [ ! -x "$build/$stage" ]; then
            fail "$stage" "$tool" "FAILED: $build/$stage is not built (make sanitize builds it)"
            continue
        fi
        problems=""
        for n in "${sizes[@]}"; do
            log=$logs/$stage.$tool.n$n.log
            sanitize "$tool" "$log" "$build/$stage" --n "$n" --reps 1
            rc=$?
            count=$(reported "$log")
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
            pass "$stage" "$tool" "ok (n = ${sizes[0]} and ${sizes[1]})"
        else
            fail "$stage" "$tool" "FAILED: ${problems%; }"
        fi
    done
done

# ---- The tools must catch the bugs the lessons warn about. ----
# expect_caught NAME TOOL: runs BUILD/broken/NAME under TOOL; passes when the tool reports it.
expect_caught()
{
    local name=$1 tool=$2 bin=$build/broken/$1 log=$logs/broken.$1.$2.log
    if [ ! -x "$bin" ]; then
        fail "broken/$name" "$tool" "FAILED: $bin is not built (make sanitize builds it)"
        return
    fi
    sanitize "$tool" "$log" "$bin"
    local rc=$? count
    count=$(reported "$log")
    if [ "${count:-0}" -gt 0 ]; then
        pass "broken/$name" "$tool" "caught, as it must be ($count reported, exit status $rc): $(first_report "$log")"
    elif [ $rc -eq 124 ]; then
        fail "broken/$name" "$tool" "FAILED: timed out after ${limit} s without a report ($log)"
    else
        local said
        said=$(grep -m 1 "^$name:" "$log") # the program's own line: did its sum come out right?
        fail "broken/$name" "$tool" "FAILED: NOT caught (exit status $rc, summary count ${count:-missing}) ${said:+$said }($log)"
    fi
}
if [ "${SANITIZE_BROKEN:-1}" != 0 ]; then
    expect_caught volatile_warp_unroll racecheck
    expect_caught barrier_in_branch synccheck
fi

echo "sanitize: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
