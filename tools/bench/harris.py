#!/usr/bin/env python3
"""harris.py: Harris's table for this course: each stage's time, GB/s, % of peak, step speed-up
and cumulative speed-up at n = 2^24 and 2^28, from the benchmark CSV of `make bench`.

    harris.py markdown CSV [--n 24,28] [--stage NAME] [--without STAGE,...]
                    the tables, one per n; --stage: that stage's rows alone, its gain in words
                    (stages 02-04 also by their folder: step04_smem is step05_segmented's row)
    harris.py png CSV -o OUT.png [--n 24,28] [--without STAGE,...]
                    the same rows as bars of GB/s at each n, % of peak on each bar (a slide)
    harris.py update FILE... [--csv CSV]     rewrite the generated blocks of Markdown files:
    harris.py check FILE... [--csv CSV]      exit 1, naming each block that differs
                      <!-- harris n=24,28 --> ... <!-- /harris -->                the tables
                      <!-- harris stage=step06_coarsened --> ... <!-- /harris -->  its rows
                    each marker on a line of its own; from the block's csv= (a path from the
                    repository root), else --csv, else the newest results/*/results.csv.

The tables' caption says where each number comes from. A stage without a row at an n reads
"not measured: make bench". Standard library; png needs matplotlib (python.sh beside it finds
one). The rows, their words and labels come from each stage's [speedup] (tools/stages.py).
"""
import argparse
import glob
import os
import re
import sys
from collections import defaultdict

from plot import HEADER, num, pow2, pyplot, read_rows, size  # plot.py beside it: its CSV reader

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import stages  # noqa: E402  (tools/stages.py: each stage's [speedup] in its stage.ini)

GPU_STAGES = [s for s in stages.load() if s.kind == "gpu"]
# CUB's time at an n: the one measured in the process of the stage whose [speedup] says cub = yes
CUB_OWNER = next((s.name for s in GPU_STAGES if s.cub), None)
ROWS = [(s.row, s.what, s.label) for s in GPU_STAGES if s.owns_row()] + [
    ("cub", "CUB's `DeviceReduce::Sum`, the reference", "CUB")]  # CSV name, what changed, label
STAGES = [s for s, _, _ in ROWS]
WITHOUT = set()  # --without: rows left out of the table and the plot (their speed-ups still count)
# A single-block stage's lesson: the row timing it (its segmented variant's, or stage 5's)
AT_SCALE = {s.name: s.row for s in GPU_STAGES if s.row != s.name}
HEAD = ("| {} | time (µs) | GB/s | % of peak | step speed-up | cumulative speed-up |\n"
        "|---|---|--:|--:|--:|--:|--:|")


def load(path):
    """Returns gpu, peak GB/s, by[stage][n] = its CSV row (the last, if run twice); by['cub'][n]
    is the cub row right after CUB_OWNER's row at n (bench.cu writes stage, cub, copy per n)."""
    rows = read_rows(path, HEADER)
    by, owner = defaultdict(dict), None
    for r in rows:
        stage, n = r["stage"], int(r["n"])
        if stage == "cub" and owner == (CUB_OWNER, n):
            by["cub"][n] = r
        elif stage not in ("cub", "copy"):
            by[stage][n], owner = r, (stage, n)
    return rows[0]["gpu"], float(rows[0]["peak_gbps"]), by


def measure(by, n):
    """A dict per row of ROWS at n: its CSV row (None: not measured), time (µs), step speed-up
    over the nearest measured stage above ('over'), cumulative speed-up over step01."""
    out, prev, base = [], None, by[STAGES[0]].get(n)
    for stage, what, _ in ROWS:
        r = by[stage].get(n)
        d = {"stage": stage, "what": what, "row": r, "step": None, "over": None, "cum": None}
        if r:
            d["us"] = 1000 * float(r["median_ms"])
            if prev and stage != "cub":
                d["step"], d["over"] = prev["us"] / d["us"], prev["stage"]
            if base:
                d["cum"] = 1000 * float(base["median_ms"]) / d["us"]
            prev = prev if stage == "cub" else d
        out.append(d)
    return out


def times(x):  # a speed-up
    return "–" if x is None else f"{num(x)}×"


def cells(d, above):
    """A row's cells: stage, time (µs), GB/s, % of peak, step and cumulative speed-up."""
    r = d["row"]
    if r is None:
        return [d["stage"], "not measured: make bench", "", "", "", ""]
    wrong = " (**wrong sum**)" if r["sum_ok"].strip() != "1" else ""
    step = times(d["step"]) + (f" over {d['over']}" if d["over"] not in (None, above) else "")
    us = d["us"]
    return [d["stage"] + wrong, f"{us:.2f}" if us < 10 else f"{us:.1f}", num(float(r["gbps"])),
            num(float(r["peak_pct"])), step, times(d["cum"])]


