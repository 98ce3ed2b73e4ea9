#!/usr/bin/env python3
"""stages.py: the course's stages, each read from its folder's stage.ini. The one place the stage
list and "the stage NN follows" are worked out: the Makefile, make diff, the handout, the grade,
the mutants, the speed-up table, the counters, the figures, the slides and the tests all ask here.

A stage is a folder stepNN_name/ holding stage.ini. Its [stage] section says what the stage is
(title, follows, kind); the other sections say what each tool needs to know about it (the lesson's
counters, its row in the speed-up table, its figure, ...): stage.ini in step04_smem/ documents
every key. Its variants and mutants are files in the folder: variants/NAME.patch (one change,
built as stepNN_NAME) and mutants/NAME.patch (a known-wrong kernel make mutants must reject), each
a diff of the folder's reduce.cu.

The format is INI, read by configparser: Python's standard library reads it in every Python 3
(TOML's tomllib needs 3.11, and Ubuntu 22.04 has 3.10), and a stage's facts are one level of
key = value, which INI says plainly.

    stages.py list [--kind cpu,gpu,program] [--short]   the stages in order, one a line
    stages.py variants              every stage's variants (stepNN_NAME), in order, one a line
    stages.py previous STAGE        the stage STAGE follows (its folder name); exit 1 where none
    stages.py get STAGE KEY         one fact: name, short, title, follows, kind, source, dir,
                                    first (the variant that is its lesson's first change)
    stages.py make                  the Makefile's variables, on one line (the Makefile evals it)
    stages.py check                 every stage.ini read and checked, with what the tools it names
                                    know: the lesson's counters (tests/lessons.py), the figure's
                                    replay (tools/figures/mapping.py), the mutants' "Caught by:";
                                    exit 2 naming the first fault

STAGE is a folder name (step04_smem), its short name (step04) or its number (04, 4). Exit status:
0 ok, 1 no such fact (previous of the first stage), 2 a stage.ini is wrong or STAGE is no stage.
"""
import configparser
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KINDS = ("cpu", "gpu", "program")  # a C loop (the reference); a kernel behind the harness; its own
SECTIONS = {  # the keys each section may have ([lesson]'s keys are the counters' descriptions)
    "stage": {"title", "follows", "kind"},
    "lesson": None,
    "speedup": {"row", "what", "label", "cub"},
    "figure": {"caption", "replay"},
    "grade": {"float32_replay"},
    "metrics": {"also"},
    "bench": {"flagship"},
    "diff": {"first"},
}


class StageError(Exception):
    """A stage.ini that is wrong, or a name that is no stage: one sentence."""


