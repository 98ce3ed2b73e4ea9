#!/usr/bin/env bash
# grade.sh BUILD STAGE...: `make grade`. Grades each GPU stage given (step01 .. ), strictly, on a
# GPU, by three checks, each a tool this repository already trusts:
#   correct     the stage's Criterion tests (build/test_stepNN), all of them run: a skip fails,
#               since it means a kernel was not checked; the whole program must end within
#               GRADE_TIMEOUT seconds (120), or the stage hangs;
#   race-free   compute-sanitizer's memcheck, racecheck and synccheck (tests/sanitize.sh, each
#               at two sizes that leave a partial block), every report counted (a wrong sum the
#               tools do not report is the tests' finding, not theirs);
#   fast enough the stage's benchmark (build/bench_stepNN: median of 30, L2 flushed) within
#               GRADE_SPEED times (1.5) the repository's own solution of that stage, measured in
#               the same run, at n = 2^26 (single-block stages: 2048, all they take).
# With GRADE_SRC=/abs/path/reduce.cu (one stage) the graded file is that one, built into
# BUILD/grade/build (GRADE_BUILD) with the same harness, tests and flags; the repository's stage
# is untouched and is still the speed reference. GRADE_OUT (BUILD/grade) is where the results go:
#   report.md     one row per stage: correct / race-free / fast enough, the numbers, what failed;
#   grade.xml     JUnit XML, one test case per stage and check, for CI systems and autograders;
#   result.tsv    the same, one line per stage, for scripts (tests/mutants.sh): stage, built or
#                 compile, correct, race-free, fast, hang (yes/no each), the failed tests and
#                 the tools that reported (space-separated, - for none);
#   stepNN.*      each check's own logs: Criterion's TAP and JUnit XML, the benchmark CSVs.
# Exit status: 0 every stage passed all three checks, 1 some check failed, 2 bad usage or the
# repository's own stage does not build, 3 no CUDA device or no compute-sanitizer.
set -u
build=${1:?usage: tests/grade.sh BUILD STAGE...}
shift
stages=("$@")
src=${GRADE_SRC:-}
out=${GRADE_OUT:-$build/grade}
limit=${GRADE_TIMEOUT:-120}
tolerance=${GRADE_SPEED:-1.5}
make_cmd=${MAKE:-make}
mkdir -p "$out"
rm -f "$out"/step*.* "$out"/report.md "$out"/grade.xml "$out"/result.tsv # no stale result counts

# ---- The repository's own programs: the speed reference, and the GPU probe. ----
ref_targets=()
for s in "${stages[@]}"; do ref_targets+=("$build/$s" "$build/bench_$s"); done
[ -n "$src" ] || for s in "${stages[@]}"; do ref_targets+=("$build/test_$s"); done
if ! $make_cmd -k --no-print-directory "${ref_targets[@]}" >"$out/reference.build.log" 2>&1; then
    echo "make grade: the repository's own stages did not build ($out/reference.build.log):" >&2
    grep -m 3 -iE 'error' "$out/reference.build.log" >&2
    exit 2
