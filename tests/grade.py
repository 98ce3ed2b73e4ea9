#!/usr/bin/env python3
"""grade.py: `make grade` and `make mutants`, on every GPU of the machine or on the CPU model.

README.md's "Graders" says what each of the four checks (correct, race-free, fast enough, lesson)
runs. Each check is scored on its parts and weighed as tests/grade.ini says (GRADE_CONFIG: a
course's own copy): the tests passed of those run, each sanitizer tool, the time against the
limit, each lesson counter. Submissions are graded in parallel, one per GPU at a time (GRADE_GPUS:
how many of the machine's GPUs to use), each timed against the repository's stage measured on the
same GPU; the repository's stages (their speed, their counters) are measured once a run, before
any submission (measure_references). Without a GPU (MODEL=cpu, make's default there) every check
but the speed runs on the CPU model (model/): the tests, its memory, race and barrier checks, its
lesson counters; the speed is graded on a GPU only. A rerun skips a submission graded before and
unchanged, with the same grader, tests and references (GRADE_FRESH=1 grades every one again).

Environment: GRADE_TIMEOUT (seconds; 120, on the CPU model 600) bounds each program's run (the
tests': longer is a hang); GRADE_SPEED overrides grade.ini's speed limit; GRADE_LIBRARY=allow lets
a reduce() call a library's kernels; GRADE_SANDBOX=0 runs without the unshare(1) sandbox;
GRADE_TEST_JOBS, the Criterion jobs of each test run (4 on a GPU, 1 on the model); GRADE_OUT
(BUILD/grade; BUILD/mutants for make mutants) gets report.md, class.csv (points, grade and
feedback: the same whatever the number of GPUs), timings.csv (who ran where and how long),
junit.xml and, per submission, NAME/ (STAGE/NAME/ when several stages are graded): report.md
and results.json (Gradescope's format), what the student sees, and the grader's logs.
Exit status: 0 every submission passed, 1 some did not, 2 bad usage or the repository's own
programs do not build, 3 no CUDA device (MODEL=gpu).
"""
import argparse
import configparser
import contextlib
import csv
import glob
import hashlib
import json
import os
import queue
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import lessons  # noqa: E402

try:
    import exploits  # noqa: E402  (tests/exploits.py: symbols and kernels a stage may not have)
except ImportError:
    exploits = None

TYPE = os.environ.get("TYPE", "int")
MODEL = os.environ.get("MODEL", "gpu")  # gpu, or cpu: the CPU model, on one core a thread
LIMIT = int(os.environ.get("GRADE_TIMEOUT") or (120 if MODEL == "gpu" else 600))
NCU_LIMIT = max(LIMIT, 300)  # Nsight Compute replays each kernel once per pass of counters
MAKE = shlex.split(os.environ.get("MAKE", "make"))
BIG = (1 << 24, None)      # the lessons' n, with the stage's default block
SMALL = (2048, 1024)       # a single-block stage's largest n, and its block
SPEED_N = 1 << 26          # the speed check's n (a single-block stage: 2048)
CHECKS = ("correct", "race-free", "fast enough", "lesson")
TOOLS = ("memcheck", "racecheck", "synccheck")
NCU = next((c for c in (os.environ.get("NCU"), shutil.which("ncu"), "/usr/local/cuda/bin/ncu")
            if c and os.access(c, os.X_OK)), None)
SANDBOX = None
PRINT = threading.Lock()
CRITERION = threading.Lock()  # one Criterion runner at a time where they share /tmp (Sandbox)
PROFILER = threading.Lock()  # one ncu or compute-sanitizer at a time: Sandbox.shared_ports
NO_LOCK = contextlib.nullcontext()


def say(*words):
    with PRINT:
        print(*words, flush=True)


def die(status, sentence):
    print("make grade: " + sentence, file=sys.stderr)
    sys.exit(status)


class Config:
    """tests/grade.ini (or GRADE_CONFIG): each check's points, the speed rule, the rules."""

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


def run(cmd, out, limit, jail=None, env=None):
    """Runs cmd, its output into the file `out`, in a session of its own that is killed whole
    after `limit` seconds; in the sandbox when jail (the one folder it may write) is given; with
    `env` added to the environment. Returns the exit status, or None when it ran out of time."""
    if jail is not None:
        cmd = SANDBOX.wrap(cmd, jail)
    with open(out, "wb") as f:
        with LIVE_LOCK:
            p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 start_new_session=True, cwd=ROOT,
                                 env=dict(os.environ, **(env or {})))
            LIVE.add(p.pid)
        try:
            return p.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            return None
        finally:
            with LIVE_LOCK:
                LIVE.discard(p.pid)


# Each program runs in a session of its own (its limit kills the whole session), which a signal
# to the grader's own process group does not reach: the grader ends them itself when it is
# stopped, or they would run on beside the next grade (a stopped run's Nsight Compute kept a GPU).
LIVE, LIVE_LOCK = set(), threading.Lock()


def stopped(signum, frame):
    with LIVE_LOCK:
        for pid in LIVE:
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
    os._exit(128 + signum)


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
    """text cut to at most `most` characters at a word, with an ellipsis where it was cut."""
    return text if len(text) <= most else text[:most].rsplit(" ", 1)[0] + " ..."


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


