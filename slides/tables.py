#!/usr/bin/env python3
"""tables.py: the LaTeX of one div of measurements in slides/*.md, for slides/include.lua.

    tables.py DIV [NAME=VALUE ...]    DIV: a div's class (a key of DIVS); NAME=VALUE: its attributes
                                      (docs/teaching.md, "Slides"), the parameters of that function

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
                for d in ("bench", "metrics", "")] + [  # no package: plot.py, table.py, stages.py
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "step09_multi_gpu")]
import plot  # noqa: E402 (tools/bench/plot.py)
from plot_allreduce import HEADER as ALLREDUCE, TABLE_BYTES  # noqa: E402 (stage 9's)

ESCAPE = str.maketrans({"\\": r"\textbackslash{}", "^": r"\^{}", "~": r"\textasciitilde{}",
                        **{c: "\\" + c for c in "&%$#_{}"}})


def tex(md, code=r"\texttt{%s}"):
    r"""The scripts' Markdown text in LaTeX: special characters escaped, **bold**, `code` as `code`
    says (\texttt by default)."""
    parts = md.translate(ESCAPE).split("`")
    parts[1::2] = [code % p for p in parts[1::2]]
    return re.sub(r"\*\*(.+?)\*\*", r"\\textbf{\1}", "".join(parts))


def size(md):  # a cell's width, in UTF-8 bytes: "time (µs)" counts 10, "% of peak" 9
    return len(re.sub(r"\*\*|`", "", md).encode())


def note(md):  # the paragraph under a table: preamble.tex's decknote, 9 pt (role DeckNote)
    return "\\decknote{" + tex(md) + "}"


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
    """tools/bench/harris.py COMMAND CSV ARGS --OPTION VALUE (those given): its output, or None
    where it fails (no harris.py, no matplotlib for png); and the command line, for the
    placeholder."""
    argv = ["tools/bench/harris.py", command, csv, *args]
    argv += [x for k, v in options.items() if v for x in (f"--{k}", v)]
    run = subprocess.run([sys.executable] + argv, stdout=subprocess.PIPE, text=True)
    line = " ".join(["python3"] + argv)
    if run.returncode:
        print(f"make slides: warning: {line} failed", file=sys.stderr)
    return None if run.returncode else run.stdout, line


def short(paragraph, stage):
    """harris.py's paragraph under a stage's rows, for a slide: its first clause where it says
    which row times the stage at scale (the speed-ups are in the table), and where it comes from."""
    said = " ".join(paragraph.split())
    source = re.search(r"\((`make bench`[^)]*)\)\.?$", said)
    first = said.split(";")[0].split(" (")[0].rstrip(".")
    keep = first if first.lower().startswith(("timed at scale", "this stage is the baseline",
                                               "not measured")) else ""
    csv = source and re.search(r"(`[^`]*\.csv`)", source.group(1))
    return (keep + ". " if keep else "") + (csv.group(1) if csv else "")


def harris(csv, n=None, stage=None, without=None, columns=None):
    """Its tables (or the stage's rows), their paragraphs set as notes (a stage's, shortened)."""
    md, line = run_harris(csv, "markdown", n=n, stage=stage, without=without)
    if md is None:
        return placeholder(line)
    out = []
    for part in md.strip().split("\n\n"):
        if not part.startswith("|"):
            out.append(note(short(part, stage) if stage else " ".join(part.splitlines())))
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
    return (r"\begin{center}\includegraphics[width=\linewidth,height=0.74\textheight,"
            r"keepaspectratio]{%s}\end{center}" % png) + note(f"`{line}`")


def peak(csv):
    gpu, gbps, _, _ = plot.load(csv)
    return f"{gpu}, peak {plot.num(gbps)} GB/s; medians, L2 flushed before each run; `{csv}`"


def processes(csv):
    """{(stage, n): [(its median_ms, the median_ms of CUB in the same process)]}: bench.cu writes
    a stage's row, then CUB's and the copy's, at each n of one process."""
    out, last = {}, None
    for r in plot.read_rows(csv, plot.HEADER):
        key = (r["stage"], int(r["n"]))
        if r["stage"] not in plot.REFS:
            last = key
            out.setdefault(key, []).append([float(r["median_ms"]), None])
        elif r["stage"] == "cub" and last and last[1] == key[1] and out[last][-1][1] is None:
            out[last][-1][1] = float(r["median_ms"])
    return out


