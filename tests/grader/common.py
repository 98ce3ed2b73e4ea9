"""What every part of the grader shares: the settings, tests/grade.ini, messages, and running a
program under a time limit, in the sandbox, as part of one submission's checks."""
import configparser
import contextlib
import fcntl
import hashlib
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tests/
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import lessons  # noqa: E402

TYPE = os.environ.get("TYPE", "int")
MODEL = os.environ.get("MODEL", "gpu")  # gpu, or cpu: the CPU model, on one core a worker
# One program's limit (a test run, a sanitizer, a timed run): longer is a hang. The CPU model's is
# shorter than a GPU's: a right file's tests take about 30 s there, a GPU's several programs at
# once can wait on each other.
LIMIT = int(os.environ.get("GRADE_TIMEOUT") or (120 if MODEL == "gpu" else 90))
NCU_LIMIT = max(LIMIT, 300)  # Nsight Compute replays each kernel once per pass of counters
# One submission's limit, its build and every check: a class's wall time is at most
# submissions x SUBMISSION_LIMIT / workers, besides the repository's own measurements.
SUBMISSION_LIMIT = int(os.environ.get("GRADE_SUBMISSION_TIMEOUT") or
                       (600 if MODEL == "gpu" else 300))
MAKE = shlex.split(os.environ.get("MAKE", "make"))
CHECKS = ("correct", "race-free", "fast enough", "lesson")
# The checks graded here: the speed only on a GPU. Every submission of a run has their points as
# its total, whatever failed.
GRADED = CHECKS if MODEL == "gpu" else tuple(c for c in CHECKS if c != "fast enough")
TOOLS = ("memcheck", "racecheck", "synccheck")
PRINT = threading.Lock()
PROFILER = threading.Lock()  # one ncu or compute-sanitizer at a time: Sandbox.shared_ports
NO_LOCK = contextlib.nullcontext()
SANDBOX = None  # the Sandbox of this run (grade.py's grade_all sets it)


def say(*words):
    with PRINT:
        print(*words, flush=True)


def die(status, sentence):
    print("make grade: " + sentence, file=sys.stderr)
    sys.exit(status)


class Config:
    """tests/grade.ini (or GRADE_CONFIG): each check's points, the speed rule, the rules. A file
    that cannot be read, or a rule out of range, ends the grade with status 2."""

    def __init__(self, path):
        cp = configparser.ConfigParser()
        cp.optionxform = str
        if not cp.read(path):
            die(2, "GRADE_CONFIG=%s cannot be read." % path)
        try:
            self.points = {c: float(cp["points"][c]) for c in CHECKS}
            self.limit = float(os.environ.get("GRADE_SPEED") or cp["speed"]["limit"])
            self.zero = float(cp["speed"]["zero"])
            self.library = os.environ.get("GRADE_LIBRARY") or cp["rules"]["library"]
            self.cumulative = cp["rules"].getboolean("cumulative")
            self.passing = cp["rules"]["pass"].strip()
            pct = None if self.passing == "all" else float(self.passing)
        except (KeyError, ValueError) as e:
            die(2, "%s: %s is missing or not a number: see tests/grade.ini." % (path, e))
        if self.zero <= self.limit or self.library not in ("reject", "allow") or (
                pct is not None and not 0 <= pct <= 100) or min(self.points.values()) < 0:
            die(2, "%s: [speed] zero must exceed limit, [rules] library must be reject or allow, "
                "pass all or a percentage, and points at least 0." % path)
        self.path, self.pct = path, pct
        with open(path, "rb") as f:
            self.digest = hashlib.sha256(f.read() + repr(
                (self.limit, self.library)).encode()).hexdigest()


CONFIG = Config(os.environ.get("GRADE_CONFIG") or os.path.join(HERE, "grade.ini"))

# Each program runs in a session of its own (its limit kills the whole session), which a signal
# to the grader's own process group does not reach: the grader ends them itself when it is
# stopped (stopped()), or they would run on beside the next grade.
LIVE, LIVE_LOCK = set(), threading.Lock()


def stopped(signum, frame):
    """The grader's handler of SIGTERM, SIGINT and SIGHUP: kills every program it started."""
    with LIVE_LOCK:
        for pid in LIVE:
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
    os._exit(128 + signum)


def run(cmd, out, limit, jail=None, env=None, sub=None):
    """Runs cmd, its output into the file `out`, in a session of its own that is killed whole
    after `limit` seconds; in the sandbox when jail (the one folder it may write) is given; with
    `env` added to the environment. With `sub` (a Submission), also killed when the submission's
    time runs out (its deadline) or another of its programs ran out of time first (sub.stop).
    Returns the exit status, or None when it was killed so; then, with sub, sub.hang says why."""
    if jail is not None:
        cmd = SANDBOX.wrap(cmd, jail)
    end = time.time() + limit
    if sub is not None:
        if sub.stop.is_set():
            return None
        end = min(end, sub.deadline)
    with open(out, "wb") as f:
        with LIVE_LOCK:
            p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 start_new_session=True, cwd=ROOT,
                                 env=dict(os.environ, **(env or {})))
            LIVE.add(p.pid)
        try:
            while True:
                try:
                    return p.wait(timeout=max(0.0, min(0.25, end - time.time())))
                except subprocess.TimeoutExpired:
                    pass
                if time.time() >= end or sub is not None and sub.stop.is_set():
                    break
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            if sub is not None:
                sub.ran_out(time.time() >= sub.deadline, limit)
            return None
        finally:
            with LIVE_LOCK:
                LIVE.discard(p.pid)


