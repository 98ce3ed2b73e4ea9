#!/usr/bin/env bash
# check_handout.sh: proves `make handout` (tools/handout.sh) without a GPU, on the tarball unpacked
# under build/handout-check/: what the handout holds and leaves out, each stage's TODOs, the targets
# that say they are not there, GitHub Classroom's workflow (YAML, a step per stage; one stage's
# step run as GitHub runs it, on its untouched file), that every stage builds (int32 and float32),
# that `make test` fails each stage still to write and passes step00, and that all of it is
# written under build/. Prints one line per check, then "check_handout: N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."
source tools/handout.sh # stage_file, code, prelude, stage_code, kept, GRADE_COUNTERS, WORKFLOW

passed=0 failed=0
pass() { echo "ok: $*"; passed=$((passed + 1)); }
fail() { echo "FAILED: $*"; failed=$((failed + 1)); }

before=$(git status --porcelain)
make --no-print-directory handout
dir=build/handout/reduction check=build/handout-check
rm -rf "$check" && mkdir -p "$check"
tar -xzf build/handout/reduction.tar.gz -C "$check"
h=$check/reduction # the unpacked tarball: what a student gets
diff -r "$dir" "$h" >/dev/null && pass "the tarball holds build/handout/reduction/" ||
    fail "the tarball and build/handout/reduction/ differ"

# The handout's files: the tracked ones in the working tree less OMIT's, and HANDOUT.md; each the
# same bytes but the rewritten ones, the Makefile, the stages' reduce.cu (checked below) and the
# fingerprints of their code (tests/handout.digests).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
while IFS= read -r -d '' f; do
    [ ! -e "$f" ] || cp -P --parents "$f" "$tmp"
done < <(kept)
(cd "$h" && cp --parents HANDOUT.md Makefile step*/reduce.cu tests/handout.digests "$WORKFLOW" "$tmp")
bad=$(diff -rq "$tmp" "$h" | paste -sd ' ' || true)
[ -z "$bad" ] && pass "every tracked file is there as it is, and none of OMIT's" || fail "$bad"

