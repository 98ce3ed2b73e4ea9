"""The four checks of a submission (correct, race-free, fast enough, lesson), the gates between
them, and the repository's own stages they are measured against (Reference)."""
import csv
import os
import re
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET

from grader import common
from grader.common import (CHECKS, CONFIG, GRADED, LIMIT, MODEL, NCU_LIMIT, NO_LOCK, PROFILER,
                           TOOLS, TYPE, at_once, clip, float_build, gpu_alone, lesson_stages,
                           lessons, make, previous, quiet, read, remove, run, say, scrub, shown,
                           signal_words, source_of, stage_of)
from grader.submission import GATES, unwritten

try:
    import exploits  # tests/exploits.py: symbols and kernels a stage may not have
except ImportError:
    exploits = None

BIG = (1 << 24, None)      # the lessons' n, with the stage's default block
SMALL = (2048, 1024)       # a single-block stage's largest n, and its block
SPEED_N = 1 << 26          # the speed check's n (a single-block stage: 2048)
NCU = next((c for c in (os.environ.get("NCU"), shutil.which("ncu"), "/usr/local/cuda/bin/ncu")
            if c and os.access(c, os.X_OK)), None)
# Criterion tests the CPU model leaves out (a GPU's memory and speed: n past 2^31), and the
# model's race tests (ThreadSanitizer, its barrier checks: the race-free check's, on the model).
GPU_ONLY = ("n_above_2_to_the_31", "n_above_2_to_the_32")
RACES = "data_race_free"


def lesson_sizes(s, ref):
    """(size, [(k, ksize)]): the (n, block) stage s's own counters are taken at (BIG, or SMALL
    for a stage that cannot take BIG's n), and each lesson k it is graded on (lesson_stages) with
    the size it is checked at: stage s's own lesson at s's size; an earlier one where both its
    stages run at that size, else at SMALL."""
    size = BIG if ref.takes(s, BIG[0]) else SMALL
    return size, [(k, size if k == s or ref.takes(k, size[0]) and ref.takes(previous(k), size[0])
                   else SMALL) for k in lesson_stages(s)]


def speed_n(stage, ref):
    """The n the speed check times stage `stage` at: SPEED_N, or 2048 for a single-block stage."""
    return SPEED_N if ref.takes(stage, SPEED_N) else 2048


