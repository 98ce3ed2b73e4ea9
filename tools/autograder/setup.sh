#!/usr/bin/env bash
# setup.sh: the Gradescope autograder's setup (tools/autograder/build.sh puts it at the root of
# autograder.zip). Gradescope runs it once, as root, on its Ubuntu image (22.04 or 24.04), when
# it builds the autograder's image (https://gradescope-autograders.readthedocs.io/en/latest/specs/).
# It installs what the course's `make grade` needs on the CPU model: make, g++ and python3 with
# apt (none of it when all three are there), then Criterion, g++ and Boost.Context through the
# course's own `make deps MODEL=cpu` (tests/deps.sh: apt's libcriterion-dev, g++,
# libboost-context-dev); no CUDA toolkit. Then it grades the course's own file of the stage once,
# as a submission: that builds every program a student's grade reuses (each submission then
# builds only its own file), and proves that this image grades, before any student submits.
# Usage: setup.sh, with AUTOGRADER_ROOT (default /autograder) laid out as Gradescope lays it out:
# source/ holds the unzipped bundle (autograder.env, course/). AUTOGRADER_SETUP_PROOF=0 leaves the
# proof out (tests/check_autograder.sh, whose first submission is the same file, graded the same).
# Exit status: 0 ready; 1 an install failed, or the course's own file did not get every point
# that is graded (the image's build then fails on Gradescope, with this output).
set -euo pipefail
ROOT=${AUTOGRADER_ROOT:-/autograder}
SOURCE=$ROOT/source
COURSE=$SOURCE/course
export DEBIAN_FRONTEND=noninteractive
die() { echo "setup.sh: $*" >&2; exit 1; }
[ -f "$SOURCE/autograder.env" ] && [ -d "$COURSE" ] ||
    die "$SOURCE holds no autograder.env and course/: unzip make autograder's bundle there."
source "$SOURCE/autograder.env" # STEP, STAGE, COURSE_COMMIT
chmod 755 "$SOURCE/run_autograder" "$SOURCE/setup.sh" 2>/dev/null || true

# What the course's Makefile itself needs before `make deps` can run.
missing=()
for tool in make:make g++:g++ python3:python3 bwrap:bubblewrap; do
    command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "setup.sh: make, g++, python3 and bwrap are here: nothing to install with apt."
else
    [ "$(id -u)" -eq 0 ] || die "${missing[*]} missing, and only root can install them."
    echo "setup.sh: apt-get install ${missing[*]}"
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
fi
make -C "$COURSE" --no-print-directory deps MODEL=cpu

# The course's own file of the stage, graded as a student's: the image's proof, and its builds.
if [ "${AUTOGRADER_SETUP_PROOF:-1}" = 0 ]; then
    echo "setup.sh: AUTOGRADER_SETUP_PROOF=0: no proof; the first grade builds what it needs."
    exit 0
fi
echo "setup.sh: grading the course's own $STAGE/reduce.cu as a submission (the image's proof)"
work=$(mktemp -d "$ROOT/setup.XXXXXX") # outside /tmp, as run_autograder's (it says why)
trap 'rm -rf "$work"' EXIT
mkdir "$work/course"
cp "$COURSE/$STAGE/reduce.cu" "$work/course/reduce.cu"
status=0
make -C "$COURSE" --no-print-directory grade STEP="$STEP" SRC="$work/course/reduce.cu" \
    MODEL=cpu GRADE_OUT="$work/out" || status=$?
python3 - "$work/out/course/results.json" <<'PY' || die "the course's own $STAGE did not get \
every point that is graded (make grade exited with status $status): this image cannot grade."
import json, sys
r = json.load(open(sys.argv[1]))
most = sum(t["max_score"] for t in r["tests"])
print("setup.sh: the course's own file: %g of %g points" % (r["score"], most))
sys.exit(not (most > 0 and r["score"] == most))
PY
echo "setup.sh: ready to grade stage $STEP ($STAGE), course $COURSE_COMMIT, on the CPU model."
