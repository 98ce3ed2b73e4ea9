#!/usr/bin/env python3
"""notebook.py: runs a Jupyter notebook's code cells headless, in order, in one folder and one
Python namespace, as Colab (IPython) would, with Python 3's standard library alone: no Jupyter,
no IPython. It is how colab/reduction.ipynb is tested without Colab, on a GPU machine or, without
a GPU, on the CPU model.

    notebook.py [--skip-clone] [--cwd DIR] [--set NAME=VALUE]... NOTEBOOK.ipynb
    notebook.py --set NAME=VALUE... --write OUT.ipynb NOTEBOOK.ipynb
    notebook.py --self-test

What a code cell may hold (the part of IPython that the course's notebook uses):
  - Python, run with exec() in one namespace shared by every cell; a last line that is an
    expression prints its value, as IPython does;
  - `!COMMAND` lines, also indented inside a block, and `NAME = !COMMAND` (its output's lines),
    run by bash in the current folder; `{expression}` and `$name` are Python's values in them, as
    IPython expands them (a `\\` at the end of the line continues the command);
  - `%cd DIR`, `%env NAME=VALUE` and `%pwd` lines;
  - a `%%writefile [-a] FILE` cell (the cell's text into FILE) or a `%%bash` cell (the cell's text
    run by bash);
  - Colab's form lines: `NAME = VALUE  #@param ...` is a plain assignment (--set NAME=VALUE gives
    it another value); `#@title` and `#@markdown` are comments.

A cell fails on a Python exception, a `%%bash` cell that exits non-zero (as IPython's does), or a
`!` command that exits non-zero: there Colab only prints the output and goes on, but a test must
not, so a command that may fail on purpose says so itself (`... || echo ...`). The first cell that
fails stops the run: notebook.py names it and repeats its output's last lines, and exits 1.

--cwd DIR: the folder the cells start in (made if missing), as Colab starts in /content; default
the notebook's own folder, as Jupyter does. --skip-clone (or NOTEBOOK_SKIP_CLONE=1 in the
environment): for a machine with no network; the cells see NOTEBOOK_SKIP_CLONE=1 in their
environment, and the course's notebook then uses the checkout it is in, as it is, and clones
nothing. --set NAME=VALUE replaces the value of the form field NAME (a `#@param` line); with
--write OUT it writes the notebook so changed to OUT (- for stdout) and runs nothing, which `make
handout COURSE_URL=...` uses. --self-test runs a small notebook of every kind of line above.
Exit status: 0 every cell ran, 1 a cell failed, 2 bad usage or notebook.
"""
import argparse
import ast
import codecs
import collections
import json
import os
import re
import string
import subprocess
import sys
import tempfile
import time
import traceback

RUNNER = "_notebook_"  # the runner's name in the cells' namespace: !, % and %% lines call it
TAIL = 15  # lines of a failed cell's output repeated at the end


class NotebookError(Exception):
    """Bad usage or a notebook that cannot be read (exit status 2), or a line of a cell that this
    runner does not run (that cell fails)."""


class CommandFailed(Exception):
    """A `!` command or a %%bash cell that exited non-zero."""


class Tee:
    """The cells' stdout and stderr: writes through to this process's stdout and keeps the last
    lines, to repeat them when the cell fails."""

    def __init__(self, out):
        self.out = out
        self.tail = collections.deque(maxlen=TAIL)
        self.line = ""

    def write(self, text):
        self.out.write(text)
        self.out.flush()
        lines = (self.line + text).split("\n")
        self.line = lines.pop()
        self.tail.extend(lines)
        return len(text)

    def flush(self):
        self.out.flush()

    def last_lines(self):
        return list(self.tail) + ([self.line] if self.line else [])