def variants(csv, names, us="16,20", ratio="24,28,30"):
    """Each variant's time in µs at the n of us= (where launches dominate and CUB's own time varies
    from process to process more than the variants differ), its time / CUB's at the n of ratio=,
    and its % of peak at its largest n; a last row, CUB's spread over the processes in µs."""
    _, _, data, _ = plot.load(csv)
    runs = processes(csv)
    n_us = [1 << int(k) for k in us.split(",") if k]
    n_ratio = [1 << int(k) for k in ratio.split(",") if k]
    rows, cub = [], {n: [] for n in n_us}
    for name in names.split(","):
        d = data.get(name) or sys.exit(f"tables.py: no variant {name} in {csv}")
        top = max(d)
        cells = [name]
        for n in n_us:
            times = [1000 * ms for ms, _ in runs.get((name, n), [])]
            cub[n] += [1000 * c for _, c in runs.get((name, n), []) if c]
            cells.append(f"{statistics.median(times):.2f}" if times else "--")
        cells += [f"{d[n]['ratio']:.2f}" if n in d and d[n]["ratio"] else "--" for n in n_ratio]
        pct = plot.num(d[top]["pct"]) + ("" if top == max(n_ratio) else f" at {plot.pow2(top)}")
        rows.append(cells + [pct])
    if n_us:
        rows.append(["CUB, each process"] + [f"{min(cub[n]):.2f}-{max(cub[n]):.2f}" if cub[n]
                                              else "--" for n in n_us]
                    + ["1.00"] * len(n_ratio)
                    + [plot.num(data["cub"][top]["pct"]) if top in data.get("cub", {}) else "–"])
    head = (["variant"] + [f"{plot.pow2(n)} µs" for n in n_us]
            + [f"{plot.pow2(n)} ÷ CUB" for n in n_ratio] + [f"% of peak at {plot.pow2(top)}"])
    said = ("µs: the median time; " if n_us else "") + (
        "÷ CUB: the time / CUB's in the same process (below 1: faster). " if n_ratio else "")
    return tabular(head, "l" + "r" * (len(head) - 1), rows) + "\n\n" + note(said + peak(csv))


def step00(csv):
    """Stage 0's loop on the host CPU at each n of results/GPU/step00_sizes.txt: time, ns per
    element, GB/s."""
    path = os.path.join(os.path.dirname(csv), "step00_sizes.txt")
    if not os.path.exists(path):
        return placeholder("for n in 4096 ... 268435456; do build/step00 --n $n --reps 21; done")
    rows, head = [], None
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                head = head or line.lstrip("# ").strip()
                continue
            kv = dict(re.findall(r'(\S+?)=("[^"]*"|\S+)', line))
            n, ms = int(kv["n"]), float(kv["median_ms"])
            rows.append([f"{plot.pow2(n)} ({plot.size(4 * n)})", f"{ms:.4f}",
                         f"{ms * 1e6 / n:.2f}", kv["GB/s"], kv["result"]])
    cpu = re.search(r"lscpu: (.*)\)", head or "")
    return tabular(["n", "median (ms)", "ns / element", "GB/s", "sum"], "lrrrl", rows) + "\n\n" \
        + note(f"`build/step00 --n N --reps 21`, one run; {cpu.group(1) if cpu else 'the host'}; "
               f"`{os.path.relpath(path)}`")


HARRIS_G80 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "harris_g80.csv")


def g80(csv, n="22", without="step01_atomic_naive,step08_deterministic"):
    """Harris's 2007 table (slides/harris_g80.csv: his kernels 1-7 on a G80, quoted) beside this
    course's stages on this GPU at his n, 2^22 (tools/bench/harris.py's rows): time, GB/s and step
    speed-up (time / the row above's) of each, side by side."""
    import csv as csvmod
    with open(HARRIS_G80, newline="") as f:
        lines = [line for line in f if not line.startswith("#")]
    left, before = [], None
    for r in csvmod.DictReader(lines):
        ms = float(r["time_ms"])
        left.append([r["kernel"], r["what"], r["time_ms"], r["gbps"],
                     f"{before / ms:.2f}×" if before else "–"])
        before = ms
    md, line = run_harris(csv, "markdown", n=n, without=without)
    if md is None:
        return placeholder(line)
    table = [p for p in md.strip().split("\n\n") if p.startswith("|")][0]
    head, _, *rows = [[c.strip() for c in row[1:-1].split("|")] for row in table.splitlines()]
    keep = [head.index(h) for h in ("stage", "time (µs)", "GB/s", "step speed-up")]
    import harris as bench  # tools/bench/harris.py: each row's label, as on its plot
    label = {row: text.replace("\n", " ") for row, _, text in bench.ROWS}
    right = [[label.get(r[0], r[0])] + [r[k].split(" over ")[0] for k in keep[1:]] for r in rows]
    gpu = plot.read_rows(csv, plot.HEADER)[0]["gpu"]
    return ("\\begin{columns}[T]\\begin{column}{0.58\\linewidth}\\centering{\\small\\bfseries "
            "G80 (2007), Harris's kernels, 2\\textsuperscript{22} int}\n"
            + tabular(["", "kernel", "ms", "GB/s", "step"], "rlrrr", left)
            + "\n\\end{column}\\begin{column}{0.45\\linewidth}\\centering{\\small\\bfseries "
            + tex(gpu) + ", this course, 2\\textsuperscript{" + n + "} int32}\n"
            + tabular(["stage", "µs", "GB/s", "step"], "lrrr", right)
            + "\n\\end{column}\\end{columns}\n\n"
            + note("G80: Harris 2007, his table for 4M elements, quoted in `slides/harris_g80.csv`;"
                   f" peak 86.4 GB/s. {gpu}: `tools/bench/harris.py --n {n}` on `{csv}`."))


