#!/usr/bin/env python3
"""grade.py: `make grade` and `make mutants`, on a CUDA GPU.

    grade.py BUILD STAGE...                  the repository's own stages (make grade)
    grade.py BUILD STAGE --src FILE          one student's file, graded as STAGE (make grade SRC=)
    grade.py BUILD STAGE --submissions DIR   a class: every DIR/<student>/reduce.cu and
                                             DIR/<student>.cu (make grade SUBMISSIONS=)
    grade.py --mutants BUILD [NAME...]       make mutants: every known-wrong kernel is rejected
                                             for its own reason

Four checks, each with a tool this repository already trusts, and a grade that passes only when
all four do:
  correct      the stage's Criterion tests (BUILD/test_stepNN), none failed and none skipped (a
               skip means a kernel was not checked), within GRADE_TIMEOUT seconds (120; longer is
               a hang);
  race-free    compute-sanitizer's memcheck, racecheck and synccheck at two sizes with a partial
               last block (tests/sanitize.sh), no report;
  fast enough  the median of 30 timed runs (make bench's method) within GRADE_SPEED times (1.5)
               the repository's own stage, measured in this run, at n = 2^26 (2048 for the
               single-block stages 02-04);
  lesson       the counters of the stage's lesson (tests/lessons.py), measured by Nsight Compute on
               one reduce() call, each on the stage's side of the midpoint between the
               repository's stage NN-1 and stage NN, both measured in this run; for stage 8 also
               its float32 build's exact replay (tests/test_deterministic.c: the bits of the
               documented order, a grid from n alone, 100 identical runs).
The repository's programs (the speed and lesson references) are built and measured once a run;
the submissions are then built (into BUILD/grade-build, with the same harness, tests and flags)
and graded one after another. Each submission's programs run in a sandbox where unshare(1) can
make one (as root, or with user namespaces): the repository, GRADE_OUT and the submissions are
read-only but for that submission's own folder, and every process it starts dies with the check,
so a program that hangs, crashes or writes elsewhere cannot change another's result. The
reports say whether the sandbox was used.

Writes, in GRADE_OUT (BUILD/grade; BUILD/mutants/STAGE for make mutants):
  report.md     the class table (a row per submission: each check, the time, the first failure)
                and what failed, with each tool's first words;
  class.csv     the same table, for spreadsheets;
  junit.xml     JUnit XML, a testsuite per submission, a testcase per check;
  NAME/         each submission's report.md, Gradescope's results.json (a test per check with
                score and max_score, the time on the leaderboard), and every check's logs.
A check that cannot run fails, saying why: no compute-sanitizer; no Nsight Compute, or counters
restricted to administrators (ERR_NVGPUCTRPERM), leave the lesson not checked and the grade FAIL.
Exit status: 0 every submission passed every check, 1 some check failed, 2 bad usage or the
repository's own programs do not build, 3 no CUDA device.
"""
import csv
import glob
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import lessons  # noqa: E402

LIMIT = int(os.environ.get("GRADE_TIMEOUT", "120"))
SPEED = float(os.environ.get("GRADE_SPEED", "1.5"))
TYPE = os.environ.get("TYPE", "int")
MAKE = shlex.split(os.environ.get("MAKE", "make"))
BIG = (1 << 24, None)      # the lessons' n, with the stage's default block
SMALL = (2048, 1024)       # a single-block stage's largest n, and its block
CHECKS = ("correct", "race-free", "fast enough", "lesson")


def say(*words):
    print(*words, flush=True)


def die(status, sentence):
    print("make grade: " + sentence, file=sys.stderr)
    sys.exit(status)


def run(cmd, out, limit, jail=None):
    """Runs cmd, its output into the file `out`, in a session of its own that is killed whole
    after `limit` seconds; in the sandbox when jail (the one folder it may write) is given.
    Returns the exit status, or None when it ran out of time."""
    if jail is not None:
        cmd = SANDBOX.wrap(cmd, jail)
    with open(out, "wb") as f:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True, cwd=ROOT)
        try:
            return p.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            return None


def read(path, limit=None):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(limit)
    except OSError:
        return ""


