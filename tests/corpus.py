#!/usr/bin/env python3
"""corpus.py: the CPU model judged by files whose verdict is known (tests/corpus/, make corpus).

Each tests/corpus/NAME.cu is a whole stage file (it defines STAGE and reduce(), as a student's
reduce.cu does), written in a style CUDA programmers use, and opens with what it must get:
    Stage: 05            the stage whose harness runs it
    Type: int            int (int32, the default) or float (float32)
    Verdict: right       or: wrong
    Model: pass          what the CPU model must say: pass, sum, memory, race, barrier,
                         resources (a launch a GPU refuses, or ptxas's refusal where cucc has
                         nvcc), host (host code touching device memory), unsupported (the model
                         says, in one sentence, that it does not run the file's feature: a right
                         file's only other verdict)
    GPU: pass            what a GPU says: pass (every sum right, compute-sanitizer clean), tests
                         (a wrong sum), memcheck, racecheck, synccheck, launch (a CUDA error at
                         the launch), build (nvcc refuses it), crash (an error at the next
                         synchronisation), latent (nothing a GPU's tools see)
    Source: ...          where the idea comes from (the original is public; the file is ours)
    Why: ...             one sentence
    Needs: nvcc          (optional) the model's verdict needs nvcc's ptxas (registers): without
                         nvcc, the model must say the file passes (it says registers were not
                         checked)

  corpus.py model BUILD [NAME...]  every file (or those) on the CPU model: its AddressSanitizer
                                   and ThreadSanitizer builds, several sizes, blocks, schedules
  corpus.py gpu BUILD [NAME...]    on a GPU: nvcc, the sums, compute-sanitizer's three tools
  corpus.py list                   the files and their verdicts
  corpus.py build BUILD NN FLAVOR SRC DIR   one file built as stage NN into DIR/stepNN, with
                                   BUILD's harness (model/mutants.sh)
make corpus gives the compiler and the harness's objects (CORPUS_* in the environment). Writes
BUILD/corpus/corpus.md; exit status 1 when a file's verdict is not the one it must get.
"""
import concurrent.futures
import os
import re
import shlex
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "corpus")
FIELDS = ("Stage", "Type", "Verdict", "Model", "GPU", "Source", "Why")
MODEL_VERDICTS = {"pass", "sum", "memory", "race", "barrier", "resources", "host", "unsupported",
                  "compile"}
GPU_VERDICTS = {"pass", "tests", "memcheck", "racecheck", "synccheck", "launch", "build", "crash",
                "latent"}


def header(path):
    """The file's fields (FIELDS), from its opening comment."""
    text = open(path, encoding="utf-8").read()
    head = text.split("*/", 1)[0]
    fields = {}
    for key in FIELDS:
        m = re.search(rf"^\s*\*?\s*{key}:\s*(.+?)\s*$", head, re.M)
        if m:
            fields[key] = m.group(1)
    missing = [k for k in FIELDS if k not in fields]
    if missing:
        raise SystemExit(f"corpus: {path}: its opening comment lacks {', '.join(missing)}")
    m = re.search(r"^\s*\*?\s*Needs:\s*(\S+)", head, re.M)
    fields["Needs"] = m.group(1) if m else ""
    fields["Type"] = fields["Type"].split()[0]
    fields["Model"] = fields["Model"].split()[0]
    fields["GPU"] = fields["GPU"].split()[0]
    if fields["Model"] not in MODEL_VERDICTS or fields["GPU"] not in GPU_VERDICTS:
        raise SystemExit(f"corpus: {path}: Model must be one of {sorted(MODEL_VERDICTS)} and GPU "
                         f"one of {sorted(GPU_VERDICTS)}")
    if fields["Verdict"] not in ("right", "wrong"):
        raise SystemExit(f"corpus: {path}: Verdict must be right or wrong")
    return fields


def files(names):
    every = sorted(f[:-3] for f in os.listdir(CORPUS) if f.endswith(".cu"))
    for n in names:
        if n not in every:
            raise SystemExit(f"corpus: no tests/corpus/{n}.cu")
    return [(n, header(os.path.join(CORPUS, n + ".cu"))) for n in (names or every)]


