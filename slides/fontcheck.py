#!/usr/bin/env python3
"""fontcheck.py: fails when any text of a finished deck would print below a minimum size.

    python3 slides/fontcheck.py DECK.pdf [--min 8]

Reads every character of the PDF with pdfminer.six and takes its size as it prints on the page:
the font size times the text matrix and every transformation around it (\\resizebox, Beamer's
shrink, a TikZ picture scaled down), on Beamer's 16:9 page, 160 mm x 90 mm. For each page that has
smaller text it prints one line, "page P: 6.1 pt: the text ...", the smallest size first, and exits
1; exits 0 when no character is smaller than --min TeX points, within 0.15 pt. Text in a raster
image (a PNG plot) is not text to it: look at those.
"""
import argparse
import sys

try:
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LTChar, LTContainer
except ImportError:
    sys.exit("fontcheck.py: needs pdfminer.six (Debian: apt-get install python3-pdfminer; "
             "else: pip install pdfminer.six)")

PT_PER_BP = 72.27 / 72  # a TeX point is a little smaller than a PDF one
SLACK = 0.15  # 8 pt within 0.15: a superscript of the body text (LuaLaTeX's 7.89 pt) passes


def chars(obj):
    """Every LTChar under a layout object, in the order pdfminer found them."""
    if isinstance(obj, LTChar):
        yield obj
    elif isinstance(obj, LTContainer):
        for child in obj:
            yield from chars(child)


def small_text(page, minimum):
    """The runs of characters below minimum on one page: [size, text], a run a line of one size."""
    runs, last = [], None
    for c in chars(page):
        size = c.size * PT_PER_BP
        if size >= minimum - SLACK or not c.get_text().strip():
            last = None
            continue
        key = round(size, 1)
        if last is not None and last[0] == key and abs(c.y0 - last[1]) < 2:
            runs[-1][1] += (" " if c.x0 - last[2] > 0.2 * c.size else "") + c.get_text()
        else:
            runs.append([key, c.get_text()])
        last = (key, c.y0, c.x1)
    return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pdf")
    ap.add_argument("--min", type=float, default=8.0, help="the smallest size allowed, in pt")
    args = ap.parse_args()
    bad = False
    for number, page in enumerate(extract_pages(args.pdf), 1):
        runs = sorted(small_text(page, args.min), key=lambda r: r[0])  # the smallest first
        texts = [f"{size:g} pt '{' '.join(text.split())[:40]}'" for size, text in runs]
        if texts:
            bad = True
            print(f"page {number}: {runs[0][0]:g} pt: " + "; ".join(texts[:6])
                  + (f"; and {len(texts) - 6} more" if len(texts) > 6 else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
