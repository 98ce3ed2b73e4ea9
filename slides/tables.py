#!/usr/bin/env python3
"""tables.py: the LaTeX of one div of measurements in slides/*.md, for slides/include.lua.

    tables.py DIV [NAME=VALUE ...]    DIV: a div's class (a key of DIVS); NAME=VALUE: its attributes
                                      (README.md, "Slides"), the parameters of that function

Each DIV reads the CSV of its kind (DIVS) in results/$SLIDES_GPU/ (slides/build.sh: NVIDIA_H200,
the GPU the lessons quote), else the newest in results/*/, with the benchmark's own code
(tools/bench/harris.py, plot.py, tools/metrics/table.py); where there is none, or harris.py fails,
it prints a line naming the command that makes it. Exits 1 on a missing attribute or a name the
CSV lacks.
"""
import glob
import inspect
import os
import re
import statistics
import subprocess
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", d)
                for d in ("bench", "metrics")]  # neither is a package
import plot  # noqa: E402 (tools/bench/plot.py)
from plot_allreduce import HEADER as ALLREDUCE, TABLE_BYTES  # noqa: E402

ESCAPE = str.maketrans({"\\": r"\textbackslash{}", "^": r"\^{}", "~": r"\textasciitilde{}",
                        **{c: "\\" + c for c in "&%$#_{}"}})


def tex(md, code=r"\texttt{%s}"):
    r"""The scripts' Markdown text in LaTeX: special characters escaped, **bold**, `code` as `code`
    says (in a note '%s', plain text: \texttt would print below 8 pt there)."""
    parts = md.translate(ESCAPE).split("`")
    parts[1::2] = [code % p for p in parts[1::2]]
    return re.sub(r"\*\*(.+?)\*\*", r"\\textbf{\1}", "".join(parts))


def size(md):  # a cell's width, in UTF-8 bytes: "time (µs)" counts 10, "% of peak" 9
    return len(re.sub(r"\*\*|`", "", md).encode())


def note(md):  # the paragraph under a table
    return "{\\scriptsize\\color{deckgray}\n\n" + tex(md, "%s") + "\n\n\\par}"


def placeholder(command):
    return r"\par\smallskip{\centering\small\emph{Not made yet:} %s\par}" % tex(f"`{command}`")


def tabular(head, align, rows, keep=None):
    r"""A table as preamble.tex's \decktable: a booktabs tabular, \small, at its natural width;
    wider than the line, its widest column wraps (tabularx), and if still too wide it is shrunk,
    where fontcheck.py then catches text below 8 pt. head, rows: Markdown cells; align: 'l' or
    'r' a column; keep: the heads of the columns to keep ("A,B"). A head of two words or more and
    a size() over 9 takes two lines, the longer one shortest; a cell followed by empty cells only
    (harris.py's "not measured") spans them."""
    if keep:
        cols = [k for k, h in enumerate(head) if h in [w.strip() for w in keep.split(",")]]
        head, align = [head[k] for k in cols], [align[k] for k in cols]
        rows = [[r[k] for k in cols] for r in rows]
    width, heads = [size(h) for h in head], []
    for k, h in enumerate(head):
        cuts = [(max(size(h[:i]), size(h[i + 1:])), -i) for i, c in enumerate(h) if c == " "]
        if cuts and size(h) > 9:  # of two cuts as good, the later one
            width[k], i = min(cuts)[0], -min(cuts)[1]
            heads.append(r"\begin{tabular}[b]{@{}%s@{}}%s\\%s\end{tabular}"
                         % (align[k], tex(h[:i]), tex(h[i + 1:])))
        else:
            heads.append(tex(h))
    lines = [" & ".join(heads) + r"\\", r"\midrule"]
    for r in rows:
        cells = []
        for k, c in enumerate(r):
            if c and k < len(r) - 1 and not any(r[k + 1:]):
                cells.append(r"\multicolumn{%d}{l}{%s}" % (len(r) - k, tex(c)))
                break
            width[k] = max(width[k], size(c))
            cells.append(tex(c))
        lines.append(" & ".join(cells) + r"\\")
    body = "\\toprule\n" + "\n".join(lines) + "\n\\bottomrule"
    wrap, long = list(align), width.index(max(width))
    wrap[long] = r">{\ragged%s\arraybackslash}X" % ("left" if align[long] == "r" else "right")
    return (r"\decktable{\begin{tabular}{@{}%s@{}}%s\end{tabular}}" % ("".join(align), body)
            + r"{\begin{tabularx}{\linewidth}{@{}%s@{}}%s\end{tabularx}}" % ("".join(wrap), body))