@contextlib.contextmanager
def gpu_alone(env):
    """Holds the host-wide lock of the GPU that `env` selects (CUDA_VISIBLE_DEVICES) while a timed
    run or Nsight Compute uses it: two graders on one host then take turns on a GPU, as one
    grader's workers do (Nsight Compute's own lock is in /tmp, which each sandbox has of its own;
    two at once on one GPU failed, exit status 9, on an H200). Nothing to hold on the CPU model."""
    if MODEL != "gpu":
        yield
        return
    gpu = re.sub(r"[^\w-]", "_", (env or {}).get("CUDA_VISIBLE_DEVICES", "all"))
    with open(os.path.join("/tmp", "reduction-grade-gpu-%s.lock" % gpu), "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def at_once(calls):
    """Runs each callable of `calls` in a thread of its own, waits for them all and returns their
    results in `calls`' order; an exception in one is raised again here, after the others have
    finished."""
    calls = list(calls)
    results, failure = [None] * len(calls), []

    def call(i):
        try:
            results[i] = calls[i]()
        except BaseException as e:
            failure.append(e)
    threads = [threading.Thread(target=call, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failure:
        raise failure[0]
    return results


class Memo:
    """A cache that computes each key once, whichever worker thread asks first."""

    def __init__(self):
        self.values, self.locks, self.lock = {}, {}, threading.Lock()

    def get(self, key, compute):
        with self.lock:
            lock = self.locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self.values:
                self.values[key] = compute()
            return self.values[key]


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


def clip(text, most=600):
    """text cut to at most `most` characters, never inside a word: at the last sentence or part
    (". ", "; ", " | ") that fits, with "... and N more" for the parts left out; a single part
    longer than `most` is cut at a word, with " ...". """
    text = text or ""
    if len(text) <= most:
        return text
    parts = re.split(r"(?<=\.) (?=[A-Z(])|; | \| ", text)
    kept, length = [], 0
    for p in parts:
        if length + len(p) + 2 > most - 20:
            break
        kept.append(p)
        length += len(p) + 2
    if kept:
        return "; ".join(kept) + "; ... and %d more" % (len(parts) - len(kept))
    return text[:most].rsplit(" ", 1)[0] + " ..."


def quiet(text):
    """A sanitizer's line without what only its authors read: process ids, program counters,
    addresses of registers and the binary's offsets."""
    text = re.sub(r" *\((pid|pc)=?[^)]*\)", "", text)
    text = re.sub(r" \(pc 0x[0-9a-f]+ bp 0x[0-9a-f]+ sp 0x[0-9a-f]+ T\d+\)", "", text)
    return re.sub(r" \([\w.]+\+0x[0-9a-f]+\)", "", text)


def signal_words(rc):
    """An exit status as a person reads it: a negative one is the signal that killed it."""
    if rc is not None and rc < 0:
        try:
            return "killed by signal %d (%s)" % (-rc, signal.Signals(-rc).name)
        except ValueError:
            return "killed by signal %d" % -rc
    return "exit status %s" % rc


def scrub(text):
    """A tool's words as a student may read them: every path reduced to its last part (the
    grader's folders are nobody's business; `reduce.cu:42` stays)."""
    return re.sub(r"(?<![\w.])(?:\.{0,2}/)?(?:[\w.+-]+/)+([\w.+-]+)", r"\1", text or "")


def shown(path):
    """A path as the grader's report shows it: relative to the repository when inside it."""
    rel = os.path.relpath(path, ROOT)
    return path if rel.startswith("..") else rel


# ---- The repository's stages ---------------------------------------------------------------
def stage_of(stage):
    """The Stage (tools/stages.py) of `stage` (stepNN): its folder and its stage.ini."""
    return lessons.stages.find(lessons.STAGES, stage)


def source_of(stage):
    """The repository's own file of stage `stage` (stepNN), or None."""
    return stage_of(stage).source


previous = lessons.previous  # the stage stepNN follows (its stage.ini's follows), as stepMM


def float_build(build):
    return build if TYPE == "float" else os.path.join(build, "float")


def make(targets, log, float32=False, sub=None, **variables):
    """make -k targets with make's `variables`, TYPE=float for float32 (stage 8's replay) or
    TYPE's, within 900 s (and sub's deadline): whether every target was built."""
    cmd = MAKE + ["-k", "-j4", "--no-print-directory"] + ["%s=%s" % kv for kv in variables.items()]
    return run(cmd + ["TYPE=float"] * (float32 or TYPE == "float") + list(targets), log, 900,
               sub=sub) == 0


def lesson_stages(stage):
    """The stages whose lessons stage `stage` is graded on: its own, and with [rules] cumulative
    every earlier GPU stage's with a lesson, earliest first."""
    return [t.short for t in lessons.STAGES if t.lesson and t.kind == "gpu" and (
        t.short == stage or CONFIG.cumulative and t.short < stage)]
