#!/usr/bin/env bash
# check_grade.sh: proves make grade's policy on the CPU model, with files whose points are known,
# all graded as stage 5, by two graders at once on one host (each its own GRADE_OUT):
#   grader A, a class (build/check-grade/class/): the handout's file (todo, its TODO comments
#   left: 0 points), the same with them deleted (unchanged: 0) and a file wrong at every n > 0
#   (wrong: only its share of correctness);
#   meanwhile grader B, the course's own file directly in /tmp (every point, as alone), then
#   grader C, a hang (a loop that never ends: it ends at GRADE_TIMEOUT, on the same total).
# Prints one line per check, then "check_grade: N passed, N failed". About 2 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
passed=0 failed=0
pass() { echo "ok: $*"; passed=$((passed + 1)); }
fail() { echo "FAILED: $*"; failed=$((failed + 1)); }
work=build/check-grade
rm -rf "$work" && mkdir -p "$work/class"
right=step05_segmented/reduce.cu
# The handout's stage 5 file, as make handout writes it (tools/handout.sh's functions).
bash -c 'source tools/handout.sh && { prelude "$1"; todos <(stage_code step04_smem) <(code "$1") 05; }' \
    _ "$right" > "$work/class/todo.cu"
grep -v 'TODO (stage 05)' "$work/class/todo.cu" > "$work/class/unchanged.cu"
sed 's/atomicAdd(sum, input_s\[0\]);/atomicAdd(sum, input_s[0] + 1);/' "$right" > "$work/class/wrong.cu"
cmp -s "$right" "$work/class/wrong.cu" && { echo "check_grade: wrong.cu is not wrong" >&2; exit 1; }
# A flag in device memory that nothing clears (a local volatile one did not hang on an H200).
sed -e 's|^__global__ void reduce_kernel|__device__ volatile int spin = 1; /* never 0: a hang */\n&|' \
    -e 's|^\( *\)unsigned int t = threadIdx.x;|&\n\1while (spin) {}|' "$right" > "$work/hang.cu"
grep -q 'while (spin)' "$work/hang.cu" || { echo "check_grade: hang.cu does not hang" >&2; exit 1; }
tmp_right=$(mktemp /tmp/check_grade_right_XXXX.cu)
trap 'rm -f "$tmp_right"' EXIT
cp "$right" "$tmp_right"
hang_limit=15
# On a GPU the speed is graded too: 20 more points, and a right file gets them all.
if nvidia-smi -L >/dev/null 2>&1 && [ "${MODEL:-gpu}" = gpu ]; then
    none=0 all=20 most=100 make_args=(ARCH="${ARCH:-native}")
else
    none=- all=- most=80 make_args=()
fi

t0=$(date +%s)
GRADE_FRESH=1 GRADE_OUT=$work/A make --no-print-directory "${make_args[@]}" grade STEP=05 SUBMISSIONS="$work/class" \
    > "$work/A.log" 2>&1 & a=$!
# Meanwhile: B, then C (the hang, at a short limit for each program).
{ GRADE_FRESH=1 GRADE_OUT=$work/B make --no-print-directory "${make_args[@]}" grade STEP=05 SRC="$tmp_right" \
      > "$work/B.log" 2>&1 || true
  GRADE_FRESH=1 GRADE_TIMEOUT=$hang_limit GRADE_OUT=$work/C make --no-print-directory "${make_args[@]}" grade \
      STEP=05 SRC="$work/hang.cu" > "$work/C.log" 2>&1 || true; } & bc=$!
wait $a || true
wait $bc || true
echo "check_grade: graders A and B at once, then C, in $(($(date +%s) - t0)) s (logs: $work/[ABC].log)"

# row OUT NAME: NAME's row of OUT/class.csv as "correct race-free fast lesson points max grade|feedback"
row() {
    python3 - "$work/$1/class.csv" "$2" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r["submission"] == sys.argv[2]:
        print(r["correct"], r["race-free"], r["fast enough"], r["lesson"], r["points"],
              r["max_points"], r["grade"] + "|" + r["feedback"])
PY
}
expect() { # expect WHAT OUT NAME PATTERN: NAME's row matches the extended regex PATTERN
    local got
    got=$(row "$2" "$3" 2>/dev/null || true)
    if [[ $got =~ $4 ]]; then pass "$1: $(cut -c1-150 <<<"$got")"; else
        fail "$1: got '${got:-no row}', expected /$4/"; fi
}
expect "the handout's file, its TODOs left: 0 points, and why" A todo \
    "^0 0 $none 0 0(\.0)? $most(\.0)? FAIL\|.*TODO \(stage 05\)"
expect "the handout's code, unchanged, TODOs deleted: 0 points, and why" A unchanged \
    "^0 0 $none 0 0(\.0)? $most(\.0)? FAIL\|.*the handout's, unchanged"
expect "wrong at every n > 0: its share of correctness only" A wrong \
    "^([1-9]|[1-3][0-9])(\.[0-9]+)? 0 $none 0 [0-9.]+ $most(\.0)? FAIL\|correct: "
expect "a hang: 0 points on the same total, the checks after it not run" C hang \
    "^0 0 $none 0 0(\.0)? $most(\.0)? FAIL\|correct: the tests did not finish: a program did not finish"
expect "the course's file directly in /tmp, by a second grader at once: every point" B \
    "$(basename "$tmp_right" .cu)" "^40 20 $all 20 $most(\.0)? $most(\.0)? PASS"
hang_s=$(awk -F, '$1 == "hang" { print int($4) }' "$work/C/timings.csv")
if [ -n "$hang_s" ] && [ "$hang_s" -le $((hang_limit + 60)) ]; then
    pass "the hang ended in $hang_s s: its program's limit ($hang_limit s) and its build"
else
    fail "the hang took ${hang_s:-?} s, past its limit of $hang_limit s and its build"
fi
echo "check_grade: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