# Each stage from 01 on: opening comment over the code of the stage it follows, a TODO per hunk.
mapfile -t stages < <(python3 tools/stages.py list --kind cpu,gpu)
for ((i = 1; i < ${#stages[@]}; i++)); do
    s=${stages[i]} nn=${stages[i]:4:2} f=$(stage_file "${stages[i]}")
    follows=$(python3 tools/stages.py previous "$s")
    out=$h/$s/reduce.cu
    todo="^[[:space:]]*/\\* TODO \\(stage $nn\\): [^*]*\\. \\*/\$"
    grep -vE "$todo" "$out" > "$tmp/stripped"
    stage_code "$follows" > "$tmp/prev"
    todos=$(grep -cE "$todo" "$out" || true)
    hunks=$(diff -U0 "$tmp/prev" <(code "$f") | grep -c '^@@ ' || true)
    if ! cmp -s <(prelude "$tmp/stripped") <(prelude "$f"); then
        fail "$out: the text above the first #include is not $f's opening comment"
    elif ! cmp -s <(code "$tmp/stripped") "$tmp/prev"; then
        fail "$out without its TODO lines is not $follows's code: $(diff <(code "$tmp/stripped") "$tmp/prev" | head -n 3 | paste -sd ' ')"
    elif grep -q 'TODO' "$tmp/stripped"; then
        fail "$out has a TODO comment that is not one line of the form /* TODO (stage $nn): hint. */"
    elif [ "$todos" -ne "$hunks" ] || [ "$hunks" -eq 0 ]; then
        fail "$out has $todos TODO (stage $nn) comments for $hunks hunks"
    else
        pass "$s/reduce.cu: $follows's code under stage $nn's comment, $todos TODO (stage $nn)"
    fi
done

# The targets that need what is left out, or that mislead there: one sentence, not in make help.
help=$(make --no-print-directory -C "$h" help)
for t in $(sed -n 's/^\.PHONY: *//p' "$h/Makefile" | tail -n 1); do
    status=0
    make --no-print-directory -C "$h" "$t" STEP=05 > /dev/null 2> "$tmp/err" || status=$?
    said=$(grep -v '^make: \*\*\*' "$tmp/err" || true)
    if [ "$status" -eq 2 ] && [ "$(wc -l <<<"$said")" -eq 1 ] && [[ $said == "make $t: "* ]] &&
        ! grep -qE "^  $t +" <<<"$help"; then
        pass "make $t in the handout: $said"
    else
        fail "make $t in the handout: exit status $status, said: $(head -c 300 "$tmp/err")"
    fi
done

# make grade in the handout grades on the CPU model against the course's committed counters, and
# GitHub Classroom's workflow runs it: WORKFLOW is there and is YAML (PyYAML's reading where it is
# installed, else its structure line by line), with a step per GPU stage and the reporter.
[ -f "$h/$GRADE_COUNTERS" ] && cmp -s "$GRADE_COUNTERS" "$h/$GRADE_COUNTERS" &&
    pass "the handout holds the course's lesson counters, $GRADE_COUNTERS" ||
    fail "the handout lacks $GRADE_COUNTERS, which its make grade grades against"
mapfile -t gpu < <(python3 tools/stages.py list --kind gpu --short)
said=$(python3 - "$h/$WORKFLOW" "${gpu[@]}" <<'PY' 2>&1
import re, sys
path, ids = sys.argv[1], sys.argv[2:]
text = open(path).read()
bad = []
try:
    import yaml
except ImportError:
    yaml = None
if yaml:
    how = "PyYAML reads it"
    try:
        w = yaml.safe_load(text)
        job = w["jobs"]["run-autograding-tests"]
        steps = {s.get("id"): s for s in job["steps"]}
        bad += ["no push trigger"] * ("push" not in w.get("on", w.get(True, [])))
        bad += ["not on ubuntu-latest"] * (job.get("runs-on") != "ubuntu-latest")
        report = [s for s in job["steps"] if "autograding-grading-reporter" in s.get("uses", "")]
        runs = {i: steps.get(i, {}).get("run", "") for i in ids}
        always = {i: steps.get(i, {}).get("if") == "always()" for i in ids}
        always["reporter"] = bool(report) and report[0].get("if") == "always()"
        env = report[0].get("env", {}) if report else {}
        runners = report[0].get("with", {}).get("runners", "") if report else ""
    except yaml.YAMLError as e:
        print("not YAML: %s" % " ".join(str(e).split())[:200])
        sys.exit(1)
    except (KeyError, TypeError, AttributeError) as e:
        print("YAML, but not a job run-autograding-tests with steps: %r" % e)
        sys.exit(1)
else:
    how = "its structure holds (no PyYAML here)"
    lines = text.splitlines()
    bad += ["a tab in line %d" % (i + 1) for i, l in enumerate(lines) if "\t" in l][:1]
    bad += ["line %d is not indented by 2s" % (i + 1) for i, l in enumerate(lines)
            if l.strip() and not l.lstrip().startswith("#")
            and (len(l) - len(l.lstrip(" "))) % 2][:1]
    bad += ["no top-level %s" % k for k in ("name:", "'on':", "permissions:", "jobs:")
            if not any(l.startswith(k) for l in lines)]
    bad += ["no push trigger"] * ("  - push" not in lines)
    bad += ["not on ubuntu-latest"] * ("    runs-on: ubuntu-latest" not in lines)
    blocks = re.split(r"\n      - ", text)
    runs = {i: next((b for b in blocks if re.search(r"^\s*id: %s$" % i, b, re.M)), "")
            for i in ids}
    report = [b for b in blocks if "autograding-grading-reporter" in b]
    always = {i: bool(re.search(r"^\s*if: always\(\)$", runs[i], re.M)) for i in ids}
    always["reporter"] = bool(report) and "if: always()" in report[0]
    env = dict(re.findall(r"^\s+(\w+_RESULTS): (.*)$", report[0], re.M)) if report else {}
    runners = (re.findall(r"^\s+runners: (.*)$", report[0], re.M) or [""])[0] if report else ""
for i in ids:
    nn = i[4:]
    if not re.search(r"make grade MODEL=cpu STEP=%s SRC=%s_\*/reduce\.cu" % (nn, i), runs[i]) \
            or "tools/autograder/classroom.py" not in runs[i]:
        bad.append("%s's step does not run make grade and classroom.py" % i)
    if not re.search(r"timeout \d+m make grade", runs[i]):
        bad.append("%s's make grade has no timeout of its own (a result must follow)" % i)
    if "${{steps.%s.outputs.result}}" % i not in str(env.get(i.upper() + "_RESULTS")):
        bad.append("the reporter does not read %s's result" % i)
bad += ["no reporter step"] * (not report)
bad += ["%s does not run if: always()" % i for i, ok in always.items() if not ok]
bad += ["the reporter's runners are %r" % runners] * (runners.split(",") != ids)
print("%s: %s" % (how, "; ".join(bad) if bad else "a step per stage (%s to %s), then the "
                  "reporter" % (ids[0], ids[-1])))
sys.exit(bool(bad))
PY
) && pass "$WORKFLOW in the handout: $said" || fail "$WORKFLOW in the handout: $said"

# Each stage's step of the workflow, as GitHub runs it, in the handout: its untouched file (the
# previous stage's code with TODO comments) gets no points, and the reason, in words for the
# student (no path of this machine), out of the points graded without a GPU; the speed is said to
# be the instructor's.
for s in "${gpu[@]}"; do
    step=$(awk -v id="$s" '$0 ~ "^        id: " id "$" { on = 1; next }
        on && /^        run: \|/ { run = 1; next }
        run && /^          / { print substr($0, 11); next }
        run { exit }' "$h/$WORKFLOW")
    output=$PWD/$check/github_output.$s
    : > "$output"
    status=0
    (cd "$h" && GITHUB_OUTPUT=$output bash -e -c "$step") > "$check/step.$s.log" 2>&1 || status=$?
    said=$(python3 - "$output" "$PWD" "${s#step}" <<'PY' 2>&1
import base64, json, sys
line = [l for l in open(sys.argv[1]) if l.startswith("result=")]
r = json.loads(base64.b64decode(line[-1][len("result="):]))
text = json.dumps(r)
why = "TODO (stage %s)" % sys.argv[3]
bad = ["status %s" % r["status"]] * (r["status"] != "fail")
bad += ["max_score %s" % r["max_score"]] * (r["max_score"] != 80)
bad += ["%s: %g points" % (t["name"], t["score"]) for t in r["tests"] if t["score"]]
bad += ["the reason (%s) is not given" % why] * (why not in text)
bad += ["the speed is not said to be graded on a GPU"] * ("graded on a GPU" not in text)
bad += ["a path: %s" % p for p in (sys.argv[2], "/tmp", "build/") if p in text]
correct = [t for t in r["tests"] if t["name"].endswith(": correct")]
print("; ".join(bad) if bad else "0 of %g points: %s" % (
    r["max_score"], correct[0]["message"][:90] if correct else ""))
sys.exit(bool(bad))
PY
    ) && [ "$status" -eq 0 ] && pass "the workflow's $s step on the untouched file: $said" ||
        fail "the workflow's $s step (exit status $status, see $check/step.$s.log): $said"
done

# Every stage builds: each is the previous stage's working code. A vendored
# Criterion comes along for the tests.
[ ! -f third_party/criterion/.done ] || ln -sfn "$PWD/third_party" "$h/third_party"
# (int32: its float32 code is the same text, which the course's own make TYPE=float test builds.)
for type in int; do
    if make --no-print-directory -C "$h" -j2 TYPE=$type all > "$check/build-$type.log" 2>&1; then
        pass "make TYPE=$type all builds every stage in the handout"
    else
        fail "make TYPE=$type all in the handout: $(grep -iE 'error' "$check/build-$type.log" | head -n 3)"
    fi
done

# make test: each stage still to write fails (TODO comments left), step00 passes.
steps=$(printf '%s ' "${stages[@]}" | sed -E 's/step([0-9]+)_[^ ]*/\1/g')
status=0
make --no-print-directory -C "$h" test STEP="${steps% }" > "$check/test.log" 2>&1 || status=$?
bad=()
[ "$status" -ne 0 ] || bad+=("make test passed")
grep -qE "^${stages[0]:0:6} +compiled, .* 0 failed" "$check/test.log" || bad+=("${stages[0]:0:6} did not pass")
for s in "${stages[@]:1}"; do
    grep -qE "^${s:0:6} .*NOT written yet: [0-9]+ TODO \(stage ${s:4:2}\)" "$check/test.log" ||
        bad+=("${s:0:6} is not reported as not written")
done
[ ${#bad[@]} -eq 0 ] && pass "make test in the handout: $(tail -n 2 "$check/test.log" | head -n 1)" ||
    fail "make test in the handout: $(printf '%s; ' "${bad[@]}")see $check/test.log"

# make handout COURSE_URL=...: README.md's Colab badge opens the notebook from that GitHub copy,
# HANDOUT.md has the badge, the notebook's COURSE_URL field is the copy's address, and nothing else
# changes; an address not on GitHub is refused in one sentence. Then the plain handout again.
url=https://github.com/example-owner/example-course
link=https://colab.research.google.com/github/example-owner/example-course/blob/main/$NOTEBOOK
status=0
make --no-print-directory handout COURSE_URL=$url.git > "$check/url.log" 2>&1 || status=$?
bad=()
[ "$status" -eq 0 ] || bad+=("exit status $status: $(tail -n 2 "$check/url.log" | paste -sd ' ')")
[ "$(grep -cxF "$BADGE($link)" "$dir/README.md")" -eq 1 ] || bad+=("README.md has no badge line")
grep -qF "$BADGE($link)" "$dir/HANDOUT.md" || bad+=("HANDOUT.md has no badge")
python3 - "$NOTEBOOK" "$dir/$NOTEBOOK" "$url" <<'PY' || bad+=("the notebook: its COURSE_URL")
import json, sys
sys.path.insert(0, "tools")
import notebook
mine, theirs = notebook.load(sys.argv[1]), notebook.load(sys.argv[2])
notebook.set_params(mine, [("COURSE_URL", sys.argv[3])])
sys.exit(mine != theirs or json.dumps(theirs).count('COURSE_URL = \\"%s\\"' % sys.argv[3]) != 1)
PY
changed=$(diff -rq --exclude=build --exclude=third_party "$h" "$dir" |
    grep -vE "(README|HANDOUT)\.md|$NOTEBOOK" | paste -sd ' ' || true)
[ -z "$changed" ] || bad+=("other files changed: $changed")
[ "$(diff "$h/README.md" "$dir/README.md" | grep -c '^[<>]')" -eq 2 ] ||
    bad+=("README.md changed in more than its badge line")
[ ${#bad[@]} -eq 0 ] && pass "make handout COURSE_URL=$url.git: the badge opens $link" ||
    fail "make handout COURSE_URL=$url.git: $(printf '%s; ' "${bad[@]}")"
status=0
make --no-print-directory handout COURSE_URL=https://gitlab.com/a/b >/dev/null 2>"$tmp/err" ||
    status=$?
said=$(grep -v '^make: \*\*\*' "$tmp/err" || true)
[ "$status" -ne 0 ] && [ "$(wc -l <<<"$said")" -eq 1 ] &&
    [[ $said == "make handout: COURSE_URL="* ]] &&
    pass "make handout COURSE_URL= not on GitHub: $said" ||
    fail "make handout COURSE_URL=https://gitlab.com/a/b: exit status $status, said: $said"
make --no-print-directory handout > /dev/null

[ "$(git status --porcelain)" == "$before" ] && pass "git status is as it was: all of it under build/" ||
    fail "git status changed: $(git status --porcelain | head -n 5 | paste -sd ' ')"
echo "check_handout: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