def at_scale():
    """The caption's words on the stages another row times: "Stages 2 and 3 run as their segmented
    variants (`stepNN_name/variants/`); stage 4 so made is stage 5. " """
    def stages_(numbers):  # "Stages 2 and 3 run as their", "Stage 2 runs as its"
        if len(numbers) == 1:
            return f"Stage {numbers[0]} runs as its"
        return f"Stages {', '.join(numbers[:-1])} and {numbers[-1]} run as their"
    variants, others = {}, []
    for s in GPU_STAGES:
        if s.row in s.variants:
            variants.setdefault(s.row.split("_", 1)[1], []).append(str(s.number))
        elif s.row != s.name:
            others.append(f"stage {s.number} so made is stage {int(s.row[4:6])}")
    said = [f"{stages_(v)} {kind} variant{'s' * (len(v) > 1)} (`stepNN_name/variants/`)"
            for kind, v in variants.items()] + others
    return "; ".join(said) + ". " if said else ""


def table(gpu, peak, by, ns, csv):
    """The tables, one per n, under a caption that says where every number comes from."""
    parts = [f"`make bench` on {gpu} (theoretical peak {peak:.0f} GB/s; `{csv}`): median times, "
             f"L2 flushed. {at_scale()}Step speed-up: the row above's time / this row's; "
             f"cumulative: {STAGES[0].split('_')[0]}'s time / this row's. CUB was timed in the "
             f"process of {CUB_OWNER}; it has no step speed-up, being no step of the course."]
    for n in ns:
        rows, above = [HEAD.format("stage | what changed")], None
        for d in (d for d in measure(by, n) if d["stage"] not in WITHOUT):
            c = cells(d, above)
            rows.append("| " + " | ".join([c[0], d["what"]] + c[1:]) + " |")
            above = d["stage"]
        parts += [f"**n = {pow2(n)}** ({size(4 * n)})", "\n".join(rows)]
    return "\n\n".join(parts)


def stage_rows(gpu, by, ns, stage, csv):
    """One stage's row at each n, and its gain in a sentence: the block of its lesson. Stages
    02-04 may be named by their own folder (AT_SCALE)."""
    lesson, stage = stage, AT_SCALE.get(stage, stage)
    if stage not in STAGES:
        raise ValueError(f"no row '{stage}'; the rows are {', '.join(STAGES + list(AT_SCALE))}")
    k = STAGES.index(stage)
    rows, steps, cums, seen = [HEAD.format("n | stage")], {}, [], False
    for n in ns:
        d, at = measure(by, n)[k], f"at n = {pow2(n)}"
        seen |= d["row"] is not None
        c = [f"{pow2(n)} ({size(4 * n)})"] + cells(d, STAGES[k - 1] if k else None)
        rows.append("| " + " | ".join(c) + " |")
        if d["step"] is not None:  # a clause per stage compared with
            steps.setdefault(d["over"], []).append(f"{times(d['step'])} {at}")
        if d["cum"] is not None and k:
            cums.append(f"{times(d['cum'])} {at}")
    said = [f"timed at scale as {stage}, a segment per block"] if lesson != stage else []
    said += [f"step speed-up over {o}: " + ", ".join(v) for o, v in steps.items()]
    said += [f"cumulative, over {STAGES[0]}: " + ", ".join(cums)] if cums else []
    said += [f"CUB timed in the process of {CUB_OWNER}"] if stage == "cub" else []
    said += ["this stage is the baseline of every speed-up"] if not k else []
    said = said or ["no speed-up: the stages it is compared with are not measured"]
    text = ("; ".join(said) + f" (`make bench` on {gpu}, `{csv}`)." if seen else
            f"not measured yet at these n: `{csv}` has no row of it; run `make bench`.")
    return "\n".join(rows) + "\n\n" + text[0].upper() + text[1:]


def png(gpu, peak, by, ns, out):
    try:
        plt = pyplot()
    except ImportError:
        raise ValueError("png needs matplotlib: run it with $(bash tools/bench/python.sh)")
    # 1.4 inches a stage, 4.4 high: the deck shows it a frame's width, at about 0.54 of its size
    # with 7 stages, so its smallest text, 19 pt, prints at 10 pt there (make slides' body size).
    plt.rcParams.update({"font.size": 19, "axes.titlesize": 20, "legend.fontsize": 19})
    shown = [r for r in ROWS if r[0] not in WITHOUT]
    fig, ax = plt.subplots(figsize=(1.4 * len(shown) + 1, 4.4), layout="constrained")
    width = 0.8 / len(ns)
    for j, n in enumerate(ns):
        for i, d in enumerate(d for d in measure(by, n) if d["stage"] not in WITHOUT):
            x = i - 0.4 + width * (j + 0.5)
            if d["row"] is None:
                ax.text(x, peak * 0.02, "not measured", rotation=90, ha="center", va="bottom",
                        fontsize=19, color="0.4")
                continue
            gbps, bad = float(d["row"]["gbps"]), d["row"]["sum_ok"].strip() != "1"
            e = n.bit_length() - 1
            ax.bar(x, gbps, width, color=f"C{j}", label=f"n = $2^{{{e}}}$" if i == 0 else None)
            ax.text(x, gbps, "wrong\nsum" if bad else f"{float(d['row']['peak_pct']):.0f}",
                    ha="center", va="bottom", fontsize=19, color="red" if bad else "black")
    ax.axhline(peak, color="firebrick", lw=2, ls=":")
    ax.text(-0.5, peak, f"theoretical peak {peak:.0f} GB/s = 100%", color="firebrick",
            va="bottom", fontsize=19)
    ax.set_xticks(range(len(shown)), [label for _, _, label in shown], fontsize=19)
    ax.set_xlim(-0.6, len(shown) - 0.4)
    ax.set_ylim(0, peak * 1.12)
    ax.set_ylabel("GB/s read")
    ax.set_title(f"{gpu}: each stage's bandwidth, % of peak on the bars")
    ax.legend(loc="upper left", bbox_to_anchor=(0, 0.92), frameon=False)
    fig.savefig(out, dpi=150)
    plt.close(fig)
    print(f"wrote {out}", file=sys.stderr)


