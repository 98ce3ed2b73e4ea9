#!/usr/bin/env bash
# build.sh STEP [OUT]: `make autograder STEP=NN`, a Gradescope autograder for one stage, graded on
# the CPU model: OUT/stepNN/autograder.zip (OUT: build/autograder), and beside it the same files
# unzipped, autograder/, to read. Gradescope's autograder specification
# (https://gradescope-autograders.readthedocs.io/en/latest/specs/) asks for a zip whose root holds
# setup.sh (run once, as root, when Gradescope builds the autograder's image) and run_autograder
# (run for each submission, in /autograder; it writes /autograder/results/results.json). Ours
# holds those two (this folder's setup.sh and run_autograder), autograder.env (the stage, and the
# commit it was made from) and course/: this repository's tracked files as they are in the working
# tree, solutions included, since make grade measures the course's own stages in each run. The
# bundle is the instructor's: keep it private. tests/check_autograder.sh proves it without
# Gradescope. STEP: a GPU stage, as tools/stages.py takes it (05, 5, step05, step05_segmented).
# Exit status: 0 made; 2 bad usage (STEP is not one GPU stage); 1 anything else.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

die() { echo "make autograder: $*" >&2; exit "${status:-1}"; }
usage() {
    status=2 die "$* Give one GPU stage: make autograder STEP=NN, NN from" \
        "$(python3 tools/stages.py list --kind gpu --short | sed -n '1s/step//p;$s/step/to /p' |
            paste -sd ' ')."
}

[ $# -ge 1 ] && [ $# -le 2 ] && [ -n "$1" ] || usage "No stage given."
[[ $1 != *' '* ]] || usage "A bundle grades one stage (got '$1')."
stage=$(python3 tools/stages.py get "$1" name 2>/dev/null) || usage "'$1' is no stage."
[ "$(python3 tools/stages.py get "$stage" kind)" = gpu ] ||
    usage "$stage is not a GPU stage (make grade grades only those)."
short=$(python3 tools/stages.py get "$stage" short)
out=${2:-build/autograder}/$short
git rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
    die "this folder is not a git checkout: make the autograder in the course's repository."
git ls-files --error-unmatch "$(python3 tools/stages.py get "$stage" source)" >/dev/null 2>&1 ||
    die "$stage's reduce.cu is not tracked by git: git add it first."

rm -rf "$out"
mkdir -p "$out/autograder/course"
while IFS= read -r -d '' f; do # the tracked files; one deleted in the working tree is left out
    [ ! -e "$f" ] || cp -P --preserve=mode --parents "$f" "$out/autograder/course"
done < <(git ls-files -z)
cp --preserve=mode tools/autograder/setup.sh tools/autograder/run_autograder "$out/autograder/"
chmod 755 "$out/autograder/setup.sh" "$out/autograder/run_autograder"
commit=$(git describe --always --dirty)
cat > "$out/autograder/autograder.env" <<EOF
# make autograder (tools/autograder/build.sh): what this Gradescope bundle grades.
STEP=${short#step}
STAGE=$stage
COURSE_COMMIT=$commit
EOF

# The zip: files only, sorted, each with its mode bits and the commit's time (the same bytes for
# the same files), setup.sh and run_autograder at its root.
python3 - "$out/autograder" "$out/autograder.zip" "$(git log -1 --format=%ct)" <<'PY'
import os, sys, time, zipfile
root, dest, when = sys.argv[1], sys.argv[2], time.gmtime(int(sys.argv[3]))[:6]
files = sorted(os.path.relpath(os.path.join(d, f), root)
               for d, _, fs in os.walk(root) for f in fs)
with zipfile.ZipFile(dest + ".part", "w", zipfile.ZIP_DEFLATED) as z:
    for f in files:
        info = zipfile.ZipInfo(f, max(when, (1980, 1, 1, 0, 0, 0)))
        info.external_attr = (os.stat(os.path.join(root, f)).st_mode & 0xFFFF) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        with open(os.path.join(root, f), "rb") as fh:
            z.writestr(info, fh.read())
os.replace(dest + ".part", dest)
PY

untracked=$(git ls-files --others --exclude-standard | wc -l)
[ "$untracked" -eq 0 ] || echo "make autograder: left out $untracked files that git does not" \
    "track ($(git ls-files --others --exclude-standard | head -n 3 | paste -sd ' ')...):" \
    "git add them to ship them."
echo "autograder: $out/autograder.zip ($stage, course $commit, $(du -h "$out/autograder.zip" |
    cut -f1)): upload it as the Gradescope assignment's autograder (Ubuntu 22.04 or 24.04 base" \
    "image); it holds the course's solutions, so keep it private."
