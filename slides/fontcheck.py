#!/usr/bin/env python3
"""fontcheck.py: fails when any text of a finished deck prints smaller than its role allows.

    python3 slides/fontcheck.py DECK.pdf [--body 10] [--small 9] [--roles DeckNote,DeckCode]

Reads every character of the PDF with pdfminer.six and takes its size as it prints on the page:
the font size times the text matrix and every transformation around it (\\scalebox, Beamer's
shrink, a TikZ picture scaled), on Beamer's 16:9 page, 160 mm x 90 mm. A character's role is the
PDF marked-content sequence around it (slides/preamble.tex writes /DeckNote BMC ... EMC around a
note under a table and the footline, /DeckCode around a code block): in one of --roles it may be
as small as --small TeX points; any other text (body, tables, captions, figure labels, math) at
least --body. Within 0.15 pt either way. For each page with smaller text it prints one line,
"page P: 8.1 pt: the text ...", the smallest first, and exits 1; else 0. --stats prints, per
role, how many characters print at each size. Text in a raster image (a PNG plot) is not text to
it: look at those.
"""
import argparse
import collections
import sys

try:
    from pdfminer.converter import PDFPageAggregator
    from pdfminer.layout import LTChar, LTContainer
    from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
    from pdfminer.pdfpage import PDFPage
except ImportError:
    sys.exit("fontcheck.py: needs pdfminer.six (Debian: apt-get install python3-pdfminer; "
             "else: pip install pdfminer.six)")

PT_PER_BP = 72.27 / 72  # a TeX point is a little smaller than a PDF one
SLACK = 0.15


class Roles(PDFPageAggregator):
    """pdfminer's layout device, which also marks each character with the innermost marked-content
    tag around it (its role), or None."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.tags = []

    def begin_tag(self, tag, props=None):
        self.tags.append(getattr(tag, "name", str(tag)))

    def end_tag(self):
        if self.tags:
            self.tags.pop()

    def render_char(self, *args, **kwargs):
        adv = super().render_char(*args, **kwargs)
        self.cur_item._objs[-1].role = self.tags[-1] if self.tags else None
        return adv


def pages(path):
    """The layout of each page, every LTChar with its .role."""
    manager = PDFResourceManager()
    device = Roles(manager, laparams=None)
    interpreter = PDFPageInterpreter(manager, device)
    with open(path, "rb") as f:
        for page in PDFPage.get_pages(f):
            device.tags = []
            interpreter.process_page(page)
            yield device.get_result()


def chars(obj):
    """Every LTChar under a layout object, in the order pdfminer found them."""
    if isinstance(obj, LTChar):
        yield obj
    elif isinstance(obj, LTContainer):
        for child in obj:
            yield from chars(child)


def small_text(page, minimum):
    """The runs of characters below their minimum on one page: [size, text], a run a line of one
    size. minimum(role) gives the least size of a role."""
    runs, last = [], None
    for c in chars(page):
        size = c.size * PT_PER_BP
        if size >= minimum(c.role) - SLACK or not c.get_text().strip():
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
    ap.add_argument("--body", type=float, default=10.0, help="the least size of any text, in pt")
    ap.add_argument("--small", type=float, default=9.0, help="the least size in --roles, in pt")
    ap.add_argument("--roles", default="DeckNote,DeckCode",
                    help="the marked-content tags whose text may print at --small")
    ap.add_argument("--stats", action="store_true", help="characters per role and size")
    args = ap.parse_args()
    roles = set(filter(None, args.roles.split(",")))
    minimum = lambda role: args.small if role in roles else args.body  # noqa: E731
    bad, stats = False, collections.Counter()
    for number, page in enumerate(pages(args.pdf), 1):
        if args.stats:
            stats.update((c.role, round(c.size * PT_PER_BP, 1)) for c in chars(page)
                         if c.get_text().strip())
        runs = sorted(small_text(page, minimum), key=lambda r: r[0])  # the smallest first
        texts = [f"{size:g} pt '{' '.join(text.split())[:40]}'" for size, text in runs]
        if texts:
            bad = True
            print(f"page {number}: {runs[0][0]:g} pt: " + "; ".join(texts[:6])
                  + (f"; and {len(texts) - 6} more" if len(texts) > 6 else ""))
    for (role, size), count in sorted(stats.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        print(f"{role or 'body'}: {size:g} pt: {count} characters", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
