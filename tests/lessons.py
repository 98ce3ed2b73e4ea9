#!/usr/bin/env python3
"""lessons.py: what each stage's lesson changes, as hardware counters: make grade's fourth check.

A right sum proves a kernel correct, not that its author did the stage's lesson: stage NN-1's
code sums right too (and an untouched handout file is exactly that). Each lesson changes something
Nsight Compute counts, the counters its README and tools/metrics/README.md cite. make grade
(tests/grade.py) profiles one reduce() call, every kernel it launches (`ncu --profile-from-start
off`: the harness brackets its first run with cudaProfilerStart/Stop), of the graded file and of
the repository's stages NN and NN-1, at the same n (docs/grading.md says which). The rule,
one for every stage: each counter of stage NN's lesson must lie on stage NN's side of the
midpoint between stage NN-1's value and stage NN's; a counter on which the two agree decides
nothing (none does, today). Stage 8 is also graded by its float32 exact replay, in grade.py:
its lesson is an order.

    lessons.py selftest   the rule and the parsing, on tools/metrics/testdata/
    lessons.py model BUILD [STAGE...]
                          the rule on the CPU model's counters (model/counters.cc) instead of
                          Nsight Compute's: each stage NN (default: all) must pass its own lesson
                          and the stage it follows fail it, at the sizes make grade uses;
                          BUILD/counters/stepNN of both must be built
    lessons.py model-table BUILD OUT.csv
                          every GPU stage's model counters at make grade's sizes, the reference
                          a handout's make grade uses (results/cpu_model/lesson_counters.csv)

Python 3 standard library only; reads ncu's CSV with tools/metrics/table.py.
"""
import math
import os
import subprocess
import sys

TOOLS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools")
sys.path[:0] = [TOOLS, os.path.join(TOOLS, "metrics")]
import stages  # noqa: E402  (tools/stages.py: the stages and what each follows)
import table  # noqa: E402  (tools/metrics/table.py: ncu's CSV, the instanced sass__ metrics)

# The counters the lessons use: name here -> ncu's metric (NAME[OP]: instance OP of an instanced
# metric). Summed over every kernel of the profiled reduce() call.
METRIC = {
    "grid": "launch__grid_size",
    "waves": "launch__waves_per_multiprocessor",
    "inst": "smsp__inst_executed.sum",
    "thread_inst": "smsp__thread_inst_executed.sum",
    "ld_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "ld_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "st_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "shared_ld": "smsp__inst_executed_op_shared_ld.sum",
    "red": "smsp__inst_executed_op_global_red.sum",
    "bar": "sass__inst_executed_per_opcode[BAR]",
    "shfl": "sass__inst_executed_per_opcode[SHFL]",
}


# Each stage's lesson, as what it changes: (stage, what is counted, numerator, denominator or None
# for the numerator alone), both counters of `counters`: n is the elements summed, threads and
# warps those launched, ld_bytes 32 per load sector, all kernels together. Each stage's [lesson]
# in its stage.ini (tools/stages.py), where a comment says what the lesson changes.
STAGES = stages.load()
LESSONS = [(s.short, what, num, den) for s in STAGES for what, num, den in s.lesson]


def previous(stage):
    """The short name of the stage `stage` (stepNN) follows: its stage.ini's follows."""
    return stages.previous(STAGES, stage).short


def runs_no_kernel(stage):
    """Whether `stage` is the CPU reference (step00): every counter 0."""
    return stages.find(STAGES, stage).kind == "cpu"


# Every counter a lesson's ratio may name: those above, and what counters() adds.
COUNTERS = sorted(set(METRIC) | {"n", "kernels", "threads", "warps", "ld_bytes"})


def value(c, numerator, denominator):
    """c[numerator] / c[denominator] (c[numerator] where denominator is None); None where either
    is unknown or the denominator is 0."""
    a, b = c[numerator], 1 if denominator is None else c[denominator]
    return None if a is None or b is None or b == 0 else a / b


def metrics():
    """The --metrics list for ncu: every metric a lesson uses, and the block size."""
    return sorted({table.metric(m) for m in METRIC.values()} | {"launch__block_size"})


def counters(n, reports):
    """The lessons' counters of one profiled reduce() call: {name: sum over its kernels}, with n,
    kernels, threads and warps; a counter ncu gave for no kernel is None. No kernel at all (step00,
    or a reduce() that launched none) counts 0 throughout."""
    c = {"n": n, "kernels": len(reports), "threads": 0, "warps": 0}
    for key, name in METRIC.items():
        values = [table.value_of(r, name)[0] for r in reports]
        c[key] = None if reports and all(v is None for v in values) else sum(v or 0 for v in values)
    for r in reports:
        grid = table.value_of(r, "launch__grid_size")[0] or 0
        block = table.value_of(r, "launch__block_size")[0] or 0
        c["threads"] += grid * block
        c["warps"] += grid * math.ceil(block / 32)
    c["ld_bytes"] = c["ld_sectors"] and 32 * c["ld_sectors"]
    return c


