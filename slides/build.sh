#!/usr/bin/env bash
# build.sh (make slides): the lecture deck, build/slides/reduction.pdf (16:9, stages 0-7), its
# speaker notes, build/slides/reduction-notes.pdf (a page per frame: the frame's last slide and
# its note), and the appendix, build/slides/appendix.pdf (stages 8 and 9) with its notes, from
# slides/*.md: pandoc with slides/include.lua (the stages' code, the measurements), then LuaLaTeX
# (a second pass with Beamer's "show only notes" for the notes). As root on Debian or Ubuntu it
# installs what it needs, else names it.
#
# A deck fails, kept as build/slides/DECK-failed.pdf, on:
# - a SLIDECHECK line of slides/preamble.tex: a code line wider than its frame, a frame that runs
#   into the footline;
# - text too small on the 160 mm x 90 mm page, after every scaling (slides/fontcheck.py reads the
#   finished PDF with pdfminer.six): body text, tables, captions, figure labels and math at least
#   10 pt; two roles at least 9 pt, and nothing anywhere below: the note under a table and the
#   footline (\decknote, marked /DeckNote), and code blocks (marked /DeckCode: 10 pt where a block
#   fits, 9 pt for one of more than 14 lines or 90 columns). preamble.tex writes each role as a PDF
#   marked-content sequence (BMC ... EMC) around its text, which is how fontcheck.py tells a role
#   from the body; a figure's labels are enlarged by \deckfigure until they print at 10 pt;
# - more pages than its limit: the lecture at most 80 (52 frames; the tree figures build up a
#   round a slide, 2 to 4 slides each, and a build-up slide takes seconds: a 90-minute lecture),
#   the appendix at most 18;
# - a frame without speaker notes (::: notes), the title's included (title-note:).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=build/slides
declare -A limit=([reduction]=80 [appendix]=18)
declare -A notes_required=([reduction]=1 [appendix]=1)

pkgs=(pandoc texlive-latex-recommended texlive-pictures lmodern texlive-luatex fonts-dejavu-core
    python3 python3-pdfminer python3-matplotlib)
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

# The python that reads the PDFs (pdfminer.six) and runs slides/tables.py: `python3` or Debian's,
# preferring one with matplotlib too (tools/bench/harris.py's plot, else a line naming its command).
SLIDES_PYTHON=
for need in 'import pdfminer, matplotlib' 'import pdfminer'; do
    for py in python3 /usr/bin/python3; do
        [ -z "$SLIDES_PYTHON" ] && "$py" -c "$need" 2>/dev/null && SLIDES_PYTHON=$(command -v "$py")
    done
done
[ -n "$SLIDES_PYTHON" ] || { echo "make slides: no python3 imports pdfminer (the font-size" \
    "check): apt-get install python3-pdfminer, or pip install pdfminer.six" >&2; exit 1; }
export SLIDES_PYTHON
# The GPU whose measurements (results/GPU/) the decks show: the one the lessons quote.
export SLIDES_GPU=${SLIDES_GPU:-NVIDIA_H200}

# The figures \input by the decks: tools/figures/mapping.py's (stages 1-7, coalescing, coarsening).
mkdir -p "$out" build/figures
"$SLIDES_PYTHON" tools/figures/mapping.py --tex build/figures

# LuaLaTeX caches its font names in TEXMFVAR (~/.texlive*): under build/ when that is not writable.
texmfvar=$(kpsewhich -var-value TEXMFVAR 2>/dev/null || true)
mkdir -p "$texmfvar" 2>/dev/null && [ -w "$texmfvar" ] || export TEXMFVAR=$PWD/$out/texmf-var

