#!/usr/bin/env bash
# handout.sh [DIR]: `make handout`, the students' starting point: DIR/reduction/ and
# DIR/reduction.tar.gz (DIR: build/handout). It holds the repository's tracked files (as they are
# in the working tree) less what shows the solutions (OMIT below), and every stage NN from 01 on
# (tools/stages.py) gets, as its reduce.cu, stage NN-1's code under stage NN's opening comment,
# with a `/* TODO (stage NN): ... */` line where each of stage NN's changes goes: the exercise is
# to write what `make diff STEP=NN` shows. Each handout stage is working code, so the handout
# builds and runs. Its `make grade STEP=NN` grades a stage on the CPU model, the lesson against
# the course's counters (GRADE_COUNTERS), and WORKFLOW, in the handout only, runs it for GitHub
# Classroom on each push. tests/check_handout.sh proves all this; it sources this file, which then
# only defines the functions.
# COURSE_URL=https://github.com/OWNER/REPO (make handout COURSE_URL=...): where the handout's GitHub
# copy will be. Its README.md's Colab badge then opens colab/reduction.ipynb from there (instead of
# linking to the README's section that explains it), HANDOUT.md gets the badge too, and the
# notebook's COURSE_URL field is set to it, so that the notebook clones that copy.
set -euo pipefail

# What the handout leaves out: PATH (a folder ends in /, a * makes it a git glob pathspec)|the make
# targets that need it|why.
# In the handout's Makefile each of those targets becomes one sentence (stub_rules).
OMIT=(
    "ANSWERS.md||the worked answers to the lessons' exercises"
    "step*/variants/**|variants metrics bench-model|one-change patches of the stages, which show parts of their code"
    "step*/mutants/**|mutants|known-wrong kernels made from the solutions"
    "tests/broken/|sanitize|known-wrong kernels made from the stages' code, with the fix written out"
    "tests/class/||a sample class for make grade SUBMISSIONS=, two of its files solutions of stage 5"
    "results/NVIDIA_H200/exercises.log||the output of every exercise's command, which answers it"
    "tools/figures/mapping.py|figures|each stage's kernel loops, replayed in Python to draw the figures"
    "slides/|slides|the lecture deck, whose slides show each stage's code and diff"
    ".ci/||the course repository's CI, which needs every stage solved"
)
# Targets that would mislead in a handout, though no file of theirs is missing: TARGET|sentence.
STUBS=(
    "diff|here each stage's reduce.cu is the previous stage's code: writing what make diff STEP=NN shows in the course repository is your exercise, and its TODO comments mark where."
    "autograder|Gradescope's autograder holds the solutions: the course repository makes it."
    "handout|this is a handout already: make it in the course's git repository."
)

die() { echo "make handout: $*" >&2; exit 1; }
# The course's own lesson counters, measured on the CPU model (python3 tests/lessons.py
# model-table build FILE): the handout's make grade grades against them.
GRADE_COUNTERS=results/cpu_model/lesson_counters.csv
WORKFLOW=.github/workflows/classroom.yml # GitHub Classroom's autograding, in the handout only
NOTEBOOK=colab/reduction.ipynb
BADGE='[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]'
escape() { sed 's/[][\.*^$]/\\&/g' <<<"$1"; } # a fixed string as a basic regular expression

