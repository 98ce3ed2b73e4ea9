#!/usr/bin/env python3
"""Draw the reduction benchmark plot (GB/s against n) from the benchmark CSV.

Usage: python3 tools/bench/plot.py CSV [-o PNG] [--table | --table-only]; --help says what each
does. Its CSV reader and number formats serve harris.py beside it, and
step09_multi_gpu/plot_allreduce.py and slides/tables.py too. Needs only matplotlib (works with 3.6
and 3.8+); python.sh finds one.
"""
import argparse
import csv
import os
import statistics
import sys
from collections import defaultdict

HEADER = ("gpu,stage,n,bytes,median_ms,min_ms,max_ms,gbps,peak_gbps,peak_pct,ratio_to_cub,"
          "sum_ok").split(",")
REFS = ("cub", "copy")          # reference rows, repeated once per process
TABLE_N = (1 << 24, 1 << 28)
MARKERS = "os^vDPhp<>"          # never 'X': that marks a wrong sum
STYLES = {"cub": dict(color="black", lw=4, marker="o", ms=5, zorder=3,
                      label="CUB DeviceReduce::Sum"),
          "copy": dict(color="0.45", lw=2.5, ls="--", label="cudaMemcpy D2D (read + write)")}


def read_rows(path, header):
    """The rows of a CSV whose first line is exactly `header`, as dicts; exits with the reason
    when the header differs or no row follows."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != list(header):
            sys.exit(f"{path}: unexpected header {reader.fieldnames}")
        rows = list(reader)
    if not rows:
        sys.exit(f"{path}: no data rows")
    return rows


def pyplot():
    """matplotlib.pyplot, drawing into files only (the Agg backend)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def load(path):
    """Returns gpu, peak, data[stage][n] = {gbps, pct, ratio}, bad rows (stage, n, gbps)."""
    rows = read_rows(path, HEADER)
    groups = defaultdict(list)
    for r in rows:
        groups[r["stage"], int(r["n"])].append(r)
    data = defaultdict(dict)
    for (stage, n), rs in groups.items():   # duplicates: take the median
        ratios = [float(r["ratio_to_cub"]) for r in rs if r["ratio_to_cub"]]
        data[stage][n] = {
            "gbps": statistics.median(float(r["gbps"]) for r in rs),
            "pct": statistics.median(float(r["peak_pct"]) for r in rs),  # as the CSV says
            "ratio": statistics.median(ratios) if ratios else None}
    bad = [(r["stage"], int(r["n"]), float(r["gbps"])) for r in rows if r["sum_ok"].strip() != "1"]
    return rows[0]["gpu"], statistics.median(float(r["peak_gbps"]) for r in rows), data, bad


def order(data):
    steps = sorted(s for s in data if s not in REFS)
    return steps + [s for s in REFS if s in data]


def num(x):
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def pow2(n):  # n, a power of two, as one: 2^24
    return f"2^{n.bit_length() - 1}"


def size(nbytes):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if nbytes < 1024 or unit == "GiB":
            return f"{nbytes:g} {unit}"
        nbytes /= 1024


def table(data, bad):
    """Markdown table: each step at 2^24 / 2^28 (or its largest n, where it stops earlier),
    plus CUB and copy at every n that appears."""
    picks = {(n, s) for s in order(data) if s not in REFS for n in data[s]
             if n in TABLE_N or n == max(data[s]) < TABLE_N[-1]}
    wrong = {(s, n) for s, n, _ in bad}
    lines = ["| n | stage | GB/s | % of peak | time / CUB |", "|---|---|--:|--:|--:|"]
    for n in sorted({n for n, _ in picks}):
        for s in (s for s in order(data) if (n, s) in picks or s in REFS and n in data[s]):
            d = data[s][n]
            ratio = "1.00" if s == "cub" else "–" if d["ratio"] is None else f"{d['ratio']:.2f}"
            note = " (**wrong sum**)" if (s, n) in wrong else ""
            lines.append(f"| {pow2(n)} ({size(4 * n)}) | {s}{note} "
                         f"| {num(d['gbps'])} | {num(d['pct'])} | {ratio} |")
    return "\n".join(lines)


def plot(gpu, peak, data, bad, out):
    plt = pyplot()
    plt.rcParams.update({"font.size": 15, "axes.titlesize": 17, "legend.fontsize": 13})
    fig, ax = plt.subplots(figsize=(12, 6.75), layout="constrained")
    colours = plt.get_cmap("tab10").colors
    for i, s in enumerate(order(data)):     # the steps first: i counts them
        ns = sorted(data[s])
        style = STYLES.get(s) or dict(marker=MARKERS[i % 10], color=colours[i % 10], lw=2, ms=7,
                                      label=s)
        ax.plot(ns, [data[s][n]["gbps"] for n in ns], **style)
    ax.axhline(peak, color="firebrick", lw=2, ls=":")
    all_n = sorted({n for s in data for n in data[s]})
    ax.text(all_n[0], peak, f"theoretical peak {peak:.0f} GB/s",
            color="firebrick", va="bottom", ha="left")
    if bad:
        ax.plot([n for _, n, _ in bad], [g for _, _, g in bad], ls="none", marker="X", ms=16,
                color="red", mec="white", zorder=5, label="wrong sum")

    ax.set_xscale("log", base=2)
    lo, hi = all_n[0].bit_length() - 1, all_n[-1].bit_length() - 1
    exps = range(lo + lo % 2, hi + 1, 2)
    ax.set_xticks([1 << e for e in exps], [f"$2^{{{e}}}$" for e in exps])
    ax.minorticks_off()
    ax.set_xlim(all_n[0] / 1.3, all_n[-1] * 1.3)
    top = max([peak] + [d["gbps"] for s in data for d in data[s].values()])
    ax.set_ylim(0, top * 1.08)
    ax.set_xlabel("n (int32 elements)")
    ax.set_ylabel("GB/s (bytes read / time)")
    ax.set_title(f"{gpu}: int32 sum bandwidth (median, L2 flushed)")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    fig.savefig(out, dpi=150)
    plt.close(fig)
    print(f"wrote {out}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", help="benchmark CSV")
    ap.add_argument("-o", "--output", metavar="PNG",
                    help="output PNG (default: bandwidth.png beside the CSV)")
    ap.add_argument("--table", action="store_true",
                    help="also print a Markdown summary table to stdout")
    ap.add_argument("--table-only", action="store_true", help="print the table and do not draw")
    args = ap.parse_args()

    gpu, peak, data, bad = load(args.csv)
    for s, n, _ in bad:
        print(f"WARNING: {s} n={pow2(n)}: wrong sum (sum_ok=0)", file=sys.stderr)
    if args.table or args.table_only:
        print(table(data, bad))
    if not args.table_only:
        out = args.output or os.path.join(os.path.dirname(os.path.abspath(args.csv)),
                                          "bandwidth.png")
        plot(gpu, peak, data, bad, out)


if __name__ == "__main__":
    main()
