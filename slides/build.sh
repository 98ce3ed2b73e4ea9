#!/usr/bin/env bash
# build.sh: the lecture deck, build/slides/reduction.pdf (16:9), from slides/reduction.md. `make slides`.
#
# pandoc + slides/include.lua turn the Markdown into Beamer LaTeX, pulling in the code between the
# `// BEGIN region` and `// END region` markers of the stage sources, the diffs of common/diff.sh
# (what `make diff STEP=NN` shows) and the numbers of the newest bench/*/results.csv; LuaLaTeX makes
# the PDF. Nothing needs the network once the packages are installed: as root on Debian or Ubuntu
# this installs them with apt-get; otherwise it names them and stops.
#
# Beamer clips nothing and warns of nothing, so the build checks what LaTeX did: a code line wider
# than its frame, or a frame whose content runs into the footline, fails the build (page and title).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

out=build/slides
packages=(pandoc texlive-latex-recommended texlive-pictures lmodern texlive-luatex fonts-dejavu-core)

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'install ok installed' ||
            missing+=("$p")
    done
elif ! { command -v pandoc && command -v lualatex && kpsewhich beamer.cls tikz.sty; } >/dev/null 2>&1
then
    echo "make slides needs pandoc (2.17 or later), LuaLaTeX with beamer, TikZ, fontspec, fancyvrb" \
        "and booktabs, the Latin Modern fonts and DejaVu Sans Mono" \
        "(Debian/Ubuntu: ${packages[*]})." >&2
    exit 1
fi
if ((${#missing[@]})); then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "make slides: installing ${missing[*]}" >&2
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            "${missing[@]}" >/dev/null
    else
        echo "make slides needs these packages: ${missing[*]}" >&2
        echo "  as root: apt-get install --no-install-recommends ${missing[*]}" >&2
        exit 1
    fi
fi

# The measurements: the newest results.csv, and the plot beside it (or the newest plot).
csv=$(ls -t bench/*/results.csv 2>/dev/null | head -n 1 || true)
plot=
if [ -n "$csv" ] && [ -f "$(dirname "$csv")/bandwidth.png" ]; then
    plot=$(dirname "$csv")/bandwidth.png
else
    plot=$(ls -t bench/*/bandwidth.png 2>/dev/null | head -n 1 || true)
fi
[ -n "$csv" ] || echo "make slides: no bench/*/results.csv: the numbers say to run make bench" >&2

mkdir -p "$out"
rm -f "$out/reduction.pdf" "$out/reduction-overflowing.pdf"
SLIDES_CSV=$csv SLIDES_PLOT=$plot pandoc slides/reduction.md --from markdown --to beamer \
    --standalone --slide-level=2 --lua-filter=slides/include.lua \
    --syntax-definition=slides/cuda.xml --highlight-style=slides/highlight.theme \
    --include-in-header=slides/preamble.tex --variable=aspectratio:169 \
    --output="$out/reduction.tex"

# LuaLaTeX caches its font names in TEXMFVAR (~/.texlive*): under build/ when that is not writable.
texmfvar=$(kpsewhich -var-value TEXMFVAR 2>/dev/null || true)
if [ -z "$texmfvar" ] || ! mkdir -p "$texmfvar" 2>/dev/null || [ ! -w "$texmfvar" ]; then
    export TEXMFVAR=$PWD/$out/texmf-var
fi

# Twice: the second run has the frame count and the PDF outline. max_print_line: one log line per
# check, unwrapped. Run from the repository root, so that the plot's path resolves.
latex() {
    if ! max_print_line=10000 lualatex --interaction=nonstopmode --halt-on-error \
        --output-directory="$out" "$out/reduction.tex" >"$out/lualatex.out" 2>&1; then
        grep -A 12 '^!' "$out/reduction.log" >&2 || tail -n 30 "$out/lualatex.out" >&2
        echo "make slides: lualatex failed; the log is $out/reduction.log" >&2
        exit 1
    fi
}
latex
latex

# The checks: every frame's content ends above the footline (y counts up from the page's bottom),
# no code line is wider than its frame.
problems=$(awk '
    function field(name,   i) { for (i = 2; i <= NF; i++) if (index($i, name "=") == 1)
                                    return substr($i, length(name) + 2) }
    /^SLIDECHECK-FOOT / { foot[field("page")] = field("y") + 0 }
    /^SLIDECHECK-END /  { p = field("page"); end_y[p] = field("y") + 0; n++
                          t = $0; sub(/^SLIDECHECK-END page=[0-9]+ y=-?[0-9]+ /, "", t); title[p] = t }
    /^SLIDECHECK-WIDE / { wide[field("page")] = field("by") }
    END {
        for (p in end_y) if (p in foot && end_y[p] < foot[p])
            printf "%d\tpage %d (\"%s\"): the content runs %.1fpt into the footline or off the page\n",
                   p, p, title[p], (foot[p] - end_y[p]) / 65536
        for (p in wide)
            printf "%d\tpage %d (\"%s\"): a code line is %s wider than the frame\n", p, p, title[p], wide[p]
        if (n == 0) print "0\tno SLIDECHECK lines in the log: is slides/preamble.tex included?"
    }' "$out/reduction.log" | sort -n | cut -f 2-)
if [ -n "$problems" ]; then
    sed 's/^/make slides: /' <<<"$problems" >&2
    mv -f "$out/reduction.pdf" "$out/reduction-overflowing.pdf"
    echo "make slides: FAILED: Beamer would cut these pages off (see $out/reduction-overflowing.pdf);" \
        "shorten or split them in slides/reduction.md, or the region in the stage source." >&2
    exit 1
fi
# Other overfull lines (text, tables): not fatal, but said.
grep -E '^Overfull \\hbox \(([2-9]|[1-9][0-9]+)\.' "$out/reduction.log" | sort | uniq -c |
    sed 's/^/make slides: warning: /' >&2 || true

pages=$(sed -n 's/^Output written on .* (\([0-9]*\) pages.*/\1/p' "$out/reduction.log")
echo "make slides: wrote $out/reduction.pdf ($pages pages${csv:+, numbers from $csv})"
