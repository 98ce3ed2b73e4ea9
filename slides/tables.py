#!/usr/bin/env python3
"""tables.py: the deck's tables of measurements, as Markdown, for slides/include.lua.

    tables.py variants CSV NAME,...          time / CUB of each variant at 2^16 .. 2^30, and % of
                                             peak at its largest n (bench/*/variants.csv)
    tables.py counters CSV STAGE,... METRIC,...
                                             those Nsight Compute counters, a row per stage, n and
                                             block (metrics/*/metrics.csv)
    tables.py allreduce CSV                  stage 9's all-reduce: algbw at 1 KiB .. 1 GiB, busbw
                                             (only where a row has 2 GPUs or more), one call's
                                             latency at 1 KiB (latency_ms)
    tables.py allreduceplot CSV              the plot beside the CSV when a row has 2 GPUs or more,
                                             else one line saying those runs are still to be made
    tables.py measured CSV                   one line: the GPU, its peak, the CSV

It reads the CSVs only through the readers the benchmark's own scripts use: bench/plot.py's
load() (medians, % of peak = GB/s / the median peak, as the README's table) and read_rows(), and
metrics/table.py's COUNTERS (each counter's label, unit, scale and decimals) and fmt(). A table is
followed by one paragraph, its note, which include.lua sets small and grey. Python 3 standard
library only; exits 1 with the reason on a name the CSV lacks.
"""
import importlib.util
import os
import statistics
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def module(path):
    """bench/plot.py, metrics/table.py: imported by path (neither is a package)."""
    sys.path.insert(0, os.path.dirname(os.path.join(ROOT, path)))
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3],
                                                  os.path.join(ROOT, path))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


plot = module("bench/plot.py")


def pow2(n):
    return f"2^{n.bit_length() - 1}"


def row(cells):
    return "| " + " | ".join(cells) + " |"


def table(head, align, rows, note):
    return "\n".join([row(head), "|" + "|".join(align) + "|"] + [row(r) for r in rows]
                     + ["", note])


def measured(path):
    gpu, peak, _, _ = plot.load(path)
    return f"{gpu}, peak {plot.num(peak)} GB/s; medians, L2 flushed before each run; `{path}`"


def variants(path, names):
    _, _, data, _ = plot.load(path)
    ns = [1 << k for k in (16, 20, 24, 28, 30)]
    rows = []
    for name in names.split(","):
        if name not in data:
            sys.exit(f"tables.py: no variant {name} in {path}")
        d = data[name]
        top = max(d)
        cells = [name] + [f"{d[n]['ratio']:.2f}" if n in d and d[n]["ratio"] else "--" for n in ns]
        cells.append(plot.num(d[top]["pct"]) + ("" if top == ns[-1] else f" at {pow2(top)}"))
        rows.append(cells)
    head = ["variant"] + [f"{pow2(n)}" for n in ns] + [f"% of peak at {pow2(ns[-1])}"]
    return table(head, ["---"] + ["--:"] * (len(ns) + 1), rows,
                 "time / CUB at each n; below 1: faster than CUB. " + measured(path))


def counters(path, stages, metrics):
    counts = module("metrics/table.py")
    rows = plot.read_rows(path, "gpu,stage,n,block,metric,value,unit".split(","))
    specs = []
    for m in metrics.split(","):
        c = next((c for c in counts.COUNTERS if m in c[4] or m == c[0]), None)
        if c is None:
            sys.exit(f"tables.py: {m} is no counter of metrics/table.py's COUNTERS")
        specs.append(c)
    out, at = [], {}
    for s in stages.split(","):
        for r in rows:  # a row per stage, n and block, in the CSV's order
            key = (s, r["n"], r["block"])
            if r["stage"] == s and key not in at:
                at[key] = {}
                out.append(key)
            if r["stage"] == s:
                at[key][r["metric"]] = float(r["value"])
    if not out:
        sys.exit(f"tables.py: no counters of {stages} in {path}")
    body = []
    for key in out:
        cells = [key[0], pow2(int(key[1])), key[2]]
        for _, _, scale, decimals, names in specs:
            value = next((at[key][n] for n in names if n in at[key]), None)
            cells.append(counts.fmt(value, scale, decimals))
        body.append(cells)
    head = ["stage", "n", "block"] + [c[0] + (f" ({c[1]})" if c[1] else "") for c in specs]
    return table(head, ["---", "--:", "--:"] + ["--:"] * len(specs), body,
                 f"Nsight Compute on {rows[0]['gpu']}, first launch of reduce_kernel; `{path}`")