class Sandbox:
    """unshare(1): a mount namespace in which `readonly` folders are read-only but for one, a
    PID namespace whose processes all die when its first does (no daemon outlives a check), and a
    network namespace with a loopback of its own."""
    # The working folder is entered again after the mounts: a process keeps the folder it started
    # in as it was, so a relative path would still reach the tree through the writable mount.
    # A /tmp and a /dev/shm of its own where no folder it needs is in /tmp: Criterion's runner
    # binds /tmp/criterion_PID.sock and maps /dev/shm/bxf_arena_PID, and in a PID namespace
    # every runner is PID 1 or 2, so that two sandboxes at once fail ("Address already in use",
    # "Protocol error"); Nsight Compute and compute-sanitizer keep their lock and pipe files
    # there too.
    # A network of its own, since every sandbox's processes have the same PIDs: Nsight Compute
    # finds the program it launched by its PID among those listening on ports 49152 and up of
    # the host's loopback, and four sandboxes at once profiled each other's programs (a 4-GPU
    # H200 host, 2026-11-27: "Connected to process 112 (.../gpu0/step04)" in GPU 2's log).
    # The loopback is brought up with SIOCSIFFLAGS: `ip` need not be installed.
    LOOPBACK = ("import fcntl, socket, struct\n"
                "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                "flags = fcntl.ioctl(s, 0x8913, struct.pack('16sh22x', b'lo', 0))\n"
                "up = struct.unpack('16sh', flags[:18])[1] | 1\n"
                "fcntl.ioctl(s, 0x8914, struct.pack('16sh22x', b'lo', up))\n")
    SCRIPT = ('if [ "$1" = net ]; then "$2" -c "$3" || exit 125; fi; shift 3; '
              'if [ "$1" = tmp ]; then mount -t tmpfs -o size=2g tmpfs /tmp && '
              'mount -t tmpfs -o size=2g tmpfs /dev/shm || exit 125; '
              'export TMPDIR=/tmp; fi; shift; '
              'while [ "$1" != -- ]; do mount --bind "$1" "$1" && '
              'mount -o remount,bind,ro "$1" || exit 125; shift; done; shift; '
              'mount --bind "$1" "$1" && mount -o remount,bind,rw "$1" || exit 125; shift; '
              'cd "$PWD" || exit 125; exec "$@"')

    def __init__(self, readonly):
        self.readonly = sorted({os.path.realpath(d) for d in readonly if d and os.path.isdir(d)})
        self.net = True
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
                if p.returncode != 0:  # no network namespace here? Then the host's network
                    self.net = False
                    p = subprocess.run(self.wrap(test, d), capture_output=True, text=True,
                                       cwd=ROOT)
                if p.returncode != 0 or not os.path.exists(os.path.join(d, "ok")):
                    self.why = "unshare did not make the tree read-only (%s)" % (
                        (p.stderr.strip().splitlines() or ["exit status %d" % p.returncode])[0])
            remove(probe)
        self.words = ("each submission ran in a sandbox (unshare: the tree read-only but for its "
                      "own folder, %s, its processes ended with each check)" % (
                          "no network" if self.net else "the host's network")
                      if not self.why else
                      "the submissions ran WITHOUT a sandbox (%s): a program could write files "
                      "this user can write" % self.why)

    def shared_ports(self):
        """Whether sandboxes share the host's loopback while their PIDs repeat: then one Nsight
        Compute at a time, since it finds its program by PID, and one compute-sanitizer, which
        beside others exited 255 with no summary (a 4-GPU H200 host, 2026-11-27; why not known)."""
        return not self.why and not self.net

    def private_tmp(self, writable):
        """Whether a sandbox writing `writable` gets a /tmp of its own: none of its folders is in
        /tmp (Gradescope's check runs in one), and there is a sandbox."""
        return not self.why and not any(
            p == "/tmp" or p.startswith("/tmp/") for p in self.readonly +
            [os.path.realpath(writable), ROOT])

    def wrap(self, cmd, writable):
        if self.why:
            return cmd
        user = ["--map-root-user"] if os.geteuid() != 0 else []
        return (["unshare", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc"] +
                ["--net"] * self.net + user +
                ["sh", "-c", self.SCRIPT, "sandbox", "net" if self.net else "host",
                 sys.executable, self.LOOPBACK,
                 "tmp" if self.private_tmp(writable) else "shared"] + self.readonly +
                ["--", os.path.realpath(writable)] + list(cmd))


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


def make(targets, log, float32=False, **variables):
    """make -k targets with make's `variables`, TYPE=float for float32 (stage 8's replay) or TYPE's:
    whether every target was built."""
    cmd = MAKE + ["-k", "-j4", "--no-print-directory"] + ["%s=%s" % kv for kv in variables.items()]
    return run(cmd + ["TYPE=float"] * (float32 or TYPE == "float") + list(targets), log, 900) == 0


def lesson_stages(stage):
    """The stages whose lessons stage `stage` is graded on: its own, and with [rules] cumulative
    every earlier GPU stage's with a lesson, earliest first."""
    mine = [t.short for t in lessons.STAGES if t.lesson and t.kind == "gpu" and (
        t.short == stage or CONFIG.cumulative and t.short < stage)]
    return mine


class Worker:
    """One GPU (CUDA_VISIBLE_DEVICES=gpu) or, on the CPU model, one slot; its own graded build."""

    def __init__(self, index, gpu, build):
        self.index, self.gpu = index, gpu
        # A temporary folder of its own, outside the sandbox's read-only tree, for what runs where
        # the sandbox has no /tmp of its own (Sandbox.private_tmp): Nsight Compute and
        # compute-sanitizer keep their lock and pipe files in TMPDIR.
        self.tmp = tempfile.mkdtemp(prefix="grade-%s-" % (gpu if gpu is not None else index))
        self.env = dict({"CUDA_VISIBLE_DEVICES": gpu} if gpu is not None else {},
                        TMPDIR=self.tmp)
        self.graded = os.path.join(build, "grade-build", "gpu%s" % gpu if gpu is not None
                                   else "model%d" % index)
        self.name = "GPU %s" % gpu if gpu is not None else "model %d" % index
        self.busy = 0.0
        self.count = 0


# A handout holds no solutions: its make grade (on the CPU model) reads the course's stages'
# counters from this committed table instead (tests/lessons.py model-table), and says so.
TABLE = os.environ.get("GRADE_REFERENCE_COUNTERS")


class Reference:
    """The repository's own programs: built once; each measured once a run (the speed on each GPU,
    the counters once), whichever worker asks first. With TABLE, the counters come from it."""

    def __init__(self, build, logs):
        self.build, self.logs = build, logs
        self.memo = Memo()
        self.table = {}
        if TABLE:
            for r in csv.DictReader(read(TABLE).splitlines()):
                c = {k: float(v) if v not in ("", None) else None for k, v in r.items()
                     if k not in ("stage", "single_block", "block")}
                self.table[r["stage"], int(c["n"])] = (dict(c, stage=r["stage"]),
                                                       r["single_block"] == "1")
            if not self.table:
                die(2, "GRADE_REFERENCE_COUNTERS=%s holds no counters." % TABLE)

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
                TABLE, stage, size[0]))

        def measure():
            prefix = os.path.join(self.logs, "%s.%d.%s" % (stage, size[0], "ncu" if MODEL == "gpu"
                                                           else "counters"))
            folder = self.build if MODEL == "gpu" else os.path.join(self.build, "counters")
            c, why, _ = count(os.path.join(folder, stage), size, prefix, None, worker.env)
            return (dict(c, stage=stage), None) if c else (
                None, "the repository's %s could not be measured: %s" % (stage, why))
        return self.memo.get(("counters", stage, size), measure)


def bench_ms(program, n, prefix, jail=None, env=None):
    """The median of 30 timed runs of `program` (a build/bench_stepNN) at n, in ms, with the
    harness's guarded timing where it has one (`--guard`: a new input each repeat, each repeat's
    sum checked, a clock the program cannot replace): (ms, None), or (None, what the program said
    when it gave no time)."""
    remove(prefix + ".csv")
    guard = ["--guard"] if "--guard" in guard_help(program) else []
    rc = run([program, "--csv", prefix + ".csv", "--reps", "30", "--min-n", str(n), "--max-n",
              str(n)] + guard, prefix + ".log", LIMIT, jail, env)
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
    return None, ("it did not finish in %d s" % LIMIT if rc is None else
                  "exit status %s: %s" % (rc, said[-1][:300] if said else "no output"))


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


def refused(program, n, words):
    """Why a program refused n, in the student's terms: a file that declares one thread block
    (stage_info's single_block, stages 02-04) takes at most 2 x 1024 elements, whatever the stage
    it is graded as (the harness's own sentence names the stage it is built as)."""
    if "single_block=1" in read_program_info(program):
        return ("your file declares one thread block (its STAGE says .single_block = true), so it "
                "takes n <= 2048, and refused n = %d: this stage's lesson sums that many over many "
                "blocks" % n)
    return "it refused n = %d (%s), which the stage's lesson takes" % (n, clip(words, 300))


def count(program, size, prefix, jail=None, env=None):
    """The lesson counters of one reduce() call of `program` at size (n, block): Nsight Compute's
    on a GPU, the model's on the CPU model (a BUILD/counters/stepNN). Returns (counters, None,
    kernel names) or (None, why not, [])."""
    n, block = size
    args = ["--n", str(n)] + (["--block", str(block)] if block else []) + ["--reps", "1"]
    if MODEL != "gpu":
        rc = run([program] + args, prefix + ".log", LIMIT, jail,
                 dict(env or {}, CUDA_MODEL_COUNTERS="1"))
        if rc is None:
            return None, "it did not finish in %d s on the CPU model" % LIMIT, []
        c, why = lessons.model_counters_from(n, rc, read(prefix + ".log"))
        if rc == 2:
            why = refused(program, n, why)
        return c, why, []
    if NCU is None:
        return None, "Nsight Compute (ncu) was not found: it ships with the CUDA toolkit", []
    remove(prefix + ".ncu-rep")
    with PROFILER if SANDBOX and SANDBOX.shared_ports() else NO_LOCK:
        rc = run([NCU, "--profile-from-start", "off", "--clock-control", "none", "--metrics",
                  ",".join(lessons.metrics()), "-o", prefix, "-f", program] + args,
                 prefix + ".log", NCU_LIMIT, jail, env)
    said = read(prefix + ".log").splitlines()
    line = next((l for l in said if l.startswith("stage=")), "")
    words = next((l for l in said if l and not l.startswith("==")), "")
    if any("ERR_NVGPUCTRPERM" in l for l in said):
        return None, ("the GPU's performance counters are restricted to admin users "
                      "(ERR_NVGPUCTRPERM): run as root, or see "
                      "https://developer.nvidia.com/ERR_NVGPUCTRPERM"), []
    if rc is None:
        return None, "it did not finish in %d s under Nsight Compute" % NCU_LIMIT, []
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
        prefix + ".csv", LIMIT, jail, env)
    reports = lessons.table.parse_reports(read(prefix + ".csv"))
    if not reports:
        return None, "Nsight Compute's report holds no kernel", []
    names = [r.get("Kernel Name", ("",))[0] for r in reports]
    return lessons.counters(n, reports), None, names


