#!/usr/bin/env bash
# check_new_stage.sh: proves that a stage is its folder. In a copy of this repository under
# build/new-stage/, it adds a scratch stage 10 the way docs/teaching.md's "Adding a stage" says: a
# copy of stage 7's folder whose warp_reduce folds with __shfl_xor_sync (a butterfly: every lane
# ends with the warp's sum) instead of __shfl_down_sync, following stage 8 (stage 9, between them,
# is a program of its own), with a stage.ini of its own and one mutant. Then, with no other edit,
# each tool must take it as a stage: tools/stages.py and its check, make diff STEP=10, make
# handout, make test STEP=10 (on the CPU model without a GPU), its lesson on the model's counters
# (tests/lessons.py), the grade's and the mutants' build-only path, the speed-up table and its
# check, and the figures (the TikZ, and the PNG where LuaLaTeX is installed). Prints one line per check, then
# "check_new_stage: N passed, N failed". Without a GPU (CI) or with one; about 2 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
passed=0 failed=0
pass() { echo "ok: $*"; passed=$((passed + 1)); }
fail() { echo "FAILED: $*"; failed=$((failed + 1)); }
check() { # check WHAT COMMAND...: the command must succeed
    local what=$1
    shift
    if "$@" >"$work/last.log" 2>&1; then pass "$what"; else
        fail "$what: $(tail -n 5 "$work/last.log" | paste -sd ' ')"
    fi
}

work=$repo/build/new-stage
rm -rf "$work" && mkdir -p "$work/reduction"
# A copy of the working tree less what git ignores at the top (build/, third_party/), made a git
# repository of its own: one commit, so that the new folder is all that git status shows.
tar -C "$repo" --exclude=./.git --exclude=./build --exclude=./third_party --exclude=./.whl \
    --exclude=./.gl -cf - . | tar -C "$work/reduction" -xf -
cd "$work/reduction"
git init -q && git add -A && git -c user.name=check -c user.email=check@localhost commit -qm base
# --- the new stage: one folder ------------------------------------------------------------
new=step10_butterfly
cp -r step07_warp_shuffle "$new"
sed -i -e '1s|.*|/* Stage 10: a butterfly in the warp (__shfl_xor_sync): every lane gets the sum.|' \
    -e 's|x += __shfl_down_sync(FULL_MASK, x, offset); /\* lane l adds lane l + offset.s x \*/|x += __shfl_xor_sync(FULL_MASK, x, offset); /* lane l adds lane l ^ offset'"'"'s x */|' \
    -e 's|the warp.s sum is valid in lane 0\. \*/|every lane ends with the warp'"'"'s sum. */|' \
    "$new/reduce.cu"
grep -q '__shfl_xor_sync' "$new/reduce.cu" || { echo "check_new_stage: stage 7's warp_reduce changed: edit this script's sed" >&2; exit 2; }
cat >"$new/stage.ini" <<'EOF'
[stage]
title = a butterfly in the warp: every lane ends with the warp's sum
follows = step08_deterministic

[lesson]
; back to one atomicAdd a block, after stage 8's fixed order
atomicAdd instructions (RED) per block = red / grid

[speedup]
what = 10: a butterfly in the warp
label = 10\nbutterfly

[figure]
caption = Stage 10: 16-byte loads and a butterfly in the warp
replay = shuffle
EOF
sed -i "s|^<!-- harris stage=step07_warp_shuffle |<!-- harris stage=$new |" "$new/README.md"
mkdir -p "$new/mutants"
{
    printf 'Mutant: stage 10 without the tail of n %% 4 elements past the last whole vector.\n'
    printf 'Caught by: tests\n'
    diff -u --label reduce.cu --label reduce.cu "$new/reduce.cu" \
        <(sed 's|if (blockIdx.x == 0 \&\& t < n % 4)|if (false)|' "$new/reduce.cu") || true
} >"$new/mutants/no_tail.patch"
grep -q '^+.*if (false)' "$new/mutants/no_tail.patch" || { echo "check_new_stage: the mutant's sed matched nothing" >&2; exit 2; }
touched=$(git status --porcelain | paste -sd ' ')
[ "$touched" = "?? $new/" ] && pass "the new stage touches one place: $touched" ||
    fail "the new stage touches more than its folder: $touched"
git add "$new" # as its author would: make handout takes tracked files only
# Criterion and Boost.Context, where make deps VENDOR=1 vendored them
[ ! -d "$repo/third_party" ] || ln -s "$repo/third_party" third_party

# --- each tool takes it -------------------------------------------------------------------
check "tools/stages.py: every stage.ini checked; step10 follows step08" bash -c "
    python3 tools/stages.py check && test \$(python3 tools/stages.py previous 10) = step08_deterministic"
check "make diff STEP=10: step08's code against step10's" \
    bash -c "make --no-print-directory diff STEP=10 | head -n 2 | paste -sd ' ' |
             grep -qx -- '--- step08_deterministic/reduce.cu +++ $new/reduce.cu'"
check "make handout: stage 10 is stage 8's code with TODO (stage 10) comments" bash -c "
    make --no-print-directory handout &&
    f=build/handout/reduction/$new/reduce.cu && grep -q 'TODO (stage 10)' \$f &&
    source tools/handout.sh && cmp -s <(grep -v 'TODO (stage 10)' \$f | code /dev/stdin) \
        <(code step08_deterministic/reduce.cu) && grep -q '^| \`$new\` |' build/handout/reduction/HANDOUT.md"
check "make test STEP=10: its tests pass" bash -c "
    make --no-print-directory test STEP=10 > $work/test.log 2>&1;
    grep -qE '^step10 +compiled, +[0-9]+ run: +[0-9]+ passed, 0 failed' $work/test.log"
check "its lesson on the model's counters: step10 passes it, step08 fails it" bash -c "
    make --no-print-directory -j2 SANITIZER=counters BUILD=build/counters build/counters/step08 \
        build/counters/step10 && python3 tests/lessons.py model build step10 | tail -n 1 |
    grep -qx 'lessons on the model: 1 of 1 ok'"
check "the grade's and the mutants' build-only path: step08 handed in as step10, and no_tail" bash -c "
    MUTANTS_BUILD_ONLY=1 python3 tests/grade.py --mutants build step08_as_step10 no_tail |
    grep -c 'as step10, compiles' | grep -qx 2"
check "the speed-up table has its row, and the check says the course table (docs/benchmarks.md) lacks it" bash -c "
    python3 tools/bench/harris.py markdown results/NVIDIA_H200/results.csv |
        grep -q '^| $new | 10: a butterfly in the warp | not measured: make bench |' &&
    ! python3 tools/bench/harris.py check docs/benchmarks.md $new/README.md 2> $work/harris.log &&
    grep -q 'README.md:.*differs' $work/harris.log &&
    python3 tools/bench/harris.py update docs/benchmarks.md $new/README.md 2>/dev/null &&
    python3 tools/bench/harris.py check docs/benchmarks.md $new/README.md"
check "the figures: step10's, from its stage.ini's replay" bash -c "
    python3 tools/figures/mapping.py --tex build/figures | grep -q '^build/figures/step10.tex: Stage 10'"
if command -v lualatex >/dev/null && command -v pdftoppm >/dev/null; then
    check "make figures draws $new/figure.png" bash -c "
        rm $new/figure.png && make --no-print-directory figures | grep -q '^$new/figure.png: '"
fi
echo "check_new_stage: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
