#!/usr/bin/env bash
# check_autograder.sh: proves `make autograder` (tools/autograder/) without Gradescope, on one
# stage (04, a single block: its tests take seconds on the model): makes the bundle, unzips it
# into an AUTOGRADER_ROOT under build/autograder-check/ laid out as Gradescope lays out /autograder (source/: the unzipped bundle; submission/;
# results/), runs its setup.sh (as root: apt only for what is missing; without its proof,
# AUTOGRADER_SETUP_PROOF=0, which is the first grade below) and its run_autograder on three
# submissions: the course's own step04_smem/reduce.cu, submitted as step04_smem/reduce.cu; the
# mutant no_syncthreads alone (no barrier between the rounds: a race, wrong sums);
# and one with no .cu file. Each results.json must be JSON with the fields Gradescope reads (a
# numeric score; tests, each with a name and a score no more than its max_score), name the file
# graded (or say what was expected), and name no path of the grading machine ('/autograder',
# '/tmp', '/work', 'build/', the root's own); the right file must get every point that is graded,
# the wrong one fewer, the empty one 0. About a minute: two grades on the CPU model.
# Prints one line per check, then "check_autograder: N passed, N failed".
# Usage: bash tests/check_autograder.sh. Exit status: 0 every check passed, 1 one failed.
set -euo pipefail
cd "$(dirname "$0")/.."

passed=0 failed=0
pass() { echo "ok: $*"; passed=$((passed + 1)); }
fail() { echo "FAILED: $*"; failed=$((failed + 1)); }
STEP=04 STAGE=step04_smem
before=$(git status --porcelain)
check=build/autograder-check
rm -rf "$check" && mkdir -p "$check"
t0=$(date +%s)

make --no-print-directory autograder STEP=$STEP > "$check/make.log" 2>&1 &&
    zip=build/autograder/step$STEP/autograder.zip && [ -f "$zip" ] &&
    pass "make autograder STEP=$STEP: $(tail -n 1 "$check/make.log" | cut -c1-80)..." || {
    fail "make autograder STEP=$STEP: $(tail -n 2 "$check/make.log" | paste -sd ' ')"
    echo "check_autograder: $passed passed, $failed failed"
    exit 1
}

# Gradescope's layout: the zip unzipped into source/ (its mode bits kept, as unzip keeps them).
root=$PWD/$check/root
mkdir -p "$root/source" "$root/submission" "$root/results"
python3 - "$zip" "$root/source" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for info in z.infolist():
        path = z.extract(info, sys.argv[2])
        if info.external_attr >> 16:
            os.chmod(path, (info.external_attr >> 16) & 0o7777)
PY
bad=()
for f in setup.sh run_autograder autograder.env course/Makefile course/$STAGE/reduce.cu; do
    [ -e "$root/source/$f" ] || bad+=("no $f")