def judge(stage, graded, previous, this):
    """Stage `stage`'s lesson on the graded kernel's counters, against the repository's stage NN-1
    (`previous`) and NN (`this`). Returns (passed, [one line per counter])."""
    lines, decided, passed = [], 0, True
    for _, label, *ratio in (row for row in LESSONS if row[0] == stage):
        g, p, t = (value(c, *ratio) for c in (graded, previous, this))
        if g is None or p is None or t is None:
            lines.append("%s: not measured (Nsight Compute gave no value)" % label)
            passed = False
            continue
        if p == t:
            lines.append("%s: %s, but stages NN-1 and NN agree (%s): decides nothing" %
                         (label, fmt(g), fmt(t)))
            continue
        decided += 1
        mid = (p + t) / 2
        ok = g > mid if t > p else g < mid
        passed = passed and ok
        lines.append("%s: %s, %s the midpoint %s between stage %s's %s and stage %s's %s: %s" % (
            label, fmt(g), "above" if g > mid else "below" if g < mid else "at", fmt(mid),
            previous["stage"], fmt(p), this["stage"], fmt(t), "ok" if ok else "NOT the lesson"))
    if decided == 0:
        lines.append("no counter separates the two stages: the lesson could not be checked")
        passed = False
    return passed, lines


def sides(stage, graded, previous, this):
    """Stage `stage`'s lesson counter by counter: one dict per counter of its [lesson], with label,
    yours (graded), before (previous: stage NN-1's), after (this: stage NN's), mid (their midpoint;
    None where they agree or a value is missing) and ok (yours on stage NN's side of mid; None
    where the counter decides nothing). The rule of judge(), unrolled for partial credit."""
    out = []
    for _, label, *ratio in (row for row in LESSONS if row[0] == stage):
        g, p, t = (value(c, *ratio) for c in (graded, previous, this))
        row = dict(label=label, yours=g, before=p, after=t, mid=None, ok=None)
        if None not in (p, t) and p != t:
            row["mid"] = (p + t) / 2
            row["ok"] = g is not None and (g > row["mid"] if t > p else g < row["mid"])
        out.append(row)
    return out


def fmt(x):
    return "%.3g" % x if abs(x) < 1000 else "{:,.0f}".format(x)


def selftest():
    """Real H200 output (tools/metrics/testdata/): step04's counters, and the rule on made-up values."""
    def parsed(name):
        with open(os.path.join(table.TESTDATA, name), encoding="utf-8") as f:
            return counters(2048, table.parse_reports(f.read()))

    def fake(stage, **kw):
        d = {k: 0.0 for k in METRIC}
        d.update(n=2048.0, threads=2048.0, warps=64.0, kernels=1, stage=stage, **kw)
        return d
    c, cpu = parsed("step04_raw.csv"), dict(counters(16, []), stage="step00")
    prev = fake("step03", shared_ld=0.0, st_sectors=259.0)
    this = fake("step04", shared_ld=641.0, st_sectors=1.0)
    half = fake("x", shared_ld=641.0, st_sectors=259.0)  # shared memory, but still writes back
    half_ok, half_lines = judge("step04", half, prev, this)
    missing = dict(this, shared_ld=None)
    checks = [  # (what, got, want)
        ("step04 sectors", (c["ld_sectors"], c["st_sectors"], c["bar"]), (256.0, 1.0, 320.0)),
        ("step04 threads", (c["threads"], c["warps"], c["kernels"]), (1024.0, 32.0, 1)),
        ("details page", parsed("step04_details.csv")["ld_sectors"], 256.0),
        ("no kernel", (cpu["red"], cpu["threads"]), (0, 0)),
        ("own stage passes", judge("step04", this, prev, this)[0], True),
        ("previous stage fails", judge("step04", prev, prev, this)[0], False),
        ("half the lesson fails", (half_ok, "NOT the lesson" in half_lines[1]), (False, True)),
        ("no separating counter", judge("step04", this, this, this)[0], False),
        ("missing counter fails", judge("step04", missing, prev, this)[0], False),
    ]
    failures = ["%s: got %r, want %r" % k for k in checks if k[1] != k[2]]
    for f in failures:
        print("selftest: " + f, file=sys.stderr)
    print("lessons selftest: %s" % ("ok" if not failures else "%d failed" % len(failures)))
    return 1 if failures else 0


BIG, SMALL = (1 << 24, None), (2048, 1024)  # make grade's sizes (tests/grade.py)


def model_counters(build, stage, size):
    """The lessons' counters of one reduce() call of `stage` on the CPU model's counters build,
    at size (n, block; None: the stage's default), as counters() gives Nsight Compute's. The model
    counts active lanes over memory instructions only (its thread_inst / inst). A stage that
    cannot take n runs at SMALL, as make grade runs it (stage 04 as stage 05's predecessor)."""
    if runs_no_kernel(stage):
        return dict(counters(size[0], []), stage=stage)
    program = os.path.join(build, "counters", stage)
    info = subprocess.run([program, "--stage-info"], capture_output=True, text=True).stdout
    if "single_block=1" in info and size[0] > 2 * 1024:
        size = SMALL
    c, why = model_counters_of(program, size)
    if c is None:
        raise SystemExit("lessons.py: %s: %s" % (program, why))
    return dict(c, stage=stage)


