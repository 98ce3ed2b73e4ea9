#!/usr/bin/env python3
"""grade.py: `make grade` and `make mutants`, on every GPU of the machine or on the CPU model.

Grades each submission (a file, as a stage) on four checks, weighed as tests/grade.ini says:
correct (the stage's tests), race-free (the sanitizers), fast enough (on a GPU only) and lesson
(the counters). Correct gates the others and race-free gates speed and lesson; a file that is
still the handout's gets nothing. Each check runs sandboxed (bubblewrap), each submission within
GRADE_SUBMISSION_TIMEOUT seconds (600; on the model 300) and each program within GRADE_TIMEOUT
(120; on the model 90), the first hang ending its checks. docs/grading.md says why, and what
each environment variable does. The parts: tests/grader/.
Writes GRADE_OUT (BUILD/grade): report.md, class.csv, timings.csv, junit.xml and each
submission's report.md and results.json (Gradescope's format).
Exit status: 0 every submission passed, 1 some did not, 2 bad usage or the repository's own
programs do not build, 3 no CUDA device (MODEL=gpu), 4 the grader failed on a submission.
"""
import argparse
import fcntl
import glob
import hashlib
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from grader import common  # noqa: E402
from grader.checks import Reference, grade, lesson_sizes, speed_n, targets_of  # noqa: E402
from grader.common import (CHECKS, CONFIG, LIMIT, MODEL, ROOT, SUBMISSION_LIMIT, TYPE,  # noqa: E402
                           at_once, die, float_build, lesson_stages, lessons, make, previous,
                           read, remove, say, shown, source_of, stage_of)
from grader.report import write_reports  # noqa: E402
from grader.sandbox import Sandbox  # noqa: E402
from grader.submission import Submission, digest, name_of, submissions_in  # noqa: E402


class Worker:
    """One GPU (CUDA_VISIBLE_DEVICES=gpu) or, on the CPU model, one slot; its own graded build.
    Its TMPDIR is a folder of its own, for what runs without the sandbox."""

    def __init__(self, index, gpu, build, out):
        self.index, self.gpu = index, gpu
        self.tmp = tempfile.mkdtemp(prefix="grade-%s-" % (gpu if gpu is not None else index))
        self.env = dict({"CUDA_VISIBLE_DEVICES": gpu} if gpu is not None else {},
                        TMPDIR=self.tmp, TEST_RACES_IN_FLOAT="1")
        # A folder of this run's own (its GRADE_OUT's): two graders at once build apart.
        run = hashlib.sha256(os.path.realpath(out).encode()).hexdigest()[:8]
        # Four folders deep at most, as BUILD/float/: the test programs find a vendored Criterion
        # up to four folders above them (the Makefile's rpath).
        self.graded = os.path.join(build, "grade-build", "%s-%s" % (
            run, "gpu%s" % gpu if gpu is not None else "model%d" % index))
        self.name = "GPU %s" % gpu if gpu is not None else "model %d" % index
        self.busy = 0.0
        self.count = 0


# A handout (no solutions) and the Gradescope bundle read the course's stages' counters from
# this committed table (tests/lessons.py model-table) instead of measuring them, and say so.
TABLE = os.environ.get("GRADE_REFERENCE_COUNTERS")