def run_harris(csv, command, *args, **options):
    """tools/bench/harris.py COMMAND CSV ARGS --OPTION VALUE (those given): its output, or None where
    it fails (no harris.py, no matplotlib for png); and the command line, for the placeholder."""
    argv = ["tools/bench/harris.py", command, csv, *args]
    argv += [x for k, v in options.items() if v for x in (f"--{k}", v)]
    run = subprocess.run([sys.executable] + argv, stdout=subprocess.PIPE, text=True)
    line = " ".join(["python3"] + argv)
    if run.returncode:
        print(f"make slides: warning: {line} failed", file=sys.stderr)
    return None if run.returncode else run.stdout, line


def harris(csv, n=None, stage=None, without=None, columns=None):
    """Its tables (or the stage's rows), their paragraphs set as notes."""
    md, line = run_harris(csv, "markdown", n=n, stage=stage, without=without)
    if md is None:
        return placeholder(line)
    out = []
    for part in md.strip().split("\n\n"):
        if not part.startswith("|"):
            out.append(note(" ".join(part.splitlines())))
            continue
        head, align, *rows = [[c.strip() for c in row[1:-1].split("|")]
                              for row in part.splitlines()]
        out.append(tabular(head, ["r" if a.endswith(":") else "l" for a in align], rows, columns))
    return "\n\n".join(out)


def harrisplot(csv, without=None):
    png = "build/slides/harris.png"
    made, line = run_harris(csv, "png", "-o", png, without=without)
    if made is None:  # a plot left by an earlier build is not shown
        return placeholder(line)
    return (r"\begin{center}\includegraphics[width=\linewidth,height=0.78\textheight,"
            r"keepaspectratio]{%s}\par{\scriptsize\color{deckgray}%s}\end{center}"
            % (png, tex(line)))


def peak(csv):
    gpu, gbps, _, _ = plot.load(csv)
    return f"{gpu}, peak {plot.num(gbps)} GB/s; medians, L2 flushed before each run; `{csv}`"


def variants(csv, names):
    _, _, data, _ = plot.load(csv)
    ns = [1 << k for k in (16, 20, 24, 28, 30)]
    rows = []
    for name in names.split(","):
        d = data.get(name) or sys.exit(f"tables.py: no variant {name} in {csv}")
        top = max(d)
        cells = [name] + [f"{d[n]['ratio']:.2f}" if n in d and d[n]["ratio"] else "--" for n in ns]
        pct = plot.num(d[top]["pct"]) + ("" if top == ns[-1] else f" at {plot.pow2(top)}")
        rows.append(cells + [pct])
    head = ["variant"] + [plot.pow2(n) for n in ns] + [f"% of peak at {plot.pow2(ns[-1])}"]
    return tabular(head, "l" + "r" * (len(ns) + 1), rows) + "\n\n" + note(
        "time / CUB at each n; below 1: faster than CUB. " + peak(csv))


def counters(csv, stage, metrics):
    import table  # tools/metrics/table.py: each counter's label, unit, scale and decimals
    rows = plot.read_rows(csv, "gpu,stage,n,block,metric,value,unit".split(","))
    specs = [next((c for c in table.COUNTERS if m in c[4] or m == c[0]), None)
             or sys.exit(f"tables.py: {m} is no counter of tools/metrics/table.py's COUNTERS")
             for m in metrics.split(",")]
    at = {}  # (stage, n, block): {metric: value}, in the order of the stages, then of the CSV
    for s in stage.split(","):
        for r in (r for r in rows if r["stage"] == s):
            at.setdefault((s, r["n"], r["block"]), {})[r["metric"]] = float(r["value"])
    if not at:
        sys.exit(f"tables.py: no counters of {stage} in {csv}")
    body = [[s, plot.pow2(int(n)), block] + [
        table.fmt(next((v[m] for m in names if m in v), None), scale, decimals)
        for _, _, scale, decimals, names in specs] for (s, n, block), v in at.items()]
    head = ["stage", "n", "block"] + [c[0] + (f" ({c[1]})" if c[1] else "") for c in specs]
    return tabular(head, "lrr" + "r" * len(specs), body) + "\n\n" + note(
        f"Nsight Compute on {rows[0]['gpu']}, first launch of reduce_kernel; `{csv}`")