# ---- One submission ------------------------------------------------------------------------
class Submission:
    """One file graded as one stage. checks[c]: {score: the fraction of the check's points (None:
    not graded here), text: what the student reads, parts: [(part, fraction, words)]}."""
    FIELDS = ("checks", "compiled", "hang", "failed_tests", "caught", "ms", "ref_ms", "seconds",
              "took", "types", "gpu", "gpu_name", "key")

    def __init__(self, name, stage, src, out, several):
        self.name, self.stage, self.src = name, stage, src
        self.label = "%s/%s" % (name, stage) if several else name
        self.folder = os.path.join(out, stage, name) if several else os.path.join(out, name)
        self.checks = {c: dict(score=0.0, text="not run", parts=[]) for c in CHECKS}
        self.compiled, self.hang, self.failed_tests = True, False, []
        self.caught = []  # what rejected it, in the words of the mutants' 'Caught by:'
        self.ms = self.ref_ms = None
        self.seconds, self.took = 0.0, {}  # in all, and each check's (and the build's)
        self.types = "int32" if TYPE == "int" else "float32"
        self.gpu = self.gpu_name = self.key = None
        self.reused = False
        self.replayed = None  # stage 8's float32 replay, run beside the tests on a GPU (replay)

    def check(self, name, score, text, parts=()):
        self.checks[name] = dict(score=score, text=scrub(text), parts=[
            (p, f, scrub(w)) for p, f, w in parts])
        say("%s %s: %s" % (self.label, name, self.checks[name]["text"][:300]))

    def points(self, c):
        s = self.checks[c]["score"]
        return None if s is None else round(CONFIG.points[c] * s, 2)

    def total(self):
        graded = [c for c in CHECKS if self.checks[c]["score"] is not None]
        return (round(sum(self.points(c) for c in graded), 2),
                round(sum(CONFIG.points[c] for c in graded), 2))

    def full(self, c):
        return self.checks[c]["score"] is None or self.checks[c]["score"] >= 1

    def passed(self):
        if not self.compiled:
            return False
        if CONFIG.pct is None:
            return all(self.full(c) for c in CHECKS)
        got, most = self.total()
        return most > 0 and 100 * got / most >= CONFIG.pct

    def grade(self):
        return "PASS" if self.passed() else "FAIL"

    def feedback(self):
        """The first thing to fix, in the student's terms (no grader path), or ''."""
        if not self.compiled:
            return self.checks["correct"]["text"]
        return next(("%s: %s" % (c, self.checks[c]["text"]) for c in CHECKS if not self.full(c)),
                    "")

    def save(self):
        with open(os.path.join(self.folder, "grade.json"), "w") as f:
            json.dump({k: getattr(self, k) for k in self.FIELDS}, f, indent=1)

    def load(self, key):
        """Takes the saved grade of an earlier run when it was made with `key`: whether it did."""
        try:
            with open(os.path.join(self.folder, "grade.json")) as f:
                saved = json.load(f)
        except (OSError, ValueError):
            return False
        if saved.get("key") != key or not all(k in saved for k in self.FIELDS):
            return False
        for k in self.FIELDS:
            setattr(self, k, saved[k])
        self.checks = {c: dict(v, parts=[tuple(p) for p in v["parts"]])
                       for c, v in self.checks.items()}
        self.reused = True
        return True


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


def run_tests(program, sub, tag, worker):
    """Runs a Criterion program in the sandbox, its TAP into sub.folder/TAG.tap: (fraction of
    the tests that passed, text for the student, failed tests, whether it hung)."""
    tap, xml, log = (os.path.join(sub.folder, tag + ext) for ext in (".tap", ".xml", ".log"))
    remove(tap, xml)
    # Four jobs on a GPU (a stage's 16 tests in 3.4 s on an H200, 6.3 s with one), one on the
    # model (a core a slot). Criterion's runner binds /tmp/criterion_PID.sock and its BoxFort
    # maps /dev/shm/bxf_arena_PID: in sandboxes that share them, where every runner has PID 1 or
    # 2, four runners at once died of SIGSEGV or "Protocol error" (a 4-GPU H200 host,
    # 2026-11-27). The sandbox gives each its own /tmp and /dev/shm; without them, one runner at
    # a time.
    jobs = os.environ.get("GRADE_TEST_JOBS") or ("4" if MODEL == "gpu" else "1")
    with (CRITERION if not SANDBOX.why and not SANDBOX.private_tmp(sub.folder) else NO_LOCK):
        rc = run([program, "--tap=" + tap, "--xml=" + xml, "--jobs=" + jobs], log, LIMIT,
                 sub.folder, worker.env)
    lines = read(tap).splitlines()
    total = sum(1 for l in lines if re.match(r"(not )?ok ", l))
    skips = [l.split("# SKIP", 1)[1].strip() for l in lines if re.match(r"ok .*# SKIP", l)]
    failed, said = [], {}
    for i, l in enumerate(lines):
        m = re.match(r"not ok \d* *- *(\S+)", l)
        if m:
            failed.append(m[1])
            words = []
            for follow in lines[i + 1:]:
                if not follow.startswith(" "):
                    break
                if "Assertion failed:" in follow:
                    words.append(follow.split("Assertion failed:", 1)[1].strip())
            if words:
                said.setdefault(m[1], "; ".join(words))
    crashed = [t for t in dict.fromkeys(failed) if t not in said]  # died with no assertion
    # On the CPU model the tests past 2^31 elements skip, saying so: they need a GPU's memory and
    # speed (test_stage.c). Not run, not counted; any other skip fails.
    gpu_only = [k for k in skips if "CPU model does not run" in k] if MODEL != "gpu" else []
    skips = [k for k in skips if k not in gpu_only]
    total -= len(gpu_only)
    passed = total - len(failed) - len(skips)
    note = " (%d more need a GPU: n past 2^31)" % len(gpu_only) if gpu_only else ""
    where = case_line(log)
    if rc is None:
        return 0.0, ("the tests did not finish in %d s: a hang (a barrier some threads never "
                     "reach, or a loop that never ends)%s" % (
                         LIMIT, "; the last case started: " + where if where else "")), [], True
    if not any(l.startswith("1..") for l in lines):
        return 0.0, "the test program ended (%s) without a report%s" % (
            signal_words(rc), "; the last case started: " + where if where else ""), failed, False
    if failed:
        first = ["%s: %s" % (t, said[t]) for t in dict.fromkeys(failed) if t in said][:3]
        if crashed:
            first.insert(0, "the first crash %s (crashed: %s)" % (crash_of(log),
                                                                  ", ".join(crashed)))
        return passed / total, "%d of %d tests passed; failed: %s" % (
            passed, total, " | ".join(first)[:900]), sorted(set(failed)), False
    if skips:
        return passed / total, "%d of %d tests skipped (not allowed when grading): %s" % (
            len(skips), total, skips[0]), failed, False
    if rc != 0:
        return 0.0, "all %d tests passed, but the program exited %s" % (total, rc), failed, False
    return 1.0, "all %d tests passed%s" % (total, note), failed, False