def run(cmd, env=None, timeout=120):
    """(exit status, stdout + stderr) of a command; 124 when it ran past `timeout` seconds."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                           env=dict(os.environ, **(env or {})), errors="replace")
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(errors="replace")
        return 124, out + f"\n(killed after {timeout} s)"


def sizes(info, gpu):
    """(n, block) pairs for a stage: each block size the harness takes, a partial last block."""
    if "single_block=1" in info:
        return [(2047, 1024), (33, 32), (127, 64), (1000, 512)]
    fixed = re.search(r"fixed_block=(\d+)", info)
    if fixed and fixed.group(1) != "0":
        b = int(fixed.group(1))
        return [(100003, b), (1000, b), (4099, b)] + ([((1 << 24) + 3, b)] if gpu else [])
    out = [(100003, 256), (1000, 32), (4099, 64), (70001, 512), (2049, 1024)]
    return out + ([((1 << 24) + 3, 256)] if gpu else [])


def race_sizes(info):
    if "single_block=1" in info:
        return [(2047, 1024), (33, 32)]
    fixed = re.search(r"fixed_block=(\d+)", info)
    b = int(fixed.group(1)) if fixed and fixed.group(1) != "0" else None
    return [(16387, b or 256), (1000, b or 32)]  # 64 and 32 blocks: races between blocks too


# ---- what a run's output says --------------------------------------------------------------------
def model_class(status, out):
    """The model's verdict of one run, or None when it passed."""
    if "touched device memory" in out:
        return "host"
    if "refuses the launch" in out or "static __shared__ memory" in out:
        return "resources"
    if "AddressSanitizer" in out:
        return "memory"
    if "ThreadSanitizer: data race" in out:
        return "race"
    if re.search(r"CPU model: .*(cannot go on|calls __|whose mask|reads lane)", out):
        return "barrier"
    if "result=MISMATCH" in out:
        return "sum"
    if status != 0 or "result=ok" not in out:
        return "crash"
    return None


def first_message(out):
    """What a student reads first: the sanitizer's summary (its source line) and the model's own
    line (the thread and the rule), else the harness's or the compiler's first error."""
    found = [m.group(0) for pat in (r"^SUMMARY: .*$", r"^CPU model: .*$")
             for m in [re.search(pat, out, re.M)] if m]
    if found:
        return " / ".join(found)
    for pat in (r"^stage=.*result=MISMATCH.*$", r"^CUDA error: .*$", r"^.*error.*$"):
        m = re.search(pat, out, re.M)
        if m:
            return m.group(0)
    return out.strip().splitlines()[-1] if out.strip() else ""


class Runner:
    def __init__(self, mode, build):
        self.mode = mode
        self.build = os.path.abspath(build)
        self.out = os.path.join(self.build, "corpus")
        os.makedirs(self.out, exist_ok=True)
        env = os.environ
        self.nvcc = shlex.split(env.get("CORPUS_NVCC", "nvcc"))
        self.flags = shlex.split(env.get("CORPUS_FLAGS", ""))
        self.float_flags = shlex.split(env.get("CORPUS_FLOAT_FLAGS", "-DREDUCE_FLOAT"))
        self.arch = shlex.split(env.get("CORPUS_ARCH", ""))
        # per flavor (address, thread on the model; gpu): the folder of the harness's objects
        self.harness = shlex.split(env.get("CORPUS_HARNESS", ""))

    def objects(self, build, stage):
        """The harness's objects of a build (BUILD/obj/...), the stage's main first."""
        obj = os.path.join(build, "obj")
        return [os.path.join(obj, f"main_{stage}.o")] + [os.path.join(obj, os.path.basename(h))
                                                         for h in self.harness]

    def program(self, name, f, flavor, src=None, d=None):
        """Builds NAME (or the file src) as its stage in `flavor` (address, thread, gpu) into the
        folder d (BUILD/corpus/NAME/FLAVOR): its stage.o, linked with the harness's objects of
        BUILD into the program d/stepNN. (program, log) or (None, log)."""
        stage = "step" + f["Stage"]
        base = self.build if f["Type"] == "int" else os.path.join(self.build, "float")
        if flavor == "thread":
            base = os.path.join(base, "thread")
        d = d or os.path.join(self.out, name, flavor)
        os.makedirs(d, exist_ok=True)
        src = src or os.path.relpath(os.path.join(CORPUS, name + ".cu"), ROOT)
        obj, prog = os.path.join(d, "stage.o"), os.path.join(d, stage)
        env = {"CUCC_SANITIZE": flavor} if self.mode == "model" else {}
        flags = self.flags + (self.float_flags if f["Type"] == "float" else [])
        status, log = run(self.nvcc + flags + ["-c", src, "-o", obj], env, timeout=300)
        if status != 0:
            return None, log
        status, more = run(self.nvcc + self.arch + [obj] + self.objects(base, stage) +
                           ["-o", prog], env, timeout=300)
        return (prog if status == 0 else None), log + more

    def judge_model(self, name, f):
        """The model's verdict: the first check that caught the file, or, for a wrong file, the
        one it must get where that caught it too (a race may first show as a wrong sum, as it
        does to a GPU's tests, before ThreadSanitizer names it)."""
        want = expected("model", f) if f["Verdict"] == "wrong" else None
        want = None if want == "pass" else want
        runs, found = 0, []
        prog, log = self.program(name, f, "address")
        if prog is None:
            v = ("unsupported" if "the CPU model does not run" in log else
                 "resources" if "nvcc refuses" in log and "ptxas" in log else "compile")
            return v, first_message(log), 0
        info = run([prog, "--stage-info"])[1]
        runs_of = [(prog, n, block, None) for n, block in sizes(info, False)]
        tprog = None
        for n, block in race_sizes(info):
            for seed in (1, 2, 3):
                runs_of.append(("thread", n, block, seed))
        for p, n, block, seed in runs_of:
            if p == "thread":
                if tprog is None:
                    tprog, log = self.program(name, f, "thread")
                    if tprog is None:
                        return "compile", first_message(log), runs
                p = tprog
            env = {"CUDA_MODEL_SEED": str(seed)} if seed else {}
            status, out = run([p, "--n", str(n), "--block", str(block), "--reps", "1"], env)
            runs += 1
            v = model_class(status, out)
            if v:
                found.append((v, first_message(out) + (f" (CUDA_MODEL_SEED={seed})" if seed else "")))
                if want is None or v == want:
                    break
        if not found:
            return "pass", "", runs
        return next((x for x in found if x[0] == want), found[0]) + (runs,)

    def judge_gpu(self, name, f):
        prog, log = self.program(name, f, "gpu")
        if prog is None:
            return "build", first_message(log), 0
        info = run([prog, "--stage-info"])[1]
        runs = 0
        for n, block in sizes(info, True):
            status, out = run([prog, "--n", str(n), "--block", str(block), "--reps", "1"])
            runs += 1
            if "result=MISMATCH" in out:
                return "tests", first_message(out), runs
            if status != 0:
                return ("launch" if re.search(r"failed at .*:\d+: cuda", out) and
                        "cudaGetLastError" in out else "crash"), first_message(out), runs
        sanitizer = os.environ.get("COMPUTE_SANITIZER", "compute-sanitizer")
        n, block = race_sizes(info)[1]
        for tool in ("memcheck", "racecheck", "synccheck"):
            status, out = run([sanitizer, "--tool", tool, "--error-exitcode", "9", prog, "--n",
                               str(n), "--block", str(block), "--reps", "1"], timeout=300)
            runs += 1
            if status != 0:
                return tool, first_message(out), runs
        # nothing a GPU's tools see: right, or wrong only by CUDA's rules
        return ("latent" if f["Verdict"] == "wrong" else "pass"), "", runs

    def judge(self, item):
        name, f = item
        start = time.monotonic()
        v, msg, runs = (self.judge_model if self.mode == "model" else self.judge_gpu)(name, f)
        return name, f, v, msg, runs, time.monotonic() - start


