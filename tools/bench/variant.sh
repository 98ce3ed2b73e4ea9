#!/usr/bin/env bash
# variant.sh PATCH OUT: writes OUT, the stage file that PATCH changes, with the patch applied.
# PATCH is stepNN_name/variants/NAME.patch (a variant: the stage with one change, a COARSE_FACTOR,
# the lecture's grid, half of a lesson) or stepNN_name/mutants/NAME.patch (a known-wrong kernel),
# a diff of the file its first "--- " line names, from the stage's folder: `--- reduce.cu`, the
# folder's own, or `--- ../step06_coarsened/reduce.cu`, the stage it follows (half of this stage's
# lesson made there). Kept as a patch so that the stage's file stays the one place its kernel is
# written; `make variants` measures each variant against CUB in the same run. A mutant's patch
# opens with a description, which patch(1) skips.
set -euo pipefail
patch_file=$1 out=$2
folder=$(dirname "$(dirname "$patch_file")")
base=$folder/$(sed -n '/^--- /{s/^--- //p;q}' "$patch_file")
if [ ! -f "$base" ]; then
    echo "variant.sh: $patch_file names '${base#"$folder"/}' on its first '--- ' line, which is no file of $folder/." >&2
    exit 2
fi
if ! patch --quiet --force --output="$out" "$base" <"$patch_file" >/dev/null; then
    rm -f "$out"
    echo "variant.sh: $patch_file no longer applies to $base: remake it from the stage (diff -u)." >&2
    exit 1
fi
