#!/usr/bin/env bash
# model/sanitize.sh BUILD STAGE...: make sanitize on the CPU model (MODEL=cpu, no GPU needed): every
# stage given under the model's checks, then proof that they catch the two deliberately wrong
# kernels of tests/broken/. What stands for compute-sanitizer's tools (model/model.cc):
#   memcheck   BUILD/stepNN, built with AddressSanitizer (the model's default): a read or write
#              outside an allocation, a shared array or a stack
#   racecheck  BUILD/thread/stepNN, built with ThreadSanitizer, in three schedules of the threads
#              (CUDA_MODEL_SEED=1..3): two threads touching one address, one writing, with nothing
#              that orders them, in shared or global memory
#   synccheck  both builds: a barrier not every thread of the block reaches, a warp-synchronous
#              call not every lane of its mask makes (always on in the model)
#   initcheck  not modelled: shared memory starts as 0xff bytes in every block, so a read of a slot
#              nothing wrote gives a wrong sum, which the tests see, but no report
# Sizes as tests/sanitize.sh's: single-block stages at n = 2047 and 33, the others at 100003 and
# 1000, each with a partial last block. A stage passes a check when its program exits 0 with
# result=ok and the model reports nothing; a broken kernel passes when the model reports it.
# Prints a line per check, then "sanitize: N passed, N failed" (the reports: BUILD/sanitize/).
set -u
build=${1:?usage: model/sanitize.sh BUILD STAGE...}
shift
logs=$build/sanitize
mkdir -p "$logs"
rm -f "$logs"/*.log
passed=0 failed=0
echo "sanitize: the CPU model's checks (model/model.cc); reports in $logs/"

# run TOOL NAME EXPECT CMD...: runs CMD (120 s at most), its output into a log; EXPECT is "clean"
# or the text the report must hold.
run() {
    local tool=$1 name=$2 expect=$3 ok=0 what log
    log="$logs/$1-$2.log"
    shift 3
    timeout 120 "$@" >"$log" 2>&1
    local rc=$?
    if [ "$expect" = clean ]; then
        [ $rc -eq 0 ] && grep -q 'result=ok' "$log" && ! grep -q '^CPU model:' "$log" && ok=1
        what=$(grep -m1 -E '^(SUMMARY|CPU model):' "$log" || tail -n 1 "$log")
    else
        grep -q "$expect" "$log" && ok=1
        what=$(grep -m1 -E '^(SUMMARY|CPU model):' "$log" || echo "no report (exit status $rc)")
    fi
    if [ $ok -eq 1 ]; then
        passed=$((passed + 1))
        [ "$expect" = clean ] && what="" || what="caught: ${what:0:150}"
        printf 'PASS  %-9s %-34s %s\n' "$tool" "$name" "$what"
    else
        failed=$((failed + 1))
        printf 'FAIL  %-9s %-34s %s (%s)\n' "$tool" "$name" "${what:0:200}" "$log"
    fi
}

for s in "$@"; do
    info=$("$build/$s" --stage-info)
    sizes="100003 1000"
    grep -q 'single_block=1' <<<"$info" && sizes="2047 33"
    for n in $sizes; do
        block=$( ( [ "$n" = 33 ] || [ "$n" = 1000 ] ) && echo 32 || echo "")
        grep -q 'fixed_block=0' <<<"$info" || block=""
        args=(--n "$n" ${block:+--block "$block"})
        run memcheck "$s-n$n" clean "$build/$s" "${args[@]}"
        for seed in 1 2 3; do
            run racecheck "$s-n$n-seed$seed" clean \
                env CUDA_MODEL_SEED=$seed "$build/thread/$s" "${args[@]}"
        done
    done
done
# The wrong kernels: each must be reported for its own defect.
run racecheck broken-volatile_warp_unroll 'ThreadSanitizer: data race' \
    "$build/thread/broken/volatile_warp_unroll"
run synccheck broken-barrier_in_branch 'cannot go on' "$build/broken/barrier_in_branch"
echo "sanitize: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