# Markers stand on lines of their own (so a README may quote one inside a line).
BLOCK = re.compile(r"^(<!-- harris((?: [a-z]+=\S+)*) -->)$(.*?)^(<!-- /harris -->)$", re.S | re.M)


def render(attrs, csv):
    """The text of a block whose marker holds these attributes, and the CSV it came from."""
    a = dict(kv.split("=", 1) for kv in attrs.split())
    if set(a) - {"n", "stage", "csv"}:
        raise ValueError(f"unknown attribute in '{attrs.strip()}': n=, stage=, csv= are known")
    if "csv" in a:
        csv = os.path.join(ROOT, a["csv"])
    elif not csv:
        found = glob.glob(os.path.join(ROOT, "results", "*", "results.csv"))
        if not found:
            raise ValueError("no results/*/results.csv yet: run make bench on a GPU, or give --csv")
        csv = max(found, key=lambda p: (os.path.getmtime(p), p))  # the newest
    gpu, peak, by = load(csv)
    ns, rel = [1 << int(e) for e in a.get("n", "24,28").split(",")], os.path.relpath(csv, ROOT)
    if "stage" in a:
        return stage_rows(gpu, by, ns, a["stage"], rel), rel
    return table(gpu, peak, by, ns, rel), rel


def update_or_check(files, csv, check):
    """Rewrites (update) or compares (check) every block; returns the exit status."""
    csv, stale = csv and os.path.abspath(csv), 0
    for f in files:
        with open(f, encoding="utf-8") as fh:
            text = fh.read()
        opens, closes = (len(re.findall(rf"^<!-- {m}", text, re.M)) for m in ("harris", "/harris"))
        if not opens == closes == len(BLOCK.findall(text)):
            raise ValueError(f"{f}: a block is <!-- harris key=value ... --> ... <!-- /harris -->")

        def redo(m):
            nonlocal stale
            try:
                body, used = render(m[2], csv)
            except (OSError, ValueError) as e:
                raise ValueError(f"{f}: {m[1]}: {e}")
            body = "\n\n" + body + "\n\n"  # blank lines: the Markdown around stays apart
            if body != m[3]:
                stale += 1
                if check:
                    print(f"{f}:{text.count(chr(10), 0, m.start()) + 1}: {m[1]} differs from "
                          f"{used}: run python3 tools/bench/harris.py update {f}", file=sys.stderr)
            return m[1] + body + m[4]

        new = BLOCK.sub(redo, text)
        if not check and new != text:
            with open(f, "w", encoding="utf-8") as fh:
                fh.write(new)
            print(f"updated {f}", file=sys.stderr)
    return 1 if check and stale else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=["markdown", "png", "update", "check"])
    ap.add_argument("paths", nargs="+", metavar="CSV|FILE",
                    help="markdown, png: the benchmark CSV; update, check: Markdown files")
    ap.add_argument("--n", default="24,28", help="log2 of each n, comma-separated (default 24,28)")
    ap.add_argument("--stage", help="markdown: that stage's rows alone, e.g. step06_coarsened")
    ap.add_argument("--without", default="", metavar="STAGE,...",
                    help="markdown, png: leave these rows out (the lecture's deck: step08)")
    ap.add_argument("--csv", help="update, check: this CSV, not the newest results/*/results.csv")
    ap.add_argument("-o", "--output", metavar="PNG", help="png: the image to write")
    args = ap.parse_args()
    try:
        if args.command in ("update", "check"):
            return update_or_check(args.paths, args.csv, args.command == "check")
        WITHOUT.update(filter(None, args.without.split(",")))
        (gpu, peak, by), ns = load(args.paths[0]), [1 << int(e) for e in args.n.split(",")]
        if args.command == "png":
            png(gpu, peak, by, ns, args.output or sys.exit("harris.py png: give -o OUT.png"))
        else:
            print(stage_rows(gpu, by, ns, args.stage, args.paths[0]) if args.stage else
                  table(gpu, peak, by, ns, args.paths[0]))
    except (OSError, ValueError) as e:
        sys.exit(f"harris.py: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
