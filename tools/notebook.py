#!/usr/bin/env python3
"""notebook.py: runs a Jupyter notebook's code cells headless, in order, in an IPython kernel
through nbclient (PyPI: nbclient, nbformat, ipykernel 7.3 or later), so that `!`, `%cd`, `%env`,
`%%writefile` and `%%bash` are IPython's own, as on Colab. It is how colab/reduction.ipynb is
tested off Colab: on a GPU machine or, without a GPU, on the CPU model.

    notebook.py [--skip-clone] [--cwd DIR] [--set NAME=VALUE]... NOTEBOOK.ipynb
    notebook.py --set NAME=VALUE... --write OUT.ipynb NOTEBOOK.ipynb  (the standard library alone)
    notebook.py --self-test

Unlike Colab, a `!` command that exits non-zero fails its cell (IPython's system_raise_on_error),
and the first cell that fails stops the run: it is named, with its output's last lines (exit 1).
--skip-clone: NOTEBOOK_SKIP_CLONE=1 for the cells (no network: the notebook uses this checkout);
--cwd: the kernel's folder (default the notebook's); --set: a `NAME = VALUE  #@param` field's
value. Exit status 2: bad usage or notebook, or no kernel (it says what to install).
"""
import argparse
import ast
import collections
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

TAIL = 15  # lines of a failed cell's output repeated at the end
NEEDS = ("nbclient", "nbformat", "ipykernel")
IPYKERNEL_MIN = (7, 3)  # the first ipykernel whose `!` honours system_raise_on_error
INSTALL = ("python3 -m pip install nbclient nbformat ipykernel (with no network: add --no-index "
           "--find-links third_party/wheels, where tools/vendor_nbclient.sh puts them)")
# Run by the kernel as it starts (IPython's exec_lines): a `!` command that exits non-zero raises
# CalledProcessError, as a %%bash cell's does. It logs errors only, not that its messages on
# localhost are signed but not encrypted.
KERNEL_ARGS = ["--IPKernelApp.exec_lines=get_ipython().system_raise_on_error = True",
               "--IPKernelApp.log_level=ERROR"]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class NotebookError(Exception):
    """Bad usage, a notebook that cannot be read, or no kernel to run it (exit status 2)."""


class Tee:
    """Writes a cell's outputs through to this process's stdout and keeps the last lines, to
    repeat them when the cell fails."""

    def __init__(self, out):
        self.out = out
        self.tail = collections.deque(maxlen=TAIL)
        self.line = ""

    def write(self, text, keep=True):
        self.out.write(text)
        self.out.flush()
        if not keep:  # an error's traceback: named on the line that says the cell failed
            return
        lines = (self.line + text).split("\n")
        self.line = lines.pop()
        self.tail.extend(lines)

    def last_lines(self):
        return list(self.tail) + ([self.line] if self.line else [])


def kernel_missing():
    """None where nbclient, nbformat and a recent enough ipykernel are installed for this Python
    (the kernel's: ipykernel's own kernelspec runs sys.executable), else what to install."""
    missing = [m for m in NEEDS if importlib.util.find_spec(m) is None]
    if missing:
        return ("running a notebook needs PyPI's nbclient, nbformat and ipykernel, not all "
                "installed for %s (missing: %s): %s" % (sys.executable, ", ".join(missing),
                                                        INSTALL))
    try:
        version = importlib.metadata.version("ipykernel")
    except importlib.metadata.PackageNotFoundError:  # no metadata: say nothing
        return None
    if tuple(int(n) for n in re.findall(r"\d+", version)[:2]) < IPYKERNEL_MIN:
        return ("ipykernel %s is older than %d.%d, the first that can fail a cell at a failing `!` "
                "command: python3 -m pip install -U ipykernel" % ((version,) + IPYKERNEL_MIN))
    return None


def text_of(output):
    """An output of a cell as text for a log: no colours (IPython's tracebacks have them, and `!`
    commands, which run in a pseudo-terminal, may), \\n for a pseudo-terminal's \\r\\n."""
    kind, text = output.get("output_type"), ""
    if kind == "stream":
        text = output.get("text", "").replace("\r\n", "\n")
    elif kind in ("execute_result", "display_data"):
        data = output.get("data", {})
        text = data.get("text/markdown") or data.get("text/plain") or ""
    elif kind == "error":
        text = "\n".join(output.get("traceback", []))
    if text and kind != "stream" and not text.endswith("\n"):
        text += "\n"
    return ANSI.sub("", text)


PARAM = re.compile(r"^(\s*)(\w+)(\s*=\s*)(.*?)(\s*#\s*@param\b.*)$")