# The four checks: each (graded build, submission, references, worker) -> sub.check(...).
def correct(graded, sub, ref, w):
    score, text, sub.failed_tests, sub.hang = run_tests(
        os.path.join(graded, "test_" + sub.stage), sub, "tests", w)
    huge = set(sub.failed_tests) <= {"stage::n_above_2_to_the_32", "stage::n_above_2_to_the_31"}
    sub.caught += [] if score == 1 else [
        "timeout" if sub.hang else "huge" if huge and sub.failed_tests else "tests"]
    sub.check("correct", score, "%s (%s)" % (text, sub.types))


def sanitize(graded, sub, ref, w):
    """On a GPU: memcheck, racecheck and synccheck (tests/sanitize.sh), the three at once, each
    its own sanitize.sh with its own logs. On the model: its memory (AddressSanitizer), race
    (ThreadSanitizer, three schedules) and barrier checks."""
    if MODEL != "gpu":
        return sanitize_model(graded, sub, w)
    rows, said = {}, {}

    def one(tool):
        env = dict(w.env, SANITIZE_TOOLS=tool, SANITIZE_BROKEN="0", SANITIZE_TIMEOUT="45",
                   SANITIZE_REPORTS_ONLY="1", SANITIZE_LOGS=os.path.join(sub.folder, "sanitize",
                                                                         tool),
                   SANITIZE_PROBE="none")  # grade_all's probe found the GPU
        log = os.path.join(sub.folder, "sanitize.%s.log" % tool)
        with PROFILER if SANDBOX and SANDBOX.shared_ports() else NO_LOCK:
            rc = run(["bash", os.path.join(HERE, "sanitize.sh"), graded, sub.stage], log, 600,
                     sub.folder, env)
        text = read(log)
        row = [r[2:] for r in (l.split(None, 3) for l in text.splitlines()
                               if l.startswith(sub.stage + " ")) if len(r) > 2 and r[1] == tool]
        if rc is None or rc == 2 or not row:
            said[tool] = (text.strip().splitlines() or ["no output"])[-1]
        else:
            rows[tool] = row[0]
    at_once([lambda t=t: one(t) for t in TOOLS])
    if said and not rows:
        return sub.check("race-free", 0.0, "the sanitizer did not run: " + scrub(
            said.get(TOOLS[0]) or next(iter(said.values()))))
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


def model_report(text):
    """The first report of the model's checks in a run's output: (tool, one line naming the
    submitted file's line where the report has one), or (None, '')."""
    lines = text.splitlines()
    kinds = (("memcheck", "ERROR: AddressSanitizer"), ("racecheck", "WARNING: ThreadSanitizer"),
             ("synccheck", "CPU model:"))
    for i, l in enumerate(lines):
        for tool, mark in kinds:
            if mark in l:
                head = l.split(mark, 1)[1].strip(" :") if tool != "synccheck" else l.strip()
                frame = next((re.sub(r"^ *#\d+ 0x[0-9a-f]+ in ", "", f).strip()
                              for f in lines[i + 1:i + 40] if re.search(r"\.cu:\d+", f)),
                             "")
                return tool, clip(quiet(head + (" at " + frame if frame else "")))
    return None, ""


def sanitize_model(graded, sub, w):
    info = read_program_info(os.path.join(graded, sub.stage))
    single = "single_block=1" in info
    fixed = "fixed_block=0" not in info
    found = {t: [] for t in TOOLS}
    for n in ((2047, 33) if single else (100003, 1000)):
        block = ["--block", "32"] if n in (33, 1000) and not fixed else []
        args = ["--n", str(n), "--reps", "1"] + block
        runs = [("memcheck", [os.path.join(graded, sub.stage)] + args, {})] + [
            ("racecheck", [os.path.join(graded, "thread", sub.stage)] + args,
             {"CUDA_MODEL_SEED": str(seed)}) for seed in (1, 2, 3)]
        for tool, cmd, env in runs:
            log = os.path.join(sub.folder, "model-%s-n%d-%s.log" % (
                tool, n, env.get("CUDA_MODEL_SEED", "0")))
            rc = run(cmd, log, LIMIT, sub.folder, dict(w.env, **env))
            kind, words = model_report(read(log))
            if rc is None:
                found["synccheck"].append("n = %d: did not finish in %d s (a barrier some "
                                          "threads never reach?)" % (n, LIMIT))
            elif kind:
                found[kind].append("n = %d: %s" % (n, words))
    parts = [(t, 0.0 if found[t] else 1.0, found[t][0] if found[t] else "clean") for t in TOOLS]
    sub.caught += [t for t in TOOLS if found[t]]
    sanitized(sub, parts)