fi
probe=$(timeout 60 "$build/${stages[0]}" --n 1 --reps 1 2>&1)
if [ $? -eq 3 ]; then
    why=${probe#*: }
    echo "make grade: ${why%%;*}: grading runs the GPU tests, compute-sanitizer and a timing on" \
         "a CUDA GPU; nothing was graded." >&2
    exit 3
fi
gpu=$(grep -o 'device="[^"]*"' <<<"$probe" | head -n 1 | sed 's/device="//; s/"$//')

# ---- Where the graded programs are: the repository's, or the student's file built apart. ----
graded=$build
if [ -n "$src" ]; then
    graded=${GRADE_BUILD:-$out/build}
    if [ ! -f "$src" ]; then
        echo "make grade: SRC=$src is not a file." >&2
        exit 2
    fi
fi

log() { printf '%s\n' "$*" | tee -a "$out/grade.log"; }
xml_escape() { sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g; s/"/\&quot;/g' <<<"$1" | tr -d '\000-\010\013\014\016-\037'; }
median_ms() { awk -F, 'NR > 1 && $2 != "cub" && $2 != "copy" { print $5; exit }' "$1"; }

rows=() xml_cases=() failures=0 checks=0
# verdict STAGE CHECK OK TEXT DETAIL: one check's result, into the report's row and the XML.
verdict()
{
    local stage=$1 check=$2 ok=$3 text=$4 detail=${5:-}
    checks=$((checks + 1))
    if [ "$ok" = yes ]; then
        xml_cases+=("    <testcase classname=\"grade.$stage\" name=\"$check\"/>")
    else
        failures=$((failures + 1))
        xml_cases+=("    <testcase classname=\"grade.$stage\" name=\"$check\"><failure message=\"$(xml_escape "$text")\">$(xml_escape "$detail")</failure></testcase>")
    fi
}

details=()
for s in "${stages[@]}"; do
    file=$(ls "$s"_*/reduce.cu 2>/dev/null | head -n 1)
    [ -z "$src" ] || file=$src
    log "== $s: $file"
    correct=no race=no fast=no hang=no
    tests_txt="" race_txt="" fast_txt="" failed_tests="" failed_tools=""

    # -- Build. A student's file replaces the stage's in a separate build folder. --
    if [ -n "$src" ]; then
        rm -f "$graded/obj/stage_$s.o" "$graded/obj/depth_$s.o" "$graded/$s" "$graded/test_$s" \
              "$graded/bench_$s"
        if ! $make_cmd -k --no-print-directory BUILD="$graded" GRADE_STEP="$s" GRADE_SRC="$src" \
                "$graded/$s" "$graded/test_$s" "$graded/bench_$s" >"$out/$s.build.log" 2>&1; then
            first=$(grep -E 'error' "$out/$s.build.log" | grep -v '^make' | head -n 3)
            log "$s: did NOT compile ($out/$s.build.log):" "$first"
            rows+=("| $s | \`$file\` | no: did not compile | no: not run | no: not run | **FAIL** |")
            details+=("- $s did not compile: \`$(head -n 1 <<<"$first")\`")
            for c in correct race-free fast-enough; do
                verdict "$s" "$c" no "did not compile" "$first"
            done
            printf '%s\tcompile\tno\tno\tno\tno\t-\t-\n' "$s" >>"$out/result.tsv"
            continue
        fi
    fi

    # -- correct: every Criterion test of the stage runs and passes. --
    tap=$out/$s.tap
    timeout -k 10 "$limit" "$graded/test_$s" --tap="$tap" --xml="$out/$s.xml" >"$out/$s.tests.log" 2>&1
    rc=$?
    total=$(grep -cE '^(not )?ok ' "$tap" 2>/dev/null)
    skipped=$(grep -c '^ok .*# SKIP' "$tap" 2>/dev/null)
    failed=$(grep -c '^not ok ' "$tap" 2>/dev/null)
    failed_tests=$(sed -n 's/^not ok [0-9]* *- *\([^ ]*\).*/\1/p' "$tap" 2>/dev/null | sort -u | paste -sd ' ' -)
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        hang=yes
        tests_txt="no: the tests did not finish in $limit s (a hang); $((total - failed - skipped)) had passed"
    elif ! grep -q '^1\.\.' "$tap" 2>/dev/null; then
        tests_txt="no: the test program exited $rc without a report"
    elif [ "$failed" -gt 0 ]; then
        tests_txt="no: $failed of $total tests failed: ${failed_tests// /, }"
    elif [ "$skipped" -gt 0 ]; then
        tests_txt="no: $skipped of $total tests skipped (not allowed when grading): $(sed -n 's/^ok .*# SKIP //p' "$tap" | head -n 1)"
    elif [ $rc -ne 0 ]; then
        tests_txt="no: all $total tests passed, but the program exited $rc"
    else
        correct=yes tests_txt="yes: $total of $total tests"
    fi
    log "$s correct: $tests_txt"
    msg=$(grep -E 'Assertion failed: |^not ok .*(signal|exit|crash)' "$tap" 2>/dev/null | head -n 2 |
          sed -E 's/^ *(Assertion failed: )?//; s/^not ok - //' | paste -sd ';' - | cut -c 1-300)
    verdict "$s" correct "$correct" "$tests_txt" "$msg"
    [ "$correct" = yes ] || details+=("- $s, tests: $tests_txt${msg:+. First message: \`$msg\`} (TAP: \`$tap\`)")

    # -- race-free: compute-sanitizer's three tools, each report counted. --
    SANITIZE_TOOLS="memcheck racecheck synccheck" SANITIZE_BROKEN=0 SANITIZE_TIMEOUT=30 \
        SANITIZE_REPORTS_ONLY=1 \
        SANITIZE_PROBE="$build/$s" bash tests/sanitize.sh "$graded" "$s" >"$out/$s.sanitize.log" 2>&1
    rc=$?
    failed_tools=$(awk -v s="$s" '$1 == s && $3 == "FAILED:" { print $2 }' "$out/$s.sanitize.log" | paste -sd ' ' -)
    clean=$(awk -v s="$s" '$1 == s && $3 == "ok" { print $2 }' "$out/$s.sanitize.log" | paste -sd ' ' -)
    if [ $rc -eq 2 ]; then
        race_txt="no: $(tail -n 1 "$out/$s.sanitize.log")"
    elif [ -z "$failed_tools" ] && [ "$(wc -w <<<"$clean")" -eq 3 ]; then
        race=yes race_txt="yes: memcheck, racecheck, synccheck clean"
    else
        said=$(awk -v s="$s" '$1 == s && $3 == "FAILED:" {
                   printf "%s%s %s", (n++ ? ", " : ""), $2, (/timed out/ ? "timed out" : "reported") }' \
               "$out/$s.sanitize.log")
        race_txt="no: ${said:-$(tail -n 1 "$out/$s.sanitize.log")}"
    fi
    log "$s race-free: $race_txt"
    first=$(grep -m 1 'FAILED' "$out/$s.sanitize.log" | sed 's/^[^:]*FAILED: //' | cut -c 1-300)
    verdict "$s" race-free "$race" "$race_txt" "$first"
    [ "$race" = yes ] || details+=("- $s, compute-sanitizer: ${first:-$race_txt} (all of it: \`$out/$s.sanitize.log\`)")

    # -- fast enough: the graded benchmark against the repository's, one after the other. --
    n=$((1 << 26))
    "$build/$s" --help 2>/dev/null | grep -q 'one thread block' && n=2048
    if [ "$hang" = yes ]; then
        fast_txt="no: not timed (the tests hang)"
    else
        for who in graded ref; do
            bin=$graded/bench_$s && [ $who = ref ] && bin=$build/bench_$s
            timeout -k 10 120 "$bin" --csv "$out/$s.bench.$who.csv" --reps 30 --min-n $n --max-n $n \
                >>"$out/$s.bench.log" 2>&1
        done
        mine=$(median_ms "$out/$s.bench.graded.csv" 2>/dev/null)
        ref=$(median_ms "$out/$s.bench.ref.csv" 2>/dev/null)
        if [ -z "$mine" ] || [ -z "$ref" ]; then
            fast_txt="no: the benchmark gave no time ($out/$s.bench.log)"
        else
            ratio=$(awk -v a="$mine" -v b="$ref" 'BEGIN { printf "%.2f", a / b }')
            fast_txt="$mine ms vs $ref ms: ${ratio}x at n = $n (limit ${tolerance}x)"
            if awk -v a="$mine" -v b="$ref" -v t="$tolerance" 'BEGIN { exit !(a <= t * b) }'; then
                fast=yes fast_txt="yes: $fast_txt"
            else
                fast_txt="no: $fast_txt"
            fi
        fi
    fi
    log "$s fast enough: $fast_txt"
    verdict "$s" fast-enough "$fast" "$fast_txt"
    [ "$fast" = yes ] || details+=("- $s, speed: $fast_txt (\`$out/$s.bench.log\`)")

    grade=FAIL
    [ "$correct$race$fast" = yesyesyes ] && grade=PASS
    rows+=("| $s | \`$file\` | $tests_txt | $race_txt | $fast_txt | **$grade** |")
    printf '%s\tbuilt\t%s\t%s\t%s\t%s\t%s\t%s\n' "$s" "$correct" "$race" "$fast" "$hang" \
        "${failed_tests:--}" "${failed_tools:--}" >>"$out/result.tsv"
done

# ---- The report, and the JUnit XML. ----
{
    echo "# Grade report"
    echo
    echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $gpu, $(if [ -n "$src" ]; then echo "student file \`$src\`"; else echo "the repository's own stages"; fi), element type ${TYPE:-int}."
    echo "Checks: **correct**: every Criterion test of the stage, none skipped, within $limit s;"
    echo "**race-free**: compute-sanitizer memcheck, racecheck and synccheck at two sizes, no report;"
    echo "**fast enough**: median time within ${tolerance}x of the repository's own stage, measured in this run."
    echo
    echo "| stage | file | correct | race-free | fast enough | grade |"
    echo "|---|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
    if [ ${#details[@]} -gt 0 ]; then
        echo
        echo "What failed:"
        printf '%s\n' "${details[@]}"
    fi
} >"$out/report.md"
{
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    echo "<testsuites name=\"make grade\" tests=\"$checks\" failures=\"$failures\">"
    echo "  <testsuite name=\"grade\" tests=\"$checks\" failures=\"$failures\" errors=\"0\">"
    printf '%s\n' "${xml_cases[@]}"
    echo "  </testsuite>"
    echo "</testsuites>"
} >"$out/grade.xml"
echo "== grade report ($out/report.md; JUnit XML: $out/grade.xml)"
cat "$out/report.md"
echo "grade: $((checks - failures)) of $checks checks passed"
[ "$failures" -eq 0 ]
