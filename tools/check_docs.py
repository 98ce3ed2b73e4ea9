#!/usr/bin/env python3
"""check_docs.py [FILE.md...]: the docs' links and make targets, checked (CI runs it).

Every relative link of each Markdown file (default: README.md, docs/, results/, the stages' and
FLOAT.md, ANSWERS.md) must name a file that exists and, where it names a heading (#anchor) of a
Markdown file, a heading GitHub makes that anchor of. Every `make TARGET` a file quotes (in code)
must be a target of the Makefile. Prints one line per fault, then a summary; exit status 1 when
there is a fault.
"""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation but - and _ dropped, spaces to -."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path):
    out, fence = set(), False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fence = not fence
        elif not fence and re.match(r"#{1,6} ", line):
            out.add(slug(line.lstrip("#")))
    return out


def targets():
    """The Makefile's targets, as make -p prints its database."""
    out = subprocess.run(["make", "-pRrq", "-f", "Makefile", ":"], capture_output=True, text=True,
                         cwd=ROOT, env=dict(os.environ, MODEL="cpu")).stdout
    return {m.group(1) for m in re.finditer(r"^([A-Za-z][\w.-]*):", out, re.M)}


def main(files):
    files = files or (["README.md", "FLOAT.md", "ANSWERS.md"] + sorted(
        glob.glob("docs/*.md") + glob.glob("results/README.md") + glob.glob("step*/README.md")))
    known, faults = targets(), []
    for f in files:
        text = open(os.path.join(ROOT, f), encoding="utf-8").read()
        prose = re.sub(r"```.*?```", "", text, flags=re.S)
        for m in re.finditer(r"\]\(([^)\s]+)\)", prose):
            link = m.group(1)
            if re.match(r"[a-z]+:", link):
                continue
            path, _, frag = link.partition("#")
            target = os.path.normpath(os.path.join(ROOT, os.path.dirname(f), path)) if path \
                else os.path.join(ROOT, f)
            if not os.path.exists(target):
                faults.append("%s: %s: no such file" % (f, link))
            elif frag and target.endswith(".md") and frag not in anchors(target):
                faults.append("%s: %s: no heading #%s there" % (f, link, frag))
        code = " ".join(re.findall(r"`[^`\n]+`", text) + re.findall(r"```.*?```", text, re.S))
        for m in re.finditer(r"\bmake (?:-C \S+ )?(?:[A-Z_]+=\S+ )*([a-z][\w./-]*)", code):
            if "/" not in m.group(1) and m.group(1) not in known:  # build/...: a file's rule
                faults.append("%s: `make %s`: no such target in the Makefile" % (f, m.group(1)))
    for fault in faults:
        print(fault)
    print("check_docs: %d files, %d faults" % (len(files), len(faults)))
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