failed=()
for deck in reduction appendix; do
    rm -f "$out/$deck.pdf" "$out/$deck-failed.pdf"
    pandoc "slides/$deck.md" --to beamer --standalone --slide-level=2 --columns=150 \
        --lua-filter=slides/include.lua --syntax-definition=slides/cuda.xml \
        --highlight-style=slides/highlight.theme --include-in-header=slides/preamble.tex \
        --variable=aspectratio:169 --output="$out/$deck.tex"
    for run in 1 2; do # the second run knows the frame count; max_print_line: one log line a check
        max_print_line=10000 lualatex -interaction=nonstopmode -halt-on-error \
            -output-directory="$out" "$out/$deck.tex" >"$out/lualatex.out" 2>&1 || {
            grep -A 8 '^!' "$out/$deck.log" >&2
            echo "make slides: lualatex failed; the log is $out/$deck.log" >&2; exit 1; }
    done
    bad=
    if grep -q '^SLIDECHECK: ' "$out/$deck.log"; then
        sed -n "s/^SLIDECHECK: /make slides: $deck.pdf: /p" "$out/$deck.log" | sort -s -n -k5,5 |
            uniq >&2
        bad=1
    fi
    if ! "$SLIDES_PYTHON" slides/fontcheck.py "$out/$deck.pdf" --body 10 --small 9 \
        --roles DeckNote,DeckCode >"$out/$deck.fontcheck"; then
        sed "s/^/make slides: $deck.pdf: text below its role's size (10 pt; notes, code 9 pt): /" \
            "$out/$deck.fontcheck" >&2
        bad=1
    fi
    # Every frame has its note: the frames of the .tex whose body has no \decknotes.
    if [ -n "${notes_required[$deck]:-}" ]; then
        bare=$(awk '/^\\begin\{frame\}/ { f = $0; n = 0 } /\\decknotes\{/ { n = 1 }
            /^\\end\{frame\}/ && !n { print f }' "$out/$deck.tex")
        grep -q "^\\\\note{% the title page's note" "$out/$deck.tex" || bare="the title page${bare:+
$bare}"
        if [ -n "$bare" ]; then
            sed "s/^/make slides: $deck.pdf: a frame without speaker notes (::: notes): /" \
                <<<"$bare" >&2
            bad=1
        fi
    fi
    pages=$(sed -n 's/^Output written on .* (\([0-9]*\) pages.*/\1/p' "$out/$deck.log")
    if ((pages > limit[$deck])); then
        echo "make slides: $deck.pdf has $pages pages, more than its ${limit[$deck]}" >&2
        bad=1
    fi
    sed -n "s/^Overfull \\\\hbox/make slides: warning: $deck.tex: &/p" "$out/$deck.log" >&2
    if [ -n "$bad" ]; then
        mv "$out/$deck.pdf" "$out/$deck-failed.pdf"
        failed+=("$deck")
        continue
    fi
    echo "make slides: wrote $out/$deck.pdf ($pages pages, at most ${limit[$deck]})"
    # The notes: the same .tex with Beamer's "show only notes", a page per frame with a note.
    rm -f "$out/$deck-notes.pdf"
    grep -q '\\decknotes{' "$out/$deck.tex" || continue
    sed 's/^\\begin{document}$/\\setbeameroption{show only notes}\n&/' "$out/$deck.tex" \
        >"$out/$deck-notes.tex"
    for run in 1 2; do
        max_print_line=10000 lualatex -interaction=nonstopmode -halt-on-error \
            -output-directory="$out" "$out/$deck-notes.tex" >"$out/lualatex.out" 2>&1 || {
            grep -A 8 '^!' "$out/$deck-notes.log" >&2
            echo "make slides: lualatex failed; the log is $out/$deck-notes.log" >&2; exit 1; }
    done
    notes=$(sed -n 's/^Output written on .* (\([0-9]*\) pages.*/\1/p' "$out/$deck-notes.log")
    echo "make slides: wrote $out/$deck-notes.pdf ($notes pages of speaker notes)"
done
if ((${#failed[@]})); then
    echo "make slides: FAILED: ${failed[*]}: shorten, split or enlarge what is named above in" \
        "slides/*.md (the decks are kept as $out/DECK-failed.pdf)." >&2
    exit 1
fi
