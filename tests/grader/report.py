"""What a grade run writes: the teacher's report.md, class.csv, timings.csv and junit.xml, and
each submission's report.md and results.json (Gradescope's format), which name no path of the
grader's machine."""
import csv
import json
import os
import xml.etree.ElementTree as ET

from grader import common
from grader.common import CHECKS, CONFIG, GRADED, MODEL, clip


def fmt_points(p):
    return "-" if p is None else "%g" % p


def write_reports(out, subs, header, workers, wall):
    """out/report.md, class.csv, timings.csv and junit.xml; each submission's report.md and
    results.json. `wall`: the run's seconds."""
    subs = sorted(subs, key=lambda s: (s.stage, s.name))
    lines = ["# Grade report", "", header, "", common.SANDBOX.words + ".", "",
             "| submission | stage | " + " | ".join(CHECKS) + " | points | grade | feedback |",
             "|---|---|" + "--:|" * len(CHECKS) + "--:|---|---|"]
    for s in subs:
        got, most = s.total()
        cells = [s.name, s.stage] + [fmt_points(s.points(c)) for c in CHECKS] + [
            "%g / %g" % (got, most), "**%s**" % s.grade(), clip(s.feedback(), 300)]
        lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ")
                                       for c in cells) + " |")
    faults = [s for s in subs if s.fault]
    if faults:
        lines += ["", "**The grader failed on %d submission%s** (not graded, not kept: run make "
                  "grade again): %s." % (len(faults), "s" * (len(faults) > 1), "; ".join(
                      "%s: %s" % (s.label, s.fault) for s in faults))]
    right = sorted(s.seconds for s in subs if s.passed() and s.src and not s.reused)
    lines += ["", "Where they ran (this run; a submission graded before and unchanged was not "
              "graded again):", "", "| worker | submissions | busy (s) |", "|---|--:|--:|"]
    lines += ["| %s | %d | %.0f |" % (w.name, w.count, w.busy) for w in workers]
    lines += ["", "%d submissions, %d graded in this run, in %.0f s on %d %s%s." % (
        len(subs), sum(not s.reused for s in subs), wall, len(workers),
        ("GPU" if MODEL == "gpu" else "model worker") + "s" * (len(workers) != 1),
        "; a right submission took %.0f to %.0f s (%d of them)" % (right[0], right[-1], len(right))
        if right else "")]
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    for s in subs:
        write_student(s)
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
                              failures=str(sum(not s.full(c) for c in CHECKS)),
                              errors=str(int(bool(s.fault))), time="%.1f" % s.seconds)
        for c in CHECKS:
            case = ET.SubElement(suite, "testcase", classname="grade.%s.%s" % (s.name, s.stage),
                                 name=c)
            if s.fault:
                ET.SubElement(case, "error", message=clip(s.fault, 1000))
            elif s.checks[c]["score"] is None:
                ET.SubElement(case, "skipped", message=clip(s.checks[c]["text"], 1000))
            elif not s.full(c):
                ET.SubElement(case, "failure", message=clip(s.checks[c]["text"], 1000))
    ET.ElementTree(suites).write(os.path.join(out, "junit.xml"), encoding="UTF-8",
                                 xml_declaration=True)


def write_student(s):
    """s.folder/report.md and results.json (Gradescope's format): the submission's feedback."""
    got, most = s.total()
    where = ("on an NVIDIA GPU" if MODEL == "gpu" else "on the CPU model (no GPU: the speed is "
             "graded on a GPU)")
    lines = ["# %s, graded as stage %d: %s (%g of %g points)" % (
        s.name, int(s.stage[4:]), s.grade(), got, most), "", "Graded %s, %s." % (where, s.types),
        ""]
    if s.fault:
        lines += [s.feedback() + ".", ""]
    for c in CHECKS:
        ch = s.checks[c]
        lines.append("## %s: %s of %g points" % (c, fmt_points(s.points(c)), CONFIG.points[c]))
        lines += ["", ch["text"], ""] + ["- %s: %s" % (p, w) for p, f, w in ch["parts"]] + [""]
    with open(os.path.join(s.folder, "report.md"), "w") as f:
        f.write("\n".join(lines))
    tests = []
    for c in CHECKS:
        ch = s.checks[c]
        t = {"name": c, "score": 0 if s.fault else s.points(c) or 0,
             "max_score": CONFIG.points[c] if c in GRADED else 0,
             "output": "\n".join([ch["text"]] + ["- %s: %s" % (p, w) for p, f, w in ch["parts"]]),
             "visibility": "visible"}
        if c in GRADED:
            t["status"] = "passed" if s.full(c) and not s.fault else "failed"
        tests.append(t)
    result = {"score": got, "execution_time": round(s.seconds), "output": "%s, graded as %s %s: "
              "%s, %g of %g points.%s" % (s.name, s.stage, where, s.grade(), got, most,
                                         " " + s.feedback() + "." if s.fault else ""),
              "tests": tests, "visibility": "visible"}
    if s.ms:
        result["leaderboard"] = [{"name": "time (ms)", "value": s.ms, "order": "asc"}]
    with open(os.path.join(s.folder, "results.json"), "w") as f:
        json.dump(result, f, indent=1)