ALLREDUCE = ("gpu,gpus,type,bytes,time_ms,algbw_gbps,busbw_gbps,latency_ms,copy_gbps,wrong"
             .split(","))
SIZES = ((1 << 10, "1 KiB"), (1 << 20, "1 MiB"), (1 << 26, "64 MiB"), (1 << 30, "1 GiB"))


def allreduce(path):
    rows = plot.read_rows(path, ALLREDUCE)
    groups = []  # (G, type) in the order of G, then of the CSV
    for r in rows:
        if (int(r["gpus"]), r["type"]) not in groups:
            groups.append((int(r["gpus"]), r["type"]))
    groups.sort(key=lambda g: g[0])
    links = any(g > 1 for g, _ in groups)

    def at(g, b, col):
        xs = [float(r[col]) for r in rows
              if int(r["gpus"]) == g[0] and r["type"] == g[1] and int(r["bytes"]) == b]
        return statistics.median(xs) if xs else None

    body = []
    for g in groups:
        wrong = any(int(r["wrong"]) for r in rows if (int(r["gpus"]), r["type"]) == g)
        cells = [str(g[0]), g[1] + (" **wrong sums**" if wrong else "")]
        cells += [plot.num(v) if v is not None else "--" for v in (at(g, b, "algbw_gbps")
                                                                   for b, _ in SIZES)]
        if links:
            bus = at(g, SIZES[-1][0], "busbw_gbps")
            cells.append("--" if g[0] == 1 or bus is None else plot.num(bus))
        ms = at(g, SIZES[0][0], "latency_ms")  # one call, not the back-to-back average
        cells.append(f"{plot.num(ms * 1000)} µs" if ms is not None else "--")
        body.append(cells)
    head = ["G", "type"] + [f"algbw at {label}" for _, label in SIZES]
    head += ["busbw at 1 GiB"] if links else []
    head += ["latency at 1 KiB, one call"]
    copy = statistics.median(float(r["copy_gbps"]) for r in rows)
    return table(head, ["--:", "---"] + ["--:"] * (len(head) - 2), body,
                 f"GB/s; {rows[0]['gpu']}; algbw: bytes a GPU / time, the average of calls "
                 f"launched back to back (nccl-tests' time, no L2 flush); latency: the median of "
                 f"single calls, every L2 flushed before each. One GPU's device-to-device copy in "
                 f"the same runs: {plot.num(copy)} GB/s read + write, {plot.num(copy / 2)} read. "
                 f"`{path}`")


def allreduceplot(path):
    rows = plot.read_rows(path, ALLREDUCE)
    gpus = sorted({int(r["gpus"]) for r in rows})
    png = os.path.join(os.path.dirname(path), "allreduce.png")
    if gpus[-1] < 2 or not os.path.exists(png):
        return (f"Measured on one GPU only ({rows[0]['gpu']}): its busbw is 0, no link. The 2- and "
                "4-GPU runs are still to be made: `make bench-step09 GPUS=2`, then `GPUS=4`.")
    return ("```{=latex}\n\\begin{center}\\includegraphics[width=\\linewidth,height=0.75"
            f"\\textheight,keepaspectratio]{{{png}}}\\end{{center}}\n```\n\n`{png}`")


def main(argv):
    commands = {"variants": (variants, 2), "counters": (counters, 3), "allreduce": (allreduce, 1),
                "allreduceplot": (allreduceplot, 1), "measured": (measured, 1)}
    if len(argv) < 2 or argv[1] not in commands or len(argv) - 2 != commands[argv[1]][1]:
        sys.exit(__doc__)
    print(commands[argv[1]][0](*argv[2:]))


if __name__ == "__main__":
    main(sys.argv)
