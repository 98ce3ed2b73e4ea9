#!/usr/bin/env bash
# Builds and runs each Criterion test program given, one at a time: a program that does not compile
# is reported and the others still run. Keeps under BUILD/test-results each program's compiler
# output (NAME.build.log), TAP report (NAME.tap, which this script reads) and JUnit XML (NAME.xml,
# for CI systems). Ends with one row per program, then one line for all of them:
# "tests: N passed, N failed, N skipped", plus why tests skipped.
# Usage: MAKE=make tests/run.sh BUILD TEST...      Exit status: 0 when all compiled and none failed.
set -u
build=$1
shift
results=$build/test-results
mkdir -p "$results"
passed=0 failed=0 skipped=0 broken=0 rows=() taps=()
for t in "$@"; do
    name=$(basename "$t")
    row=${name#test_}                                 # step04, harness, all_stages, hostile
    rm -f "$results/$name".*                          # an earlier run's results never count
    # A stage's row builds its test program and its program build/stepNN (test_all_stages runs it).
    targets=("$t") && [[ $row == step* ]] && targets+=("$build/$row")
    echo "== $name"
    if ! ${MAKE:-make} -k --no-print-directory "${targets[@]}" > "$results/$name.build.log" 2>&1; then
        rm -f "${targets[@]}"                         # no stale program runs in its place
        first=$(grep -iE 'error|undefined reference' "$results/$name.build.log" | grep -v '^make' |
                head -n 4)
        [ -n "$first" ] || first=$(tail -n 4 "$results/$name.build.log")
        echo "$name: did NOT compile (all of it: $results/$name.build.log):"
        echo "$first" | sed 's/^/    /'
        rows+=("$(printf '%-11s did NOT compile: %s' "$row" "$(echo "$first" | head -n 1)")")
        broken=$((broken + 1))
        continue
    fi
    tap=$results/$name.tap
    # The sum tests name each case on stderr before running it (`case: n = ...`, for make grade
    # to say where a crash or a hang happened): kept in NAME.cases, out of the terminal.
    "$t" --tap="$tap" --xml="$results/$name.xml" 2> >(tee >(grep '^case: ' >"$results/$name.cases") |
        grep -v '^case: ' >&2)
    status=$?
    if ! grep -qs '^1\.\.' "$tap"; then
        echo "$name: exited $status without a report: counted as one failure"
        rows+=("$(printf '%-11s compiled, exited %s without a report: counted as 1 failed' "$row" $status)")
        failed=$((failed + 1))
        continue
    fi
    taps+=("$tap")
    read -r p f s < <(awk '/^not ok /{ f++ } /^ok .*# SKIP/{ s++ } /^ok /{ p++ }
                           END { print p - s, f + 0, s + 0 }' "$tap")
    if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "$name: exited $status with no failing test: counted as one failure"
        f=1
    fi
    passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
    row=$(printf '%-11s compiled, %3d run: %3d passed, %d failed, %2d skipped' "$row" \
          $((p + f + s)) $p $f $s)
    # Why they skipped: "N: reason; N: reason", or only the reason when there is one.
    if [ "$s" -gt 0 ]; then
        row+=": $(sed -n 's/^ok .*# SKIP //p' "$tap" | sort | uniq -c | awk '{ n = $1
            sub(/^ *[0-9]+ (GPU test skipped: )?/, ""); sub(/\.$/, ""); why[NR] = n ": " $0 }
            END { if (NR == 1) sub(/^[0-9]+: /, "", why[1])
                  for (i = 1; i <= NR; i++) printf "%s%s", (i > 1 ? "; " : ""), why[i] }')"
        if grep -q '# SKIP GPU test skipped' "$tap"; then
            [[ $name == test_step* ]] && row+=" -- its kernel was NOT checked" ||
                row+=" -- its GPU tests did NOT run"
        fi
    fi
    # In the student handout (make handout) stage NN's file is stage NN-1's working code with a
    # `TODO (stage NN)` comment at each change to make: its sums are right, so its tests pass on a
    # GPU. While such a comment is left the stage is not written: one failure, whatever they say.
    if [[ $name == test_step* ]]; then
        nn=${name#test_step} src=$(ls "step$nn"_*/reduce.c* 2>/dev/null | head -n 1)
        todo=$([ -n "$src" ] && grep -c "TODO (stage $nn)" "$src")
        if [ "${todo:-0}" -gt 0 ]; then
            echo "$name: $src still has $todo TODO (stage $nn) comment(s): counted as one failure"
            row+="; NOT written yet: $todo TODO (stage $nn) comment(s) left in $src"
            failed=$((failed + 1))
        fi
    fi
    rows+=("$row")
done
echo "== report (TAP, JUnit XML and compiler output: $results/)"
# Which device the GPU tests ran on: the CPU model (MODEL=cpu) checks sums, memory, races and
# barriers, not speed.
if grep -qs 'MODEL=cpu' "$build/obj/flavor"; then
    echo "the GPU stages ran on the CPU model (model/, no GPU): their sums, memory accesses" \
         "(AddressSanitizer), races (ThreadSanitizer) and barriers were checked, not their speed"
fi
printf '%s\n' "${rows[@]}"
[ ${#taps[@]} -eq 0 ] || sed -n 's/^ok .*# SKIP //p' "${taps[@]}" | sort | uniq -c | sort -n |
    sed -E 's/^ *([0-9]+) /skipped \1: /'
[ "$broken" -eq 0 ] || echo "$broken test program(s) did NOT compile: their tests did not run"
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$broken" -eq 0 ]