class DollarFormatter(string.Formatter):
    """IPython's expansion of `!` and `%` lines (IPython.utils.text.DollarFormatter, IPython 8):
    `{expression}` is the expression's value, `$name` or `$name.attr` a name's, `$$` a `$`; a `$`
    inside single quotes stays. Where anything fails to evaluate, the line is left as it is."""

    dollar = re.compile(r"(.*?)\$(\$?[\w.]+)(?=([^']*'[^']*')*[^']*$)")

    def parse(self, fmt):
        for literal, field, spec, conversion in string.Formatter.parse(self, fmt):
            at, text = 0, ""
            for m in self.dollar.finditer(literal):
                before, name = m.group(1, 2)
                if name.startswith("$"):
                    text += before + name
                else:
                    yield text + before, name, "", None
                    text = ""
                at = m.end()
            yield text + literal[at:], field, spec, conversion

    def vformat(self, fmt, args, kwargs):
        out = []
        for literal, field, spec, conversion in self.parse(fmt):
            out.append(literal)
            if field is not None:
                value = eval(":".join([field, spec]) if spec else field, kwargs)
                out.append(self.format_field(self.convert_field(value, conversion), ""))
        return "".join(out)


class Runner:
    """What the transformed cells call: system() for `!`, getoutput() for `x = !`, magic() for
    `%` lines, cell_magic() for `%%` cells. Output goes to sys.stdout, the cell's Tee."""

    def __init__(self, ns):
        self.ns = ns

    def expand(self, text):
        try:
            return DollarFormatter().vformat(text, [], dict(self.ns))
        except Exception:  # IPython too leaves the line as it is
            return text

    def stream(self, argv, stdin=subprocess.DEVNULL, keep=None):
        """Runs argv, its stdout and stderr into sys.stdout as they come; returns the status."""
        sys.stdout.flush()
        proc = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        decode = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while True:
            chunk = os.read(proc.stdout.fileno(), 65536)
            text = decode.decode(chunk, final=not chunk)
            if keep is not None:
                keep.append(text)
            else:
                sys.stdout.write(text)
            if not chunk:
                break
        proc.stdout.close()
        return proc.wait()

    def system(self, cmd):
        cmd = self.expand(cmd)
        status = self.stream(["bash", "-c", cmd])
        self.ns["_exit_code"] = status
        if status != 0:
            raise CommandFailed("!%s exited with status %d" % (cmd, status))

    def getoutput(self, cmd):
        out = []
        self.stream(["bash", "-c", self.expand(cmd)], keep=out)
        return "".join(out).splitlines()  # IPython: an SList, not checked for the status

    def magic(self, name, arg):
        arg = self.expand(arg).strip()
        if name == "cd":
            os.chdir(os.path.expanduser(arg.strip("\"'") or "~"))
            print(os.getcwd())
        elif name == "pwd":
            return os.getcwd()
        elif name == "env" and re.match(r"^\w+[= ]", arg):
            key, value = re.split(r"[= ]", arg, maxsplit=1)
            os.environ[key] = value.strip()
            print("env: %s=%s" % (key, os.environ[key]))
        else:
            raise NotebookError("%%%s %s: notebook.py runs only %%cd DIR, %%env NAME=VALUE "
                                "and %%pwd" % (name, arg))

    def cell_magic(self, name, line, body):
        line = self.expand(line).strip()
        if name == "writefile":
            args = line.split()
            append = args[:1] == ["-a"] or args[:1] == ["--append"]
            path = os.path.expanduser(" ".join(args[1:] if append else args).strip("\"'"))
            if not path:
                raise NotebookError("%%writefile needs a file name")
            print("%s %s" % ("Appending to" if append else
                             "Overwriting" if os.path.exists(path) else "Writing", path))
            with open(path, "a" if append else "w") as f:
                f.write(body)
        elif name == "bash":
            with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as f:
                f.write(body)
            try:
                status = self.stream(["bash", f.name] + line.split())
            finally:
                os.unlink(f.name)
            if status != 0:
                raise CommandFailed("the %%%%bash cell exited with status %d" % status)
        else:
            raise NotebookError("%%%%%s: notebook.py runs only %%%%writefile and %%%%bash cells"
                                % name)


