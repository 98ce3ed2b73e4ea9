#!/usr/bin/env bash
# build.sh (make slides): the lecture deck, build/slides/reduction.pdf (16:9), from reduction.md.
# pandoc with slides/include.lua (the stages' code, the measurements), then LuaLaTeX. As root on
# Debian or Ubuntu it installs what it needs, else names it. It fails on the SLIDECHECK lines that
# slides/preamble.tex logs: a code line wider than its frame, a frame that runs into the footline.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=build/slides

pkgs=(pandoc texlive-latex-recommended texlive-pictures lmodern texlive-luatex fonts-dejavu-core)
[ -f figures/mapping.py ] && pkgs+=(python3)
missing=()
command -v dpkg-query >/dev/null && for p in "${pkgs[@]}"; do # without dpkg: what is there
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if ((${#missing[@]})) && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    echo "make slides: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive && apt-get -qq update >/dev/null
    apt-get -qq install -y --no-install-recommends "${missing[@]}" >/dev/null
elif ((${#missing[@]})); then
    echo "make slides needs these packages; as root: apt-get install --no-install-recommends" \
        "${missing[*]}" >&2
    exit 1
fi

# One figure per GPU stage, \input by reduction.md: figures/mapping.py's, else a placeholder.
mkdir -p "$out" build/figures
if [ -f figures/mapping.py ]; then
    python3 figures/mapping.py --tex build/figures
else
    for dir in step0[1-9]_*/; do echo '\deckfigureplaceholder' >"build/figures/${dir%%_*}.tex"; done
fi

rm -f "$out/reduction.pdf" "$out/reduction-overflowing.pdf"
pandoc slides/reduction.md --to beamer --standalone --slide-level=2 --columns=150 \
    --lua-filter=slides/include.lua --syntax-definition=slides/cuda.xml \
    --highlight-style=slides/highlight.theme --include-in-header=slides/preamble.tex \
    --variable=aspectratio:169 --output="$out/reduction.tex"

# LuaLaTeX caches its font names in TEXMFVAR (~/.texlive*): under build/ when that is not writable.
texmfvar=$(kpsewhich -var-value TEXMFVAR 2>/dev/null || true)
mkdir -p "$texmfvar" 2>/dev/null && [ -w "$texmfvar" ] || export TEXMFVAR=$PWD/$out/texmf-var
for run in 1 2; do # the second run knows the frame count; max_print_line: one log line a check
    max_print_line=10000 lualatex -interaction=nonstopmode -halt-on-error -output-directory="$out" \
        "$out/reduction.tex" >"$out/lualatex.out" 2>&1 || { grep -A 8 '^!' "$out/reduction.log" >&2
        echo "make slides: lualatex failed; the log is $out/reduction.log" >&2; exit 1; }
done

if grep -q '^SLIDECHECK: ' "$out/reduction.log"; then
    sed -n 's/^SLIDECHECK: /make slides: /p' "$out/reduction.log" | sort -s -n -k4,4 | uniq >&2
    mv "$out/reduction.pdf" "$out/reduction-overflowing.pdf"
    echo "make slides: FAILED: shorten or split these frames in slides/reduction.md (they are in" \
        "$out/reduction-overflowing.pdf)." >&2
    exit 1
fi
grep '^Overfull \\hbox' "$out/reduction.log" | sed 's/^/make slides: warning: /' >&2 || true
pages=$(sed -n 's/^Output written on .* (\([0-9]*\) pages.*/\1/p' "$out/reduction.log")
echo "make slides: wrote $out/reduction.pdf ($pages pages)"