def has_nvcc():
    """Whether model/cucc finds nvcc (model/resources.py's search)."""
    sys.path.insert(0, os.path.join(ROOT, "model"))
    import resources
    return resources.find_nvcc() is not None


def expected(mode, f):
    if mode == "model" and f["Needs"] == "nvcc" and not has_nvcc():
        return "pass"  # registers are not checked without nvcc (model/resources.py says so)
    return f["Model"] if mode == "model" else f["GPU"]


def main(argv):
    if not argv or argv[0] not in ("model", "gpu", "list", "build"):
        print(__doc__, file=sys.stderr)
        return 2
    mode = argv[0]
    if mode == "build":  # build BUILD NN FLAVOR SRC DIR: one file as stage NN (model/mutants.sh)
        build, stage, flavor, src, d = argv[1:6]
        f = {"Stage": stage, "Type": "int"}
        prog, log = Runner("gpu" if flavor == "gpu" else "model", build).program(
            os.path.basename(src), f, flavor, os.path.abspath(src), d)
        print(log, end="")
        return 0 if prog else 1
    if mode == "list":
        for name, f in files(argv[1:]):
            print(f"{name:36} stage {f['Stage']} {f['Verdict']:5} model={f['Model']:11} "
                  f"gpu={f['GPU']}")
        return 0
    build, names = argv[1], argv[2:]
    todo = files(names)
    r = Runner(mode, build)
    jobs = int(os.environ.get("CORPUS_JOBS", "2"))
    rows, bad = [], 0
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for name, f, v, msg, runs, secs in pool.map(r.judge, todo):
            want = expected(mode, f)
            # latent on a GPU: wrong by CUDA's rules, what a GPU's tools see varies from run to
            # run (a race between two streams, say): nothing, or a catch
            ok = v == want or (mode == "gpu" and want == "latent" and v not in ("pass", "build"))
            bad += not ok
            verdict = "as it must be" if ok else f"NOT AS IT MUST BE (must be {want})"
            print(f"corpus: {name}: {v}, {verdict} ({runs} runs, {secs:.1f} s)"
                  + (f": {msg[:300]}" if msg else ""), flush=True)
            rows.append((name, f, v, verdict, msg))
    table = ["| file | stage | right or wrong | must get | got | verdict | first message |",
             "|---|---|---|---|---|---|---|"]
    for name, f, v, verdict, msg in rows:
        table.append(f"| {name} | {f['Stage']} | {f['Verdict']} | {expected(mode, f)} | {v} | "
                     f"{verdict} | {msg[:200].replace('|', '/')} |")
    right = sum(1 for _, f, *_ in rows if f["Verdict"] == "right")
    summary = (f"corpus ({mode}): {len(rows) - bad} of {len(rows)} as they must be "
               f"({right} right files, {len(rows) - right} wrong)")
    with open(os.path.join(r.out, "corpus.md"), "w") as out:
        out.write("\n".join(table) + "\n\n" + summary + "\n")
    print(summary)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