def transform(source):
    """A code cell's source as Python, the way IPython's input transformers make it: a %% cell
    becomes one call; each line that starts (after its indentation) with ! or % becomes a call of
    the runner, and `NAME = !...` an assignment of its output. Lines inside a triple-quoted string
    are left as they are."""
    if source.startswith("%%"):
        first, _, body = source.partition("\n")
        name, _, line = first[2:].partition(" ")
        if body and not body.endswith("\n"):
            body += "\n"
        return "%s.cell_magic(%r, %r, %r)\n" % (RUNNER, name, line, body)
    out, lines, in_string = [], source.split("\n"), None
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        code = line.lstrip()
        indent = line[: len(line) - len(code)]
        escaped = re.match(r"^(\w+\s*=\s*)?(!|%(?!%))(.*)$", code) if in_string is None else None
        if escaped:
            assign, kind, rest = escaped.groups()
            while kind == "!" and rest.endswith("\\") and i < len(lines):
                rest = rest[:-1] + " " + lines[i].strip()
                i += 1
            if kind == "!":
                call = "%s.%s(%r)" % (RUNNER, "getoutput" if assign else "system", rest)
            else:
                name, _, arg = rest.partition(" ")
                call = "%s.magic(%r, %r)" % (RUNNER, name, arg)
            out.append(indent + (assign or "") + call)
            continue
        out.append(line)
        for quote in re.findall(r'"""|\'\'\'', line):  # a string that spans lines opens or ends
            if in_string is None:
                in_string = quote
            elif quote == in_string:
                in_string = None
    return "\n".join(out)


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


def run_cell(code, filename, ns):
    """exec()s the cell's Python; a last expression's value is printed, as IPython shows it."""
    tree = ast.parse(code, filename)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, filename, "exec"), ns)
    if last is not None:
        value = eval(compile(last, filename, "eval"), ns)
        if value is not None:
            ns["_"] = value
            print(repr(value))


def title(source):
    """A cell's name in messages: its #@title, else its first line that is not blank."""
    m = re.search(r"#\s*@title\s+(.*)", source)
    if m:
        return m.group(1).split("{")[0].strip()
    first = next((l.strip() for l in source.split("\n") if l.strip()), "")
    return first[:70] + ("..." if len(first) > 70 else "")