def coarse_factor(name):
    """The COARSE_FACTOR of a stage's reduce.cu, or of a variant's patch (its +#define line, else
    its stage's), or None (tools/stages.py finds each)."""
    import stages  # tools/stages.py
    for st in stages.load():
        for text in ([open(st.variants[name]).read()] if name in st.variants else []) + (
                [open(st.source).read()] if name in (st.name, *st.variants) else []):
            cf = re.search(r"^\+?#define COARSE_FACTOR (\d+)", text, re.M)
            if cf:
                return int(cf.group(1))
        if name in (st.name, *st.variants):
            return None
    sys.exit(f"tables.py: no stage or variant {name}")


def inflight(csv, stages, slow="step06_cf1", n="28"):
    """Little's law, bytes in flight = bandwidth x latency, for the stages named: the loads a
    thread issues before it adds (2 without a COARSE_FACTOR, else COARSE_FACTOR * 2), the bytes a
    load moves a lane (global load sectors x 32 / requests / 32 lanes, metrics.csv; a variant: its
    stage's), the bytes the resident threads can have in flight (stage 6's grid x block: the
    threads the GPU holds at once) and the GB/s at 2^n. The latency is read off the variant slow=
    (its bytes in flight / its GB/s: an upper bound, as its loads are not always in flight), and
    what the peak needs is the peak's GB/s x that latency."""
    folder = os.path.dirname(csv)
    rows = plot.read_rows(os.path.join(folder, "metrics.csv"),
                          "gpu,stage,n,block,metric,value,unit".split(","))
    m = {(r["stage"], r["metric"]): float(r["value"]) for r in rows}
    _, peak_gbps, results, _ = plot.load(csv)
    _, _, var, _ = plot.load(os.path.join(folder, "variants.csv"))
    at, grid = 1 << int(n), "step06_coarsened"
    resident = m[(grid, "launch__grid_size")] * m[(grid, "launch__block_size")]
    ld = "l1tex__t_%s_pipe_lsu_mem_global_op_ld.sum"

    def row(name):
        stage = next(s for s, _ in m if name.startswith(s[:7]) and (s == name or s[:7] == name[:7]
                                                                    and (s, ld % "requests") in m))
        loads = 2 * (coarse_factor(name) or 1)
        width = m[(stage, ld % "sectors")] * 32 / m[(stage, ld % "requests")] / 32
        gbps = (results.get(name) or var.get(name) or sys.exit(f"tables.py: no {name}"))[at]["gbps"]
        return loads, width, resident * loads * width, gbps

    body = []
    for name in stages.split(","):
        loads, width, inflight_b, gbps = row(name)
        body.append([name, str(loads), f"{width:g}", f"{inflight_b / 1e6:.2f}", plot.num(gbps),
                     plot.num(100 * gbps / peak_gbps)])
    _, _, b_slow, g_slow = row(slow)
    latency = b_slow / (g_slow * 1e9)
    need = peak_gbps * 1e9 * latency
    head = ["stage", "loads a thread", "bytes a load", "MB in flight, at most",
            f"GB/s at {plot.pow2(at)}", "% of peak"]
    return tabular(head, "lrrrrr", body) + "\n\n" + note(
        f"In flight: {int(resident):,} resident threads ({grid}'s grid x block) x loads x bytes. "
        f"Latency, from `{slow}` (COARSE_FACTOR 1): {b_slow / 1e6:.2f} MB at {plot.num(g_slow)} "
        f"GB/s, so at most **{latency * 1e9:.0f} ns**; the peak, {plot.num(peak_gbps)} GB/s, then "
        f"needs **{need / 1e6:.1f} MB in flight all the time**. `{os.path.relpath(folder)}/`: "
        "metrics.csv (2^24), results.csv, variants.csv")


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
    "step00": (step00, "results/*/results.csv", "make bench"),
    "g80": (g80, "results/*/results.csv", "make bench"),
    "inflight": (inflight, "results/*/results.csv", "make bench; make variants; make metrics"),
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
