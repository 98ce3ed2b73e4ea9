#!/usr/bin/env python3
"""classroom.py GRADE_OUT STAGE: one stage's points for GitHub Classroom, as the handout's
workflow (.github/workflows/classroom.yml, made by tools/handout.sh) passes them on.

It reads the results.json that `make grade STEP=NN GRADE_OUT=GRADE_OUT` wrote (tests/grade.py:
Gradescope's format, a test per check with score and max_score) and prints one line for
$GITHUB_OUTPUT, `result=` and the base64 of the JSON that
classroom-resources/autograding-command-grader@v1 gives as its `result` (version 1, status
pass or fail, max_score, and tests, each with name, status, score and message;
https://github.com/classroom-resources/autograding-command-grader), which
classroom-resources/autograding-grading-reporter@v1 decodes, adds up (each test's score, each
runner's max_score) and reports to Classroom
(https://github.com/classroom-resources/autograding-grading-reporter). Unlike the command
grader's all or nothing on an exit status, the points are the grade's partial credit: a test per
graded check; the speed, graded on a GPU only, is left out. Where make grade wrote no
results.json, the result is one failed test with no points, out of the same maximum (the points
of tests/grade.ini, less the speed's).

Exit status: 0, a result printed whatever the grade; 2 bad usage.
"""
import base64
import configparser
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SPEED = "fast enough"  # tests/grade.py's check that only a GPU grades


def most_points():
    """tests/grade.ini's points, less the speed's: what a stage is graded on without a GPU."""
    cp = configparser.ConfigParser()
    cp.read(os.path.join(HERE, "..", "..", "tests", "grade.ini"))
    try:
        return sum(float(v) for k, v in cp["points"].items() if k != SPEED)
    except (KeyError, ValueError):
        return 0.0


def result(out, stage):
    found = sorted(glob.glob(os.path.join(out, "*", "results.json")))
    head = "stage %d (%s)" % (int(stage[4:]), stage)
    try:
        r = json.load(open(found[0]))
        tests = [t for t in r["tests"] if t.get("max_score")]
        score, most = float(r["score"]), sum(float(t["max_score"]) for t in tests)
    except (IndexError, OSError, ValueError, KeyError, TypeError) as e:
        why = "make grade wrote no results.json" if not found else "its results.json: %s" % e
        return {"version": 1, "status": "fail", "max_score": most_points(), "tests": [{
            "name": head, "status": "fail", "score": 0, "line_no": 0, "filename": "",
            "test_code": "make grade STEP=%s" % stage[4:],
            "message": "%s, so no points: the step's log above says why." % why}]}
    speed = [t.get("output", "") for t in r["tests"] if t.get("name") == SPEED]
    return {"version": 1, "status": "pass" if score >= most > 0 else "fail", "max_score": most,
            "tests": [{
                "name": "%s: %s" % (head, t["name"]),
                "status": "pass" if float(t["score"]) >= float(t["max_score"]) else "fail",
                "score": float(t["score"]), "line_no": 0, "filename": "",
                "test_code": "make grade STEP=%s" % stage[4:],
                "message": "%g of %g points. %s%s" % (
                    float(t["score"]), float(t["max_score"]), t.get("output", ""),
                    "\nSpeed: %s" % speed[0] if speed and i == len(tests) - 1 else "")}
                for i, t in enumerate(tests)]}


def main(argv):
    if len(argv) != 3 or not argv[2].startswith("step") or not argv[2][4:].isdigit():
        print(__doc__.split("\n\n")[0] + "\nusage: classroom.py GRADE_OUT stepNN",
              file=sys.stderr)
        return 2
    r = result(argv[1], argv[2])
    print("result=" + base64.b64encode(json.dumps(r).encode()).decode())
    got = sum(t["score"] for t in r["tests"])
    print("classroom.py: %s: %g of %g points" % (argv[2], got, r["max_score"]), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