class Stage:
    """One stage folder and its stage.ini.

    name      folder name, step04_smem;  short: step04;  number: 4;  dir: its absolute path
    kind      cpu, gpu or program;  title: one line;  follows: the folder name of the stage it
              follows (None for the first)
    source    its reduce.c or reduce.cu (None for a program)
    lesson    [(what is counted, numerator, denominator or None)]: make grade's lesson check
    row       its name in make bench's CSV where it has a row in the speed-up table (what, label:
              the table's and the bar's words), or the row that times its lesson (stages 2-4);
              None where it has none
    figure    {caption, replay}: its thread-to-data figure, or None
    variants  {stepNN_NAME: patch};  mutants: {NAME: patch};  tests: [its own test_*.c]
    first     where the stage's lesson is two changes, the variant that makes the first one
              (stepNN_NAME, [diff] first = NAME): make diff STEP=NNa shows the previous stage
              against it, make diff STEP=NN it against the stage; else None
    """

    def __init__(self, folder):
        self.dir, self.name = folder, os.path.basename(folder)
        self.short, self.number = self.name.split("_")[0], int(self.name[4:6])
        ini = configparser.ConfigParser(interpolation=None, inline_comment_prefixes=(";",))
        ini.optionxform = str  # keep the counters' descriptions as written
        path = os.path.join(folder, "stage.ini")
        try:
            with open(path) as f:
                ini.read_file(f)
        except (OSError, configparser.Error) as e:
            raise StageError(f"{path} cannot be read: {e}".replace("\n", " "))
        for section in ini.sections():
            allowed = SECTIONS.get(section, set())
            if section not in SECTIONS or allowed is not None and set(ini[section]) - allowed:
                bad = section if section not in SECTIONS else sorted(set(ini[section]) - allowed)[0]
                raise StageError(f"{path}: '{bad}' is none of stage.ini's sections and keys "
                                 "(tools/stages.py lists them)")
        get = lambda section, key, default=None: ini.get(section, key, fallback=default)
        self.title, self.follows = get("stage", "title"), get("stage", "follows")
        self.kind = get("stage", "kind", "gpu")
        if not self.title:
            raise StageError(f"{path} has no title in [stage]")
        if self.kind not in KINDS:
            raise StageError(f"{path}: kind must be one of {', '.join(KINDS)}, not '{self.kind}'")
        sources = glob.glob(os.path.join(folder, "reduce.c*"))
        self.source = sources[0] if sources else None
        want = {"cpu": "reduce.c", "gpu": "reduce.cu"}.get(self.kind)
        if want and (self.source is None or os.path.basename(self.source) != want):
            raise StageError(f"{path}: a {self.kind} stage's code is its {want}, which is missing")
        self.lesson = []
        for what, ratio in (ini["lesson"].items() if ini.has_section("lesson") else []):
            m = re.fullmatch(r"(\w+)(?:\s*/\s*(\w+))?", ratio.strip())
            if not m:
                raise StageError(f"{path}: lesson '{what}' must be COUNTER or COUNTER / COUNTER")
            self.lesson.append((what, m.group(1), m.group(2)))
        self.row = get("speedup", "row", self.name if ini.has_section("speedup") else None)
        self.what, self.label = get("speedup", "what"), get("speedup", "label")
        self.label = self.label and self.label.replace("\\n", "\n")
        self.cub = get("speedup", "cub", "no") == "yes"
        self.figure = dict(ini["figure"]) if ini.has_section("figure") else None
        self.float32_replay = get("grade", "float32_replay")
        self.metrics_also = get("metrics", "also", "").split()
        self.flagship = get("bench", "flagship", "no") == "yes"
        self.variants = {f"{self.short}_{os.path.basename(p)[:-6]}": p
                         for p in sorted(glob.glob(os.path.join(folder, "variants", "*.patch")))}
        self.mutants = {os.path.basename(p)[:-6]: p
                        for p in sorted(glob.glob(os.path.join(folder, "mutants", "*.patch")))}
        self.tests = sorted(glob.glob(os.path.join(folder, "test_*.c")))
        self.first = get("diff", "first") and f"{self.short}_{get('diff', 'first')}"
        if not os.path.isdir(os.path.join(folder, "variants")):
            self.first = None  # make handout's copy: no variants, and no make diff to show them
        elif self.first and self.first not in self.variants:
            raise StageError(f"{path}: [diff] first = {get('diff', 'first')} names no "
                             f"variants/{get('diff', 'first')}.patch of this stage")

    def owns_row(self):
        """Whether the speed-up table has a row of its own for this stage (or its variant)."""
        return self.row is not None and self.what is not None

    def __repr__(self):
        return self.name


