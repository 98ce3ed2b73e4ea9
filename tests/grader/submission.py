"""One submission: a file graded as one stage, its four checks' scores, the gates between them,
its points and its grade; and where a class's submissions are found."""
import glob
import hashlib
import json
import os
import re
import subprocess
import threading
import time

from grader.common import (CHECKS, CONFIG, GRADED, HERE, ROOT, SUBMISSION_LIMIT, TYPE, clip, die,
                           read, say, scrub)

# What a check that is not run (a gate closed, the time ran out) says, by what stopped it.
GATES = {"correct": "the sums must be right first (correct gates the other checks)",
         "race-free": "the kernel must be race-free first (race-free gates the speed and the "
                      "lesson)"}


class Submission:
    """One file graded as one stage. checks[c]: {score: the fraction of the check's points (None:
    not graded here), text: what the student reads, parts: [(part, fraction, words)]}.
    Its checks stop at its deadline (SUBMISSION_LIMIT after it starts) and at the first program
    that runs out of time (hang). `fault`: why the grader, not the file, failed: then the
    submission is not graded and its grade is not kept."""
    FIELDS = ("checks", "compiled", "hang", "failed_tests", "caught", "ms", "ref_ms", "seconds",
              "took", "types", "gpu", "gpu_name", "key")

    def __init__(self, name, stage, src, out, several):
        self.name, self.stage, self.src = name, stage, src
        self.label = "%s/%s" % (name, stage) if several else name
        self.folder = os.path.join(out, stage, name) if several else os.path.join(out, name)
        self.checks = {c: dict(score=0.0, text="not run", parts=[]) if c in GRADED else dict(
            score=None, text="not graded here: the speed is graded on a GPU (the CPU model runs "
            "the kernels, but its time says nothing about a GPU's)", parts=[]) for c in CHECKS}
        self.compiled, self.hang, self.failed_tests = True, None, []
        self.caught = []  # what rejected it, in the words of the mutants' 'Caught by:'
        self.ms = self.ref_ms = None
        self.seconds, self.took = 0.0, {}  # in all, and each check's (and the build's)
        self.types = "int32" if TYPE == "int" else "float32"
        self.gpu = self.gpu_name = self.key = None
        self.reused = False
        self.fault = None
        self.replayed = None  # stage 8's float32 replay, run beside the tests on a GPU
        self.stop, self.deadline, self.lock = threading.Event(), float("inf"), threading.Lock()

    def start(self):
        self.deadline = time.time() + SUBMISSION_LIMIT

    def ran_out(self, deadline, limit):
        """A program of this submission was killed for its time (common.run): the first one's
        reason is the submission's `hang`, and every other program of it stops."""
        with self.lock:
            if self.hang is None:
                self.hang = ("the submission's time ran out (%d s for all its checks)" %
                             SUBMISSION_LIMIT if deadline else
                             "a program did not finish in %d s: a hang (a barrier some threads "
                             "never reach, or a loop that never ends)" % limit)
            self.stop.set()

    def check(self, name, score, text, parts=()):
        self.checks[name] = dict(score=score if name in GRADED else None, text=scrub(text),
                                 parts=[(p, f, scrub(w)) for p, f, w in parts])
        say("%s %s: %s" % (self.label, name, clip(self.checks[name]["text"], 300)))

    def skip(self, name, why):
        """Check `name` not run, for `why` (a closed gate, a hang): no points, and it says so."""
        self.check(name, 0.0, "not run: " + why)

    def points(self, c):
        s = self.checks[c]["score"]
        return None if s is None else round(CONFIG.points[c] * s, 2)

    def total(self):
        """(points, most): most is every graded check's points, whatever happened."""
        most = round(sum(CONFIG.points[c] for c in GRADED), 2)
        if self.fault:
            return 0.0, most
        return round(float(sum(self.points(c) or 0 for c in GRADED)), 2), most

    def full(self, c):
        return self.checks[c]["score"] is None or self.checks[c]["score"] >= 1

    def passed(self):
        if not self.compiled or self.fault:
            return False
        if CONFIG.pct is None:
            return all(self.full(c) for c in CHECKS)
        got, most = self.total()
        return most > 0 and 100 * got / most >= CONFIG.pct

    def grade(self):
        return "ERROR" if self.fault else "PASS" if self.passed() else "FAIL"

    def feedback(self):
        """The first thing to fix, in the student's terms (no grader path), or ''."""
        if self.fault:
            return "not graded: the grader failed (%s); your instructor grades it again" % (
                self.fault)
        if not self.compiled:
            return self.checks["correct"]["text"]
        return next(("%s: %s" % (c, self.checks[c]["text"]) for c in CHECKS if not self.full(c)),
                    "")

    def save(self):
        """Keeps the grade for a rerun (load), unless the grader failed on it."""
        if not self.fault:
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


# ---- The handout's file, unchanged -----------------------------------------------------------
def normalized(text):
    """A C/C++/CUDA file's code without its comments and white space: what an edit of the code
    changes and a reformatting or a new comment does not."""
    code = re.sub(r'//[^\n]*|/\*.*?\*/|("(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\')',
                  lambda m: m.group(1) or " ", text, flags=re.S)
    return re.sub(r"\s+", "", code)


def digest(text):
    """The sha256 of normalized(text): a handout file's fingerprint (tests/handout.digests)."""
    return hashlib.sha256(normalized(text).encode()).hexdigest()


_HANDOUT = {}


def handout_digest(stage):
    """The fingerprint of stage `stage`'s handout file (make handout: the previous stage's code
    with TODO comments): in a handout, from its tests/handout.digests (written by make handout:
    the students' own files change); in the course, made from the previous stage's code as
    tools/handout.sh makes it. None where neither can be had."""
    if stage not in _HANDOUT:
        listed = os.path.join(HERE, "handout.digests")
        if os.path.exists(listed):
            got = dict(l.split()[:2] for l in read(listed).splitlines()
                       if len(l.split()) >= 2 and not l.startswith("#"))
            _HANDOUT[stage] = got.get(stage)
        else:
            from grader.common import previous, stage_of
            p = subprocess.run(["bash", os.path.join(ROOT, "tools", "handout.sh"), "--stage-code",
                                stage_of(previous(stage)).name], capture_output=True, text=True,
                               cwd=ROOT)
            _HANDOUT[stage] = digest(p.stdout) if p.returncode == 0 and p.stdout.strip() else None
    return _HANDOUT[stage]


def unwritten(sub):
    """Why the submission is not the stage's work at all, or None: it still holds a TODO comment
    of its stage, or its code is the handout's file unchanged (comments and white space aside)."""
    text = read(sub.src)
    nn = sub.stage[4:]
    todo = len(re.findall(r"TODO \(stage 0?%d\)" % int(nn), text))
    if todo:
        return ("your file still holds %d `TODO (stage %s)` comment%s of the handout: the stage is "
                "not written yet (write each, then delete its comment)" % (todo, nn,
                                                                          "s" * (todo > 1)))
    if handout_digest(sub.stage) == digest(text):
        return ("your file's code is the handout's, unchanged (only comments or white space "
                "differ): the stage is not written yet")
    return None


# ---- A class ---------------------------------------------------------------------------------
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
    repository, as the handout lays it out) as each stage NN given; sorted by name. Two
    submissions of one name, or none at all, end the grade with status 2."""
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