def read_program_info(program):
    """A program's --stage-info line (single_block=, fixed_block=, ...), or ''."""
    try:
        return subprocess.run([program, "--stage-info"], capture_output=True, text=True,
                              timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


_HELP = {}


def guard_help(program):
    """The bench program's --help text (whether it offers --guard), asked once per program."""
    if program not in _HELP:
        try:
            _HELP[program] = subprocess.run([program, "--help"], capture_output=True, text=True,
                                            timeout=30).stdout
        except (OSError, subprocess.TimeoutExpired):
            _HELP[program] = ""
    return _HELP[program]


# ---- Measurements: one program's time, one reduce() call's counters -----------------------
def bench_ms(program, n, prefix, jail=None, env=None, sub=None):
    """The median of 30 timed runs of `program` (a build/bench_stepNN) at n, in ms, with the
    harness's guarded timing where it has one (`--guard`: a new input each repeat, each repeat's
    sum checked, a clock the program cannot replace): (ms, None), or (None, what the program said
    when it gave no time)."""
    remove(prefix + ".csv")
    guard = ["--guard"] if "--guard" in guard_help(program) else []
    with gpu_alone(env):
        rc = run([program, "--csv", prefix + ".csv", "--reps", "30", "--min-n", str(n),
                  "--max-n", str(n)] + guard, prefix + ".log", LIMIT, jail, env, sub)
    rows = [r for r in csv.DictReader(read(prefix + ".csv").splitlines())
            if r.get("stage") not in (None, "cub", "copy") and r.get("median_ms")]
    try:
        if rc == 0 and rows[0].get("sum_ok", "1") in ("1", "true", "yes"):
            return float(rows[0]["median_ms"]), None
    except (IndexError, ValueError):
        pass
    said = [l for l in read(prefix + ".log").splitlines() if l.strip() and not l.startswith("#")]
    if rc == 0 and not rows:
        return None, "it timed no run of n = %d (a stage that refuses n that large)" % n
    return None, ("it did not finish: %s" % (sub.hang if sub else "%d s" % LIMIT) if rc is None
                  else "exit status %s: %s" % (rc, clip(said[-1], 300) if said else "no output"))


def refused(program, n, words):
    """Why a program refused n, in the student's terms: a file that declares one thread block
    (stage_info's single_block, stages 02-04) takes at most 2 x 1024 elements."""
    if "single_block=1" in read_program_info(program):
        return ("your file declares one thread block (its STAGE says .single_block = true), so it "
                "takes n <= 2048, and refused n = %d: this stage's lesson sums that many over many "
                "blocks" % n)
    return "it refused n = %d (%s), which the stage's lesson takes" % (n, clip(words, 300))


def count(program, size, prefix, jail=None, env=None, sub=None):
    """The lesson counters of one reduce() call of `program` at size (n, block): Nsight Compute's
    on a GPU, the model's on the CPU model (a BUILD/counters/stepNN). Returns (counters, None,
    kernel names) or (None, why not, [])."""
    n, block = size
    args = ["--n", str(n)] + (["--block", str(block)] if block else []) + ["--reps", "1"]
    if MODEL != "gpu":
        rc = run([program] + args, prefix + ".log", LIMIT, jail,
                 dict(env or {}, CUDA_MODEL_COUNTERS="1"), sub)
        if rc is None:
            return None, "it did not finish on the CPU model: %s" % (
                sub.hang if sub else "%d s" % LIMIT), []
        c, why = lessons.model_counters_from(n, rc, read(prefix + ".log"))
        if rc == 2:
            why = refused(program, n, why)
        return c, why, []
    if NCU is None:
        return None, "Nsight Compute (ncu) was not found: it ships with the CUDA toolkit", []
    remove(prefix + ".ncu-rep")
    with PROFILER if common.SANDBOX and common.SANDBOX.shared_ports() else NO_LOCK, \
            gpu_alone(env):
        rc = run([NCU, "--profile-from-start", "off", "--clock-control", "none", "--metrics",
                  ",".join(lessons.metrics()), "-o", prefix, "-f", program] + args,
                 prefix + ".log", NCU_LIMIT, jail, env, sub)
    said = read(prefix + ".log").splitlines()
    line = next((l for l in said if l.startswith("stage=")), "")
    words = next((l for l in said if l and not l.startswith("==")), "")
    if any("ERR_NVGPUCTRPERM" in l for l in said):
        return None, ("the GPU's performance counters are restricted to admin users "
                      "(ERR_NVGPUCTRPERM): run as root, or see "
                      "https://developer.nvidia.com/ERR_NVGPUCTRPERM"), []
    if rc is None:
        return None, "it did not finish under Nsight Compute: %s" % (
            sub.hang if sub else "%d s" % NCU_LIMIT), []
    if rc == 2:
        return None, refused(program, n, words), []
    if rc not in (0, 1) or " result=" not in line:  # a wrong sum (1) still counts what ran
        return None, "it failed under Nsight Compute (%s): %s" % (
            signal_words(rc), clip(line or words or "no output")), []
    if not os.path.exists(prefix + ".ncu-rep"):
        return None, "Nsight Compute profiled no kernel in its reduce() call: it launched none", []
    # Mangled names: the default drops namespaces, and a library's kernel could pass for one of
    # the file's own (tests/exploits.py)
    run([NCU, "--import", prefix + ".ncu-rep", "--csv", "--page", "raw", "--print-units", "base",
         "--print-metric-instances", "details", "--print-kernel-base", "mangled"],
        prefix + ".csv", LIMIT, jail, env, sub)
    reports = lessons.table.parse_reports(read(prefix + ".csv"))
    if not reports:
        return None, "Nsight Compute's report holds no kernel", []
    names = [r.get("Kernel Name", ("",))[0] for r in reports]
    return lessons.counters(n, reports), None, names


# ---- The repository's stages ---------------------------------------------------------------
class Reference:
    """The repository's own programs: built once; each measured once a run (the speed on each GPU,
    the counters once), whichever worker asks first. With `table` (GRADE_REFERENCE_COUNTERS: a
    handout, which holds no solutions, or the Gradescope bundle), the counters come from that
    committed CSV (tests/lessons.py model-table)."""

    def __init__(self, build, logs, table=None):
        self.build, self.logs, self.table_path = build, logs, table
        self.memo = common.Memo()
        self.table = {}
        if table:
            for r in csv.DictReader(read(table).splitlines()):
                c = {k: float(v) if v not in ("", None) else None for k, v in r.items()
                     if k not in ("stage", "single_block", "block")}
                self.table[r["stage"], int(c["n"])] = (dict(c, stage=r["stage"]),
                                                       r["single_block"] == "1")
            if not self.table:
                common.die(2, "GRADE_REFERENCE_COUNTERS=%s holds no counters." % table)

    def takes(self, stage, n):
        """Whether the repository's stage takes n elements: a single-block stage (its
        --stage-info says single_block=1) takes at most 2 x 1024."""
        if lessons.runs_no_kernel(stage):
            return True
        if self.table:
            return (stage, n) in self.table or n <= SMALL[0]
        program = os.path.join(self.build, stage) if MODEL == "gpu" else os.path.join(
            self.build, "counters", stage)
        info = self.memo.get(("info", stage), lambda: read_program_info(program))
        return "single_block=1" not in info or n <= SMALL[0]

    def bench_ms(self, stage, n, worker):
        """The repository's stage's median ms at n on the worker's GPU: (ms, None), (None, why)."""
        return self.memo.get(("bench", stage, n, worker.gpu), lambda: bench_ms(
            os.path.join(self.build, "bench_" + stage), n,
            os.path.join(self.logs, "%s.gpu%s.bench" % (stage, worker.gpu)), env=worker.env))

    def counters(self, stage, size, worker):
        """(counters, None) of stage `stage`'s reduce() at size (n, block), or at SMALL where it
        cannot take n (stage 04 as stage 05's predecessor); (None, why) when it could not be
        measured. step00 runs no kernel: all 0."""
        if lessons.runs_no_kernel(stage):
            return dict(lessons.counters(size[0], []), stage=stage), None
        size = size if self.takes(stage, size[0]) else SMALL
        if self.table:
            got = self.table.get((stage, size[0]))
            return (got[0], None) if got else (None, "%s has no row for %s at n = %d" % (
                self.table_path, stage, size[0]))

        def measure():
            prefix = os.path.join(self.logs, "%s.%d.%s" % (stage, size[0], "ncu" if MODEL == "gpu"
                                                           else "counters"))
            folder = self.build if MODEL == "gpu" else os.path.join(self.build, "counters")
            c, why, _ = count(os.path.join(folder, stage), size, prefix, None, worker.env)
            return (dict(c, stage=stage), None) if c else (
                None, "the repository's %s could not be measured: %s" % (stage, why))
        return self.memo.get(("counters", stage, size), measure)


# ---- The tests -----------------------------------------------------------------------------
def crash_of(log):
    """Why a test process died, in the student's terms: the first report of a tool or the harness
    in the tests' output (a sanitizer's summary, the model's, a CUDA error) and the case that was
    running (the last `case:` line before it; the tests run one at a time)."""
    case, marks = "", ("SUMMARY: AddressSanitizer", "SUMMARY: ThreadSanitizer", "CPU model:",
                       "CUDA error")
    for l in read(log).splitlines():
        if l.startswith("case: "):
            case = l[len("case: "):].strip()
        elif any(m in l for m in marks):
            return "at %s: %s" % (case or "an unknown case", clip(quiet(scrub(l.strip()))))
    return "no report (the process died)%s" % ("; the last case started: " + case if case else "")


def case_line(log):
    """The last `case: n = ..., block = ...` line the tests printed (test_stage.c), or ''."""
    cases = [l[len("case: "):].strip() for l in read(log).splitlines() if l.startswith("case: ")]
    return cases[-1] if cases else ""


def run_tests(program, sub, tag, worker, run_only=None, leave_out=()):
    """Runs a Criterion program in the sandbox, its JUnit XML into sub.folder/TAG.xml; only the
    tests named `run_only` (a list), or all but those of `leave_out`. Returns (fraction of the
    tests run that passed, text for the student, {failed test: its messages}), or None when no
    report came: then sub.hang (its time ran out) or sub.fault (the program ended without one: the
    sandbox, the runner's socket, memory) says why. Criterion's JUnit names a parameterized
    test's every case alike: each case counts."""
    xml, log = (os.path.join(sub.folder, tag + ext) for ext in (".xml", ".log"))
    remove(xml)
    # Four jobs on a GPU (a stage's tests in 3.4 s on an H200, 6.3 s with one), one on the model
    # (a core a worker).
    jobs = os.environ.get("GRADE_TEST_JOBS") or ("4" if MODEL == "gpu" else "1")
    names = "|".join(run_only or leave_out)
    pattern = (["--filter=*/%s(%s)" % ("@" if run_only else "!", names)] if names else [])
    rc = run([program, "--xml=" + xml, "--jobs=" + jobs] + pattern, log, LIMIT, sub.folder,
             worker.env, sub)
    where = case_line(log)
    if rc is None:
        return None
    try:
        cases = list(ET.parse(xml).getroot().iter("testcase"))
    except (OSError, ET.ParseError):
        said = [l for l in read(log).splitlines() if l.strip() and not l.startswith("case: ")]
        sub.fault = "the test program ended (%s) without a report%s%s" % (
            signal_words(rc), ": " + clip(scrub(said[-1]), 200) if said else "",
            "; the last case started: " + where if where else "")
        return None
    left_out = set(leave_out) if not run_only else None
    ran, failed, skipped = 0, {}, []
    for c in cases:
        name, status = c.get("name"), c.get("status", "")
        if left_out is not None and name in left_out or run_only and name not in run_only:
            continue
        ran += 1
        if status == "SKIPPED":
            skipped.append(name)
        elif status != "PASSED":
            # Criterion's JUnit: an assertion's words in the failure's text; a test that died
            # (a crash, a sanitizer's abort) has none and counts no assertion.
            words = [w.strip() for f in c for w in (f.text or "").splitlines() if w.strip()]
            failed.setdefault(name, []).append(" ".join(words) or (
                "crashed" if c.get("assertions") == "0" else status.lower()))
    if not ran:
        return 1.0, "no test ran", {}
    passed = ran - sum(len(v) for v in failed.values()) - len(skipped)
    if failed:
        crashed = [t for t, w in failed.items() if any("crash" in x.lower() for x in w)]
        first = ["%s: %s" % (t, w[0]) for t, w in failed.items() if t not in crashed][:3]
        if crashed:
            first.insert(0, "the first crash %s (crashed: %s)" % (crash_of(log),
                                                                  ", ".join(crashed)))
        return passed / ran, "%d of %d tests passed; failed: %s" % (
            passed, ran, clip(" | ".join(first), 900)), failed
    if skipped:
        return passed / ran, "%d of %d tests skipped (not allowed when grading): %s" % (
            len(skipped), ran, ", ".join(skipped)), failed
    if rc != 0:
        return 0.0, "all %d tests passed, but the program exited %s" % (ran, rc), failed
    return 1.0, "all %d tests passed" % ran, failed


# ---- The four checks: each (graded build, submission, references, worker) -> sub.check(...) -
def correct(graded, sub, ref, w):
    """The stage's Criterion tests (tests/test_stage.c), their sums at every size and block; on
    the model, less the race tests (the race-free check's) and n past 2^31 (a GPU's)."""
    got = run_tests(os.path.join(graded, "test_" + sub.stage), sub, "tests", w,
                    leave_out=(RACES,) + GPU_ONLY if MODEL != "gpu" else ())
    if got is None:
        sub.caught.append("timeout" if sub.hang else "grader")
        return sub.check("correct", 0.0, "the tests did not finish: %s%s" % (
            sub.hang or sub.fault, "; the last case started: " + case_line(
                os.path.join(sub.folder, "tests.log")) if sub.hang else ""))
    score, text, failed = got
    sub.failed_tests = sorted(failed)
    huge = set(failed) <= set(GPU_ONLY)
    sub.caught += [] if score == 1 else ["huge" if huge and failed else "tests"]
    note = " (%d more need a GPU: n past 2^31)" % len(GPU_ONLY) if MODEL != "gpu" else ""
    sub.check("correct", score, "%s%s (%s)" % (text, note * (score == 1), sub.types))


def race_free(graded, sub, ref, w):
    """On a GPU: compute-sanitizer's memcheck, racecheck and synccheck (tests/sanitize.sh), the
    three at once. On the model: the stage's race tests (ThreadSanitizer in three schedules, its
    barrier and warp checks, at two sizes), each failure sorted by the tool that reported it."""
    if MODEL != "gpu":
        return race_free_model(graded, sub, w)
    rows, said = {}, {}

    def one(tool):
        env = dict(w.env, SANITIZE_TOOLS=tool, SANITIZE_BROKEN="0", SANITIZE_TIMEOUT="45",
                   SANITIZE_REPORTS_ONLY="1", SANITIZE_LOGS=os.path.join(sub.folder, "sanitize",
                                                                         tool),
                   SANITIZE_PROBE="none")  # grade_all's probe found the GPU
        log = os.path.join(sub.folder, "sanitize.%s.log" % tool)
        with PROFILER if common.SANDBOX and common.SANDBOX.shared_ports() else NO_LOCK:
            rc = run(["bash", os.path.join(common.HERE, "sanitize.sh"), graded, sub.stage], log,
                     600, sub.folder, env, sub)
        text = read(log)
        row = [r[2:] for r in (l.split(None, 3) for l in text.splitlines()
                               if l.startswith(sub.stage + " ")) if len(r) > 2 and r[1] == tool]
        if rc is None or rc == 2 or not row:
            said[tool] = (text.strip().splitlines() or ["no output"])[-1]
        else:
            rows[tool] = row[0]
    at_once([lambda t=t: one(t) for t in TOOLS])
    if said and not rows:
        if not sub.hang:
            sub.fault = "compute-sanitizer did not run: " + scrub(
                said.get(TOOLS[0]) or next(iter(said.values())))
        return sub.check("race-free", 0.0, "the sanitizers did not finish: %s" % (
            sub.hang or sub.fault))
    parts = []
    for tool in TOOLS:
        r = rows.get(tool, ["FAILED:", "did not run: " + scrub(said.get(tool, "no output"))])
        if r[0] == "ok":
            parts.append((tool, 1.0, "clean"))
        else:
            words = re.sub(r" \([^()]*/[^()]*\)", "", " ".join(r[1:]))  # its log's path
            sub.caught.append(tool)
            parts.append((tool, 0.0, words))
    sanitized(sub, parts)


def sanitized(sub, parts):
    score = sum(f for _, f, _ in parts) / len(parts)
    bad = ["%s: %s" % (t, w) for t, f, w in parts if f < 1]
    sub.check("race-free", score, "%s clean" % ", ".join(TOOLS) if not bad else
              "%d of %d tools clean; %s" % (len(parts) - len(bad), len(parts), " | ".join(bad)),
              parts)


def race_free_model(graded, sub, w):
    """The model's race tests (test_stage.c's data_race_free: BUILD/thread/stepNN under
    ThreadSanitizer, three schedules, two sizes), their failures sorted by what reported each:
    AddressSanitizer (memcheck), ThreadSanitizer (racecheck), the model's barrier and warp checks
    or anything else (synccheck)."""
    got = run_tests(os.path.join(graded, "test_" + sub.stage), sub, "races", w,
                    run_only=[RACES], leave_out=())
    if got is None:
        sub.caught.append("timeout" if sub.hang else "grader")
        return sub.check("race-free", 0.0, "the race tests did not finish: %s" % (
            sub.hang or sub.fault))
    found = {t: [] for t in TOOLS}
    for words in got[2].get(RACES, []):
        tool = ("memcheck" if "AddressSanitizer" in words else "racecheck" if "ThreadSanitizer"
                in words else "synccheck")
        found[tool].append(clip(quiet(scrub(words)), 400))
    parts = [(t, 0.0 if found[t] else 1.0, found[t][0] if found[t] else "clean") for t in TOOLS]
    sub.caught += [t for t in TOOLS if found[t]]
    sanitized(sub, parts)


def speed(graded, sub, ref, w):
    """The median of 30 guarded runs at SPEED_N against the repository's stage on the same GPU."""
    obj = os.path.join(graded, "obj", "stage_%s.o" % sub.stage)
    try:
        foreign = exploits.foreign_symbols(obj) if exploits and sub.src else []
    except exploits.ToolError as e:
        sub.fault = "the symbols of the file could not be read (%s)" % e
        return sub.check("fast enough", 0.0, "not checked: " + sub.fault)
    if foreign:
        sub.caught.append("symbols")
        return sub.check("fast enough", 0.0, "your file defines %s, which the C library, the CUDA "
                         "runtime or the harness defines: a stage defines reduce(), STAGE and its "
                         "own functions only, so its time cannot be trusted" % ", ".join(foreign))
    n = speed_n(sub.stage, ref)
    sub.ms, why = bench_ms(os.path.join(graded, "bench_" + sub.stage), n,
                           os.path.join(sub.folder, "bench"), sub.folder, w.env, sub)
    sub.ref_ms, ref_why = ref.bench_ms(sub.stage, n, w)
    if sub.ms is None:
        guard = ": --guard: " in read(os.path.join(sub.folder, "bench.log"))
        sub.caught.append("guard" if guard else "timeout" if sub.hang else "speed")
        return sub.check("fast enough", 0.0, "the timed runs at n = %d gave no time: %s" % (
            n, why))
    if sub.ref_ms is None:
        sub.fault = "the repository's stage gave no time (%s)" % ref_why
        return sub.check("fast enough", 0.0, "not checked: " + sub.fault)
    r = sub.ms / sub.ref_ms
    score = 1.0 if r <= CONFIG.limit else max(0.0, (CONFIG.zero - r) / (CONFIG.zero - CONFIG.limit))
    sub.caught += ["speed"] * (r > CONFIG.limit)
    sub.check("fast enough", score, "%.4f ms at n = %d, %.2fx the course's %.4f ms (all points "
              "up to %.1fx, none from %.1fx)" % (sub.ms, n, r, sub.ref_ms, CONFIG.limit,
                                                CONFIG.zero), [("time", score, "%.2fx" % r)])


def kernels_defined(src):
    """The __global__ function names of a submitted file's text."""
    return set(re.findall(r"__global__[^;{(]*?\b(\w+)\s*\(", read(src)))


def lesson(graded, sub, ref, w):
    """Each counter of the stage's lesson, and with [rules] cumulative each earlier lesson's
    counters our stage still shows, on the stage's side of the midpoint between the repository's
    two stages; stage 8's float32 exact replay. Counted once per size the lessons use. Where the
    counters cannot be had for the tools' reasons (no ncu, counters restricted), the grader
    failed (sub.fault), not the file."""
    s = sub.stage
    program = os.path.join(graded, s) if MODEL == "gpu" else os.path.join(graded, "counters", s)
    mine = {}

    def measure(size):
        if size not in mine:
            prefix = os.path.join(sub.folder, "lesson.%d" % size[0])
            mine[size] = count(program, size, prefix, sub.folder, w.env, sub)
        return mine[size]
    size, sizes = lesson_sizes(s, ref)
    c, why, names = measure(size)
    if c is None:  # "it ...": the program's own doing (it refused the lesson's n, it failed,
        # it launched nothing), which rejects it; else the tools' (no ncu, counters restricted)
        checked = why.startswith(("it ", "your file ", "Nsight Compute profiled no kernel"))
        sub.caught += ["lesson"] * checked
        if not checked:
            sub.fault = why
        return sub.check("lesson", 0.0, why if checked else "not checked: " + why)
    foreign = []
    if names and sub.src:
        try:
            foreign = (exploits.foreign_kernels(read(sub.src), names) if exploits else
                       [k for k in names if not any(re.search(r"\b%s\b" % d, k)
                                                    for d in kernels_defined(sub.src))])
        except exploits.ToolError as e:
            sub.fault = "the kernels' names could not be read (%s)" % e
            return sub.check("lesson", 0.0, "not checked: " + sub.fault)
    parts = []
    if foreign:
        sub.caught.append("library")
        words = ("reduce() ran kernels that are not compiled from your file (%s)" %
                 clip(", ".join(foreign[:3]), 300))
        if CONFIG.library == "reject":
            return sub.check("lesson", 0.0, words + ": the lesson's kernel is yours to write "
                             "(this course allows no library's reduction)", [
                                 ("own kernels", 0.0, words)])
        parts.append(("own kernels", 1.0, words + " (this course allows it)"))
    for k, ksize in sizes:
        (prev, why_p), (this, why_t) = ref.counters(previous(k), ksize, w), ref.counters(k, ksize,
                                                                                          w)
        ours, why_o = (this, None) if k == s else ref.counters(s, ksize, w)
        if k != s and ours is None:
            continue  # our stage cannot run at that lesson's size (stage 8's fixed block)
        if None in (prev, this):
            sub.fault = why_p or why_t
            return sub.check("lesson", 0.0, "not checked: " + sub.fault)
        yours = measure(ksize)[0]
        if yours is None:
            return sub.check("lesson", 0.0, "no lesson at n = %d: %s" % (ksize[0],
                                                                          measure(ksize)[1]))
        kept = {r["label"] for r in lessons.sides(k, ours, prev, this) if r["ok"]}
        for r in lessons.sides(k, yours, prev, this):
            if r["ok"] is None or (k != s and r["label"] not in kept):
                continue
            where = "above" if r["after"] > r["before"] else "below"
            said = ("yours %s, %s the midpoint %s between stage %d's %s and stage %d's %s" % (
                "none" if r["yours"] is None else lessons.fmt(r["yours"]),
                "on the right side of" if r["ok"] else "must be " + where, lessons.fmt(r["mid"]),
                int(previous(k)[4:]), lessons.fmt(r["before"]), int(k[4:]),
                lessons.fmt(r["after"])))
            part = "stage %d's lesson%s: %s" % (int(k[4:]), "" if k == s else " (kept)",
                                                r["label"])
            parts.append((part, 1.0 if r["ok"] else 0.0, said + " at n = %d" % ksize[0]))
    if not any(p.startswith("stage %d's lesson:" % int(s[4:])) for p, _, _ in parts):
        sub.fault = "no counter separates the repository's stages %s and %s" % (previous(s), s)
        return sub.check("lesson", 0.0, "not checked: " + sub.fault)
    if stage_of(s).float32_replay:  # stage 8's test_deterministic: its lesson is an order
        r_score, r_text = sub.replayed or replay(graded, sub, ref, w)
        parts.append(("float32 exact replay", 1.0 if r_score == 1 else 0.0, r_text))
    score = sum(f for _, f, _ in parts) / len(parts)
    sub.caught += ["lesson"] * (score < 1)
    bad = ["%s: %s" % (p, w_) for p, f, w_ in parts if f < 1]
    sub.check("lesson", score, ("%d of %d lesson parts ok" % (len(parts) - len(bad), len(parts)))
              + ("; " + " | ".join(bad) if bad else ""), parts)


def replay(graded, sub, ref, w):
    """Stage 8's float32 exact replay (its stage.ini's float32_replay, a Criterion program), part
    of its lesson: (fraction of its tests passed, text for the student), kept in sub.replayed.
    Neither timed nor counted, so on a GPU it runs beside the tests and the sanitizers."""
    got = run_tests(os.path.join(float_build(graded), stage_of(sub.stage).float32_replay), sub,
                    "replay", w)
    sub.replayed = (got[0], got[1]) if got else (0.0, "did not finish: %s" % (
        sub.hang or sub.fault))
    return sub.replayed


# ---- One submission, start to end ----------------------------------------------------------
def targets_of(stage, graded):
    """What a submission of `stage` is built into: its program and tests, and on a GPU its
    benchmark; on the model its counting build."""
    t = [stage, "test_" + stage] + (["bench_" + stage] if MODEL == "gpu" else
                                    [os.path.join("counters", stage)])
    return [os.path.join(graded, x) for x in t]


def build(sub, graded, float_graded):
    """Builds the submission into the worker's build: whether it compiled (else its checks are
    scored 0 with the compiler's first errors)."""
    s = sub.stage
    replay_program = stage_of(s).float32_replay
    remove(*(os.path.join(d, f) for d in (graded, float_graded, os.path.join(graded, "thread"),
                                          os.path.join(graded, "counters")) for f in (
        "obj/stage_%s.o" % s, "obj/depth_%s.o" % s, s, "test_" + s, "bench_" + s) +
        ((replay_program,) if replay_program else ())))
    logs = [os.path.join(sub.folder, f) for f in ("build.log", "build.float.log")]
    # The int32 build and stage 8's float32 replay at once: two builds, two folders
    ok = all(at_once([lambda: make(targets_of(s, graded), logs[0], sub=sub, BUILD=graded,
                                   GRADE_STEP=s, GRADE_SRC=sub.src)] +
                     [lambda: make([os.path.join(float_graded, replay_program)], logs[1], True,
                                   sub=sub, BUILD=float_graded, GRADE_STEP=s,
                                   GRADE_SRC=sub.src)] * bool(replay_program)))
    if ok:
        return True
    if sub.hang:
        sub.caught = ["timeout"]
        for c in GRADED:
            sub.skip(c, "the build did not finish: " + sub.hang)
        return False
    log = read(logs[0]) + read(logs[1])
    first = list(dict.fromkeys(l for l in log.splitlines() if re.search(
        r"error|undefined reference", l, re.I) and not l.startswith("make")))[:3]
    sub.compiled, sub.caught = False, ["compile"]
    words = "did not compile: " + clip(scrub(" | ".join(first) or log[-300:]), 600)
    for c in GRADED:
        sub.check(c, 0.0, words if c == "correct" else "did not compile")
    return False


def grade(sub, ref, w):
    """All four checks of one submission (sub.src None: the repository's own stage), on worker w,
    within its deadline: a file that is the handout's unwritten gets no check; then the build;
    correct gates race-free, race-free gates speed and lesson; the first program that runs out
    of time ends the submission's checks."""
    start = time.time()
    shutil.rmtree(sub.folder, ignore_errors=True)
    os.makedirs(sub.folder)
    sub.start()
    s = sub.stage
    graded = w.graded if sub.src else ref.build
    replay_program = stage_of(s).float32_replay
    sub.gpu, sub.gpu_name = w.gpu, w.name
    say("== %s: %s as %s, on %s" % (sub.label, shown(sub.src or source_of(s)), s, w.name))
    if sub.src:
        why = unwritten(sub)
        if why:
            sub.caught = ["handout"]
            for c in GRADED:
                sub.check(c, 0.0, why if c == "correct" else "not run: the stage is not written")
            sub.seconds = time.time() - start
            return
        if not build(sub, graded, float_build(graded)):
            sub.seconds = sub.took["build"] = time.time() - start
            return
        sub.took["build"] = time.time() - start
    if replay_program:
        sub.types = "int32 and float32 (the replay)" if TYPE == "int" else "float32"
    # On a GPU the tests, the sanitizers and stage 8's replay (the lesson's untimed part) at once:
    # none is timed nor counted, the GPU has room for them, and a hang stops them all; their
    # gate applies after. The speed and the counters come after, each alone on the GPU. On the
    # model, one check after another (a core a worker), each only when its gate is open.
    checks = dict(zip(CHECKS, (correct, race_free, speed, lesson)), replay=replay)
    phases = ([CHECKS[:2] + ("replay",) * bool(replay_program)] + [(c,) for c in CHECKS[2:]]
              if MODEL == "gpu" else [(c,) for c in GRADED])

    def closed(name):
        """Why check `name` is not run, or None: a hang, a fault, or a gate before it."""
        if sub.hang:
            return sub.hang
        if sub.fault:
            return "the grader failed first"
        for gate in CHECKS[:2]:
            if gate != name and CHECKS.index(gate) < CHECKS.index(name) and \
                    gate in sub.took and not sub.full(gate):
                return GATES[gate]
        return None

    def timed(name):
        t0 = time.time()
        checks[name](graded, sub, ref, w)
        sub.took[name] = time.time() - t0
    for phase in phases:
        todo = [c for c in phase if c == "replay" or not closed(c)]
        for c in phase:
            if c not in todo:
                sub.skip(c, closed(c))
        at_once([lambda c=c: timed(c) for c in todo])
        # A gate closed by a check of this phase (the GPU's tests and sanitizers run at once):
        # the later check ran, but scores nothing, and says what it found.
        if "race-free" in todo and "correct" in todo and not sub.full("correct") and \
                not sub.hang and not sub.fault:
            found = sub.checks["race-free"]["text"]
            sub.check("race-free", 0.0, "not graded: %s; it found: %s" % (GATES["correct"],
                                                                         found))
    # The reasons and times in the checks' order, whichever of a phase finished first (class.csv
    # must not vary): the correctness check's reasons first.
    sub.caught.sort(key=lambda c: c not in ("timeout", "huge", "tests"))
    sub.took = {c: sub.took[c] for c in ("build",) + CHECKS if c in sub.took}
    sub.seconds = time.time() - start
    say("%s: %.0f s on %s (%s)" % (sub.label, sub.seconds, w.name,
                                   ", ".join("%s %.0f s" % kv for kv in sub.took.items())))