def load(root=ROOT):
    """Every stage of the repository at `root`, in order of their numbers, each checked, and
    "follows" checked against the others. Raises StageError."""
    folders = sorted(d for d in glob.glob(os.path.join(root, "step[0-9][0-9]_*"))
                     if os.path.isfile(os.path.join(d, "stage.ini")))
    stages = [Stage(d) for d in folders]
    by = {}
    for s in stages:
        if s.short in by:
            raise StageError(f"two stages are numbered {s.short}: {by[s.short]} and {s.name}")
        by[s.short] = s
    names = {s.name: s for s in stages}
    for s in stages:
        f = s.follows and names.get(s.follows)
        if s.follows and (f is None or f.number >= s.number or f.kind == "program"):
            raise StageError(f"{s.name}/stage.ini: follows = {s.follows} must name a stage "
                             "folder before it that is not a program of its own")
        if not s.follows and s is not stages[0]:
            raise StageError(f"{s.name}/stage.ini says no stage it follows; only the first may")
    if [s.kind for s in stages].count("cpu") != 1:
        raise StageError("exactly one stage must be the CPU reference (kind = cpu)")
    for s in (s for s in stages if s.kind == "gpu"):
        where = f"{s.name}/stage.ini: [speedup]"
        if s.row is None:  # else it would drop out of the speed-up table unseen
            raise StageError(f"{s.name}/stage.ini has no [speedup]: its row in the speed-up table")
        own = s.row == s.name or s.row.startswith(s.short + "_")  # itself, or a variant (which
        # a handout leaves out)
        if not own and s.row not in [t.name for t in stages if t.owns_row()]:
            raise StageError(f"{where} row = {s.row} is neither the stage, one of its variants "
                             "nor a stage with a row of its own")
        if (s.what is None) != (s.label is None) or not own and s.what:
            raise StageError(f"{where}: a row of its own needs what = and label = both; a row "
                             "timed by another stage neither")
    if sum(s.cub for s in stages) > 1:
        raise StageError("only one stage's [speedup] may say cub = yes")
    return stages


def find(stages, key):
    """The stage named key: step04_smem, step04, 04 or 4. Raises StageError."""
    if re.fullmatch(r"\d{1,2}", key):
        key = "step%02d" % int(key)
    for s in stages:
        if key in (s.name, s.short):
            return s
    raise StageError(f"'{key}' is no stage (the stages: {' '.join(s.short for s in stages)})")


def previous(stages, stage):
    """The Stage that `stage` (a Stage or a name) follows, or None for the first."""
    s = stage if isinstance(stage, Stage) else find(stages, stage)
    return s.follows and find(stages, s.follows)


def harness(stages):
    """The stages the C harness runs (the CPU reference and the kernels), in order."""
    return [s for s in stages if s.kind != "program"]


def check(stages):
    """What load() leaves to the tools, checked against them: every kernel stage has a lesson of
    counters tests/lessons.py knows, a figure names a replay of tools/figures/mapping.py and has a
    caption, a mutant says what must catch it. Raises StageError."""
    sys.path[:0] = [os.path.join(ROOT, "tests"), os.path.join(ROOT, "tools", "figures")]
    import lessons  # noqa: E402  (the counters a lesson may use)
    import mapping  # noqa: E402  (the replays a figure may name)
    # guard: bench --guard caught a call; symbols, library: tests/exploits.py's static checks
    catches = ("tests", "memcheck", "racecheck", "synccheck", "timeout", "huge", "speed", "lesson",
               "guard", "symbols", "library", "nothing")
    for s in stages:
        if s.kind == "gpu" and not s.lesson:
            raise StageError(f"{s.name}/stage.ini has no [lesson]: make grade could not tell its "
                             "lesson was done")
        for what, *counters in s.lesson:
            bad = [c for c in counters if c and c not in lessons.COUNTERS]
            if bad:
                raise StageError(f"{s.name}/stage.ini: lesson '{what}' counts '{bad[0]}', none of "
                                 f"tests/lessons.py's counters ({', '.join(lessons.COUNTERS)})")
        if s.figure and (s.figure.get("replay") not in mapping.REPLAYS or
                         not s.figure.get("caption")):
            raise StageError(f"{s.name}/stage.ini: [figure] needs a caption and a replay, one of "
                             f"{', '.join(mapping.REPLAYS)} (tools/figures/mapping.py)")
        for name, p in s.mutants.items():
            with open(p) as f:
                m = re.search(r"^Caught by: *(\S+)", f.read(), re.M)
            if not m or m.group(1) not in catches:
                raise StageError(f"{os.path.relpath(p, ROOT)} needs a line 'Caught by: WHAT', "
                                 f"WHAT one of {', '.join(catches)}")