def read_program_info(program):
    try:
        return subprocess.run([program, "--stage-info"], capture_output=True, text=True,
                              timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


def speed(graded, sub, ref, w):
    if MODEL != "gpu":
        return sub.check("fast enough", None, "not graded here: speed is graded on a GPU (the "
                         "CPU model runs the kernels, but its time says nothing about a GPU's)")
    obj = os.path.join(graded, "obj", "stage_%s.o" % sub.stage)
    try:
        foreign = exploits.foreign_symbols(obj) if exploits and sub.src else []
    except exploits.ToolError as e:
        return sub.check("fast enough", 0.0, "not checked: the symbols of the file could not be "
                         "read (%s)" % e)
    if foreign:
        sub.caught.append("symbols")
        return sub.check("fast enough", 0.0, "your file defines %s, which the C library, the CUDA "
                         "runtime or the harness defines: a stage defines reduce(), STAGE and its "
                         "own functions only, so its time cannot be trusted" % ", ".join(foreign))
    n = speed_n(sub.stage, ref)
    sub.ms, why = bench_ms(os.path.join(graded, "bench_" + sub.stage), n,
                           os.path.join(sub.folder, "bench"), sub.folder, w.env)
    sub.ref_ms, ref_why = ref.bench_ms(sub.stage, n, w)
    if sub.ms is None:
        guard = ": --guard: " in read(os.path.join(sub.folder, "bench.log"))
        sub.caught.append("guard" if guard else "speed")
        return sub.check("fast enough", 0.0, "the timed runs at n = %d gave no time: %s" % (
            n, why))
    if sub.ref_ms is None:
        return sub.check("fast enough", 0.0, "not checked: the repository's stage gave no time "
                         "(%s)" % ref_why)
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
    two stages; stage 8's float32 exact replay. Counted once per size the lessons use."""
    s = sub.stage
    program = os.path.join(graded, s) if MODEL == "gpu" else os.path.join(graded, "counters", s)
    mine = {}

    def measure(size):
        if size not in mine:
            prefix = os.path.join(sub.folder, "lesson.%d" % size[0])
            mine[size] = count(program, size, prefix, sub.folder, w.env)
        return mine[size]
    size, sizes = lesson_sizes(s, ref)
    c, why, names = measure(size)
    if c is None:  # "it ...": the program's own doing (it refused the lesson's n, it failed,
        # it launched nothing), which rejects it; else the tools' (no ncu, counters restricted)
        checked = why.startswith(("it ", "your file ", "Nsight Compute profiled no kernel"))
        sub.caught += ["lesson"] * checked
        return sub.check("lesson", 0.0, why if checked else "not checked: " + why)
    foreign = []
    if names and sub.src:
        try:
            foreign = (exploits.foreign_kernels(read(sub.src), names) if exploits else
                       [k for k in names if not any(re.search(r"\b%s\b" % d, k)
                                                    for d in kernels_defined(sub.src))])
        except exploits.ToolError as e:
            return sub.check("lesson", 0.0, "not checked: the kernels' names could not be read "
                             "(%s)" % e)
    parts = []
    if foreign:
        sub.caught.append("library")
        words = ("reduce() ran kernels that are not compiled from your file (%s)" %
                 ", ".join(foreign[:3])[:300])
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
            return sub.check("lesson", 0.0, "not checked: " + (why_p or why_t))
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
        return sub.check("lesson", 0.0, "not checked: no counter separates the repository's "
                         "stages %s and %s" % (previous(s), s))
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
    score, text, _, _ = run_tests(os.path.join(float_build(graded), stage_of(sub.stage)
                                               .float32_replay), sub, "replay", w)
    sub.replayed = (score, text)
    return sub.replayed


def lesson_sizes(s, ref):
    """(size, [(k, ksize)]): the (n, block) stage s's own counters are taken at (BIG, or SMALL
    for a stage that cannot take BIG's n), and each lesson k it is graded on (lesson_stages) with
    the size it is checked at: stage s's own lesson at s's size (a predecessor that cannot take it
    at its own largest, as Reference.counters does); an earlier one where both its stages run at
    that size, else at SMALL."""
    size = BIG if ref.takes(s, BIG[0]) else SMALL
    return size, [(k, size if k == s or ref.takes(k, size[0]) and ref.takes(previous(k), size[0])
                   else SMALL) for k in lesson_stages(s)]


def speed_n(stage, ref):
    """The n the speed check times stage `stage` at: SPEED_N, or 2048 for a single-block stage."""
    return SPEED_N if ref.takes(stage, SPEED_N) else 2048


def targets_of(stage, graded):
    """What a submission of `stage` is built into: its program and tests, and on a GPU its
    benchmark; on the model its counting build."""
    t = [stage, "test_" + stage] + (["bench_" + stage] if MODEL == "gpu" else
                                    [os.path.join("counters", stage)])
    return [os.path.join(graded, x) for x in t]


def grade(sub, ref, w):
    """All four checks of one submission (sub.src None: the repository's own stage), on worker w."""
    start = time.time()
    shutil.rmtree(sub.folder, ignore_errors=True)
    os.makedirs(sub.folder)
    s = sub.stage
    graded = w.graded if sub.src else ref.build
    float_graded = float_build(graded)
    replay_program = stage_of(s).float32_replay
    sub.gpu, sub.gpu_name = w.gpu, w.name
    say("== %s: %s as %s, on %s" % (sub.label, shown(sub.src or source_of(s)), s, w.name))
    if sub.src:
        remove(*(os.path.join(d, f) for d in (graded, float_graded, os.path.join(graded, "thread"),
                                              os.path.join(graded, "counters")) for f in (
            "obj/stage_%s.o" % s, "obj/depth_%s.o" % s, s, "test_" + s, "bench_" + s) +
            ((replay_program,) if replay_program else ())))
        logs = [os.path.join(sub.folder, f) for f in ("build.log", "build.float.log")]
        # The int32 build and stage 8's float32 replay at once: two builds, two folders
        ok = all(at_once([lambda: make(targets_of(s, graded), logs[0], BUILD=graded,
                                       GRADE_STEP=s, GRADE_SRC=sub.src)] +
                         [lambda: make([os.path.join(float_graded, replay_program)], logs[1], True,
                                       BUILD=float_graded, GRADE_STEP=s, GRADE_SRC=sub.src)] *
                         bool(replay_program)))
        if not ok:
            log = read(logs[0]) + read(logs[1])
            first = list(dict.fromkeys(l for l in log.splitlines() if re.search(
                r"error|undefined reference", l, re.I) and not l.startswith("make")))[:3]
            sub.compiled, sub.caught = False, ["compile"]
            words = "did not compile: " + scrub(" | ".join(first) or log[-300:])
            for c in CHECKS:
                sub.check(c, None if c == "fast enough" and MODEL != "gpu" else 0.0,
                          words if c == "correct" else "did not compile")
            sub.seconds = time.time() - start
            sub.took["build"] = sub.seconds
            return
        sub.took["build"] = time.time() - start
    if replay_program:
        sub.types = "int32 and float32 (the replay)" if TYPE == "int" else "float32"
    # On a GPU the tests, the sanitizers and stage 8's replay (the lesson's untimed part) at once:
    # none is timed nor counted, the GPU has room for them, and a hang's limits then run out side
    # by side; the speed and the counters come after, each alone on the GPU. On the model, one
    # check after another (a core a slot), the replay inside the lesson.
    checks = dict(zip(CHECKS, (correct, sanitize, speed, lesson)), replay=replay)
    phases = ([CHECKS[:2] + ("replay",) * bool(replay_program)] + [(c,) for c in CHECKS[2:]]
              if MODEL == "gpu" else [(c,) for c in CHECKS])

    def timed(name):
        t0 = time.time()
        if sub.hang and name in ("fast enough", "lesson"):
            sub.check(name, 0.0, "not %s: the tests hang" % ("timed" if name == "fast enough"
                                                             else "checked"))
        else:
            checks[name](graded, sub, ref, w)
        sub.took[name] = time.time() - t0
    for phase in phases:
        at_once([lambda c=c: timed(c) for c in phase])
    # The reasons and times in the checks' order, whichever of a phase finished first (class.csv
    # must not vary): the correctness check's reasons first.
    sub.caught.sort(key=lambda c: c not in ("timeout", "huge", "tests"))
    sub.took = {c: sub.took[c] for c in ("build",) + CHECKS if c in sub.took}
    sub.seconds = time.time() - start
    say("%s: %.0f s on %s (%s)" % (sub.label, sub.seconds, w.name,
                                   ", ".join("%s %.0f s" % kv for kv in sub.took.items())))


# ---- Reports -------------------------------------------------------------------------------
def fmt_points(p):
    return "-" if p is None else "%g" % p


def write_reports(out, subs, header, workers, wall):
    """out/report.md, class.csv, timings.csv and junit.xml; each submission's report.md and
    results.json (what the student sees: no path of the grader's machine)."""
    subs = sorted(subs, key=lambda s: (s.stage, s.name))
    lines = ["# Grade report", "", header, "", SANDBOX.words + ".", "",
             "| submission | stage | " + " | ".join(CHECKS) + " | points | grade | feedback |",
             "|---|---|" + "--:|" * len(CHECKS) + "--:|---|---|"]
    for s in subs:
        got, most = s.total()
        cells = [s.name, s.stage] + [fmt_points(s.points(c)) for c in CHECKS] + [
            "%g / %g" % (got, most), "**%s**" % s.grade(), s.feedback()[:300]]
        lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ")
                                       for c in cells) + " |")
    right = sorted(s.seconds for s in subs if s.passed() and s.src and not s.reused)
    lines += ["", "Where they ran (this run; a submission graded before and unchanged was not "
              "graded again):", "", "| worker | submissions | busy (s) |", "|---|--:|--:|"]
    lines += ["| %s | %d | %.0f |" % (w.name, w.count, w.busy) for w in workers]
    lines += ["", "%d submissions, %d graded in this run, in %.0f s on %d %s%s." % (
        len(subs), sum(not s.reused for s in subs), wall, len(workers),
        ("GPU" if MODEL == "gpu" else "model slot") + "s" * (len(workers) != 1),
        "; a right submission took %.0f to %.0f s (%d of them)" % (right[0], right[-1], len(right))
        if right else "")]
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    for s in subs:
        write_student(s, header)
    with open(os.path.join(out, "class.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["submission", "stage", "compiled"] + list(CHECKS) +
                   ["points", "max_points", "grade", "feedback"])
        for s in subs:
            w.writerow([s.name, s.stage, "yes" if s.compiled else "no"] +
                       [fmt_points(s.points(c)) for c in CHECKS] + list(s.total()) +
                       [s.grade(), s.feedback()])
    with open(os.path.join(out, "timings.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["submission", "stage", "worker", "seconds", "build_s"] +
                   ["%s_s" % c.replace(" ", "_") for c in CHECKS] +
                   ["time_ms", "reference_ms", "graded_before"])
        for s in subs:
            w.writerow([s.name, s.stage, s.gpu_name, "%.1f" % s.seconds] +
                       ["%.1f" % s.took.get(c, 0) for c in ("build",) + CHECKS] +
                       [s.ms or "", s.ref_ms or "", "yes" if s.reused else "no"])
    suites = ET.Element("testsuites", name="make grade", tests=str(len(CHECKS) * len(subs)),
                        failures=str(sum(not s.full(c) for s in subs for c in CHECKS)))
    for s in subs:
        suite = ET.SubElement(suites, "testsuite", name=s.label, tests=str(len(CHECKS)),
                              failures=str(sum(not s.full(c) for c in CHECKS)), errors="0",
                              time="%.1f" % s.seconds)
        for c in CHECKS:
            case = ET.SubElement(suite, "testcase", classname="grade.%s.%s" % (s.name, s.stage),
                                 name=c)
            if s.checks[c]["score"] is None:
                ET.SubElement(case, "skipped", message=s.checks[c]["text"][:1000])
            elif not s.full(c):
                ET.SubElement(case, "failure", message=s.checks[c]["text"][:1000])
    ET.ElementTree(suites).write(os.path.join(out, "junit.xml"), encoding="UTF-8",
                                 xml_declaration=True)


def write_student(s, header):
    """s.folder/report.md and results.json (Gradescope's format): the submission's feedback."""
    got, most = s.total()
    where = ("on an NVIDIA GPU" if MODEL == "gpu" else "on the CPU model (no GPU: the speed is "
             "graded on a GPU)")
    lines = ["# %s, graded as stage %d: %s (%g of %g points)" % (
        s.name, int(s.stage[4:]), s.grade(), got, most), "", "Graded %s, %s." % (where, s.types),
        ""]
    for c in CHECKS:
        ch = s.checks[c]
        lines.append("## %s: %s of %g points" % (c, fmt_points(s.points(c)), CONFIG.points[c]))
        lines += ["", ch["text"], ""] + ["- %s: %s" % (p, w) for p, f, w in ch["parts"]] + [""]
    with open(os.path.join(s.folder, "report.md"), "w") as f:
        f.write("\n".join(lines))
    tests = []
    for c in CHECKS:
        ch = s.checks[c]
        t = {"name": c, "score": s.points(c) or 0, "max_score": CONFIG.points[c] if ch["score"]
             is not None else 0, "output": "\n".join([ch["text"]] + [
                 "- %s: %s" % (p, w) for p, f, w in ch["parts"]]), "visibility": "visible"}
        if ch["score"] is not None:
            t["status"] = "passed" if s.full(c) else "failed"
        tests.append(t)
    result = {"score": got, "execution_time": round(s.seconds), "output": "%s, graded as %s %s: "
              "%s, %g of %g points." % (s.name, s.stage, where, s.grade(), got, most),
              "tests": tests, "visibility": "visible"}
    if s.ms:
        result["leaderboard"] = [{"name": "time (ms)", "value": s.ms, "order": "asc"}]
    with open(os.path.join(s.folder, "results.json"), "w") as f:
        json.dump(result, f, indent=1)


def shown(path):
    """A path as the grader's report shows it: relative to the repository when inside it."""
    rel = os.path.relpath(path, ROOT)
    return path if rel.startswith("..") else rel


# ---- The class -----------------------------------------------------------------------------
WORKERS = 1


def gpus():
    """The GPUs to grade on: CUDA_VISIBLE_DEVICES's, else nvidia-smi's; GRADE_GPUS=K: the first
    K of them."""
    seen = os.environ.get("CUDA_VISIBLE_DEVICES")
    if seen is not None:
        found = [g.strip() for g in seen.split(",") if g.strip()]
    else:
        try:
            out = subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],
                                 capture_output=True, text=True, timeout=60).stdout
            found = [l.strip() for l in out.splitlines() if l.strip().isdigit()]
        except (OSError, subprocess.TimeoutExpired):
            found = []
    found = found or ["0"]
    k = int(os.environ.get("GRADE_GPUS") or len(found))
    return found[:max(1, k)]


