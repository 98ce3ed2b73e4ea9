#!/usr/bin/env python3
"""grade.py: `make grade` and `make mutants`, on a CUDA GPU.

README.md's "Graders" says what each of the four checks (correct, race-free, fast enough, lesson)
requires, how the submissions are built and sandboxed, and what the reports hold; a grade passes
when all four checks do, and a check that cannot run fails, saying why. GRADE_TIMEOUT (seconds,
120) bounds each program's run (the tests': longer is a hang); GRADE_SPEED (1.5) is the most time
allowed, as a multiple of the repository's own stage's; GRADE_SANDBOX=0 runs without the unshare(1)
sandbox; GRADE_OUT (BUILD/grade; BUILD/mutants/STAGE for make mutants) gets report.md, class.csv,
junit.xml and, per submission, NAME/: its report.md, Gradescope's results.json and its logs.
Exit status: 0 every submission passed every check, 1 some check failed, 2 bad usage or the
repository's own programs do not build, 3 no CUDA device.
"""
import argparse
import csv
import functools
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
NCU = next((c for c in (os.environ.get("NCU"), shutil.which("ncu"), "/usr/local/cuda/bin/ncu")
            if c and os.access(c, os.X_OK)), None)
SANDBOX = None


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


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def remove(*paths):
    """Removes those that exist: a tool's output of an earlier run must not pass for this one's."""
    for p in paths:
        if os.path.exists(p):
            os.remove(p)


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
        self.why = ("GRADE_SANDBOX=0" if os.environ.get("GRADE_SANDBOX") == "0" else None
                    if shutil.which("unshare") else "unshare(1) was not found (util-linux)")
        if not self.why:
            # The proof it works: inside, the tree (the working folder: a relative path) refuses a
            # file and the writable folder takes one.
            probe = os.path.join(ROOT, ".grade-sandbox-probe")
            with tempfile.TemporaryDirectory(dir=(self.readonly or [None])[0]) as d:
                test = ["sh", "-c", '! touch "$0" 2>/dev/null && touch "$1/ok"',
                        os.path.basename(probe), d]
                p = subprocess.run(self.wrap(test, d), capture_output=True, text=True, cwd=ROOT)
                if p.returncode != 0 or not os.path.exists(os.path.join(d, "ok")):
                    self.why = "unshare did not make the tree read-only (%s)" % (
                        (p.stderr.strip().splitlines() or ["exit status %d" % p.returncode])[0])
            remove(probe)
        self.words = ("each submission ran in a sandbox (unshare: the tree read-only but for its "
                      "own folder, its processes ended with each check)" if not self.why else
                      "the submissions ran WITHOUT a sandbox (%s): a program could write files "
                      "this user can write" % self.why)

    def wrap(self, cmd, writable):
        if self.why:
            return cmd
        user = ["--map-root-user"] if os.geteuid() != 0 else []
        return (["unshare", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc"] + user +
                ["sh", "-c", self.SCRIPT, "sandbox"] + self.readonly +
                ["--", os.path.realpath(writable)] + list(cmd))


# ---- The repository's stages ---------------------------------------------------------------
@functools.cache
def stage_of(stage):
    """The Stage (tools/stages.py) of `stage` (stepNN): its folder and its stage.ini."""
    return lessons.stages.find(lessons.STAGES, stage)


def source_of(stage):
    """The repository's own file of stage `stage` (stepNN), or None."""
    return stage_of(stage).source


previous = lessons.previous  # the stage stepNN follows (its stage.ini's follows), as stepMM


def float_build(build):
    return build if TYPE == "float" else os.path.join(build, "float")


def make(targets, log, float32=False, **variables):
    """make -k targets with make's `variables`, TYPE=float for float32 (stage 8's replay) or TYPE's:
    whether every target was built."""
    cmd = MAKE + ["-k", "-j4", "--no-print-directory"] + ["%s=%s" % kv for kv in variables.items()]
    return run(cmd + ["TYPE=float"] * (float32 or TYPE == "float") + list(targets), log, 900) == 0


class Reference:
    """The repository's own programs: built once, each measured once a run (speed, counters)."""

    def __init__(self, build, logs):
        self.build, self.logs = build, logs

    @functools.cache
    def takes(self, stage, n):
        """Whether the repository's stage takes n elements (a single-block stage refuses more than
        2048 with exit status 2, before any CUDA call)."""
        log = os.path.join(self.logs, "%s.takes.%d.log" % (stage, n))
        return run([os.path.join(self.build, stage), "--n", str(n), "--reps", "1"], log, LIMIT) != 2

    @functools.cache
    def bench_ms(self, stage, n):
        return bench_ms(os.path.join(self.build, "bench_" + stage), n,
                        os.path.join(self.logs, stage + ".bench"))

    def counters(self, stage, size):
        """(counters, None) of stage `stage`'s lesson at (n, block), or at its own largest size
        where it cannot take n (stage 04 as stage 05's predecessor); (None, why) when it could not
        be profiled. step00 runs no kernel: all 0."""
        if lessons.runs_no_kernel(stage):
            return dict(lessons.counters(size[0], []), stage=stage), None
        return self.profiled(stage, size if self.takes(stage, size[0]) else SMALL)

    @functools.cache
    def profiled(self, stage, size):
        c, why = profile(os.path.join(self.build, stage), size,
                         os.path.join(self.logs, stage + ".ncu"))
        return (dict(c, stage=stage), None) if c else (
            None, "the repository's %s could not be profiled: %s" % (stage, why))


def bench_ms(program, n, prefix, jail=None):
    """The median of 30 timed runs of `program` (a build/bench_stepNN) at n, in ms, or None."""
    remove(prefix + ".csv")
    run([program, "--csv", prefix + ".csv", "--reps", "30", "--min-n", str(n), "--max-n", str(n)],
        prefix + ".log", LIMIT, jail)
    rows = [r for r in csv.DictReader(read(prefix + ".csv").splitlines())
            if r.get("stage") not in (None, "cub", "copy") and r.get("median_ms")]
    try:
        return float(rows[0]["median_ms"])
    except (IndexError, ValueError):
        return None


def profile(program, size, prefix, jail=None):
    """The lesson counters of one reduce() call of `program` at size (n, block): (counters, None),
    or (None, why not)."""
    n, block = size
    if NCU is None:
        return None, "Nsight Compute (ncu) was not found: it ships with the CUDA toolkit"
    remove(prefix + ".ncu-rep")
    args = ["--n", str(n)] + (["--block", str(block)] if block else []) + ["--reps", "1"]
    rc = run([NCU, "--profile-from-start", "off", "--clock-control", "none", "--metrics",
              ",".join(lessons.metrics()), "-o", prefix, "-f", program] + args,
             prefix + ".log", LIMIT, jail)
    said = read(prefix + ".log").splitlines()
    line = next((l for l in said if l.startswith("stage=")), "")
    words = next((l for l in said if l and not l.startswith("==")), "")
    if any("ERR_NVGPUCTRPERM" in l for l in said):
        return None, ("the GPU's performance counters are restricted to admin users "
                      "(ERR_NVGPUCTRPERM): run as root, or see "
                      "https://developer.nvidia.com/ERR_NVGPUCTRPERM")
    if rc is None:
        return None, "it did not finish in %d s under Nsight Compute" % LIMIT
    if rc == 2:
        return None, "it refused n = %d (%s), which the stage's lesson takes" % (n, words)
    if rc not in (0, 1) or " result=" not in line:  # a wrong sum (1) still counts what ran
        return None, "it failed under Nsight Compute (exit status %s): %s" % (
            rc, (line or words or "no output")[:200])
    if not os.path.exists(prefix + ".ncu-rep"):
        return None, "Nsight Compute profiled no kernel in its reduce() call: it launched none"
    run([NCU, "--import", prefix + ".ncu-rep", "--csv", "--page", "raw", "--print-units", "base",
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
        self.checks = {c: (False, "not run", "") for c in CHECKS}  # (passed, text, detail)
        self.compiled, self.hang, self.failed_tests = True, False, []
        self.caught = []  # what rejected it, in the words of the mutants' 'Caught by:'
        self.ms = self.ref_ms = None
        self.seconds, self.took = 0.0, {}  # in all, and each check's (and the build's)
        self.types = "int32" if TYPE == "int" else "float32"

    def check(self, name, passed, text, detail=""):
        self.checks[name] = (passed, text, detail)
        say("%s %s: %s" % (self.name, name, text))

    def ok(self, check):
        return self.checks[check][0]

    def cell(self, check):
        return ("yes: " if self.ok(check) else "no: ") + self.checks[check][1]

    def passed(self):
        return self.compiled and all(self.ok(c) for c in CHECKS)

    def grade(self):
        return "PASS" if self.passed() else "FAIL"

    def first_failure(self):
        if not self.compiled:
            return "did not compile: " + self.checks["correct"][2].splitlines()[0]
        return next(("%s: %s" % (c, self.checks[c][1]) for c in CHECKS if not self.ok(c)), "")


def run_tests(program, sub, tag):
    """Runs a Criterion program in the sandbox, its TAP into sub.folder/TAG.tap: (passed, text,
    its assertions' messages, the failed tests, whether it hung)."""
    tap, xml = (os.path.join(sub.folder, tag + ext) for ext in (".tap", ".xml"))
    remove(tap, xml)
    rc = run([program, "--tap=" + tap, "--xml=" + xml], os.path.join(sub.folder, tag + ".log"),
             LIMIT, sub.folder)
    lines = read(tap).splitlines()
    total = sum(1 for l in lines if re.match(r"(not )?ok ", l))
    skips = [l.split("# SKIP", 1)[1].strip() for l in lines if re.match(r"ok .*# SKIP", l)]
    failed = sorted({m[1] for m in (re.match(r"not ok \d* *- *(\S+)", l) for l in lines) if m})
    msg = "; ".join(re.sub(r"^ *(Assertion failed: )?", "", l) for l in lines
                    if "Assertion failed: " in l)[:300]
    if rc is None:
        text = "the tests did not finish in %d s (a hang); %d had passed" % (
            LIMIT, total - len(failed) - len(skips))
    elif not any(l.startswith("1..") for l in lines):
        text = "the test program exited %s without a report" % rc
    elif failed:
        text = "%d of %d tests failed: %s" % (len(failed), total, ", ".join(failed))
    elif skips:
        text = "%d of %d tests skipped (not allowed when grading): %s" % (
            len(skips), total, skips[0])
    elif rc != 0:
        text = "all %d tests passed, but the program exited %s" % (total, rc)
    else:
        return True, "%d of %d tests" % (total, total), "", failed, False
    return False, text, msg, failed, rc is None


# The four checks: each (graded build, submission, references) -> (passed, text[, first words]).
def correct(graded, sub, ref):
    ok, text, msg, sub.failed_tests, sub.hang = run_tests(
        os.path.join(graded, "test_" + sub.stage), sub, "tests")
    huge = sub.failed_tests == ["stage::n_above_2_to_the_32"]
    sub.caught += [] if ok else ["timeout" if sub.hang else "huge" if huge else "tests"]
    return ok, text, msg


def sanitize(graded, sub, ref):
    """memcheck, racecheck and synccheck (tests/sanitize.sh). One after another, alone on the GPU:
    beside each other or the tests, they ran past their limits."""
    env = dict(SANITIZE_TOOLS="memcheck racecheck synccheck", SANITIZE_BROKEN="0",
               SANITIZE_TIMEOUT="30", SANITIZE_REPORTS_ONLY="1",
               SANITIZE_LOGS=os.path.join(sub.folder, "sanitize"),
               SANITIZE_PROBE=os.path.join(ref.build, sub.stage))
    log = os.path.join(sub.folder, "sanitize.log")
    rc = run(["env"] + ["%s=%s" % kv for kv in env.items()] +
             ["bash", os.path.join(HERE, "sanitize.sh"), graded, sub.stage], log, 600, sub.folder)
    rows = [r for r in (l.split(None, 3) for l in read(log).splitlines()
                        if l.startswith(sub.stage + " ")) if len(r) > 2]
    bad = [r for r in rows if r[2] == "FAILED:"]
    sub.caught += [r[1] for r in bad]
    if rc is None or rc == 2:
        return False, "the sanitizer did not run: " + (read(log).strip().splitlines() or
                                                       ["no output"])[-1]
    if not bad and sum(r[2] == "ok" for r in rows) == 3:
        return True, "memcheck, racecheck, synccheck clean"
    said = ", ".join(r[1] + (" timed out" if "timed out" in r[3] else " reported") for r in bad)
    return False, said or "the sanitizer said nothing (%s)" % log, bad[0][3][:300] if bad else ""


def speed(graded, sub, ref):
    n = 1 << 26 if ref.takes(sub.stage, 1 << 26) else 2048
    sub.ms = bench_ms(os.path.join(graded, "bench_" + sub.stage), n,
                      os.path.join(sub.folder, "bench"), sub.folder)
    sub.ref_ms = ref.bench_ms(sub.stage, n)
    if sub.ms is None or sub.ref_ms is None:
        sub.caught.append("speed")
        return False, "the benchmark gave no time at n = %d (%s)" % (
            n, os.path.join(sub.folder, "bench.log"))
    r = sub.ms / sub.ref_ms
    sub.caught += ["speed"] * (r > SPEED)
    return r <= SPEED, "%.5f ms vs %.5f ms: %.2fx at n = %d (limit %.1fx)" % (
        sub.ms, sub.ref_ms, r, n, SPEED)


def lesson(graded, sub, ref):
    s = sub.stage
    size = BIG if ref.takes(s, BIG[0]) else SMALL
    mine, why = profile(os.path.join(graded, s), size, os.path.join(sub.folder, "lesson"),
                        sub.folder)
    if mine is None:  # "it ...": the program's own doing (it refused the lesson's n, it failed,
        # it launched nothing), which rejects it; else the tools' (no ncu, counters restricted)
        checked = why.startswith(("it ", "Nsight Compute profiled no kernel"))
        sub.caught += ["lesson"] * checked
        return False, ("no lesson: " if checked else "not checked: ") + why
    (prev, why_prev), (this, why_this) = ref.counters(previous(s), size), ref.counters(s, size)
    if prev is None or this is None:
        return False, "not checked: " + (why_prev or why_this)
    ok, lines = lessons.judge(s, dict(mine, stage="yours"), prev, this)
    text = "; ".join(lines)
    replay = stage_of(s).float32_replay  # stage 8's test_deterministic: its lesson is an order
    if replay:
        r_ok, r_text, msg, _, _ = run_tests(os.path.join(float_build(graded), replay), sub,
                                            "replay")
        ok = ok and r_ok
        text += "; float32 exact replay (%s): " % replay + r_text + (
            " (%s)" % msg if msg else "")
    sub.caught += ["lesson"] * (not ok)
    return ok, text


def grade(sub, graded, ref):
    """All four checks of one submission (sub.src None: the repository's own stage, in graded)."""
    start = time.time()
    shutil.rmtree(sub.folder, ignore_errors=True)
    os.makedirs(sub.folder)
    s, float_graded = sub.stage, float_build(graded)
    replay = stage_of(s).float32_replay
    say("== %s: %s as %s" % (sub.name, sub.src or source_of(s), s))
    if sub.src:
        remove(*(os.path.join(d, f) for d in (graded, float_graded) for f in (
            "obj/stage_%s.o" % s, "obj/depth_%s.o" % s, s, "test_" + s, "bench_" + s) +
            ((replay,) if replay else ())))
        logs = [os.path.join(sub.folder, f) for f in ("build.log", "build.float.log")]
        ok = make([os.path.join(graded, t) for t in (s, "test_" + s, "bench_" + s)], logs[0],
                  BUILD=graded, GRADE_STEP=s, GRADE_SRC=sub.src)
        if ok and replay:
            ok = make([os.path.join(float_graded, replay)], logs[1], True,
                      BUILD=float_graded, GRADE_STEP=s, GRADE_SRC=sub.src)
        if not ok:
            log = read(logs[0]) + read(logs[1])
            first = "\n".join([l for l in log.splitlines()
                               if "error" in l and not l.startswith("make")][:3])
            sub.compiled, sub.caught = False, ["compile"]
            for c in CHECKS:
                sub.check(c, False, "did not compile", first or log[-300:])
            sub.seconds = time.time() - start
            return
        sub.took["build"] = time.time() - start
    if replay:
        sub.types = "int32 and float32 (the replay)" if TYPE == "int" else "float32"
    for name, check, hung in (("correct", correct, None), ("race-free", sanitize, None),
                              ("fast enough", speed, "not timed (the tests hang)"),
                              ("lesson", lesson, "not checked (the tests hang)")):
        t0 = time.time()
        sub.check(name, *((False, hung) if sub.hang and hung else check(graded, sub, ref)))
        sub.took[name] = time.time() - t0
    sub.seconds = time.time() - start
    say("%s: %.0f s (%s)" % (sub.name, sub.seconds,
                             ", ".join("%s %.0f s" % kv for kv in sub.took.items())))


# ---- Reports -------------------------------------------------------------------------------
def write_reports(out, subs, gpu, header):
    """out/report.md, class.csv and junit.xml; each submission's report.md and results.json."""
    def markdown(path, title, rows, tail):
        lines = ["# Grade report" + title, "", header, "", SANDBOX.words + ".", "",
                 "| submission | stage | file | types | " + " | ".join(CHECKS) +
                 " | grade | time (ms) | seconds |",
                 "|---|---|---|---|" + "---|" * len(CHECKS) + "---|--:|--:|"]
        for s in rows:
            cells = [s.name, s.stage, "`%s`" % shown(s.src or source_of(s.stage)), s.types] + [
                s.cell(c) for c in CHECKS] + [
                "**%s**" % s.grade(), "%.5f" % s.ms if s.ms else "-", "%.0f" % s.seconds]
            lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ")
                                           for c in cells) + " |")
        with open(path, "w") as f:
            f.write("\n".join(lines + tail) + "\n")

    def detail(s, c, words):
        return words % s.checks[c][2][:300] if s.checks[c][2] else ""

    failures = ["- %s, %s: %s%s" % (s.name, c, s.checks[c][1], detail(s, c, ". First words: `%s`"))
                for s in subs for c in CHECKS if not s.ok(c)]
    markdown(os.path.join(out, "report.md"), "", subs, failures and ["", "What failed:"] + failures)
    for s in subs:
        markdown(os.path.join(s.folder, "report.md"), ": " + s.name, [s], [
            "", "Each check (the seconds it took):"] + [
            "- **%s** (%.0f s): %s%s" % (c, s.took.get(c, 0), s.cell(c), detail(s, c, " -- `%s`"))
            for c in CHECKS] + [
            "", "In all %.0f s, the build %.0f s of it." % (s.seconds, s.took.get("build", 0))])
        tests = [{"name": c, "score": int(s.ok(c)), "max_score": 1, "status":
                  "passed" if s.ok(c) else "failed", "output": s.cell(c)} for c in CHECKS]
        result = {"score": sum(t["score"] for t in tests), "execution_time": round(s.seconds),
                  "output": "%s graded as %s (%s) on %s: %s" % (s.name, s.stage, s.types, gpu,
                                                                  s.grade()), "tests": tests}
        if s.ms:
            result["leaderboard"] = [{"name": "time (ms)", "value": s.ms, "order": "asc"}]
        with open(os.path.join(s.folder, "results.json"), "w") as f:
            json.dump(result, f, indent=1)
    with open(os.path.join(out, "class.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["submission", "stage", "file", "types", "compiled"] + list(CHECKS) +
                   ["grade", "time_ms", "reference_ms", "seconds", "first_failure"])
        w.writerows([s.name, s.stage, s.src or source_of(s.stage), s.types,
                     "yes" if s.compiled else "no"] + ["yes" if s.ok(c) else "no" for c in CHECKS] +
                    [s.grade(), s.ms or "", s.ref_ms or "", "%.1f" % s.seconds, s.first_failure()]
                    for s in subs)
    suites = ET.Element("testsuites", name="make grade", tests=str(len(CHECKS) * len(subs)),
                        failures=str(sum(not s.ok(c) for s in subs for c in CHECKS)))
    for s in subs:
        suite = ET.SubElement(suites, "testsuite", name=s.name, tests=str(len(CHECKS)),
                              failures=str(sum(not s.ok(c) for c in CHECKS)), errors="0",
                              time="%.1f" % s.seconds)
        for c in CHECKS:
            case = ET.SubElement(suite, "testcase", classname="grade.%s.%s" % (s.name, s.stage),
                                 name=c)
            if not s.ok(c):
                ET.SubElement(case, "failure", message=s.checks[c][1][:1000]).text = s.checks[c][2]
    ET.ElementTree(suites).write(os.path.join(out, "junit.xml"), encoding="UTF-8",
                                 xml_declaration=True)


def shown(path):
    """A path as the report shows it: relative to the repository when inside it."""
    rel = os.path.relpath(path, ROOT)
    return path if rel.startswith("..") else rel


def grade_all(build, stages, subs, out, what):
    """Builds and measures the references, grades every submission, writes the reports. Returns
    the submissions."""
    global SANDBOX
    logs = os.path.join(out, "reference")
    os.makedirs(logs, exist_ok=True)
    remove(*(os.path.join(out, f) for f in ("report.md", "class.csv", "junit.xml")))
    ours = not any(sub.src for sub in subs)  # the repository's stages: their tests are built too
    targets = [os.path.join(build, t) for s in stages for t in [s, "bench_" + s] +
               [previous(s)] * (not lessons.runs_no_kernel(previous(s))) + ["test_" + s] * ours]
    built, built_float = (os.path.join(logs, f) for f in ("build.log", "build.float.log"))
    if not make(targets, built):
        die(2, "the repository's own stages did not build (%s)." % built)
    replays = {s: stage_of(s).float32_replay for s in stages if stage_of(s).float32_replay}
    replay = [os.path.join(float_build(build), t) for t in replays.values()]
    if replay and ours and not make(replay, built_float, True):
        die(2, "the repository's float32 %s did not build (%s)." % (
            " and ".join("stage %d" % int(s[4:]) for s in replays), built_float))
    probe = os.path.join(logs, "probe.log")
    if run([os.path.join(build, stages[0]), "--n", "1", "--reps", "1"], probe, LIMIT) == 3:
        die(3, "%s: grading runs on a CUDA GPU; nothing was graded." % read(probe).strip()[:300])
    SANDBOX = Sandbox([ROOT, out] + [os.path.dirname(sub.src) for sub in subs if sub.src])
    say("grade: " + SANDBOX.words)
    ref = Reference(build, logs)
    for sub in subs:
        grade(sub, os.path.join(build, "grade-build") if sub.src else build, ref)
    gpu = (re.findall(r'device="([^"]*)"', read(probe)) or ["a CUDA GPU"])[0]
    header = ("%s, %s, %s. Element type: %s. Checks: **correct**: every Criterion test of the "
              "stage, none skipped, within %d s; **race-free**: compute-sanitizer memcheck, "
              "racecheck and synccheck at two sizes, no report; **fast enough**: median time "
              "within %.1fx of the repository's own stage, measured in this run; **lesson**: "
              "each counter of the stage's lesson (tests/lessons.py, Nsight Compute) on the "
              "stage's side of the midpoint between the repository's stage NN-1 and stage NN, "
              "measured in this run%s." % (
                  time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), gpu, what,
                  "int32" if TYPE == "int" else "float32", LIMIT, SPEED, "".join(
                      " (stage %d: and its float32 exact replay)" % t.number
                      for t in lessons.STAGES if t.float32_replay)))
    write_reports(out, subs, gpu, header)
    say("== grade report (%s; JUnit XML: %s; class table: %s)" % tuple(
        os.path.join(out, f) for f in ("report.md", "junit.xml", "class.csv")))
    say(read(os.path.join(out, "report.md")))
    say("grade: %d of %d submissions passed, %d of %d checks" % (
        sum(sub.passed() for sub in subs), len(subs),
        sum(sub.ok(c) for sub in subs for c in CHECKS), len(CHECKS) * len(subs)))
    return subs


def name_of(path):
    """A submission's name: its folder's for <student>/reduce.cu, its own for <student>.cu."""
    if os.path.basename(path).startswith("reduce."):
        return os.path.basename(os.path.dirname(os.path.abspath(path)))
    return os.path.splitext(os.path.basename(path))[0]


def submissions_in(folder, stage, out):
    """DIR/<student>/reduce.cu and DIR/<student>.cu (or .c), sorted by name."""
    found = {}
    for path in sorted(glob.glob(os.path.join(folder, "*", "reduce.c*")) +
                       glob.glob(os.path.join(folder, "*.c*"))):
        name = name_of(path)
        if not re.fullmatch(r"[A-Za-z0-9._-]+", name) or name == "reference":
            say("grade: skipping %s: a submission's name is letters, digits, '.', '_', '-'" % path)
        elif name in found:
            die(2, "two submissions are named %s: %s and %s." % (name, found[name], path))
        else:
            found[name] = os.path.abspath(path)
    if not found:
        die(2, "SUBMISSIONS=%s holds no <student>/reduce.cu and no <student>.cu." % folder)
    return [Submission(name, stage, path, out) for name, path in found.items()]


# ---- make mutants --------------------------------------------------------------------------
def mutants(build, names):
    """Every stepNN_name/mutants/NAME.patch (one mistake, 'Caught by: WHY') and the file of the
    stage each stage follows handed in as it (caught by: lesson), graded as classes, one per
    stage."""
    found = {}
    gpu = [t for t in lessons.STAGES if t.kind == "gpu"]
    for t in gpu:
        for name, p in t.mutants.items():
            found[name] = (t.short, re.search(r"^Caught by: *(\S+)", read(p), re.M).group(1), p)
    for t in gpu:
        prev = lessons.stages.previous(lessons.STAGES, t)
        if prev.kind == "gpu":
            found["%s_as_%s" % (prev.short, t.short)] = (t.short, "lesson", prev.source)
    for n in names:
        if n not in found:
            die(2, "no mutant %s (stepNN_name/mutants/%s.patch, or stepNN_as_stepMM)." % (n, n))
    chosen = {n: found[n] for n in (names or sorted(found))}
    folder = os.path.join(build, "mutants")
    build_only, subs = os.environ.get("MUTANTS_BUILD_ONLY"), []
    for name, (stage, want, origin) in chosen.items():
        os.makedirs(os.path.join(folder, stage, "submissions"), exist_ok=True)
        dest = os.path.abspath(os.path.join(folder, stage, "submissions", name + ".cu"))
        subs.append(Submission(name, stage, dest, os.path.join(folder, stage)))
        if not origin.endswith(".patch"):
            shutil.copyfile(origin, dest)
        elif subprocess.run(["bash", os.path.join(ROOT, "tools", "bench", "variant.sh"), origin, dest],
                            cwd=ROOT).returncode:
            die(2, "the mutant %s does not apply." % name)
        if build_only:
            obj, log = (os.path.join(folder, "build", "obj", "stage_%s.o" % stage),
                        os.path.join(folder, name + ".build.log"))
            remove(obj)
            if not make([obj], log, BUILD=os.path.join(folder, "build"), GRADE_STEP=stage,
                        GRADE_SRC=dest):
                die(1, "the mutant %s does not compile (%s)." % (name, log))
            say("mutant %s: %s as %s, compiles" % (name, os.path.relpath(origin, ROOT), stage))
    if build_only:
        return 0
    rows, bad = [], 0
    for stage in sorted({v[0] for v in chosen.values()}):
        graded = grade_all(build, [stage], [sub for sub in subs if sub.stage == stage],
                           os.path.join(folder, stage), "known-wrong kernels")
        for sub in graded:
            want, seen = chosen[sub.name][1], sub.caught
            if want == "nothing":
                verdict = "ok" if sub.passed() else (
                    "rejected by %s: its patch says no check sees it" % " ".join(seen))
            else:
                verdict = ("NOT rejected" if sub.passed() else "ok" if want in seen else
                           "rejected, but not by %s" % want)
            bad += verdict != "ok"
            rows.append("| %s | %s | %s | %s | %s | %s |" % (
                sub.name, stage, want, " ".join(seen) or "nothing: accepted",
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
    p = argparse.ArgumentParser(prog="grade.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("build", metavar="BUILD", help="the build folder (make's BUILD)")
    p.add_argument("stages", metavar="STAGE", nargs="*", help="the stages to grade (stepNN); "
                   "with --mutants, the mutants to grade (default: all)")
    p.add_argument("--mutants", action="store_true",
                   help="make mutants: every known-wrong kernel is rejected for its own reason")
    one = p.add_mutually_exclusive_group()
    one.add_argument("--src", metavar="FILE", help="one student's file, graded as the one STAGE "
                     "(make grade SRC=)")
    one.add_argument("--submissions", metavar="DIR", help="a class, graded as the one STAGE: "
                     "every DIR/<student>/reduce.cu and DIR/<student>.cu (make grade SUBMISSIONS=)")
    a = p.parse_args(argv[1:])
    if a.mutants:
        return mutants(a.build, a.stages)
    if not a.stages:
        p.error("give a STAGE to grade")
    if a.src is not None and not os.path.isfile(a.src):
        die(2, "SRC=%s is not a file." % a.src)
    if a.submissions is not None and not os.path.isdir(a.submissions):
        die(2, "SUBMISSIONS=%s is not a folder." % a.submissions)
    if (a.src or a.submissions) and len(a.stages) != 1:
        die(2, "SRC= and SUBMISSIONS= grade one stage: give STEP=NN too.")
    out = os.path.abspath(os.environ.get("GRADE_OUT") or os.path.join(a.build, "grade"))
    if a.src:
        subs = [Submission(name_of(a.src), a.stages[0], os.path.abspath(a.src), out)]
        what = "student file `%s`" % a.src
    elif a.submissions:
        subs = submissions_in(a.submissions, a.stages[0], out)
        what = "the submissions in `%s`" % a.submissions
    else:
        subs, what = [Submission(s, s, None, out) for s in a.stages], "the repository's own stages"
    return 0 if all(sub.passed() for sub in grade_all(a.build, a.stages, subs, out, what)) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
