#!/usr/bin/env bash
# variant.sh PATCH OUT: writes OUT, the stage file that PATCH (bench/variants/NAME.patch) changes,
# with the patch applied. A variant is one stage with one change (a COARSE_FACTOR, the lecture's
# grid, half of a lesson), kept as a patch so that the stage's file stays the one place its
# kernel is written; `make variants` measures each against CUB in the same run. The known-wrong
# kernels of tests/mutants/ are made the same way; their patches open with a description, which
# patch(1) skips: the stage file is named on the first line that starts with "--- ".
set -euo pipefail
patch_file=$1 out=$2
base=$(sed -n '/^--- /{s/^--- //p;q}' "$patch_file")
if [ ! -f "$base" ]; then
    echo "variant.sh: $patch_file names '$base' on its first '--- ' line, which is no stage file." >&2
    exit 2
fi
if ! patch --quiet --force --output="$out" "$base" <"$patch_file" >/dev/null; then
    rm -f "$out"
    echo "variant.sh: $patch_file no longer applies to $base: remake it from the stage (diff -u)." >&2
    exit 1
fi