# colab_link: the Colab address of NOTEBOOK in COURSE_URL's GitHub copy (its main branch).
colab_link() {
    local u=${COURSE_URL%/}
    u=${u%.git}
    [[ $u =~ ^https://github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)$ ]] ||
        die "COURSE_URL='$COURSE_URL' is not https://github.com/OWNER/REPO, the course's GitHub" \
            "copy (Colab opens a notebook from GitHub)."
    local repo=${BASH_REMATCH[1]}/${BASH_REMATCH[2]}
    echo "https://colab.research.google.com/github/$repo/blob/main/$NOTEBOOK"
}
spec() { [[ $1 == *'*'* ]] && echo ":(glob)$1" || echo "$1"; } # a path or a glob, for git
tracked() { git ls-files --error-unmatch "$(spec "$1")" >/dev/null 2>&1; }

# kept: the tracked files that the handout holds, all but OMIT's, each ended by a NUL.
kept() {
    local entry p not=()
    for entry in "${OMIT[@]}"; do
        p=${entry%%|*}
        [[ $p == *'*'* ]] && not+=(":(exclude,glob)$p") || not+=(":(exclude)$p")
    done
    git ls-files -z -- . "${not[@]}"
}

# A stage's source: stepNN_name/reduce.cu, or reduce.c for the CPU stage.
stage_file() {
    ls "$1"/reduce.c* 2>/dev/null | head -n 1 | grep . || die "$1 has no reduce.c or reduce.cu."
}

# The code of a file from its first #include on (what make diff compares), and what comes before
# it (the lesson's opening comment).
code() { sed -n '/^#include/,$p' "$1"; }
prelude() { sed '/^#include/,$d' "$1"; }

# stage_code DIR: the stage's code as a stage, from the first #include on. A CUDA stage is its
# reduce.cu. The CPU stage (reduce.c, step00) is two files: its loop, which the harness also
# links as the reference reduce_cpu, and common/cpu_stage.c, which binds it to the stage interface.
# Stage 01 starts from both in one file that compiles as CUDA C++: cpu_stage.c with the loop put
# before reduce(), renamed reduce_loop and made static, since reduce_cpu is the harness's already.
stage_code() {
    local f
    f=$(stage_file "$1")
    if [[ $f == *.cu ]]; then
        code "$f"
        return
    fi
    grep -q '^[a-z].* reduce(' common/cpu_stage.c || die "common/cpu_stage.c has no reduce() to start stage 01 from."
    code common/cpu_stage.c | awk -v loop=<(code "$f" | sed '/^#include/d' | sed '/./,$!d') '
        /^[a-z].* reduce\(/ && !done { while ((getline l < loop) > 0) print l; print ""; done = 1 }
        { print }' |
        sed -E 's/\breduce_cpu\b/reduce_loop/g; s/^([a-z].*reduce_loop\()/static \1/'
}

# todos PREV CUR NN: PREV's lines with a TODO (stage NN) comment before each run of lines that the
# diff from PREV to CUR changes (diff -U0's hunks; make diff's three lines of context would merge
# a stage's changes into one). The hint says only what the run does to PREV's lines, indented
# like the lines it stands above (the added ones, where it only adds).
todos() {
    { diff --old-line-format=-%L --new-line-format=+%L --unchanged-line-format=' %L' "$1" "$2" ||
        [ $? -eq 1 ]; } | awk -v nn="$3" '
        function flush(  i, l, hint, ind) { # at the end of a run: b lines of PREV, d of CUR
            if (b + d == 0) return
            hint = b == 0 ? "add code here" : (d == 0 ? "remove" : "change") " the next " \
                (b == 1 ? "line" : b " lines")
            for (i = 1; i <= (b ? b : d); i++) {
                l = b ? old[i] : new[i]
                if (l ~ /[^ \t]/) { match(l, /^[ \t]*/); ind = substr(l, 1, RLENGTH); break }
            }
            print ind "/* TODO (stage " nn "): " hint ". */"
            for (i = 1; i <= b; i++) print old[i]
            b = d = 0
        }
        /^-/ { old[++b] = substr($0, 2); next }
        /^\+/ { new[++d] = substr($0, 2); next }
        { flush(); print substr($0, 2) }
        END { flush() }'
}

# drop_rules TARGET...: the Makefile on stdin less the rules of those targets (each target line,
# its continuations and its recipe).
drop_rules() {
    awk -v names="$*" '
        BEGIN { split(names, t, " "); for (i in t) drop[t[i]] = 1 }
        skip && (cont || /^\t/) { cont = /\\$/; next }
        { skip = 0 }
        /^[a-z][a-zA-Z0-9_-]*:/ && !/^[^:]*:=/ {
            name = $0; sub(/:.*/, "", name)
            if (name in drop) { skip = 1; cont = /\\$/; next }
        }
        { print }'
}

# stub_rules "TARGET|sentence"...: for each a rule that says its sentence and fails, under one
# .PHONY line, the Makefile's last. No "## " comment: `make help` does not list them.
stub_rules() {
    local s
    echo
    echo "# make handout: what this student handout leaves out, each target one sentence."
    echo ".PHONY: ${*%%|*}"
    for s in "$@"; do
        printf '%s:\n\t@echo "make %s: %s" >&2; exit 2\n' "${s%%|*}" "${s%%|*}" "${s#*|}"
    done
}

# handout_grade: the handout's own `make grade` rule, in place of the course's, which measures
# the course's solutions. It grades one stage of the student's with tests/grade.py on the CPU
# model, the lesson against the course's counters committed in GRADE_COUNTERS; on a GPU machine
# too, since those counters are the model's. The speed is left to the instructor, on a GPU.
handout_grade() {
    sed 's/^        //' <<EOF

        # make handout: make grade here grades your stage on the CPU model (model/), its lesson
        # against the course's own counters, measured on the model and committed in GRADE_COUNTERS
        # (this handout holds no solution to measure them from); on a GPU machine too. The speed
        # is graded by your instructor, on a GPU. .github/workflows/classroom.yml runs it for
        # GitHub Classroom on each push.
        GRADE_COUNTERS := $GRADE_COUNTERS
        GRADE_OK := \$(filter-out \$(PROGRAM_SHORT),\$(GPU_SHORT))
        GRADE_FILE = \$(strip \$(if \$(SRC),\$(or \$(wildcard \$(SRC)),\$(SRC)),\\
          \$(call long,\$(TEST_STEPS))/reduce.cu))
        GRADE_BAD = \$(strip \$(if \$(filter 1,\$(words \$(TEST_STEPS))),\\
          \$(filter-out \$(GRADE_OK),\$(TEST_STEPS)),not one))
        GRADE_USAGE := make grade STEP=NN grades your stepNN_name/reduce.cu (SRC=file: another \\
          file) as stage NN, one of \$(patsubst step%,%,\$(GRADE_OK))
        ifeq (\$(MODEL),cpu)
        grade: ## grade stage STEP=NN on the CPU model: tests, sanitizers, lesson (speed: on a GPU)
        	@\$(if \$(GRADE_BAD),echo "\$(GRADE_USAGE) (got STEP='\$(STEP)')." >&2; exit 2)
        	@\$(if \$(filter 1,\$(words \$(GRADE_FILE))),test -f \$(GRADE_FILE),false) || \\
        	  { echo "make grade: SRC=\$(or \$(SRC),\$(GRADE_FILE)) is not one file." >&2; exit 2; }
        	@test -f \$(GRADE_COUNTERS) || { echo "make grade: \$(GRADE_COUNTERS), the course's \\
        	lesson counters, is missing: ask your instructor for it." >&2; exit 2; }
        	@\$(MAKE) --no-print-directory deps
        	@echo "make grade: on the CPU model, the lesson against the course's counters \\
        	(\$(GRADE_COUNTERS)); your speed is graded by your instructor, on a GPU."
        	@GRADE_REFERENCE_COUNTERS=\$(GRADE_COUNTERS) TYPE=\$(TYPE) MAKE='\$(MAKE)' \\
        	  python3 tests/grade.py \$(BUILD) \$(TEST_STEPS) --src \$(abspath \$(GRADE_FILE))
        else
        grade:
        	@\$(MAKE) --no-print-directory MODEL=cpu grade
        endif
EOF
}

# classroom_workflow STAGE...: the handout's .github/workflows/classroom.yml, GitHub Classroom's
# autograding, one step per stage, each graded by the handout's make grade on the CPU model. Its
# form is Classroom's own (a step per test, then the reporter): each step's `result` output is
# what classroom-resources/autograding-command-grader@v1 writes (base64 of JSON: version 1,
# status, max_score, tests with name, status, score, message), made by
# tools/autograder/classroom.py from make grade's results.json, so that the points are the
# grade's partial credit, not all or nothing on the exit status; and
# classroom-resources/autograding-grading-reporter@v1 adds them up and reports them to Classroom
# (https://github.com/classroom-resources/autograding-command-grader, .../autograding-grading-
# reporter: its NotifyClassroom sums each test's score against each runner's max_score). Each
# step and the reporter run whatever happened before them (if: always()), and a grade stopped by
# its `timeout` still leaves a result: classroom.py's, no points, out of the same total.
classroom_workflow() {
    local s nn ids=()
    cat <<'EOF'
# GitHub Classroom's autograding of this handout, made by the course's `make handout`
# (tools/handout.sh). On each push, on GitHub's ubuntu-latest, without a GPU: what the CPU model
# needs, then a step per stage that runs `make grade STEP=NN` on the CPU model (model/), the
# lesson against the course's counters in results/cpu_model/lesson_counters.csv, and passes its
# points (results.json's score: tests, sanitizers, lesson) on as the result that
# classroom-resources/autograding-command-grader@v1 gives; the reporter adds them up for
# Classroom. The speed is graded by your instructor, on a GPU. Leave the assignment's tests empty
# in Classroom, so that this workflow is the one that runs.
name: Autograding Tests
'on':
  - push
  - repository_dispatch
permissions:
  checks: write
  actions: read
  contents: read
jobs:
  run-autograding-tests:
    runs-on: ubuntu-latest
    if: github.actor != 'github-classroom[bot]'
    timeout-minutes: 120
    steps:
      - name: Checkout code
        uses: actions/checkout@v4
      # What `make deps MODEL=cpu` installs (Criterion, g++, Boost.Context), as root, run without
      # make so that root writes nothing into build/. ThreadSanitizer takes at most 30 bits of
      # mmap randomness (google/sanitizers#1716): 28, as GitHub's images have set it.
      - name: Install what the CPU model needs
        run: |
          sudo bash tests/deps.sh --sandbox --model
          sudo sysctl -w vm.mmap_rnd_bits=28
EOF
    for s in "$@"; do
        nn=$(python3 tools/stages.py get "$s" short)
        nn=${nn#step}
        ids+=("step$nn")
        cat <<EOF
      - name: "Stage ${nn#0}: $(python3 tools/stages.py get "$s" title | sed 's/"/\\"/g')"
        id: step$nn
        if: always()
        timeout-minutes: 30
        run: |
          timeout 25m make grade MODEL=cpu STEP=$nn SRC=step${nn}_*/reduce.cu \\
            GRADE_OUT=build/classroom/step$nn || true
          python3 tools/autograder/classroom.py build/classroom/step$nn step$nn >> "\$GITHUB_OUTPUT"
EOF
    done
    cat <<EOF
      - name: Autograding Reporter
        if: always()
        uses: classroom-resources/autograding-grading-reporter@v1
        env:
$(for s in "${ids[@]}"; do echo "          ${s^^}_RESULTS: \"\${{steps.$s.outputs.result}}\""; done)
        with:
          runners: $(IFS=,; echo "${ids[*]}")
EOF
}

# handout_readme STAGE...: the students' README, HANDOUT.md: what to do, stage by stage, and what
# is not here (left, from main).
handout_readme() {
    local s
    cat <<'EOF'
# Parallel reduction: the student handout

This is the course repository with the solutions taken out (`make handout` made it). Each stage
folder `stepNN_name/` holds its lesson, `README.md`, and a `reduce.cu` that is the *previous*
stage's working code: the comment on top says what stage NN builds, and a
`/* TODO (stage NN): ... */` line marks each place where stage NN's code differs from it. Your
exercise for stage NN: turn that file into stage NN. `step00_cpu` is the sequential loop that
every stage is checked against: it is complete, there is nothing to write there.

| stage | what you build |
|---|---|
EOF
    for s in "${@:2}"; do
        # The comment's first paragraph: "Stage 5: segmented reduction across thread blocks (...)."
        echo "| \`$s\` | $(prelude "$(stage_file "$s")" |
            sed -E '/^ \*\/? *$/,$d; s|^(/\*\| \*) *||; s| *\*/$||' | paste -sd ' ') |"
    done
    cat <<'EOF'

For each stage, in order:
1. Read `stepNN_name/README.md`, the lesson, then the comment on top of `stepNN_name/reduce.cu`.
2. Write the stage where its TODO comments are, and delete each TODO comment once it is done.
3. `make stepNN && build/stepNN` builds and runs it: `result=ok` is the right sum. Without an
   NVIDIA GPU (or with `MODEL=cpu`), it runs on the CPU model of a GPU (`model/`: g++ and PyPI's
   libclang, no CUDA toolkit): the same sum, and no time (the line says `device="CPU model of an
   NVIDIA H200"`).
4. `make test STEP=NN` runs the stage's tests. The stage counts as failed while a
   `TODO (stage NN)` comment is left in it. On the CPU model the tests also run your kernel under
   AddressSanitizer (a read or write out of bounds) and ThreadSanitizer (a data race, in three
   orders of the threads), and report a barrier or `_sync` call that not every thread reaches:
   what a GPU's compute-sanitizer would find, each in one message with the block, the thread and
   the source line.
5. `make grade STEP=NN` grades it as GitHub Classroom does on each push
   (`.github/workflows/classroom.yml`): on the CPU model, the tests, the sanitizers and the
   lesson, each counter of which must lie on stage NN's side of the course's own
   (`results/cpu_model/lesson_counters.csv`); `build/grade/report.md` says what to fix first.
   Your speed is graded by your instructor, on a GPU.

Stage NN+1's `reduce.cu` starts from the course's own stage NN: finish stage NN before you open it.

EOF
    if [ -n "$link" ]; then
        cat <<EOF
**On a free GPU.** \`$NOTEBOOK\` builds, runs, tests and times a stage on Google Colab's free
T4 GPU, in your browser, in a clone of $COURSE_URL; the badge opens it there:

$BADGE($link)
EOF
    else
        cat <<EOF
**On a free GPU.** \`$NOTEBOOK\` builds, runs, tests and times a stage on Google Colab's free
T4 GPU, in your browser: open it there (File > Open notebook > GitHub) from this handout's GitHub
copy, and set its COURSE_URL field to that copy's address.
EOF
    fi
    cat <<'EOF'

`make help` lists what else there is (`make run`, `make bench`, `make profile STEP=NN`, ...).
`make test` needs the Criterion library (and on the CPU model g++ and Boost.Context): `make deps`,
as root, installs them. On a GPU, `compute-sanitizer --tool racecheck build/stepNN` (and
`--tool memcheck`, `--tool synccheck`) checks a kernel for races, bad addresses and misplaced
barriers; `make test MODEL=cpu` runs the model's checks there too. Speed is measured on a GPU
only. `make diff` is not yours here: in the course repository it shows what each stage changed,
which is the exercise.

## Not in this handout
`README.md` describes the whole course repository. This handout leaves out:
EOF
    printf '%s\n' "${left[@]}"
}

main() {
    local out=${1:-build/handout}
    cd "$(dirname "${BASH_SOURCE[0]}")/.."
    git rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
        die "this folder is not a git checkout: make the handout in the course's repository."
    local dest=$out/reduction f entry i
    link= # global, for handout_readme: the Colab badge's link, where COURSE_URL is given
    if [ -n "${COURSE_URL:-}" ]; then
        link=$(colab_link)
        COURSE_URL=${COURSE_URL%/}
        COURSE_URL=${COURSE_URL%.git} # https://github.com/OWNER/REPO, what the notebook clones
    fi

    # The stages the harness runs (tools/stages.py); each must be in the handout.
    local stages=() s
    mapfile -t stages < <(python3 tools/stages.py list --kind cpu,gpu)
    [ ${#stages[@]} -ge 2 ] || die "no stages: the folders step00_name/, step01_name/ ... are missing."
    for s in "${stages[@]}"; do
        f=$(stage_file "$s")
        tracked "$f" || die "$f is not tracked by git: git add it first."
    done
    tracked "$GRADE_COUNTERS" || die "$GRADE_COUNTERS, the course's lesson counters that the" \
        "handout's make grade grades against, is not tracked by git: make it (python3" \
        "tests/lessons.py model-table build $GRADE_COUNTERS) and git add it."

    # The tracked files, as they are in the working tree (one deleted there is left out too).
    rm -rf "$dest" "$out/reduction.tar.gz"
    mkdir -p "$dest"
    while IFS= read -r -d '' f; do
        [ ! -e "$f" ] || cp -P --preserve=mode --parents "$f" "$dest"
    done < <(kept)

    # Stage NN: stage NN's opening comment, then the code of the stage it follows with NN's TODOs.
    prev=$(mktemp) # global: the EXIT trap runs after main has returned
    trap 'rm -f "$prev"' EXIT
    for ((i = 1; i < ${#stages[@]}; i++)); do
        f=$(stage_file "${stages[i]}")
        stage_code "$(python3 tools/stages.py previous "${stages[i]}")" > "$prev"
        s=${stages[i]}
        { prelude "$f"; todos "$prev" <(code "$f") "${s:4:2}"; } >"$dest/$s/reduce.cu"
    done
    # Each stage file's code fingerprint, comments and white space aside: the handout's make grade
    # gives nothing for a file still the handout's (tests/grader/submission.py).
    { echo "# stage, fingerprint of its handout file's code (python3 tests/grade.py --digest FILE)"
      for ((i = 1; i < ${#stages[@]}; i++)); do
          s=${stages[i]}
          echo "step${s:4:2} $(python3 tests/grade.py --digest "$dest/$s/reduce.cu")"
      done; } > "$dest/tests/handout.digests"

    # What is left out, for HANDOUT.md; the targets that need it, or that would mislead here, say
    # so instead.
    local stubs=() t p targets why says
    left=() # global, for handout_readme
    for entry in "${OMIT[@]}"; do
        IFS='|' read -r p targets why <<<"$entry"
        tracked "$p" || continue # not in this repository
        for t in $targets; do
            stubs+=("$t|not in this handout, which leaves out $p ($why).")
        done
        case $(wc -w <<<"$targets") in
            0) says="" ;;
            1) says="; \`make $targets\` says so" ;;
            *) says="; \`make ${targets// /\` and \`make }\` say so" ;;
        esac
        left+=("- \`$p\`: $why$says.")
    done
    { drop_rules grade "${stubs[@]%%|*}" "${STUBS[@]%%|*}" < Makefile
      handout_grade
      stub_rules "${stubs[@]}" "${STUBS[@]}"; } > "$dest/Makefile"
    mkdir -p "$dest/$(dirname "$WORKFLOW")"
    classroom_workflow $(python3 tools/stages.py list --kind gpu) > "$dest/$WORKFLOW"
    # COURSE_URL: the README's badge opens the notebook from that copy, which the notebook clones.
    if [ -n "$link" ]; then
        [ -f "$dest/$NOTEBOOK" ] || die "$NOTEBOOK is not in the handout: git add it first."
        [ "$(grep -c "^$(escape "$BADGE")(" "$dest/README.md")" -eq 1 ] ||
            die "README.md needs one line that starts with the Colab badge, $BADGE(...)."
        sed -i "s|^\\($(escape "$BADGE")\\)([^)]*)|\\1($link)|" "$dest/README.md"
        python3 tools/notebook.py "$NOTEBOOK" --set COURSE_URL="$COURSE_URL" \
            --write "$dest/$NOTEBOOK"
    fi
    handout_readme "${stages[@]}" > "$dest/HANDOUT.md"

    # One tarball, the same bytes for the same files: sorted, no owner, the commit's time.
    tar -C "$out" --sort=name --owner=0 --group=0 --numeric-owner \
        --mtime="@$(git log -1 --format=%ct)" -cf - reduction | gzip -n > "$out/reduction.tar.gz"
    echo "handout: $dest/ and $out/reduction.tar.gz ($(find "$dest" -type f | wc -l) files; stages ${stages[1]:4:2} to ${stages[-1]:4:2} to write)"
    [ -z "$link" ] || echo "handout: its Colab badge opens $link"
}

if [[ ${BASH_SOURCE[0]} == "$0" && ${1:-} == --stage-code ]]; then
    cd "$(dirname "${BASH_SOURCE[0]}")/.." && stage_code "${2:?usage: handout.sh --stage-code STAGE_DIR}"
elif [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    main "$@"
fi