def model_counters_of(program, size, timeout=600):
    """(counters, None) of one reduce() call of `program` (a BUILD/counters/stepNN, the model's
    counting build) at size (n, block; None: its default), or (None, why not): the program
    refused n, failed or ran past `timeout` seconds. make grade's lesson check on the model."""
    args = [program, "--n", str(size[0])] + (["--block", str(size[1])] if size[1] else [])
    try:
        run = subprocess.run(args, capture_output=True, text=True, timeout=timeout,
                             env=dict(os.environ, CUDA_MODEL_COUNTERS="1"))
    except subprocess.TimeoutExpired:
        return None, "it did not finish in %d s on the CPU model" % timeout
    return model_counters_from(size[0], run.returncode, run.stderr)


def model_counters_from(n, status, text):
    """(counters, None) from the output `text` of a counting build's run at n that exited with
    `status`, or (None, why not): it refused n (status 2), failed, or printed no counters."""
    line = [x for x in text.splitlines() if x.startswith("model_counters ")]
    if status == 2:
        return None, "it refused n = %d (%s), which the stage's lesson takes" % (
            n, (text.strip().splitlines() or ["no message"])[0][:200])
    if status not in (0, 1) or not line:
        said = [x for x in text.splitlines() if x and not x.startswith("model_counters ")]
        return None, "it failed on the CPU model (exit status %s): %s" % (
            status, (said or ["no output"])[0][:200])
    m = {k: float(v) for k, v in (kv.split("=") for kv in line[0].split()[1:])}
    c = {"n": n, "kernels": 1, "grid": m["grid"], "waves": m["waves"],
         "threads": m["threads"], "warps": m["warps"], "inst": 1.0,
         "thread_inst": m["lanes_per_request"], "ld_requests": m["global_ld_requests"],
         "ld_sectors": m["global_ld_sectors"], "st_sectors": m["global_st_sectors"],
         "shared_ld": m["shared_ld_requests"], "red": m["red"], "bar": m["bar"],
         "shfl": m["shfl"]}
    c["ld_bytes"] = 32 * c["ld_sectors"]
    return c, None


def model_table(build, out):
    """Writes `out`, a CSV of the model's counters of every GPU stage's reduce() at make grade's
    sizes (BIG where the stage takes it, and SMALL), from BUILD/counters/stepNN: the reference a
    handout grades against without the course's solutions (tests/grade.py,
    GRADE_REFERENCE_COUNTERS). The model's counters depend on the code only, not on a machine."""
    import csv
    rows = []
    for t in STAGES:
        if t.kind != "gpu":
            continue
        program = os.path.join(build, "counters", t.short)
        info = subprocess.run([program, "--stage-info"], capture_output=True, text=True).stdout
        single = "single_block=1" in info
        small = (SMALL[0], None) if "fixed_block=0" not in info else SMALL  # step08: 256 only
        for size in ([SMALL] if single else [BIG, small]):
            c = model_counters(build, t.short, size)
            rows.append(dict(c, stage=t.short, single_block=int(single), block=size[1] or ""))
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, ["stage", "single_block", "block"] + COUNTERS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    print("lessons: %d rows of the model's counters in %s" % (len(rows), out))
    return 0


def model(build, only=()):
    """Every lesson (or those of the stages `only`) on the model's counters: stage NN passes it,
    the stage it follows fails it."""
    failures, chosen = 0, [s for s in dict.fromkeys(row[0] for row in LESSONS)
                           if not only or s in only]
    for stage in chosen:
        prev = previous(stage)
        this = model_counters(build, stage, BIG)
        size = (this["n"], SMALL[1] if this["n"] == SMALL[0] else None)
        before = model_counters(build, prev, size)
        own, own_lines = judge(stage, dict(this, stage="yours"), before, this)
        other, other_lines = judge(stage, dict(before, stage="yours"), before, this)
        ok = own and not other
        failures += not ok
        print("%s: %s (n = %d): %s; its own code %s, stage %s's %s" % (
            stage, "ok" if ok else "FAILED", size[0], "; ".join(own_lines),
            "passes" if own else "FAILS", prev, "fails" if not other else "PASSES"))
    print("lessons on the model: %d of %d ok" % (len(chosen) - failures, len(chosen)))
    return 1 if failures else 0


def main(argv):
    if argv[1:] == ["selftest"]:
        return selftest()
    if len(argv) == 4 and argv[1] == "model-table":
        return model_table(argv[2], argv[3])
    if len(argv) >= 3 and argv[1] == "model":
        return model(argv[2], argv[3:])
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
