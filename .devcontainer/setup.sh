#!/usr/bin/env bash
# The dev container's set-up (GitHub Codespaces, VS Code): on Debian 12, what the README's quick
# start needs, installed by the README's own command, so that `make run`, `make test` and
# `make grade` run on the CPU model at once. CI runs this script on its own fresh Debian 12.
set -euo pipefail
cd "$(dirname "$0")/.."
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
missing=()
for tool in make:make python3:python3 pip3:python3-pip; do
    command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
fi
as_root make --no-print-directory deps MODEL=cpu SANDBOX=1
echo "setup.sh: ready: make run, make test, make step04 && build/step04 (on the CPU model)"