def fingerprint(stages):
    """What a grade depends on besides the file: the grader, its rules, the tests, the harness,
    the model and the repository's stages graded against, and TYPE and MODEL."""
    h = hashlib.sha256(("%s %s %s" % (TYPE, MODEL, CONFIG.digest)).encode())
    files = sorted(
        f for p in ("tests/*.py", "tests/*.c", "tests/*.h", "tests/*.sh", "common/*",
                    "model/**", "Makefile", "step*/stage.ini") for f in glob.glob(
                        os.path.join(ROOT, p), recursive=True)
        if os.path.isfile(f) and "__pycache__" not in f)
    files += [f for s in stages for k in [s] + [previous(t) for t in lesson_stages(s)] +
              lesson_stages(s) for f in [source_of(k)] if f] + ([TABLE] if TABLE else [])
    for f in sorted(set(files)):
        with open(f, "rb") as fh:
            h.update(f.encode() + b"\0" + fh.read())
    return h.hexdigest()


def measure_references(ref, subs, workers):
    """Measures, before any submission is graded, what the submissions `subs` will be compared
    with: the repository's stage's speed on each GPU (each worker times its own, alone on its
    GPU) and the counters of every stage their lessons name (lesson_sizes), shared out among the
    workers, once a run. Measured inside the first submission's checks, they made a right stage-8
    file take 49 s alone on an H200, 40 of them its lesson, 31 of those the repository's 11
    Nsight Compute runs (2026-11-27): they are the class's cost, not the file's. What this misses
    is still measured on demand (Reference's Memo); with GRADE_REFERENCE_COUNTERS none is."""
    t0 = time.time()
    stages = sorted({sub.stage for sub in subs})
    if not stages:
        return
    jobs = [] if TABLE else list(dict.fromkeys(
        (t, ksize) for s in stages for k, ksize in lesson_sizes(s, ref)[1]
        for t in (previous(k), k, s) if not lessons.runs_no_kernel(t)))
    counted = queue.Queue()
    for j in jobs:
        counted.put(j)

    def work(w):
        if MODEL == "gpu":
            for s in stages:
                ref.bench_ms(s, speed_n(s, ref), w)
        while True:
            try:
                stage, size = counted.get_nowait()
            except queue.Empty:
                return
            ref.counters(stage, size, w)
    at_once([lambda w=w: work(w) for w in workers])
    counters = ("their counters from %s" % shown(TABLE) if TABLE else
                "their counters in %d %s" % (len(jobs), "Nsight Compute runs" if MODEL == "gpu"
                                             else "runs on the CPU model"))
    say("grade: the repository's stages measured in %.0f s: %s%s" % (
        time.time() - t0, "their speed on each GPU, " if MODEL == "gpu" else "", counters))


