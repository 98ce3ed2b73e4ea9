#!/usr/bin/env python3
"""table.py: the counters `make metrics` asks Nsight Compute for, and the tables made of them.

    table.py names QUERY.txt              the --metrics list for ncu: for each counter, the first of
                                          its names that `ncu --query-metrics` (saved in QUERY.txt)
                                          lists; a counter the GPU lists under none is left out
    table.py rows STAGE N GPU REPORT.csv  one stage's rows of metrics.csv, from the CSV that
                                          `ncu --import R.ncu-rep --csv --page raw` (or --page details)
                                          prints
    table.py markdown METRICS.csv NCU_VERSION COMMAND
                                          the Markdown table of metrics.csv, one row per stage
    table.py selftest                     parses tools/metrics/testdata/ (real H200 output) and checks it

metrics.csv is long: gpu,stage,n,block,metric,value,unit, one row per stage and counter, the value
in ncu's base unit. Python 3 standard library only.
"""
import contextlib
import csv
import io
import os
import re
import sys

# One entry per counter, in the order of the lessons: (column label, unit shown, scale, decimals,
# names). names: ncu's name for it, newest first; an older ncu may know only a later one. NAME[OP]
# is the instance OP of an instanced metric. README.md beside this file says what each counter
# means, which lesson it explains and on which ncu and GPU every name was checked.
COUNTERS = [
    ("time", "µs", 1e-3, 2, ["gpu__time_duration.sum"]),
    ("grid", "blocks", 1, 0, ["launch__grid_size"]),
    ("block", "threads", 1, 0, ["launch__block_size"]),
    ("warp inst", "", 1, 0, ["smsp__inst_executed.sum"]),
    ("active threads / inst", "of 32", 1, 2,
     ["smsp__average_thread_inst_executed_per_inst_executed.ratio",
      "smsp__thread_inst_executed_per_inst_executed.ratio"]),
    ("predicated-on threads / inst", "of 32", 1, 2,
     ["smsp__average_thread_inst_executed_pred_on_per_inst_executed.ratio",
      "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio"]),
    ("global ld requests", "", 1, 0, ["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]),
    ("global ld sectors", "32 B", 1, 0, ["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]),
    ("global st sectors", "32 B", 1, 0, ["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"]),
    ("DRAM read", "MB", 1e-6, 2, ["dram__bytes_read.sum"]),
    ("DRAM write", "MB", 1e-6, 2, ["dram__bytes_write.sum"]),
    ("DRAM", "% of peak", 1, 1, ["dram__throughput.avg.pct_of_peak_sustained_elapsed"]),
    ("shared ld inst", "", 1, 0, ["smsp__inst_executed_op_shared_ld.sum"]),
    ("shared st inst", "", 1, 0, ["smsp__inst_executed_op_shared_st.sum"]),
    ("bank conflicts ld", "", 1, 0, ["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"]),
    ("bank conflicts st", "", 1, 0, ["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"]),
    # barriers: no hardware counter counts them, ncu's instrumented count per opcode does
    ("barriers (BAR inst)", "", 1, 0, ["sass__inst_executed_per_opcode[BAR]"]),
    ("barrier wait", "warp-cycles", 1, 0, ["smsp__warps_issue_stalled_barrier.sum"]),
    ("RED inst", "", 1, 0, ["smsp__inst_executed_op_global_red.sum"]),
    ("REDUX inst", "", 1, 0, ["sass__inst_executed_per_opcode[REDUX]"]),
    ("RED requests L1", "", 1, 0, ["l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"]),
    ("RED requests L2", "", 1, 0, ["lts__t_requests_srcunit_tex_op_red.sum"]),
    ("ATOM requests L1", "", 1, 0, ["l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"]),
]

TESTDATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata")


def warn(message):
    print("metrics: " + message, file=sys.stderr)


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def listed_metrics(query_text):
    """The base names in `ncu --query-metrics` output (the first column of its table, not the
    dashed rules), or None when the text holds no such table (no GPU, no permission, an error)."""
    head = re.search(r"^Metric Name.*", query_text, re.M)
    return None if head is None else set(
        re.findall(r"^\s*([^-\s]\S*)", query_text[head.end():], re.M))


def metric(name):
    """ncu's name for a counter's name: sass__inst_executed_per_opcode[BAR] -> its metric."""
    return name.split("[")[0]


def choose_names(query_text):
    """The metrics to ask ncu for: per counter, the first name whose base (up to the first dot) the
    GPU lists. launch__ (launch attributes) and sass__ (instrumented) metrics are not in that list;
    they are asked for as they are."""
    listed = listed_metrics(query_text)
    if not listed:
        warn("`ncu --query-metrics` listed no metrics, so none could be checked; "
             "asking for every counter by its newest name.")
    chosen = []
    for label, _, _, _, names in COUNTERS:
        ok = [n for n in names if not listed or n.startswith(("launch__", "sass__")) or
              n.split(".")[0] in listed]
        if not ok:
            warn("this GPU lists none of %s (%s): left out." % (", ".join(names), label))
        elif metric(ok[0]) not in chosen:
            chosen.append(metric(ok[0]))
    return chosen


def number(text):
    """ncu's value as a float: '11,264' -> 11264.0, '32,768 (0: 32,768)' (with its instances)
    -> 32768.0; None for 'n/a', '' or other text."""
    try:
        return float(text.split(" (")[0].replace(",", ""))
    except ValueError:
        return None


def value_of(report, name):
    """(value or None, unit) of a counter in a parsed report. An instance, NAME[OP], is read from
    ncu's --print-metric-instances details form, '30,900,224 (ISETP: 5,767,168; ...; BAR: 2,097,152;
    ...)'; an opcode the kernel never executed is not listed there, and counts 0."""
    text, unit = report.get(metric(name), ("", ""))
    if "[" not in name:
        return number(text), unit
    if number(text) is None or "(" not in text:
        return None, unit
    count = re.search(r"[(;] *%s: *([^;)]*)" % re.escape(name[name.index("[") + 1:-1]), text)
    return (number(count[1]) if count else 0.0), unit or "inst"


def parse_reports(text):
    """[{metric name: (value text, unit)}, ...] from ncu's CSV output, one dict per kernel profiled,
    in launch order. --page raw: a row of metric names, a row of units, then a row per kernel.
    --page details: one row per kernel and metric with "Metric Name", "Metric Unit" and
    "Metric Value" (and "ID", the kernel's)."""
    start = re.search(r'^"ID",', text, re.M)
    if start is None:
        return []
    header, *rows = csv.reader(io.StringIO(text[start.start():]))
    if "Metric Name" in header:  # details page
        name, unit, value = (header.index(k) for k in ("Metric Name", "Metric Unit", "Metric Value"))
        kernels = {}
        for r in rows:
            if len(r) == len(header):
                kernels.setdefault(r[0], {})[r[name]] = (r[value], r[unit])
        return list(kernels.values())
    return [{n: (r[i], rows[0][i]) for i, n in enumerate(header)}
            for r in rows[1:] if len(r) == len(header)]


def parse_report(text):
    """The first reduce_kernel's {metric name: (value text, unit)} (parse_reports), else the first
    kernel's; {} when ncu's output holds no result."""
    reports = parse_reports(text)
    mine = [r for r in reports if "reduce_kernel" in r.get("Kernel Name", ("reduce_kernel",))[0]]
    return (mine or reports or [{}])[0]


def stage_rows(stage, n, gpu, report_text):
    """metrics.csv rows for one stage: [gpu, stage, n, block, metric, value, unit]."""
    report = parse_report(report_text)
    if not report:
        raise ValueError("no profile result in ncu's CSV output")
    block = number(report.get("launch__block_size", ("", ""))[0])
    block = "" if block is None else "%d" % block
    rows = []
    for label, _, _, _, names in COUNTERS:
        name = next((n for n in names if metric(n) in report), names[0])
        value, unit = value_of(report, name)
        if value is None:
            warn("%s: ncu gave no value for %s (%s)." % (stage, name, label))
            continue
        rows.append([gpu, stage, n, block, name, "%.15g" % value, unit])
    return rows


def fmt(value, scale, decimals):
    return "n/a" if value is None else "{:,.{}f}".format(value * scale, decimals)


def markdown(metrics_csv_text, ncu_version, command):
    """metrics.md: a line saying what was measured how, then a row per stage, in metrics.csv's
    order, with each counter's value (any of its names) scaled to the unit shown."""
    rows = list(csv.DictReader(io.StringIO(metrics_csv_text)))
    n_of = {r["stage"]: r["n"] for r in rows}  # the stages in order
    values = {(r["stage"], r["metric"]): number(r["value"]) for r in rows}
    sizes = {}
    for s, n in n_of.items():
        sizes.setdefault(n, []).append(s)
    used = "; ".join("n = {:,} for {}".format(int(n), ", ".join(s)) if n.isdigit() else
                     "n = ? for " + ", ".join(s) for n, s in sizes.items())
    labels = ["stage", "n"] + [c[0] + (" (%s)" % c[1] if c[1] else "") for c in COUNTERS]
    out = ["%s, Nsight Compute %s, first launch of reduce_kernel; %s. Command: `%s`" %
           (" / ".join(dict.fromkeys(r["gpu"] for r in rows)), ncu_version, used, command), "",
           "| " + " | ".join(labels) + " |", "|---" + "|--:" * (len(COUNTERS) + 1) + "|"]
    for s, n in n_of.items():
        cells = [s, fmt(number(n), 1, 0)] + [
            fmt(next((values[s, m] for m in names if (s, m) in values), None), scale, decimals)
            for _, _, scale, decimals, names in COUNTERS]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def selftest():
    """Real output of Nsight Compute 2025.3.1 on an NVIDIA H200 (testdata/README.md): the numbers
    testdata/README.md quotes must come out of both pages, and the name checks must fall back as
    promised."""
    def rows(stage, n, page):  # rows of metrics.csv
        return stage_rows(stage, n, "NVIDIA H200", read(os.path.join(TESTDATA, page)))

    query = read(os.path.join(TESTDATA, "query_excerpt.txt"))
    names = choose_names(query)
    old = choose_names(query.replace("smsp__average_thread_inst_executed_per_inst_executed ", "x "))
    with contextlib.redirect_stderr(io.StringIO()) as said:
        fewer = choose_names(query.replace("dram__bytes_read", "x"))
    step04, step01 = (rows("step04_smem", "2048", "step04_raw.csv"),
                      rows("step01_atomic_naive", "16777216", "step01_raw.csv"))
    raw, red = {r[4]: r[5] for r in step04}, {r[4]: r[5] for r in step01}
    checks = [  # (what, got, want)
        ("listed", "smsp__inst_executed" in listed_metrics(query), True),
        ("no table", listed_metrics("==ERROR== ERR_NVGPUCTRPERM - The user does not ..."), None),
        ("names", len(names), len(COUNTERS) - 1),  # two counters share the per-opcode metric
        ("kept unlisted", ("launch__grid_size" in names, "sass__inst_executed_per_opcode" in names),
         (True, True)),
        ("newest name", "smsp__average_thread_inst_executed_per_inst_executed.ratio" in names,
         True),
        ("older name", "smsp__thread_inst_executed_per_inst_executed.ratio" in old, True),
        ("none listed", ("dram__bytes_read.sum" in fewer, "left out" in said.getvalue()),
         (False, True)),
        ("global load sectors", raw.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), "256"),
        ("global store sectors", raw.get("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"), "1"),
        ("time", raw.get("gpu__time_duration.sum"), "3232"),
        ("barriers", raw.get("sass__inst_executed_per_opcode[BAR]"), "320"),
        ("an opcode not executed", raw.get("sass__inst_executed_per_opcode[REDUX]"), "0"),
        ("block", step04[0][3], "1024"),
        ("unit", {r[4]: r[6] for r in step04}.get("dram__bytes_read.sum"), "byte"),
        ("details page", {r[4]: r[5] for r in rows("step04_smem", "2048", "step04_details.csv")},
         raw),
        ("RED", red.get("smsp__inst_executed_op_global_red.sum"), "524288"),
        ("REDUX", red.get("sass__inst_executed_per_opcode[REDUX]"), "524288"),
        ("no result", parse_report('"ID","Kernel Name"\n"",""\n'), {}),
        ("number", (number("2,047"), number("32,768 (0: 32,768)"), number("n/a")),
         (2047.0, 32768.0, None)),
    ]
    failures = ["%s: got %r, want %r" % c for c in checks if c[1] != c[2]]
    for f in failures:
        print("selftest: " + f, file=sys.stderr)
    print("metrics selftest (table.py): %s" % ("ok" if not failures else "%d failed" % len(failures)))
    return 1 if failures else 0


def main(argv):
    if len(argv) == 3 and argv[1] == "names":
        print(",".join(choose_names(read(argv[2]))))
    elif len(argv) == 6 and argv[1] == "rows":
        try:
            rows = stage_rows(*argv[2:5], read(argv[5]))
        except ValueError as e:
            warn("%s: %s (%s)." % (argv[2], e, argv[5]))
            return 1
        csv.writer(sys.stdout, lineterminator="\n").writerows(rows)
    elif len(argv) == 5 and argv[1] == "markdown":
        sys.stdout.write(markdown(read(argv[2]), argv[3], argv[4]))
    elif len(argv) == 2 and argv[1] == "selftest":
        return selftest()
    else:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