def allreduce(csv):
    rows, runs = plot.read_rows(csv, ALLREDUCE), {}  # runs: (G, type): {bytes: its rows}
    for r in sorted(rows, key=lambda r: int(r["gpus"])):  # in the order of G, then of the CSV
        runs.setdefault((int(r["gpus"]), r["type"]), {}).setdefault(int(r["bytes"]), []).append(r)
    links = any(g > 1 for g, _ in runs)

    def at(rs, col, scale=1):  # the median of a column over the runs, "--" where none
        return plot.num(statistics.median(float(r[col]) for r in rs) * scale) if rs else "--"

    body = []
    for (g, kind), by in runs.items():
        wrong = any(int(r["wrong"]) for rs in by.values() for r in rs)
        cells = [str(g), kind + (" **wrong sums**" if wrong else "")]
        cells += [at(by.get(b), "algbw_gbps") for b in TABLE_BYTES]
        cells += [at(by.get(TABLE_BYTES[-1]) if g > 1 else None, "busbw_gbps")] if links else []
        latency = at(by.get(TABLE_BYTES[0]), "latency_ms", 1000)  # one call, not back to back
        body.append(cells + [latency + (" µs" if latency != "--" else "")])
    head = (["G", "type"] + [f"algbw at {plot.size(b)}" for b in TABLE_BYTES]
            + ["busbw at 1 GiB"] * links + ["latency at 1 KiB, one call"])
    copy = statistics.median(float(r["copy_gbps"]) for r in rows)
    return tabular(head, "rl" + "r" * (len(head) - 2), body) + "\n\n" + note(
        f"GB/s; {rows[0]['gpu']}; algbw: bytes a GPU / time, the average of calls launched back "
        "to back (nccl-tests' time, no L2 flush); latency: the median of single calls, every L2 "
        "flushed before each. One GPU's device-to-device copy in the same runs: "
        f"{plot.num(copy)} GB/s read + write, {plot.num(copy / 2)} read. `{csv}`")


DIVS = {  # a div: what makes its LaTeX from the newest CSV of a kind; what makes that CSV
    "harris": (harris, "results/*/results.csv", "make bench"),
    "harrisplot": (harrisplot, "results/*/results.csv", "make bench"),
    "measured": (lambda csv: note(peak(csv)), "results/*/results.csv", "make bench"),
    "variants": (variants, "results/*/variants.csv", "make variants"),
    "counters": (counters, "results/*/metrics.csv", "make metrics"),
    "allreduce": (allreduce, "results/*/allreduce.csv", "make bench-step09"),
}


def main(argv):
    if len(argv) < 2 or argv[1] not in DIVS:
        sys.exit(__doc__ + "DIV: " + ", ".join(DIVS))
    make, pattern, command = DIVS[argv[1]]
    attrs = dict(a.partition("=")[::2] for a in argv[2:])
    try:
        inspect.signature(make).bind("CSV", **attrs)
    except TypeError as e:
        sys.exit(f"tables.py {argv[1]}: {e}")
    gpu = os.environ.get("SLIDES_GPU")
    mine = gpu and os.path.join("results", gpu, os.path.basename(pattern))
    csv = mine if mine and os.path.exists(mine) else max(
        glob.glob(pattern), key=lambda p: (os.path.getmtime(p), p), default=None)
    print(make(csv, **attrs) if csv else placeholder(command))


if __name__ == "__main__":
    main(sys.argv)
