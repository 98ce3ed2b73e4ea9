#!/usr/bin/env bash
# vendor_nbclient.sh [PYTHON_VERSION...]: downloads the wheels of nbclient, nbformat and ipykernel
# and of everything they need (tools/notebook.py runs the Colab notebook with them) into
# third_party/wheels/, which git ignores, for Linux x86-64 (manylinux, glibc 2.28 or later) and each
# PYTHON_VERSION (default 3.11 to 3.14), so that a machine with no network installs them from there:
#   python3 -m pip install --no-index --find-links third_party/wheels nbclient nbformat ipykernel
# Needs the network and pip. pip download picks each version's wheels but evaluates dependencies'
# markers (`exceptiongroup; python_version < "3.11"`) for the python3 that runs it: run it with the
# oldest version it is for. Not 3.10: ipykernel 7.4 and IPython 9 need 3.11, and pip, offline,
# stops at a wheel that needs a newer Python instead of taking an older one.
set -euo pipefail
DEST="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/third_party/wheels"
PLATFORMS=(manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_26_x86_64
           manylinux_2_24_x86_64 manylinux2014_x86_64)
[ "$#" -gt 0 ] || set -- 3.11 3.12 3.13 3.14
here=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
oldest=$(printf '%s\n' "$@" | sort -V | head -1)
[ "$(printf '%s\n' "$here" "$oldest" | sort -V | head -1)" = "$here" ] ||
    echo "vendor_nbclient.sh: warning: python3 is $here, newer than $oldest: a dependency that" \
         "only Python $oldest needs may be missing (run this with python$oldest)" >&2
mkdir -p "$DEST"
for version in "$@"; do
    echo "vendor_nbclient.sh: Python $version"
    python3 -m pip download -q --disable-pip-version-check --dest "$DEST" --only-binary=:all: \
        --implementation cp --python-version "$version" "${PLATFORMS[@]/#/--platform=}" \
        nbclient nbformat "ipykernel>=7.3"
done
echo "vendor_nbclient.sh: $(find "$DEST" -name '*.whl' | wc -l) wheels," \
     "$(du -sh "$DEST" | cut -f1), in $DEST"
