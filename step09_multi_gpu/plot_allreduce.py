#!/usr/bin/env python3
"""Draw stage 9's all-reduce plot (bandwidth against message size) from its CSV.

Usage: python3 step09_multi_gpu/plot_allreduce.py CSV [-o PNG] [--table]; --help says what each
does.

Left: bus bandwidth busbw (nccl-tests' formula), the rate each GPU's link carries in a ring
all-reduce, one line per G > 1; one GPU has no link (busbw 0), so the right panel shows algorithm
bandwidth, algbw = bytes / time_ms, for every G. Both draw one GPU's device-to-device copy rate,
measured in the same run, counting bytes read once (copy_gbps / 2): the rate at which one GPU's
memory streams a vector. int32 and float32 are drawn both; their rates match where NCCL moves the
same bytes. Needs only matplotlib; tools/bench/python.sh finds one.
"""
import argparse
import os
import sys
from collections import defaultdict

# tools/bench/plot.py: the CSV reader that checks the header, and the plot's number formats
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools",
                                "bench"))
from plot import pyplot, read_rows, size  # noqa: E402

HEADER = ("gpu,gpus,type,bytes,time_ms,algbw_gbps,busbw_gbps,latency_ms,copy_gbps,wrong"
          .split(","))
TABLE_BYTES = (1 << 10, 1 << 20, 1 << 26, 1 << 30)


def load(path):
    """Returns gpu name, series[(gpus, type)] = sorted [(bytes, algbw, busbw)], copy[gpus]."""
    rows = read_rows(path, HEADER)
    series = defaultdict(list)
    copy = {}
    for r in rows:
        if int(r["wrong"]):
            sys.exit(f"{path}: {r['gpus']} GPUs, {r['type']}, {r['bytes']} bytes: "
                     f"{r['wrong']} wrong elements; a wrong all-reduce has no bandwidth")
        g = int(r["gpus"])
        series[(g, r["type"])].append(
            (int(r["bytes"]), float(r["algbw_gbps"]), float(r["busbw_gbps"])))
        copy[g] = float(r["copy_gbps"])
    return rows[0]["gpu"], {k: sorted(v) for k, v in series.items()}, copy


def table(gpu, series):
    print(f"| GPUs, type ({gpu}) | " + " | ".join(size(b) for b in TABLE_BYTES) + " |")
    print("|---|" + "--:|" * len(TABLE_BYTES))
    for (g, t), pts in sorted(series.items()):
        at = {b: bus if g > 1 else alg for b, alg, bus in pts}
        cells = [f"{at[b]:.1f}" if b in at else "–" for b in TABLE_BYTES]
        print(f"| {g}, {t}: {'busbw' if g > 1 else 'algbw'} GB/s | " + " | ".join(cells) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv", help="rows of `build/step09 --bench --csv CSV` (allreduce.sh beside "
                    "it keeps one run per number of GPUs); step09_multi_gpu/README.md says how "
                    "time_ms and latency_ms are measured")
    ap.add_argument("-o", dest="png", help="output image (default: allreduce.png next to the CSV)")
    ap.add_argument("--table", action="store_true", help="also print a Markdown table of busbw "
                    "(algbw for one GPU) at 1 KiB .. 1 GiB")
    a = ap.parse_args()
    gpu, series, copy = load(a.csv)
    if a.table:
        table(gpu, series)
    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), sharex=True, sharey=True)
    styles = {"int32": "-", "float32": "--"}
    gs = sorted({g for g, _ in series})
    for (g, t), pts in sorted(series.items()):
        for ax, col in ((right, 1), (left, 2))[:1 + (g > 1)]:  # busbw: only where there is a link
            ax.plot([p[0] for p in pts], [p[col] for p in pts], styles.get(t, "-"), ms=3,
                    marker="os^vD"[gs.index(g) % 5], label=f"{g} GPU{'s' if g > 1 else ''}, {t}")
    read_rate = max(copy.values()) / 2
    for ax in (left, right):
        ax.axhline(read_rate, color="grey", lw=1, ls=":",
                   label=f"one GPU's memory: copy, bytes read ({read_rate:.0f} GB/s)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("bytes a GPU (message size)")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    left.set_ylabel("GB/s")
    left.set_title("bus bandwidth, busbw = algbw · 2(G-1)/G")
    right.set_title("algorithm bandwidth, algbw = bytes / time")
    if not any(g > 1 for g in gs):
        left.text(0.5, 0.5, "measured on one GPU only:\nno link, busbw = 0",
                  transform=left.transAxes, ha="center", va="center", color="grey")
    fig.suptitle(f"ncclAllReduce (NVLS off, NCCL picks the algorithm), {gpu}: "
                 "build/step09 --bench")
    fig.tight_layout()
    png = a.png or os.path.join(os.path.dirname(a.csv) or ".", "allreduce.png")
    fig.savefig(png, dpi=120)
    print(f"wrote {png}")


if __name__ == "__main__":
    main()