done
[ -x "$root/source/run_autograder" ] || bad+=("run_autograder is not executable")
[ ${#bad[@]} -eq 0 ] && pass "the zip holds setup.sh, run_autograder (executable) and the course" ||
    fail "the zip: ${bad[*]}"

t=$(date +%s)
# Its proof (the course's own file graded as a submission) is left out: the right submission
# below is that same grade, through run_autograder.
if AUTOGRADER_ROOT=$root AUTOGRADER_SETUP_PROOF=0 bash "$root/source/setup.sh" \
    > "$check/setup.log" 2>&1; then
    pass "setup.sh ($(($(date +%s) - t)) s): $(grep -E "^setup.sh: (make,|AUTOGRADER_)" \
        "$check/setup.log" | sed 's/^setup.sh: //' | paste -sd ' ' | cut -c1-150)"
else
    fail "setup.sh: $(tail -n 3 "$check/setup.log" | paste -sd ' ' | cut -c1-300)"
fi

# submit NAME FILE AS: FILE as submission/AS, graded by run_autograder; its results.json kept
# as $check/NAME.json.
submit() {
    rm -rf "${root:?}/submission" "$root/results" && mkdir -p "$root/submission" "$root/results"
    if [ -n "$2" ]; then
        mkdir -p "$(dirname "$root/submission/$3")" && cp "$2" "$root/submission/$3"
    else
        echo "no code here" > "$root/submission/README.txt"
    fi
    local t=$(date +%s) status=0
    (cd "$root" && AUTOGRADER_ROOT=$root ./source/run_autograder) > "$check/$1.log" 2>&1 ||
        status=$?
    cp "$root/results/results.json" "$check/$1.json" 2>/dev/null || true
    echo "($1: run_autograder exited with status $status in $(($(date +%s) - t)) s)"
}

# judge NAME WANT SAYS: checks $check/NAME.json (WANT: full, less or zero points; SAYS: a phrase
# its output must hold), one line each, counted.
judge() {
    local said
    said=$(verdicts "$@")
    echo "$said"
    passed=$((passed + $(grep -c '^ok: ' <<<"$said" || true)))
    failed=$((failed + $(grep -vc '^ok: ' <<<"$said" || true)))
}
verdicts() {
    python3 - "$check/$1.json" "$1" "$2" "$3" "$root" <<'PY'
import json, sys
path, name, want, says, root = sys.argv[1:]
def line(ok, words):
    print("%s: %s: %s" % ("ok" if ok else "FAILED", name, words))
try:
    r = json.load(open(path))
except (OSError, ValueError) as e:
    line(False, "results.json is not JSON: %s" % e)
    sys.exit()
tests = r.get("tests", [])
bad = [t for t in tests if not isinstance(t, dict) or not isinstance(t.get("name"), str)
       or not isinstance(t.get("score"), (int, float))
       or not isinstance(t.get("max_score", 0), (int, float)) or t["score"] > t.get("max_score", 0)]
score = r.get("score")
ok = isinstance(score, (int, float)) and isinstance(tests, list) and not bad and \
    isinstance(r.get("output", ""), str)
line(ok, "Gradescope's fields: score %s, %d tests, each score <= max_score%s" % (
    score, len(tests), "" if not bad else "; not so: %s" % bad[:2]))
most = sum(t.get("max_score", 0) for t in tests if isinstance(t, dict))
got = {"full": most > 0 and score == most, "less": most > 0 and score < most,
       "zero": score == 0}[want]
line(got, "%s points: %s of %g graded (%s)" % (want, score, most, ", ".join(
    "%s %s/%s" % (t.get("name"), t.get("score"), t.get("max_score")) for t in tests)))
out = r.get("output", "")
line(says in out, "its output says %r: %s" % (says, out.splitlines()[0][:100] if out else "none"))
def strings(v):
    if isinstance(v, str):
        yield v
    elif isinstance(v, list):
        for x in v:
            yield from strings(x)
    elif isinstance(v, dict):
        for x in v.values():
            yield from strings(x)
leaks = sorted({p for s in strings(r) for p in ("/autograder", "/tmp", "/work", "build/", root)
                if p in s})
line(not leaks, "no path of the grading machine in what the student sees%s" % (
    "" if not leaks else ": it shows %s" % leaks))
PY
}

submit right "$STAGE/reduce.cu" "$STAGE/reduce.cu"
judge right full "Graded your file $STAGE/reduce.cu"
bash tools/bench/variant.sh step04_smem/mutants/no_syncthreads.patch "$check/no_syncthreads.cu"
submit wrong "$check/no_syncthreads.cu" no_syncthreads.cu
judge wrong less "Graded your file no_syncthreads.cu"
submit none "" ""
judge none zero "Expected $STAGE/reduce.cu"
[ "$(git status --porcelain)" == "$before" ] && pass "git status is as it was: all under build/" ||
    fail "git status changed: $(git status --porcelain | head -n 5 | paste -sd ' ')"
echo "check_autograder: $passed passed, $failed failed ($(($(date +%s) - t0)) s)"
[ "$failed" -eq 0 ]