def run(nb, name, cwd):
    """Runs every code cell in order; returns 0, or 1 at the first cell that fails."""
    os.makedirs(cwd, exist_ok=True)
    os.chdir(cwd)
    ns = {"__name__": "__main__", "__builtins__": __builtins__}
    ns[RUNNER] = Runner(ns)
    cells = [(i + 1, source_of(c)) for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"]
    start = time.time()
    for k, (number, source) in enumerate(cells, 1):
        if not source.strip():
            continue
        what = "cell %d (code cell %d of %d: %s)" % (number, k, len(cells), title(source))
        print("\n== notebook.py: %s, in %s" % (what, os.getcwd()), flush=True)
        tee = Tee(sys.stdout)
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = tee
        t0, failed = time.time(), None
        try:
            run_cell(transform(source), "<cell %d>" % number, ns)
        except CommandFailed as e:
            failed = str(e)
        except BaseException as e:  # SystemExit and KeyboardInterrupt too: the cell failed
            te = traceback.TracebackException.from_exception(e)
            te.stack = traceback.StackSummary.from_list(
                [f for f in te.stack if f.filename.startswith("<cell")])
            tee.write("".join(te.format()))
            failed = "".join(te.format_exception_only()).strip()
        finally:
            sys.stdout.flush()
            sys.stdout, sys.stderr = saved
        if failed:
            print("\nnotebook.py: %s of %s FAILED after %.1f s: %s" % (what, name,
                                                                  time.time() - t0, failed))
            print("its output's last lines:")
            for line in tee.last_lines():
                print("  | " + line)
            return 1
        print("== notebook.py: cell %d done in %.1f s" % (number, time.time() - t0), flush=True)
    print("\nnotebook.py: %s: all %d code cells ran, in %.0f s" % (name, len(cells),
                                                                  time.time() - start))
    return 0


SELF_TEST = [
    ("markdown", "# a test notebook"),
    ("code", '#@title Settings\nWHO = "nobody"  #@param {type:"string"}\n'
             'N = 3  #@param {type:"integer"}'),
    ("code", "import os\nx = 'a b'\n!echo {x.upper()} $x {N * 2} '$x'\n"
             "if N > 2:\n    !test {N} -gt 2\n"
             "lines = !printf 'one\\ntwo\\n'\nassert lines == ['one', 'two']"),
    ("code", "%%writefile sub/hello.txt\nhello {x}\n$x"),
    ("code", "%cd sub\n%env GREETING=hi\nassert open('hello.txt').read() == 'hello {x}\\n$x\\n'\n"
             "!echo $GREETING from \\\n  $(basename $(pwd))"),
    ("code", "%%bash\necho bash sees $GREETING\ntest -f hello.txt"),
    ("code", "s = '''\n!not a command\n'''\nassert s.strip() == '!not a command'\nWHO"),
]


def self_test():
    """Runs SELF_TEST in a scratch folder with --set WHO=..., checks its output, then checks that a
    failing `!` command stops the run and names its cell."""
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
          "cells": [{"cell_type": t, "metadata": {}, "source": s} for t, s in SELF_TEST]}
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "sub"))
        path = os.path.join(tmp, "t.ipynb")
        with open(path, "w") as f:
            f.write(dump(nb))
        me = os.path.abspath(__file__)
        out = subprocess.run([sys.executable, me, "--set", "WHO=somebody", path],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             universal_newlines=True)
        expect = ["A B a b 6 $x", "Writing sub/hello.txt", "env: GREETING=hi",
                  "hi from sub", "bash sees hi", "'somebody'", "all 6 code cells ran"]
        missing = [e for e in expect if e not in out.stdout]
        nb["cells"].append({"cell_type": "code", "metadata": {},
                            "source": "#@title Fails\n!echo last words && false\n"
                                      "print('not here')"})
        with open(path, "w") as f:
            f.write(dump(nb))
        bad = subprocess.run([sys.executable, me, path], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, universal_newlines=True)
        want = ["cell 8 (code cell 7 of 7: Fails)", "FAILED", "  | last words"]
        missing += [w for w in want if w not in bad.stdout]
        missing += ["exit 1"] if bad.returncode != 1 else []
        missing += ["not here: the run went on"] if "not here" in bad.stdout else []
    if missing or out.returncode:
        print(out.stdout + bad.stdout)
        print("notebook.py --self-test: FAILED: missing %s" % missing)
        return 1
    print("notebook.py --self-test: ok (!, $ and {} expansion, x = !, %cd, %env, %%writefile, "
          "%%bash, #@param with --set, a failing cell named)")
    return 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("notebook", nargs="?")
    p.add_argument("--cwd", help="the folder the cells start in (default: the notebook's)")
    p.add_argument("--skip-clone", action="store_true",
                   help="no network: use the checkout as it is (NOTEBOOK_SKIP_CLONE=1)")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="a form field's value (a #@param line)")
    p.add_argument("--write", metavar="OUT",
                   help="write the notebook with --set's values to OUT, run nothing")
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
        if a.skip_clone or os.environ.get("NOTEBOOK_SKIP_CLONE"):
            os.environ["NOTEBOOK_SKIP_CLONE"] = "1"
        cwd = os.path.abspath(a.cwd or os.path.dirname(os.path.abspath(a.notebook)))
        return run(nb, a.notebook, cwd)
    except NotebookError as e:
        print("notebook.py: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