class Sandbox:
    """unshare(1): a mount namespace in which `readonly` folders are read-only but for one, and a
    PID namespace whose processes all die when its first does (no daemon outlives a check)."""
    # The working folder is entered again after the mounts: a process keeps the folder it started
    # in as it was, so a relative path would still reach the tree through the writable mount.
    SCRIPT = ('while [ "$1" != -- ]; do mount --bind "$1" "$1" && '
              'mount -o remount,bind,ro "$1" || exit 125; shift; done; shift; '
              'mount --bind "$1" "$1" && mount -o remount,bind,rw "$1" || exit 125; shift; '
              'cd "$PWD" || exit 125; exec "$@"')

    def __init__(self, readonly):
        self.readonly = sorted({os.path.realpath(d) for d in readonly if d and os.path.isdir(d)})
        self.why = None
        if os.environ.get("GRADE_SANDBOX") == "0":
            self.why = "GRADE_SANDBOX=0"
        elif not shutil.which("unshare"):
            self.why = "unshare(1) was not found (util-linux)"
        else:
            # The proof it works: inside, the tree refuses a file and the writable folder takes one.
            probe = os.path.join(ROOT, ".grade-sandbox-probe")
            with tempfile.TemporaryDirectory(dir=self.readonly[0] if self.readonly else None) as d:
                p = subprocess.run(self.wrap(["sh", "-c", '! touch "$0" 2>/dev/null && touch "$1/ok"',
                                              os.path.basename(probe), d], d),
                                   capture_output=True, text=True, cwd=ROOT)
                if p.returncode != 0 or not os.path.exists(os.path.join(d, "ok")):
                    self.why = "unshare did not make the tree read-only (%s)" % (
                        (p.stderr.strip().splitlines() or ["exit status %d" % p.returncode])[0])
            if os.path.exists(probe):
                os.remove(probe)

    def wrap(self, cmd, writable):
        if self.why:
            return cmd
        user = ["--map-root-user"] if os.geteuid() != 0 else []
        return (["unshare", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc"] + user +
                ["sh", "-c", self.SCRIPT, "sandbox"] + self.readonly +
                ["--", os.path.realpath(writable)] + list(cmd))

    def words(self):
        return ("each submission ran in a sandbox (unshare: the tree read-only but for its own "
                "folder, its processes ended with each check)" if not self.why else
                "the submissions ran WITHOUT a sandbox (%s): a program could write files this "
                "user can write" % self.why)


SANDBOX = None


# ---- The repository's stages ---------------------------------------------------------------
def stage_dirs():
    """The stages' folders, as common/stages.sh lists them (the one place the list is made)."""
    out = subprocess.run(["bash", os.path.join(ROOT, "common", "stages.sh"), ROOT], check=True,
                         capture_output=True, text=True).stdout
    return [os.path.join(ROOT, s) for s in out.split()]


def long_name(stage):
    return next((os.path.basename(d) for d in stage_dirs() if os.path.basename(d).startswith(stage + "_")), stage)


def source_of(stage):
    return next(iter(glob.glob(os.path.join(ROOT, long_name(stage), "reduce.c*"))), None)


def previous(stage):
    return "step%02d" % (int(stage[4:]) - 1)


def float_build(build):
    return build if TYPE == "float" else os.path.join(build, "float")


def make(targets, log, **variables):
    cmd = MAKE + ["-k", "-j4", "--no-print-directory"] + ["%s=%s" % kv for kv in variables.items()]
    if TYPE == "float":
        cmd.append("TYPE=float")
    return run(cmd + list(targets), log, 900) == 0


class Reference:
    """The repository's own programs: built once, each measured once a run (speed, counters)."""

    def __init__(self, build, logs):
        self.build, self.logs, self.cache = build, logs, {}

    def program(self, stage):
        return os.path.join(self.build, stage)

    def takes(self, stage, n):
        """Whether the repository's stage takes n elements (a single-block stage refuses more than
        2048 with exit status 2, before any CUDA call)."""
        key = ("takes", stage, n)
        if key not in self.cache:
            log = os.path.join(self.logs, "%s.takes.%d.log" % (stage, n))
            self.cache[key] = run([self.program(stage), "--n", str(n), "--reps", "1"], log, LIMIT) != 2
        return self.cache[key]

    def lesson_size(self, stage):
        return BIG if self.takes(stage, BIG[0]) else SMALL

    def speed_n(self, stage):
        return 1 << 26 if self.takes(stage, 1 << 26) else 2048

    def bench_ms(self, stage, n):
        key = ("bench", stage, n)
        if key not in self.cache:
            self.cache[key] = bench_ms(os.path.join(self.build, "bench_" + stage), n,
                                       os.path.join(self.logs, stage + ".bench"))
        return self.cache[key]

    def counters(self, stage, size):
        """(counters, None) of stage `stage`'s lesson at (n, block), or at its own largest size
        where it cannot take n (stage 04 as stage 05's predecessor); (None, why) when it could not
        be profiled. step00 runs no kernel: all 0."""
        if stage == "step00":
            return dict(lessons.counters(size[0], []), stage=stage), None
        if not self.takes(stage, size[0]):
            size = SMALL
        key = ("counters", stage, size)
        if key not in self.cache:
            c, why = profile(self.program(stage), size, os.path.join(self.logs, "%s.ncu" % stage))
            self.cache[key] = (dict(c, stage=stage), None) if c else (
                None, "the repository's %s could not be profiled: %s" % (stage, why))
        return self.cache[key]


def bench_ms(program, n, prefix, jail=None):
    """The median of 30 timed runs of `program` (a build/bench_stepNN) at n, in ms, or None."""
    table = prefix + ".csv"
    if os.path.exists(table):
        os.remove(table)
    run([program, "--csv", table, "--reps", "30", "--min-n", str(n), "--max-n", str(n)],
        prefix + ".log", LIMIT, jail)
    rows = [r for r in csv.DictReader(read(table).splitlines())
            if r.get("stage") not in (None, "cub", "copy") and r.get("median_ms")]
    try:
        return float(rows[0]["median_ms"]) if rows else None
    except ValueError:
        return None


def find_ncu():
    for c in (os.environ.get("NCU"), shutil.which("ncu"), "/usr/local/cuda/bin/ncu"):
        if c and os.access(c, os.X_OK):
            return c
    return None


NCU = None
NO_PERMISSION = ("the GPU's performance counters are restricted to admin users (ERR_NVGPUCTRPERM): "
                 "run as root, or see https://developer.nvidia.com/ERR_NVGPUCTRPERM")


def profile(program, size, prefix, jail=None):
    """The lesson counters of one reduce() call of `program` at size (n, block): (counters, None),
    or (None, why not)."""
    n, block = size
    if NCU is None:
        return None, "Nsight Compute (ncu) was not found: it ships with the CUDA toolkit"
    report = prefix + ".ncu-rep"
    if os.path.exists(report):
        os.remove(report)
    args = ["--n", str(n)] + (["--block", str(block)] if block else []) + ["--reps", "1"]
    rc = run([NCU, "--profile-from-start", "off", "--clock-control", "none", "--metrics",
              ",".join(lessons.metrics()), "-o", prefix, "-f", program] + args,
             prefix + ".log", LIMIT, jail)
    said = read(prefix + ".log")
    if "ERR_NVGPUCTRPERM" in said:
        return None, NO_PERMISSION
    line = next((l for l in said.splitlines() if l.startswith("stage=")), "")
    if rc is None:
        return None, "it did not finish in %d s under Nsight Compute" % LIMIT
    if rc == 2:
        words = next((l for l in said.splitlines() if l and not l.startswith("==")), "")
        return None, "it refused n = %d (%s), which the stage's lesson takes" % (n, words)
    if rc not in (0, 1) or " result=" not in line:  # a wrong sum (1) still counts what ran
        words = line or next((l for l in said.splitlines() if l and not l.startswith("==")), "no output")
        return None, "it failed under Nsight Compute (exit status %s): %s" % (rc, words[:200])
    if not os.path.exists(report):
        return None, "Nsight Compute profiled no kernel in its reduce() call: it launched none"
    run([NCU, "--import", report, "--csv", "--page", "raw", "--print-units", "base",
         "--print-metric-instances", "details"], prefix + ".csv", LIMIT, jail)
    reports = lessons.table.parse_reports(read(prefix + ".csv"))
    if not reports:
        return None, "Nsight Compute's report holds no kernel (%s.csv)" % prefix
    return lessons.counters(n, reports), None


# ---- One submission ------------------------------------------------------------------------
class Submission:
    def __init__(self, name, stage, src, out):
        self.name, self.stage, self.src = name, stage, src
        self.folder = os.path.join(out, name)
        self.checks = {}       # check -> (passed, text, detail)
        self.compiled = True
        self.hang = False
        self.failed_tests = []
        self.failed_tools = []
        self.lesson_checked = False
        self.ms = self.ref_ms = None
        self.seconds = 0.0
        self.took = {}         # check -> seconds it took
        self.types = "int32" if TYPE == "int" else "float32"

    def check(self, name, passed, text, detail=""):
        self.checks[name] = (passed, text, detail)
        say("%s %s: %s" % (self.name, name, text))

    def passed(self):
        return self.compiled and all(self.checks.get(c, (False,))[0] for c in CHECKS)

    def first_failure(self):
        if not self.compiled:
            return "did not compile: " + self.checks["correct"][2].splitlines()[0]
        for c in CHECKS:
            ok, text, detail = self.checks.get(c, (False, "not run", ""))
            if not ok:
                return "%s: %s" % (c, text)
        return ""


def tap_counts(tap):
    lines = read(tap).splitlines()
    total = sum(1 for l in lines if re.match(r"(not )?ok ", l))
    skipped = [l for l in lines if l.startswith("ok ") and "# SKIP" in l]
    failed = sorted({m.group(1) for l in lines for m in [re.match(r"not ok \d* *- *(\S+)", l)] if m})
    planned = any(l.startswith("1..") for l in lines)
    return total, skipped, failed, planned


def run_tests(program, sub, tag):
    """Runs a Criterion program in the sandbox: (passed, text, first message)."""
    tap, xml = os.path.join(sub.folder, tag + ".tap"), os.path.join(sub.folder, tag + ".xml")
    for f in (tap, xml):
        if os.path.exists(f):
            os.remove(f)
    rc = run([program, "--tap=" + tap, "--xml=" + xml], os.path.join(sub.folder, tag + ".log"),
             LIMIT, sub.folder)
    total, skipped, failed, planned = tap_counts(tap)
    msg = "; ".join(re.sub(r"^ *(Assertion failed: )?", "", l) for l in read(tap).splitlines()
                    if "Assertion failed: " in l)[:300]
    if rc is None:
        return False, "the tests did not finish in %d s (a hang); %d had passed" % (
            LIMIT, total - len(failed) - len(skipped)), msg, failed, True
    if not planned:
        return False, "the test program exited %s without a report" % rc, msg, failed, False
    if failed:
        return False, "%d of %d tests failed: %s" % (len(failed), total, ", ".join(failed)), msg, failed, False
    if skipped:
        return False, "%d of %d tests skipped (not allowed when grading): %s" % (
            len(skipped), total, skipped[0].split("# SKIP", 1)[1].strip()), msg, failed, False
    if rc != 0:
        return False, "all %d tests passed, but the program exited %s" % (total, rc), msg, failed, False
    return True, "%d of %d tests" % (total, total), "", failed, False


def sanitize(graded, sub, ref):
    """memcheck, racecheck and synccheck (tests/sanitize.sh): (passed, text, first report). One
    after another, alone on the GPU: beside each other or the tests, they ran past their limits."""
    env = dict(SANITIZE_TOOLS="memcheck racecheck synccheck", SANITIZE_BROKEN="0",
               SANITIZE_TIMEOUT="30", SANITIZE_REPORTS_ONLY="1",
               SANITIZE_LOGS=os.path.join(sub.folder, "sanitize"), SANITIZE_PROBE=ref.program(sub.stage))
    log = os.path.join(sub.folder, "sanitize.log")
    cmd = ["env"] + ["%s=%s" % kv for kv in env.items()] + [
        "bash", os.path.join(HERE, "sanitize.sh"), graded, sub.stage]
    rc = run(cmd, log, 600, sub.folder)
    rows = [l.split(None, 3) for l in read(log).splitlines() if l.startswith(sub.stage + " ")]
    clean = [r[1] for r in rows if len(r) > 2 and r[2] == "ok"]
    bad = [r for r in rows if len(r) > 2 and r[2] == "FAILED:"]
    sub.failed_tools = [r[1] for r in bad]
    if rc is None or rc == 2:
        last = (read(log).strip().splitlines() or ["no output"])[-1]
        return False, "the sanitizer did not run: " + last, ""
    if not bad and len(clean) == 3:
        return True, "memcheck, racecheck, synccheck clean", ""
    said = ", ".join("%s %s" % (r[1], "timed out" if "timed out" in r[3] else "reported") for r in bad)
    first = bad[0][3][:300] if bad else ""
    return False, said or "the sanitizer said nothing (%s)" % log, first


def grade(sub, build, graded, ref):
    """All four checks of one submission (sub.src None: the repository's own stage)."""
    start = time.time()
    if os.path.isdir(sub.folder):
        shutil.rmtree(sub.folder)
    os.makedirs(sub.folder)
    s = sub.stage
    say("== %s: %s as %s" % (sub.name, sub.src or source_of(s), s))
    float_graded = float_build(graded)
    if sub.src:
        stale = [os.path.join(d, f) for d in (graded, float_graded) for f in
                 ("obj/stage_%s.o" % s, "obj/depth_%s.o" % s, s, "test_" + s, "bench_" + s, "test_deterministic")]
        for f in stale:
            if os.path.exists(f):
                os.remove(f)
        targets = [os.path.join(graded, t) for t in (s, "test_" + s, "bench_" + s)]
        t0 = time.time()
        ok = make(targets, os.path.join(sub.folder, "build.log"), BUILD=graded, GRADE_STEP=s, GRADE_SRC=sub.src)
        if ok and s == "step08":
            variables = dict(BUILD=float_graded, GRADE_STEP=s, GRADE_SRC=sub.src)
            if TYPE == "int":
                variables["TYPE"] = "float"
            ok = make([os.path.join(float_graded, "test_deterministic")],
                      os.path.join(sub.folder, "build.float.log"), **variables)
        if not ok:
            log = read(os.path.join(sub.folder, "build.log")) + read(os.path.join(sub.folder, "build.float.log"))
            first = "\n".join([l for l in log.splitlines() if "error" in l and not l.startswith("make")][:3])
            sub.compiled = False
            for c in CHECKS:
                sub.check(c, False, "did not compile", first or log[-300:])
            sub.seconds = time.time() - start
            return
        sub.took["build"] = time.time() - t0
    if s == "step08":
        sub.types = "int32 and float32 (the replay)" if TYPE == "int" else "float32"

    t0 = time.time()
    ok, text, msg, sub.failed_tests, sub.hang = run_tests(os.path.join(graded, "test_" + s), sub, "tests")
    sub.check("correct", ok, text, msg)
    sub.took["correct"], t0 = time.time() - t0, time.time()
    sub.check("race-free", *sanitize(graded, sub, ref))
    sub.took["race-free"], t0 = time.time() - t0, time.time()

    n = ref.speed_n(s)
    if sub.hang:
        sub.check("fast enough", False, "not timed (the tests hang)")
    else:
        sub.ms = bench_ms(os.path.join(graded, "bench_" + s), n, os.path.join(sub.folder, "bench"), sub.folder)
        sub.ref_ms = ref.bench_ms(s, n)
        if sub.ms is None or sub.ref_ms is None:
            sub.check("fast enough", False, "the benchmark gave no time at n = %d (%s)" % (
                n, os.path.join(sub.folder, "bench.log")))
        else:
            r = sub.ms / sub.ref_ms
            sub.check("fast enough", r <= SPEED, "%.5f ms vs %.5f ms: %.2fx at n = %d (limit %.1fx)" % (
                sub.ms, sub.ref_ms, r, n, SPEED))
    sub.took["fast enough"], t0 = time.time() - t0, time.time()

    if sub.hang:
        sub.check("lesson", False, "not checked (the tests hang)")
    else:
        lesson(sub, graded, ref)
    sub.took["lesson"] = time.time() - t0
    sub.seconds = time.time() - start
    say("%s: %.0f s (%s)" % (sub.name, sub.seconds, ", ".join("%s %.0f s" % kv for kv in sub.took.items())))


def lesson(sub, graded, ref):
    s = sub.stage
    size = ref.lesson_size(s)
    mine, why = profile(os.path.join(graded, s), size, os.path.join(sub.folder, "lesson"), sub.folder)
    if mine is None:  # "it ...": the program's own doing (it refused the lesson's n, it failed,
        # it launched nothing), which rejects it; else the tools' (no ncu, counters restricted)
        sub.lesson_checked = why.startswith(("it ", "Nsight Compute profiled no kernel"))
        sub.check("lesson", False, ("no lesson: " if sub.lesson_checked else "not checked: ") +
                  why)
        return
    (prev, why_prev), (this, why_this) = ref.counters(previous(s), size), ref.counters(s, size)
    if prev is None or this is None:
        sub.check("lesson", False, "not checked: " + (why_prev or why_this))
        return
    sub.lesson_checked = True
    ok, lines = lessons.judge(s, dict(mine, stage="yours"), prev, this)
    text = "; ".join(lines)
    if s == "step08":
        program = os.path.join(float_build(graded), "test_deterministic")
        r_ok, r_text, msg, _, _ = run_tests(program, sub, "replay")
        ok = ok and r_ok
        text += "; float32 exact replay (test_deterministic): " + r_text + (" (%s)" % msg if msg else "")
    sub.check("lesson", ok, text)


# ---- Reports -------------------------------------------------------------------------------
def cell(sub, check):
    ok, text, _ = sub.checks.get(check, (False, "not run", ""))
    return ("yes: " if ok else "no: ") + text


def write_reports(out, subs, gpu, header):
    def row(sub, cells):
        return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"
    table = ["| submission | stage | file | types | " + " | ".join(CHECKS) + " | grade | time (ms) | seconds |",
             "|---|---|---|---|" + "---|" * len(CHECKS) + "---|--:|--:|"]
    failures = []
    for sub in subs:
        table.append(row(sub, [sub.name, sub.stage, "`%s`" % shown(sub.src or source_of(sub.stage)),
                               sub.types] + [cell(sub, c) for c in CHECKS] +
                         ["**%s**" % ("PASS" if sub.passed() else "FAIL"),
                          "%.5f" % sub.ms if sub.ms else "-", "%.0f" % sub.seconds]))
        for c in CHECKS:
            ok, text, detail = sub.checks.get(c, (False, "not run", ""))
            if not ok:
                failures.append("- %s, %s: %s%s" % (sub.name, c, text, (". First words: `%s`" % detail[:300]) if detail else ""))
    lines = ["# Grade report", "", header, "", SANDBOX.words() + ".", ""] + table
    if failures:
        lines += ["", "What failed:"] + failures
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    for sub in subs:
        one = ["# Grade report: %s" % sub.name, "", header, "", SANDBOX.words() + ".", ""] + table[:2] + [
            line for line in table[2:] if line.startswith("| %s |" % sub.name)] + [
            "", "Each check (the seconds it took):"] + [
            "- **%s** (%.0f s): %s%s" % (c, sub.took.get(c, 0), cell(sub, c),
                                        (" -- `%s`" % sub.checks[c][2][:300]) if c in sub.checks and sub.checks[c][2] else "")
            for c in CHECKS] + ["", "In all %.0f s, the build %.0f s of it." % (sub.seconds, sub.took.get("build", 0))]
        with open(os.path.join(sub.folder, "report.md"), "w") as f:
            f.write("\n".join(one) + "\n")
        tests = [{"name": c, "score": 1 if sub.checks.get(c, (False,))[0] else 0, "max_score": 1,
                  "status": "passed" if sub.checks.get(c, (False,))[0] else "failed",
                  "output": cell(sub, c)} for c in CHECKS]
        result = {"score": sum(t["score"] for t in tests), "execution_time": round(sub.seconds),
                  "output": "%s graded as %s (%s) on %s: %s" % (sub.name, sub.stage, sub.types, gpu,
                                                                  "PASS" if sub.passed() else "FAIL"),
                  "tests": tests}
        if sub.ms:
            result["leaderboard"] = [{"name": "time (ms)", "value": sub.ms, "order": "asc"}]
        with open(os.path.join(sub.folder, "results.json"), "w") as f:
            json.dump(result, f, indent=1)
    with open(os.path.join(out, "class.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["submission", "stage", "file", "types", "compiled"] + list(CHECKS) +
                   ["grade", "time_ms", "reference_ms", "seconds", "first_failure"])
        for sub in subs:
            w.writerow([sub.name, sub.stage, sub.src or source_of(sub.stage), sub.types,
                        "yes" if sub.compiled else "no"] +
                       ["yes" if sub.checks.get(c, (False,))[0] else "no" for c in CHECKS] +
                       ["PASS" if sub.passed() else "FAIL", sub.ms or "", sub.ref_ms or "",
                        "%.1f" % sub.seconds, sub.first_failure()])
    suites = ET.Element("testsuites", name="make grade", tests=str(len(CHECKS) * len(subs)),
                        failures=str(sum(not sub.checks.get(c, (False,))[0] for sub in subs for c in CHECKS)))
    for sub in subs:
        bad = [c for c in CHECKS if not sub.checks.get(c, (False,))[0]]
        suite = ET.SubElement(suites, "testsuite", name=sub.name, tests=str(len(CHECKS)),
                              failures=str(len(bad)), errors="0", time="%.1f" % sub.seconds)
        for c in CHECKS:
            case = ET.SubElement(suite, "testcase", classname="grade.%s.%s" % (sub.name, sub.stage), name=c)
            if c in bad:
                _, text, detail = sub.checks.get(c, (False, "not run", ""))
                ET.SubElement(case, "failure", message=text[:1000]).text = detail
    ET.ElementTree(suites).write(os.path.join(out, "junit.xml"), encoding="UTF-8", xml_declaration=True)


def shown(path):
    """A path as the report shows it: relative to the repository when inside it."""
    rel = os.path.relpath(path, ROOT)
    return path if rel.startswith("..") else rel


def grade_all(build, stages, subs, out, what):
    """Builds and measures the references, grades every submission, writes the reports. Returns
    the submissions."""
    global SANDBOX, NCU
    NCU = find_ncu()
    os.makedirs(out, exist_ok=True)
    for f in ("report.md", "class.csv", "junit.xml"):
        if os.path.exists(os.path.join(out, f)):
            os.remove(os.path.join(out, f))
    logs = os.path.join(out, "reference")
    os.makedirs(logs, exist_ok=True)
    targets = []
    for s in stages:
        targets += [os.path.join(build, t) for t in (s, "bench_" + s)]
        if previous(s) != "step00":
            targets.append(os.path.join(build, previous(s)))
        if not any(sub.src for sub in subs):
            targets.append(os.path.join(build, "test_" + s))
    if not make(targets, os.path.join(logs, "build.log")):
        die(2, "the repository's own stages did not build (%s)." % os.path.join(logs, "build.log"))
    if "step08" in stages and not any(sub.src for sub in subs):
        variables = {"TYPE": "float"} if TYPE == "int" else {}
        if not make([os.path.join(float_build(build), "test_deterministic")], os.path.join(logs, "build.float.log"), **variables):
            die(2, "the repository's float32 stage 8 did not build (%s)." % os.path.join(logs, "build.float.log"))
    ref = Reference(build, logs)
    probe = run([ref.program(stages[0]), "--n", "1", "--reps", "1"], os.path.join(logs, "probe.log"), LIMIT)
    if probe == 3:
        die(3, "%s: grading runs on a CUDA GPU; nothing was graded." % read(os.path.join(logs, "probe.log")).strip()[:300])
    SANDBOX = Sandbox([ROOT, out] + [os.path.dirname(sub.src) for sub in subs if sub.src])
    say("grade: " + SANDBOX.words())
    graded = os.path.join(build, "grade-build")
    for sub in subs:
        grade(sub, build, graded if sub.src else build, ref)
    m = re.search(r'device="([^"]*)"', read(os.path.join(logs, "probe.log")))
    gpu = m.group(1) if m else "a CUDA GPU"
    header = ("%s, %s, %s. Element type: %s. Checks: **correct**: every Criterion test of the stage, "
              "none skipped, within %d s; **race-free**: compute-sanitizer memcheck, racecheck and "
              "synccheck at two sizes, no report; **fast enough**: median time within %.1fx of the "
              "repository's own stage, measured in this run; **lesson**: each counter of the "
              "stage's lesson (tests/lessons.py, Nsight Compute) on the stage's side of the "
              "midpoint between the repository's stage NN-1 and stage NN, measured in this run "
              "(stage 8: and its float32 exact replay)." % (
                  time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), gpu, what,
                  "int32" if TYPE == "int" else "float32", LIMIT, SPEED))
    write_reports(out, subs, gpu, header)
    say("== grade report (%s; JUnit XML: %s; class table: %s)" % (
        os.path.join(out, "report.md"), os.path.join(out, "junit.xml"), os.path.join(out, "class.csv")))
    say(read(os.path.join(out, "report.md")))
    passed = sum(sub.checks.get(c, (False,))[0] for sub in subs for c in CHECKS)
    say("grade: %d of %d submissions passed, %d of %d checks" % (
        sum(sub.passed() for sub in subs), len(subs), passed, len(CHECKS) * len(subs)))
    return subs


def submissions_in(folder, stage, out):
    """DIR/<student>/reduce.cu and DIR/<student>.cu (or .c), sorted by name."""
    found = {}
    for path in sorted(glob.glob(os.path.join(folder, "*", "reduce.c*")) + glob.glob(os.path.join(folder, "*.c*"))):
        name = os.path.basename(os.path.dirname(path)) if os.path.basename(path).startswith("reduce.") \
            else os.path.splitext(os.path.basename(path))[0]
        if not re.fullmatch(r"[A-Za-z0-9._-]+", name) or name in ("reference",):
            say("grade: skipping %s: a submission's name is letters, digits, '.', '_', '-'" % path)
            continue
        if name in found:
            die(2, "two submissions are named %s: %s and %s." % (name, found[name], path))
        found[name] = os.path.abspath(path)
    if not found:
        die(2, "SUBMISSIONS=%s holds no <student>/reduce.cu and no <student>.cu." % folder)
    return [Submission(name, stage, path, out) for name, path in found.items()]


# ---- make mutants --------------------------------------------------------------------------
def mutants(build, names):
    """Every tests/mutants/NAME.patch (one mistake, 'Caught by: WHY') and every stage NN-1's own
    file handed in as stage NN (caught by: lesson), graded as classes, one per stage."""
    found = {}
    for p in sorted(glob.glob(os.path.join(HERE, "mutants", "*.patch"))):
        text = read(p)
        base = re.search(r"^--- (\S+)", text, re.M).group(1)
        found[os.path.basename(p)[:-6]] = (base.split("_")[0], re.search(r"^Caught by: *(\S+)", text, re.M).group(1), p)
    gpu = [os.path.basename(d)[:6] for d in stage_dirs() if not os.path.basename(d).startswith("step00")]
    for prev, s in zip(gpu, gpu[1:]):
        found["%s_as_%s" % (prev, s)] = (s, "lesson", source_of(prev))
    for n in names:
        if n not in found:
            die(2, "no mutant %s (tests/mutants/%s.patch, or stepNN_as_stepMM)." % (n, n))
    chosen = {n: found[n] for n in (names or sorted(found))}
    folder = os.path.join(build, "mutants")
    for name, (stage, want, origin) in chosen.items():
        os.makedirs(os.path.join(folder, stage, "submissions"), exist_ok=True)
        dest = os.path.join(folder, stage, "submissions", name + ".cu")
        if origin.endswith(".patch"):
            if subprocess.run(["bash", os.path.join(ROOT, "bench", "variant.sh"), origin, dest], cwd=ROOT).returncode:
                die(2, "the mutant %s does not apply." % name)
        else:
            shutil.copyfile(origin, dest)
        if os.environ.get("MUTANTS_BUILD_ONLY"):
            obj = os.path.join(folder, "build", "obj", "stage_%s.o" % stage)
            if os.path.exists(obj):
                os.remove(obj)
            if not make([obj], os.path.join(folder, name + ".build.log"), BUILD=os.path.join(folder, "build"),
                        GRADE_STEP=stage, GRADE_SRC=os.path.abspath(dest)):
                die(1, "the mutant %s does not compile (%s)." % (name, os.path.join(folder, name + ".build.log")))
            say("mutant %s: %s as %s, compiles" % (name, os.path.relpath(origin, ROOT), stage))
    if os.environ.get("MUTANTS_BUILD_ONLY"):
        return 0
    rows, bad = [], 0
    for stage in sorted({v[0] for v in chosen.values()}):
        mine = [n for n in chosen if chosen[n][0] == stage]
        subs = [Submission(n, stage, os.path.abspath(os.path.join(folder, stage, "submissions", n + ".cu")),
                           os.path.join(folder, stage)) for n in mine]
        for sub in grade_all(build, [stage], subs, os.path.join(folder, stage), "known-wrong kernels"):
            want = chosen[sub.name][1]
            seen = []
            if not sub.compiled:
                seen.append("compile")
            if sub.hang:
                seen.append("timeout")
            elif not sub.checks["correct"][0] and sub.compiled:
                seen.append("huge" if sub.failed_tests == ["stage::n_above_2_to_the_32"] else "tests")
            seen += sub.failed_tools
            if sub.compiled and not sub.hang and not sub.checks["fast enough"][0]:
                seen.append("speed")
            if sub.lesson_checked and not sub.checks["lesson"][0]:
                seen.append("lesson")
            if want == "nothing":
                verdict = "ok" if sub.passed() else "rejected by %s: its patch says no check sees it" % " ".join(seen)
            elif sub.passed():
                verdict = "NOT rejected"
            else:
                verdict = "ok" if want in seen else "rejected, but not by %s" % want
            bad += verdict != "ok"
            rows.append("| %s | %s | %s | %s | %s | %s |" % (sub.name, stage, want, " ".join(seen) or "nothing: accepted",
                                                             " ".join(sub.failed_tests) or "-", verdict))
    report = ["| mutant | stage | must be caught by | rejected by | failing tests | verdict |",
              "|---|---|---|---|---|---|"] + rows
    with open(os.path.join(folder, "report.md"), "w") as f:
        f.write("\n".join(report) + "\n")
    say("== mutants (%s; each grade in %s/STAGE/)" % (os.path.join(folder, "report.md"), folder))
    say("\n".join(report))
    say("mutants: %d of %d as they must be (rejected for their own reason, or accepted where the "
        "patch says caught by nothing)" % (len(rows) - bad, len(rows)))
    return 1 if bad else 0


def main(argv):
    if len(argv) >= 2 and argv[1] == "--mutants":
        if len(argv) < 3:
            die(2, "usage: grade.py --mutants BUILD [NAME...]")
        return mutants(argv[2], argv[3:])
    args, src, folder = [], None, None
    it = iter(argv[1:])
    for a in it:
        if a == "--src":
            src = next(it, "")
        elif a == "--submissions":
            folder = next(it, "")
        else:
            args.append(a)
    if len(args) < 2:
        die(2, "usage: grade.py BUILD STAGE... [--src FILE | --submissions DIR]")
    build, stages = args[0], args[1:]
    if src is not None and not os.path.isfile(src):
        die(2, "SRC=%s is not a file." % src)
    if folder is not None and not os.path.isdir(folder):
        die(2, "SUBMISSIONS=%s is not a folder." % folder)
    if (src or folder) and len(stages) != 1:
        die(2, "SRC= and SUBMISSIONS= grade one stage: give STEP=NN too.")
    out = os.path.abspath(os.environ.get("GRADE_OUT") or os.path.join(build, "grade"))
    if src:
        name = os.path.basename(os.path.dirname(os.path.abspath(src))) if os.path.basename(src).startswith("reduce.") \
            else os.path.splitext(os.path.basename(src))[0]
        subs, what = [Submission(name, stages[0], os.path.abspath(src), out)], "student file `%s`" % src
    elif folder:
        subs, what = submissions_in(folder, stages[0], out), "the submissions in `%s`" % folder
    else:
        subs, what = [Submission(s, s, None, out) for s in stages], "the repository's own stages"
    subs = grade_all(build, stages, subs, out, what)
    return 0 if all(sub.passed() for sub in subs) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
