#!/usr/bin/env bash
# Runs each Criterion test program given, keeps its TAP report under BUILD/test-results, and ends
# with one line for all of them: "tests: N passed, N failed, N skipped", plus why tests skipped.
# Usage: tests/run.sh BUILD TEST...      Exit status: 0 when none failed.
set -u
build=$1
shift
results=$build/test-results
mkdir -p "$results"
passed=0 failed=0 skipped=0
declare -A reasons=()
for t in "$@"; do
    name=$(basename "$t")
    tap=$results/$name.tap
    rm -f "$tap"
    echo "== $name"
    "$t" --tap="$tap"
    status=$?
    if [ ! -s "$tap" ] || ! grep -q '^1\.\.' "$tap"; then
        echo "$name: exited $status without a report: counted as one failure"
        failed=$((failed + 1))
        continue
    fi
    s=$(grep -c '^ok .*# SKIP' "$tap")
    p=$(grep -c '^ok ' "$tap")
    f=$(grep -c '^not ok ' "$tap")
    passed=$((passed + p - s)) failed=$((failed + f)) skipped=$((skipped + s))
    if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "$name: exited $status with no failing test: counted as one failure"
        failed=$((failed + 1))
    fi
    while IFS= read -r why; do reasons[$why]=$((${reasons[$why]:-0} + 1)); done \
        < <(sed -n 's/^ok .*# SKIP //p' "$tap")
done
for why in "${!reasons[@]}"; do
    echo "skipped ${reasons[$why]}: $why"
done
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