def grade_all(build, subs, out, what):
    """Builds and measures the references, grades every submission (in parallel, a worker per
    GPU), writes the reports. Returns the submissions."""
    global SANDBOX, WORKERS
    start = time.time()
    stages = sorted({s.stage for s in subs})
    logs = os.path.join(out, "reference")
    os.makedirs(logs, exist_ok=True)
    remove(*(os.path.join(out, f) for f in ("report.md", "class.csv", "timings.csv", "junit.xml")))
    ours = not any(sub.src for sub in subs)  # the repository's stages: their tests are built too
    needed = sorted({k for s in stages for t in lesson_stages(s) + [s] for k in (t, previous(t))
                     if not lessons.runs_no_kernel(k)})
    targets = [os.path.join(build, t) for s in needed for t in
               [s] + (["bench_" + s] if s in stages else [])] if MODEL == "gpu" else []
    if ours:
        targets += [x for s in stages for x in targets_of(s, build)
                    if MODEL == "gpu" or "counters" not in x]
    built, built_float = (os.path.join(logs, f) for f in ("build.log", "build.float.log"))
    # On the model the counting builds share one BUILD: one make builds them all (Makefile).
    counting = [os.path.join(build, "counters", s) for s in needed] if MODEL != "gpu" and \
        not TABLE else []
    if targets and not make(sorted(set(targets)), built) or counting and not make(
            counting, built + ".counters", SANITIZER="counters",
            BUILD=os.path.join(build, "counters")):
        die(2, "the repository's own stages did not build (%s)." % built)
    replays = {s: stage_of(s).float32_replay for s in stages if stage_of(s).float32_replay}
    replay_programs = [os.path.join(float_build(build), t) for t in replays.values()]
    if replay_programs and ours and not make(replay_programs, built_float, True):
        die(2, "the repository's float32 %s did not build (%s)." % (
            " and ".join("stage %d" % int(s[4:]) for s in replays), built_float))
    probe = os.path.join(logs, "probe.log")
    if MODEL == "gpu":
        if run([os.path.join(build, stages[0]), "--n", "1", "--reps", "1"], probe, LIMIT) == 3:
            die(3, "%s: grading runs on a CUDA GPU (or, with MODEL=cpu, on the CPU model); "
                "nothing was graded." % read(probe).strip()[:300])
        workers = [Worker(i, g, build) for i, g in enumerate(gpus())]
    else:
        workers = [Worker(i, None, build) for i in range(int(os.environ.get("GRADE_JOBS", "1")))]
    WORKERS = len(workers)
    SANDBOX = Sandbox([ROOT, out] + [os.path.dirname(sub.src) for sub in subs if sub.src])
    say("grade: %d submissions on %d %s; %s" % (len(subs), len(workers), "GPUs" if MODEL == "gpu"
                                                 else "CPU-model slots", SANDBOX.words))
    ref = Reference(build, logs)
    base = fingerprint(stages)
    todo = queue.Queue()
    for sub in subs:
        h = hashlib.sha256(base.encode())
        with open(sub.src or source_of(sub.stage), "rb") as f:
            h.update(sub.stage.encode() + b"\0" + f.read())
        if os.environ.get("GRADE_FRESH") != "1" and sub.load(h.hexdigest()):
            say("== %s: graded before, unchanged: %s" % (sub.label, sub.grade()))
        else:
            sub.key = h.hexdigest()
            todo.put(sub)

    # On a GPU, each worker's build gets the harness's objects of every stage it may grade first,
    # every worker at once (a core each compile): built on demand, each first submission of a
    # stage waited 8-12 s for them, one GPU idle (a 4-GPU H200 host, 2026-11-27).
    warm = sorted({sub.stage for sub in list(todo.queue) if sub.src})
    if MODEL == "gpu" and warm:
        t0 = time.time()
        at_once([lambda w=w: make([x for st in warm for x in targets_of(st, w.graded)],
                                  os.path.join(logs, "warm.%s.log" % w.gpu), BUILD=w.graded)
                 for w in workers])
        say("grade: each GPU's build of stages %s ready in %.0f s" % (
            ", ".join(st[4:] for st in warm), time.time() - t0))

    measure_references(ref, list(todo.queue), workers)

    def work(w):
        while True:
            try:
                sub = todo.get_nowait()
            except queue.Empty:
                return
            t0 = time.time()
            try:
                grade(sub, ref, w)
                sub.save()
            except Exception as e:  # one submission's trouble must not stop the class
                sub.check("correct", 0.0, "the grader failed on it: %s" % e)
                sub.caught.append("grader")
            w.busy += time.time() - t0
            w.count += 1
    at_once([lambda w=w: work(w) for w in workers])
    for w in workers:
        shutil.rmtree(w.tmp, ignore_errors=True)
    gpu = (re.findall(r'device="([^"]*)"', read(probe)) or ["a CUDA GPU"])[0] if MODEL == "gpu" \
        else "the CPU model (no GPU)"
    got = sum(s.total()[0] for s in subs)
    header = ("%s, %s x %d, %s. Element type: %s. Points (tests/grade.ini%s): %s. **correct**: "
              "the stage's Criterion tests, none skipped, within %d s; **race-free**: %s at two "
              "sizes; **fast enough**: the median time against the repository's stage on the same "
              "GPU, all points to %.1fx, none from %.1fx%s; **lesson**: each counter of the "
              "stage's lesson%s on the stage's side of the midpoint between the repository's "
              "stage NN-1 and stage NN, measured in this run (%s)%s." % (
                  time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), gpu, len(workers), what,
                  "int32" if TYPE == "int" else "float32",
                  "" if CONFIG.path.endswith("tests/grade.ini") else ": " + CONFIG.path,
                  ", ".join("%s %g" % (c, CONFIG.points[c]) for c in CHECKS), LIMIT,
                  "compute-sanitizer memcheck, racecheck and synccheck" if MODEL == "gpu" else
                  "the CPU model's memory, race (three schedules) and barrier checks",
                  CONFIG.limit, CONFIG.zero, "" if MODEL == "gpu" else " (not graded here)",
                  " and the earlier lessons' counters our stage still shows" if CONFIG.cumulative
                  else "", "Nsight Compute" if MODEL == "gpu" else "the model's counters" + (
                      ", the course's from %s" % shown(TABLE) if TABLE else ""),
                  "; a library's kernels in reduce() are %sed" % CONFIG.library.rstrip("e")))
    write_reports(out, subs, header, workers, time.time() - start)
    say("== grade report (%s; class table %s; timings %s; JUnit XML %s)" % tuple(
        os.path.join(out, f) for f in ("report.md", "class.csv", "timings.csv", "junit.xml")))
    say(read(os.path.join(out, "report.md")))
    say("grade: %d of %d submissions passed, %g of %g points" % (
        sum(sub.passed() for sub in subs), len(subs), got, sum(s.total()[1] for s in subs)))
    return subs


def name_of(path):
    """A submission's name: its folder's for <student>/reduce.cu, its own for <student>.cu, the
    repository's for <student>/stepNN_name/reduce.cu (a GitHub Classroom repository)."""
    parts = os.path.abspath(path).split(os.sep)
    if os.path.basename(path).startswith("reduce."):
        return parts[-3] if re.match(r"step\d\d_", parts[-2]) else parts[-2]
    return os.path.splitext(parts[-1])[0]


def submissions_in(folder, stages, out):
    """The class in `folder`, graded as `stages`: DIR/<student>/reduce.cu and DIR/<student>.cu
    (or .c) as the one stage given, and DIR/<student>/stepNN_*/reduce.cu (a GitHub Classroom
    repository, as the handout lays it out) as each stage NN given; sorted by name."""
    found = {}
    several = len(stages) > 1
    paths = [(p, stages[0]) for p in sorted(glob.glob(os.path.join(folder, "*", "reduce.c*")) +
                                             glob.glob(os.path.join(folder, "*.c*")))
             if not several]
    paths += [(p, s) for s in stages for p in sorted(glob.glob(os.path.join(
        folder, "*", s + "_*", "reduce.c*")))]
    for path, stage in paths:
        name = name_of(path)
        if not re.fullmatch(r"[A-Za-z0-9._-]+", name) or name == "reference":
            say("grade: skipping %s: a submission's name is letters, digits, '.', '_', '-'" % path)
        elif (name, stage) in found:
            die(2, "two submissions of %s are named %s: %s and %s." % (
                stage, name, found[name, stage], path))
        else:
            found[name, stage] = os.path.abspath(path)
    if not found:
        die(2, "SUBMISSIONS=%s holds no <student>/reduce.cu, <student>.cu or "
            "<student>/stepNN_name/reduce.cu for %s." % (folder, " ".join(stages)))
    return [Submission(name, stage, path, out, several) for (name, stage), path in found.items()]