def make_variables(stages):
    """The Makefile's view, one assignment each: the stage lists, the variants and their patches,
    the stages' own tests, and the few stages a tool singles out."""
    rel = lambda p: os.path.relpath(p, ROOT)
    gpu = [s for s in stages if s.kind == "gpu"]
    rows = [s for s in gpu if s.owns_row()]
    at_scale = [s.row for s in gpu if s.row in {v for t in gpu for v in t.variants}]
    flagship = [s.short for s in gpu if s.flagship]
    out = {
        "STAGES": [s.name for s in harness(stages)],
        "CPU_STAGE": [s.name for s in stages if s.kind == "cpu"],
        "PROGRAMS": [s.name for s in stages if s.kind == "program"],
        "VARIANTS": [v for s in gpu for v in s.variants],
        "AT_SCALE": at_scale,
        # make bench-model: the rows of the speed-up table (their CSV names, short), and the
        # stages whose lesson another row times (one block: n <= 2048)
        "ROW_STAGES": [r.row.split("_")[0] if r.row == r.name else r.row for r in rows],
        "ONE_BLOCK_STAGES": [s.short for s in gpu if s.row and s.row != s.name],
        "FLAGSHIP": flagship[:1],
        "METRICS_ALSO": [v for s in gpu for v in s.metrics_also],
        "STAGE_TESTS": [os.path.basename(t)[:-2] for s in gpu for t in s.tests],
    }
    lines = ["%s := %s" % (k, " ".join(v)) for k, v in out.items()]
    lines += ["patch.%s := %s" % (v, rel(p)) for s in gpu for v, p in s.variants.items()]
    lines += ["test_src.%s := %s" % (os.path.basename(t)[:-2], rel(t)) for s in gpu
              for t in s.tests]
    lines += ["test_stage.%s := %s" % (os.path.basename(t)[:-2], s.short) for s in gpu
              for t in s.tests]
    lines += ["follows.%s := %s" % (s.short, previous(stages, s).short) for s in stages
              if s.follows]
    return "|".join(lines)


def main(argv):
    if not argv or argv[0] not in ("list", "variants", "previous", "get", "make", "check"):
        sys.exit(__doc__)
    try:
        stages = load()
        cmd, args = argv[0], argv[1:]
        if cmd == "list":
            kinds = KINDS
            if "--kind" in args:
                kinds = args[args.index("--kind") + 1].split(",")
            for s in stages:
                if s.kind in kinds:
                    print(s.short if "--short" in args else s.name)
        elif cmd == "variants":
            for s in stages:
                print("\n".join(s.variants), end="\n" if s.variants else "")
        elif cmd == "previous":
            p = previous(stages, args[0])
            if p is None:
                print(f"stages.py: {find(stages, args[0]).name} follows no stage", file=sys.stderr)
                return 1
            print(p.name)
        elif cmd == "get":
            s = find(stages, args[0])
            value = getattr(s, args[1], None) if args[1] in (
                "name", "short", "title", "follows", "kind", "source", "dir", "first") else None
            if value is None:
                print(f"stages.py: {s.name} has no {args[1]}", file=sys.stderr)
                return 1
            print(os.path.relpath(value, ROOT) if args[1] in ("source", "dir") else value)
        elif cmd == "make":
            print(make_variables(stages))
        else:
            check(stages)
            print("stages: " + " ".join(s.short for s in stages) + ": every stage.ini is right")
    except StageError as e:
        print(f"stages.py: {e}.", file=sys.stderr)
        return 2
    except IndexError:
        sys.exit(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