def set_params(nb, settings):
    """Gives each form field NAME (its `NAME = VALUE  #@param ...` line) the value of --set
    NAME=VALUE: a string where the field's value is a string literal, else the Python literal
    given. Every NAME must be a form field of the notebook."""
    left = dict(settings)
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        lines = source_of(cell).split("\n")
        for i, line in enumerate(lines):
            m = PARAM.match(line)
            if m and m.group(2) in left:
                value = left.pop(m.group(2))
                old = m.group(4)
                if old[:1] in "\"'" or re.match(r"^[rRbBuU]?[\"']", old):
                    new = json.dumps(value)  # a string literal in double quotes, as Colab writes
                else:
                    try:
                        ast.literal_eval(value)
                    except (ValueError, SyntaxError):
                        raise NotebookError("--set %s=%s: the field holds %s, not a string: give "
                                            "a Python literal" % (m.group(2), value, old))
                    new = value
                lines[i] = m.group(1) + m.group(2) + m.group(3) + new + m.group(5)
        cell["source"] = [l + "\n" for l in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    if left:
        raise NotebookError("--set %s: the notebook has no such form field (a NAME = ...  #@param "
                            "line)" % ", ".join(sorted(left)))


def source_of(cell):
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            nb = json.load(f)
    except (OSError, ValueError) as e:
        raise NotebookError("%s: %s" % (path, e))
    if not isinstance(nb, dict) or nb.get("nbformat") != 4 or not isinstance(nb.get("cells"), list):
        raise NotebookError("%s is not an nbformat 4 notebook" % path)
    return nb


def dump(nb):
    """The notebook as Jupyter writes it: keys sorted, one space of indent, a final newline."""
    return json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def title(source):
    """A cell's name in messages: its #@title, else its first line that is not blank."""
    m = re.search(r"#\s*@title\s+(.*)", source)
    if m:
        return m.group(1).split("{")[0].strip()
    first = next((l.strip() for l in source.split("\n") if l.strip()), "")
    return first[:70] + ("..." if len(first) > 70 else "")


def run(nb, name, cwd, env):
    """Runs every code cell in order in one kernel; returns 0, or 1 at the first cell that fails."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    class Client(NotebookClient):
        """nbclient's, printing each output as it comes, to the Tee of the cell that runs."""
        tee = None

        def process_message(self, msg, cell, cell_index):
            output = super().process_message(msg, cell, cell_index)
            if output is not None and self.tee is not None:
                self.tee.write(text_of(output), keep=output.output_type != "error")
            return output

    for cell in nb["cells"]:
        cell["source"] = source_of(cell)
    client = Client(nbformat.from_dict(nb), kernel_name="python3", timeout=None,
                    resources={"metadata": {"path": cwd}}, extra_arguments=KERNEL_ARGS)
    cells = [(i, c) for i, c in enumerate(client.nb.cells) if c.cell_type == "code"]
    os.makedirs(cwd, exist_ok=True)
    print("notebook.py: %s: %d code cells, in %s, by an IPython kernel (%s)"
          % (name, len(cells), cwd, sys.executable), flush=True)
    start = time.time()
    try:
        with client.setup_kernel(env=env):
            for k, (i, cell) in enumerate(cells, 1):
                if not cell.source.strip():
                    continue
                what = "cell %d (code cell %d of %d: %s)" % (i + 1, k, len(cells),
                                                             title(cell.source))
                print("\n== notebook.py: %s" % what, flush=True)
                client.tee = tee = Tee(sys.stdout)
                t0, failed = time.time(), None
                try:
                    client.execute_cell(cell, i)
                except CellExecutionError as e:
                    failed = "%s: %s" % (e.ename, e.evalue)
                except Exception as e:  # the kernel died, ...
                    failed = "%s: %s" % (type(e).__name__, e)
                client.tee = None
                if failed:
                    print("\nnotebook.py: %s of %s FAILED after %.1f s: %s"
                          % (what, name, time.time() - t0, failed))
                    lines = tee.last_lines()
                    print("its output's last lines:" if lines else "(no output before the error)")
                    for line in lines:
                        print("  | " + line)
                    return 1
                print("== notebook.py: cell %d done in %.1f s" % (i + 1, time.time() - t0),
                      flush=True)
    except Exception as e:  # no kernel: jupyter_client's NoSuchKernel, a start that timed out
        if client.kc is not None:
            raise
        raise NotebookError("the IPython kernel did not start: %s: %s" % (type(e).__name__, e))
    print("\nnotebook.py: %s: all %d code cells ran, in %.0f s" % (name, len(cells),
                                                                  time.time() - start))
    return 0


def kernel_env(skip_clone):
    """The kernel's environment: this one, with NOTEBOOK_SKIP_CLONE=1 for --skip-clone, `!`
    commands run by bash as on Colab, TERM=dumb (a log, not a terminal: no colours) and no
    debugger warnings from ipykernel's debugpy."""
    env = dict(os.environ, TERM="dumb", PYDEVD_DISABLE_FILE_VALIDATION="1")
    env["SHELL"] = shutil.which("bash") or env.get("SHELL", "/bin/sh")
    if skip_clone or env.get("NOTEBOOK_SKIP_CLONE"):
        env["NOTEBOOK_SKIP_CLONE"] = "1"
    return env


SELF_TEST = [
    ("markdown", "# a test notebook"),
    ("code", '#@title Settings\nWHO = "nobody"  #@param {type:"string"}\n'
             'N = 3  #@param {type:"integer"}'),
    ("code", "import os\nx = 'a b'\n!echo {x.upper()} $x {N * 2} '$x'\n"
             "if N > 2:\n    !test {N} -gt 2\n"
             "lines = !printf 'one\\ntwo\\n'\nassert lines == ['one', 'two'], lines"),
    ("code", "%%writefile sub/hello.txt\nhello {x}\n$x"),
    ("code", "%cd sub\n%env GREETING=hi\nassert open('hello.txt').read() == 'hello {x}\\n$x\\n'\n"
             "!echo $GREETING from \\\n  $(basename $(pwd))"),
    ("code", "%%bash\necho bash sees $GREETING\ntest -f hello.txt"),
    ("code", "s = '''\n!not a command\n'''\nassert s.strip() == '!not a command'\nWHO"),
]


def self_test():
    """Runs SELF_TEST in a scratch folder with --set WHO=..., checks its output, checks that a
    failing `!` command stops the run and names its cell, and that --write and the message for a
    missing nbclient need the standard library alone."""
    problem = kernel_missing()
    if problem:
        print("notebook.py --self-test: %s" % problem)
        return 2
    nb = {"nbformat": 4, "nbformat_minor": 4, "metadata": {},
          "cells": [{"cell_type": t, "metadata": {}, "source": s} for t, s in SELF_TEST]}
    me = os.path.abspath(__file__)

    def notebook_py(*args, python=(sys.executable,)):
        return subprocess.run(list(python) + [me] + list(args), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, universal_newlines=True)

    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "sub"))
        path = os.path.join(tmp, "t.ipynb")
        with open(path, "w") as f:
            f.write(dump(nb))
        out = notebook_py("--set", "WHO=somebody", path)
        expect = ["A B a b 6 $x", "Writing sub/hello.txt", "env: GREETING=hi",
                  "hi from sub", "bash sees hi", "'somebody'", "all 6 code cells ran"]
        missing = [e for e in expect if e not in out.stdout]
        missing += ["exit 0, not %d" % out.returncode] if out.returncode else []
        # The standard library alone (-S -E: no site-packages, no PYTHONPATH): --write works, and
        # a run says what to install.
        bare = (sys.executable, "-S", "-E")
        written = os.path.join(tmp, "w.ipynb")
        w = notebook_py("--set", "WHO=else", "--write", written, path, python=bare)
        if w.returncode or 'WHO = "else"  #@param' not in source_of(load(written)["cells"][1]):
            missing += ["--write with the standard library alone: " + w.stdout]
        w = notebook_py(path, python=bare)
        if w.returncode != 2 or "pip install nbclient nbformat ipykernel" not in w.stdout:
            missing += ["exit 2 and what to install without nbclient: " + w.stdout]
        nb["cells"].append({"cell_type": "code", "metadata": {},
                            "source": "#@title Fails\n!echo last words && false\n"
                                      "print('not here')"})
        with open(path, "w") as f:
            f.write(dump(nb))
        bad = notebook_py(path)
        want = ["cell 8 (code cell 7 of 7: Fails)", "FAILED", "CalledProcessError",
                "  | last words"]
        missing += [w for w in want if w not in bad.stdout]
        missing += ["exit 1, not %d" % bad.returncode] if bad.returncode != 1 else []
        if re.search("^not here$", bad.stdout, re.M):
            missing += ["not here: the run went on"]
    if missing:
        print(out.stdout + bad.stdout)
        print("notebook.py --self-test: FAILED: missing %s" % missing)
        return 1
    print("notebook.py --self-test: ok (!, $ and {} expansion, x = !, %cd, %env, %%writefile, "
          "%%bash, #@param with --set, a failing ! that stops the run, --write without nbclient)")
    return 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("notebook", nargs="?")
    p.add_argument("--cwd", help="the kernel's folder, made if missing (default: the notebook's)")
    p.add_argument("--skip-clone", action="store_true",
                   help="no network: use the checkout as it is (NOTEBOOK_SKIP_CLONE=1)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="a form field's value (a #@param line)")
    p.add_argument("--write", metavar="OUT",
                   help="write the notebook with --set's values to OUT (- for stdout), run nothing")
    p.add_argument("--self-test", action="store_true")
    a = p.parse_args(argv)
    if a.self_test:
        return self_test()
    if not a.notebook:
        p.error("give a notebook (or --self-test)")
    try:
        settings = []
        for s in a.set:
            if "=" not in s:
                raise NotebookError("--set %s: give NAME=VALUE" % s)
            settings.append(tuple(s.split("=", 1)))
        nb = load(a.notebook)
        set_params(nb, settings)
        if a.write:
            if a.write == "-":
                sys.stdout.write(dump(nb))
            else:
                with open(a.write, "w", encoding="utf-8") as f:
                    f.write(dump(nb))
            return 0
        problem = kernel_missing()
        if problem:
            raise NotebookError(problem)
        cwd = os.path.abspath(a.cwd or os.path.dirname(os.path.abspath(a.notebook)))
        return run(nb, a.notebook, cwd, kernel_env(a.skip_clone))
    except NotebookError as e:
        print("notebook.py: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