# ---- The class -----------------------------------------------------------------------------
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
        f for p in ("tests/*.py", "tests/grader/*.py", "tests/*.c", "tests/*.h", "tests/*.sh",
                    "tests/handout.digests", "tools/handout.sh", "common/*",
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
    workers, once a run: they are the class's cost, not the first file's. What this misses is
    still measured on demand (Reference's Memo); with GRADE_REFERENCE_COUNTERS none is."""
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
    # Two graders at once build the repository's programs one after the other, in one BUILD.
    os.makedirs(build, exist_ok=True)
    lock = open(os.path.join(build, ".grade.lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
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
    lock.close()
    probe = os.path.join(logs, "probe.log")
    if MODEL == "gpu":
        if common.run([os.path.join(build, stages[0]), "--n", "1", "--reps", "1"], probe,
                      LIMIT) == 3:
            die(3, "%s: grading runs on a CUDA GPU (or, with MODEL=cpu, on the CPU model); "
                "nothing was graded." % read(probe).strip()[:300])
        workers = [Worker(i, g, build, out) for i, g in enumerate(gpus())]
    else:
        workers = [Worker(i, None, build, out)
                   for i in range(int(os.environ.get("GRADE_JOBS", "1")))]
    common.SANDBOX = Sandbox([ROOT, out, build])
    say("grade: %d submissions on %d %s; %s" % (len(subs), len(workers), "GPUs" if MODEL == "gpu"
                                                 else "CPU-model workers", common.SANDBOX.words))
    ref = Reference(build, logs, TABLE)
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
    # every worker at once (a core each compile), not each first submission of a stage, its GPU
    # idle meanwhile.
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
                sub.fault = "%s: %s" % (type(e).__name__, e)
            if sub.fault:
                sub.caught.append("grader")
                say("%s: the grader failed: %s (not graded, not kept)" % (sub.label, sub.fault))
            w.busy += time.time() - t0
            w.count += 1
    at_once([lambda w=w: work(w) for w in workers])
    for w in workers:
        shutil.rmtree(w.tmp, ignore_errors=True)
    gpu = (re.findall(r'device="([^"]*)"', read(probe)) or ["a CUDA GPU"])[0] if MODEL == "gpu" \
        else "the CPU model (no GPU)"
    got = sum(s.total()[0] for s in subs)
    header = ("%s, %s x %d, %s. Element type: %s. Points (tests/grade.ini%s): %s. A file that "
              "still holds its stage's TODO, or is the handout's code unchanged, gets none. "
              "**correct**: the stage's Criterion tests, none skipped, each program within %d s "
              "(it gates the rest); **race-free**: %s at two sizes (it gates speed and lesson); "
              "each submission within %d s, the first hang ending its checks; **fast enough**: the median time against the repository's stage on the same "
              "GPU, all points to %.1fx, none from %.1fx%s; **lesson**: each counter of the "
              "stage's lesson%s on the stage's side of the midpoint between the repository's "
              "stage NN-1 and stage NN, measured in this run (%s)%s." % (
                  time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), gpu, len(workers), what,
                  "int32" if TYPE == "int" else "float32",
                  "" if CONFIG.path.endswith("tests/grade.ini") else ": " + CONFIG.path,
                  ", ".join("%s %g" % (c, CONFIG.points[c]) for c in CHECKS), LIMIT,
                  "compute-sanitizer memcheck, racecheck and synccheck" if MODEL == "gpu" else
                  "the CPU model's memory, race (three schedules) and barrier checks",
                  SUBMISSION_LIMIT,
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
        if name.endswith("_as_" + stage):
            # The previous stage handed in as this one, with a line of code added: not the
            # handout's file unchanged (which gets nothing before any check), so that the lesson
            # must be what rejects it.
            with open(dest, "w") as f:
                f.write(read(origin) + '\nstatic_assert(sizeof(int) == 4, "handed in as the next '
                        'stage");\n')
        elif not origin.endswith(".patch"):
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
        if sub.fault:
            verdict = "the grader failed: %s" % sub.fault
        elif want == "nothing":
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
        signal.signal(signum, common.stopped)
    p = argparse.ArgumentParser(prog="grade.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("build", metavar="BUILD", nargs="?" if "--digest" in argv else None, help="the build folder (make's BUILD)")
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
    p.add_argument("--digest", metavar="FILE", help="print FILE's code fingerprint (comments and "
                   "white space aside), as tools/handout.sh writes tests/handout.digests")
    a = p.parse_args(argv[1:])
    if a.digest:
        print(digest(read(a.digest)))
        return 0
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
    graded = grade_all(a.build, subs, out, what)
    return 4 if any(s.fault for s in graded) else 0 if all(s.passed() for s in graded) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
