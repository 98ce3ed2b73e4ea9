#!/usr/bin/env bash
# mutants.sh BUILD [NAME...]: `make mutants`, the proof that `make grade` rejects known-wrong
# kernels, each for its own reason. Every tests/mutants/NAME.patch is one stage with one mistake
# students make (its opening lines say which, and why it is wrong); its line "Caught by: WHY"
# names the check that must reject it:
#   tests      a Criterion test gives a wrong sum
#   huge       a wrong sum only past 2^32 elements: n_above_2_to_the_32 is the only test failing
#   timeout    the tests do not finish (a hang), caught by grade's time limit
#   memcheck, racecheck, synccheck   that compute-sanitizer tool reports it
#   speed      right and race-free, but slower than GRADE_SPEED times the repository's stage
#   nothing    a known blind spot: no check can see it (stage 8's missing fence), and the mutant
#              passes this test when the grade ACCEPTS it; if a check ever rejects it, its patch's
#              note is out of date and the test fails
# Each mutant is written to BUILD/mutants/NAME.cu (bench/variant.sh) and graded as its stage with
# SRC= (tests/grade.sh, results in BUILD/mutants/NAME/). A mutant passes this test when the grade
# rejects it and its reason is among what rejected it; other checks may reject it too, and the
# table says which. Writes BUILD/mutants/report.md.
# MUTANTS_BUILD_ONLY=1 only applies each patch and compiles the kernel (CI, without a GPU).
# Exit status: 0 every mutant rejected for its reason, 1 some was not, 3 no CUDA device.
set -u
build=${1:?usage: tests/mutants.sh BUILD [NAME...]}
shift
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
    for p in tests/mutants/*.patch; do names+=("$(basename "$p" .patch)"); done
fi
dir=$build/mutants
mkdir -p "$dir"
rows=() bad=0
for name in "${names[@]}"; do
    patch_file=tests/mutants/$name.patch
    if [ ! -f "$patch_file" ]; then
        echo "make mutants: no mutant $name ($patch_file)." >&2
        exit 2
    fi
    base=$(sed -n '/^--- /{s/^--- //p;q}' "$patch_file")
    stage=${base%%_*}
    want=$(sed -n 's/^Caught by: *//p' "$patch_file")
    bash bench/variant.sh "$patch_file" "$dir/$name.cu" || exit 2
    if [ -n "${MUTANTS_BUILD_ONLY:-}" ]; then
        rm -f "$dir/build/obj/stage_$stage.o"
        ${MAKE:-make} --no-print-directory -s BUILD="$dir/build" GRADE_STEP="$stage" \
            GRADE_SRC="$(realpath "$dir/$name.cu")" "$dir/build/obj/stage_$stage.o" || exit 1
        echo "mutant $name: applies to $base and compiles"
        continue
    fi
    echo "== mutant $name: $stage, must be caught by $want"
    GRADE_SRC=$(realpath "$dir/$name.cu") GRADE_OUT=$dir/$name GRADE_BUILD=$dir/build bash tests/grade.sh "$build" "$stage" \
        >"$dir/$name.log" 2>&1
    rc=$?
    if [ $rc -eq 3 ] || [ $rc -eq 2 ]; then
        tail -n 3 "$dir/$name.log" >&2
        exit $rc
    fi
    # What rejected it, from grade's result.tsv: stage, built, correct, race-free, fast, hang,
    # failed tests, failed tools.
    IFS=$'\t' read -r _ built correct race fast hang tests tools <"$dir/$name/result.tsv"
    [ "$tests" != - ] || tests=""
    [ "$tools" != - ] || tools=""
    seen=()
    [ "$built" = compile ] && seen+=(compile)
    [ "$hang" = yes ] && seen+=(timeout)
    if [ "$correct" = no ] && [ "$hang" = no ]; then
        if [ "$tests" = stage::n_above_2_to_the_32 ]; then seen+=(huge); else seen+=(tests); fi
    fi
    for t in $tools; do seen+=("$t"); done
    [ "$fast" = no ] && [ "$hang" = no ] && seen+=(speed)
    verdict=ok
    if [ "$want" = nothing ]; then
        [ $rc -eq 0 ] || verdict="rejected by ${seen[*]}: its patch says no check sees it"
    elif [ $rc -eq 0 ]; then
        verdict="NOT rejected"
    elif [[ " ${seen[*]} " != *" $want "* ]]; then
        verdict="rejected, but not by $want"
    fi
    [ "$verdict" = ok ] || bad=$((bad + 1))
    row="| $name | $stage | $want | ${seen[*]:-nothing: accepted} | ${tests:--} | $verdict |"
    echo "$row"
    rows+=("$row")
done
{
    echo "| mutant | stage | must be caught by | rejected by | failing tests | verdict |"
    echo "|---|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
} >"$dir/report.md"
[ -z "${MUTANTS_BUILD_ONLY:-}" ] || exit 0
echo "== mutants ($dir/report.md; each grade in $dir/NAME/)"
cat "$dir/report.md"
echo "mutants: $((${#names[@]} - bad)) of ${#names[@]} as their patch says (rejected for their own" \
    "reason, or accepted where it says caught by nothing)"
[ "$bad" -eq 0 ]