# ---- make mutants --------------------------------------------------------------------------
def known(names):
    """Every submission whose fate is known, as {name: (stage, caught by, file or patch)}: each
    stepNN_name/mutants/NAME.patch (one mistake, 'Caught by: WHY'; WHY 'nothing' for a right
    one), each GPU stage's predecessor handed in as it (caught by: lesson), each GPU stage's own
    file (nothing), and tests/class/ (its expected.txt)."""
    found = {}
    gpu = [t for t in lessons.STAGES if t.kind == "gpu"]
    for t in gpu:
        for name, p in t.mutants.items():
            found[name] = (t.short, re.search(r"^Caught by: *(\S+)", read(p), re.M).group(1), p)
        prev = lessons.stages.previous(lessons.STAGES, t)
        if prev.kind == "gpu":
            found["%s_as_%s" % (prev.short, t.short)] = (t.short, "lesson", prev.source)
        found["%s_own" % t.short] = (t.short, "nothing", t.source)
    for line in read(os.path.join(HERE, "class", "expected.txt")).splitlines():
        if line.strip() and not line.startswith("#"):
            student, stage, want = line.split()[:3]
            src = (glob.glob(os.path.join(HERE, "class", student, "reduce.c*")) +
                   glob.glob(os.path.join(HERE, "class", student + ".c*")))[0]
            found["class_" + student] = (stage, want, src)
    for n in names:
        if n not in found:
            die(2, "no mutant %s (stepNN_name/mutants/%s.patch, stepNN_as_stepMM, stepNN_own or "
                "class_STUDENT)." % (n, n))
    return {n: found[n] for n in (names or sorted(found))}


def mutants(build, names):
    """The known submissions (known()) laid out as a GitHub Classroom class
    (BUILD/mutants/class/NAME/stepNN_name/reduce.cu) and graded in one run on every GPU: each
    must be rejected for its own reason, or pass where it says 'nothing'."""
    chosen = known(names)
    folder = os.path.join(build, "mutants")
    classroom = os.path.join(folder, "class")
    shutil.rmtree(classroom, ignore_errors=True)
    build_only, subs, jobs, bad = os.environ.get("MUTANTS_BUILD_ONLY"), [], [], []
    for name, (stage, want, origin) in chosen.items():
        if build_only and (name.endswith("_own") or name.startswith("class_")):
            continue  # a stage's own file, or tests/class/: what CI's builds already compile
        where = os.path.join(classroom, name, stage_of(stage).name)
        os.makedirs(where)
        dest = os.path.join(where, "reduce.cu")
        if not origin.endswith(".patch"):
            shutil.copyfile(origin, dest)
        elif subprocess.run(["bash", os.path.join(ROOT, "tools", "bench", "variant.sh"), origin,
                             dest], cwd=ROOT).returncode:
            die(2, "the mutant %s does not apply." % name)
        if build_only:
            jobs.append((name, stage, want, origin, dest))

    def build_one(slot):
        """Compiles the build-only jobs of one slot, into a BUILD of its own: CI's two cores."""
        for name, stage, want, origin, dest in jobs[slot::2]:
            obj, log = (os.path.join(folder, "build%d" % slot, "obj", "stage_%s.o" % stage),
                        os.path.join(folder, name + ".build.log"))
            remove(obj)
            compiles = make([obj], log, BUILD=os.path.join(folder, "build%d" % slot),
                            GRADE_STEP=stage, GRADE_SRC=dest)
            if compiles != (want != "compile"):
                bad.append("the mutant %s %s (%s)." % (
                    name, "does not compile" if not compiles else "compiles, though it must not",
                    log))
            say("mutant %s: %s as %s, %s" % (name, shown(origin), stage,
                                             "compiles" if compiles else "does not compile"))
    if build_only:
        at_once([lambda k=k: build_one(k) for k in range(2)])
        if bad:
            die(1, " ".join(bad))
        return 0
    stages = sorted({v[0] for v in chosen.values()})
    subs = submissions_in(classroom, stages, folder)
    graded = grade_all(build, subs, folder, "known submissions (make mutants): %d" % len(subs))
    rows, bad = [], 0
    for sub in sorted(graded, key=lambda s: (s.stage, s.name)):
        want, seen = chosen[sub.name][1], sub.caught
        if want == "nothing":
            verdict = "ok" if sub.passed() else "rejected by %s: it must pass" % " ".join(seen)
        else:
            verdict = ("NOT rejected" if sub.passed() else "ok" if want in seen else
                       "rejected, but not by %s" % want)
        bad += verdict != "ok"
        rows.append("| %s | %s | %s | %s | %g / %g | %s |" % (
            sub.name, sub.stage, want, " ".join(dict.fromkeys(seen)) or "nothing: accepted",
            *sub.total(), verdict))
    report = ["| submission | stage | must be caught by | rejected by | points | verdict |",
              "|---|---|---|---|--:|---|"] + rows
    with open(os.path.join(folder, "mutants.md"), "w") as f:
        f.write("\n".join(report) + "\n")
    say("== mutants (%s; each grade in %s/STAGE/NAME/)" % (os.path.join(folder, "mutants.md"),
                                                          folder))
    say("\n".join(report))
    say("mutants: %d of %d as they must be (rejected for their own reason, or accepted where "
        "they say caught by nothing)" % (len(rows) - bad, len(rows)))
    return 1 if bad else 0


def main(argv):
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, stopped)
    p = argparse.ArgumentParser(prog="grade.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("build", metavar="BUILD", help="the build folder (make's BUILD)")
    p.add_argument("stages", metavar="STAGE", nargs="*", help="the stages to grade (stepNN); "
                   "with --mutants, the submissions to grade (default: all)")
    p.add_argument("--mutants", action="store_true",
                   help="make mutants: every known submission graded for its known fate")
    one = p.add_mutually_exclusive_group()
    one.add_argument("--src", metavar="FILE", help="one student's file, graded as the one STAGE "
                     "(make grade SRC=)")
    one.add_argument("--submissions", metavar="DIR", help="a class, graded as the STAGEs: "
                     "DIR/<student>/reduce.cu and DIR/<student>.cu (one STAGE), "
                     "DIR/<student>/stepNN_name/reduce.cu (make grade SUBMISSIONS=)")
    a = p.parse_args(argv[1:])
    if a.mutants:
        return mutants(a.build, a.stages)
    if not a.stages:
        p.error("give a STAGE to grade")
    if a.src is not None and not os.path.isfile(a.src):
        die(2, "SRC=%s is not a file." % a.src)
    if a.submissions is not None and not os.path.isdir(a.submissions):
        die(2, "SUBMISSIONS=%s is not a folder." % a.submissions)
    if a.src and len(a.stages) != 1:
        die(2, "SRC= grades one stage: give STEP=NN too.")
    out = os.path.abspath(os.environ.get("GRADE_OUT") or os.path.join(a.build, "grade"))
    if a.src:
        subs = [Submission(name_of(a.src), a.stages[0], os.path.abspath(a.src), out, False)]
        what = "student file `%s`" % shown(os.path.abspath(a.src))
    elif a.submissions:
        subs = submissions_in(a.submissions, a.stages, out)
        what = "the submissions in `%s`" % shown(os.path.abspath(a.submissions))
    else:
        subs = [Submission(s, s, None, out, False) for s in a.stages]
        what = "the repository's own stages"
    return 0 if all(sub.passed() for sub in grade_all(a.build, subs, out, what)) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
