#!/usr/bin/env bash
# Prints the path of a python3 that can import matplotlib (for tools/bench/plot.py): python3, else
# /usr/bin/python3; as root with apt-get, installs Debian's python3-matplotlib; otherwise explains
# what is missing and exits 1.
set -u
for py in python3 /usr/bin/python3; do
    path=$(command -v "$py") && "$path" -c 'import matplotlib' 2>/dev/null && { echo "$path"; exit 0; }
done
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    echo "python.sh: no python3 with matplotlib; installing Debian's python3-matplotlib" >&2
    apt-get update -qq >/dev/null 2>&1 &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            python3-matplotlib >/dev/null 2>&1 &&
        /usr/bin/python3 -c 'import matplotlib' 2>/dev/null && { echo /usr/bin/python3; exit 0; }
    echo "python.sh: installing python3-matplotlib failed" >&2
    exit 1
fi
echo "python.sh: no python3 can import matplotlib; install it (Debian/Ubuntu: apt-get install" \
     "python3-matplotlib, or: pip install matplotlib) and retry." >&2
exit 1
