#!/usr/bin/env python3
"""mapping.py: the thread-to-data mapping of stages 1-7, drawn from the stages' own loops.

Each stage's kernel loops are replayed below in Python at the lecture's size (16 elements, 8
threads, warps of 4) on a simulated GPU memory that records every addition: its thread, its
round, the cells it read and the cell it wrote. A replay must end with the sum of its input,
every element counted exactly once, or the script stops. One emitter draws the additions as
TikZ rows of cells and arrows; the figure functions only say where each row goes.

  python3 tools/figures/mapping.py --tex DIR   DIR/step01.tex .. step07.tex and the deck's own
      DIR/coalescing.tex and coarsening.tex (DECK_FIGURES): bare tikzpictures for the deck,
      which defines deckblue, deckgray and notefg, \figsize{PT} and the overlay key visible on
      (slides/preamble.tex) and loads tikz with the arrows.meta library. Each tree is built up
      round by round: an element of step k > 1 is drawn [visible on=<k->], so the frame shows
      its rounds one slide each; text is \figsize{8}, {9}, {10} (the deck enlarges it to 10 pt
      as printed), labels are dark (notefg), and a few labels read better on a projector
  python3 tools/figures/mapping.py --png       stepNN_name/figure.png for the READMEs, through
      LuaLaTeX and pdftoppm (`make figures`); the LaTeX files and the PDF go to build/figures/

Python 3 standard library only. Each picture fits a 16:9 Beamer frame under its title: at most
12.5 cm x 6 cm (checked when rendering), and no text smaller than \\scriptsize (8 pt). The PNGs
do not change with the deck's output: --png writes what it always wrote (no steps, \\scriptsize).
"""
import argparse
import collections
import math
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DECK = False  # --tex: the deck's figures (steps, \figsize, its wording); --png: the PNGs' own
sys.path.insert(0, os.path.dirname(HERE))
import stages  # noqa: E402  (tools/stages.py: which stages have a figure, and its replay)

# ------------------------------------------------------------------------------------------------
# The input: small distinct numbers, a permutation of 1..n. Never all ones, and no 0 (the
# identity): an element added twice, or not at all, always changes the sum.

LECTURE_16 = [3, 1, 7, 10, 4, 12, 6, 2, 8, 15, 5, 13, 9, 16, 11, 14]
IDENTITY = 0  # of +: where an accumulator starts, what an element past the end counts as


def example(n):
    """The lecture's 16 numbers, then 17..n in a scrambled order: a permutation of 1..n."""
    rest = n - 16
    assert rest <= 0 or math.gcd(5, rest) == 1
    return LECTURE_16[:n] + [17 + (5 * j) % rest for j in range(max(rest, 0))]


# ------------------------------------------------------------------------------------------------
# The simulated GPU: numbers that remember what they sum and which cells they were read from,
# and arrays that record every write with the thread and the round that made it.

Loc = collections.namedtuple("Loc", "array index past_end")  # a cell a value was read from
Write = collections.namedtuple("Write", "id round block thread array index parts value")
Read = collections.namedtuple("Read", "round block thread array index")
elem4_t = collections.namedtuple("elem4_t", "x y z w")  # 16 bytes, one load


class Val:
    """A number in a replay: its value, the input elements it sums (a count for each), the
    writes it depends on, and the cells read to make it (the tails of its arrows)."""

    def __init__(self, v, elems=None, deps=frozenset(), parts=()):
        self.v, self.elems, self.deps, self.parts = v, elems or collections.Counter(), deps, parts

    def __add__(self, other):  # one addition, by the thread running now
        return Val(self.v + other.v, self.elems + other.elems, self.deps | other.deps,
                   self.parts + other.parts)


class Array:
    """An array in global memory, in one block's shared memory, or one register per thread."""

    def __init__(self, trace, name, space, size, values=None):
        self.trace, self.name, self.space = trace, name, space
        trace.arrays.append(self)
        if values is None:  # zeroed (cudaMemsetAsync), or registers set to the identity
            self.cells = [Val(IDENTITY) for _ in range(size)]
        else:  # the input: element k is the sum of element k alone
            self.cells = [Val(v, collections.Counter({k: 1})) for k, v in enumerate(values)]
        self.initial = [c.v for c in self.cells]

    def __getitem__(self, i):
        assert 0 <= i < len(self.cells), f"{self.name}[{i}] is out of bounds"
        self.trace.reads.append(Read(self.trace.now, *self.trace.current, self, i))
        c = self.cells[i]
        return Val(c.v, c.elems, c.deps, (Loc(self, i, False),))

    def __setitem__(self, i, val):
        assert 0 <= i < len(self.cells), f"{self.name}[{i}] is out of bounds"
        tr = self.trace
        tr.writes.append(Write(len(tr.writes), tr.now, *tr.current, self, i, val.parts, val.v))
        self.cells[i] = Val(val.v, val.elems, val.deps | {tr.writes[-1].id})

    def identity(self, i):
        """What the kernel's `i < n ? input[i] : IDENTITY` gives past the end: no memory read."""
        assert i >= len(self.cells)
        return Val(IDENTITY, parts=(Loc(self, i, True),))

    def vector(self, j):
        """The kernel's input4[j]: elements 4j .. 4j + 3 as one 16-byte load (elem4_t)."""
        self.trace.vector_reads.append((*self.trace.current, j))
        return elem4_t(*(self[4 * j + k] for k in range(4)))


class Trace:
    """One replay: the launch's shape, its arrays, and every read and write, round by round."""

    def __init__(self, x, grid, block, warp):
        self.x, self.n = x, len(x)
        self.gridDim, self.blockDim, self.warp_size = grid, block, warp
        self.rounds, self.now = ["input"], 0  # round 0: the memory before the kernel runs
        self.writes, self.reads, self.vector_reads, self.arrays = [], [], [], []
        self.current = (None, None)  # the (block, thread) running now

    def round(self, label, block=0):
        """Runs one round, what runs between two barriers, in one block: its threads one after
        another, as within a round their order is free. The next block rejoins it by label."""
        if label not in self.rounds:
            self.rounds.append(label)
        self.now = self.rounds.index(label)
        for t in range(self.blockDim):
            self.current = (block, t)
            yield t
        self.current = (None, None)

    def atomic_add(self, array, i, val):
        """atomicAdd(&array[i], val): one indivisible read-modify-write."""
        array[i] = array[i] + val

    def shfl_down(self, x, t, offset):
        """__shfl_down_sync: lane l gets lane l + offset's x, or its own x past the warp's end."""
        lane, warp = t % self.warp_size, t // self.warp_size
        src = lane + offset if lane + offset < self.warp_size else lane
        return x[warp * self.warp_size + src]

    def finish(self, result):
        """The result must be the sum of the input, each element counted exactly once."""
        total = sum(self.x)
        assert result.v == total, f"the replay gives {result.v}, the input sums to {total}"
        assert result.elems == collections.Counter(range(self.n)), "an element lost or added twice"
        self.result, self.used = result.v, result.deps  # used: the writes the result depends on
        return self

    # -- what the pictures ask
    def state(self, array, rnd):
        """array's cells after round rnd: (value, the write that put it there, or None)."""
        cells = [(v, None) for v in array.initial]
        for w in self.writes:
            if w.array is array and w.round <= rnd:
                cells[w.index] = (w.value, w)
        return cells

    def writers(self, rnd, block=0):
        return {w.thread for w in self.writes if w.round == rnd and w.block == block}

    def loaded_by(self, array):
        """element -> (block, thread, round) of the one thread that reads it."""
        who = {}
        for r in self.reads:
            if r.array is array and r.thread is not None:
                by = (r.block, r.thread, r.round)
                assert who.setdefault(r.index, by) == by, f"element {r.index} read twice"
        return who


def launch(x, grid, block, warp, input="input"):
    """A replay's Trace, its input in global memory, and its sum there, zeroed (cudaMemsetAsync);
    stages 2-4 leave the sum out: their kernels copy input[0] into it."""
    tr = Trace(x, grid, block, warp)
    return tr, Array(tr, input, "global", tr.n, x), Array(tr, "sum", "global", 1)


# ------------------------------------------------------------------------------------------------
# The replays: each stage's kernel, with its loops and its indices as in stepNN_*/reduce.cu.
# `input[i] += input[i + stride]` below runs on the simulated memory and records the addition.

def replay_atomic():
    """Stage 1: thread i = blockIdx.x * blockDim.x + threadIdx.x adds element i into sum."""
    tr, input, sum = launch(example(16), grid=4, block=4, warp=4)
    for blockIdx in range(tr.gridDim):
        for t in tr.round("atomicAdd", blockIdx):
            i = blockIdx * tr.blockDim + t
            if i < tr.n:
                tr.atomic_add(sum, 0, input[i])
    return tr.finish(sum[0])


def replay_interleaved(n=16, block=8, warp=4):
    """Stage 2: thread t owns element 2t; the stride doubles; in place, in global memory."""
    tr, input, _ = launch(example(n), grid=1, block=block, warp=warp)
    stride = 1
    while stride <= tr.blockDim:
        for t in tr.round(f"stride {stride}"):
            i = 2 * t
            if t % stride == 0:
                input[i] += input[i + stride]
        stride *= 2  # __syncthreads(): the next round reads what this one wrote
    return tr.finish(input[0])


def replay_strided(n=16, block=8, warp=4):
    """Stage 3: thread t owns element t; the stride halves from blockDim.x; still in place."""
    tr, input, _ = launch(example(n), grid=1, block=block, warp=warp)
    stride = tr.blockDim
    while stride >= 1:
        for t in tr.round(f"stride {stride}"):
            i = t
            if t < stride:
                input[i] += input[i + stride]
        stride //= 2
    return tr.finish(input[0])


def shared_tree(tr, input_s, blockIdx=0, sum=None):
    """The shared-memory tree of stages 4 to 6 (sequential addressing) in one block, each round
    after a __syncthreads(); then, given sum, thread 0's atomicAdd of input_s[0] into it."""
    stride = tr.blockDim // 2
    while stride >= 1:
        for t in tr.round(f"stride {stride}", blockIdx):
            if t < stride:
                input_s[t] += input_s[t + stride]
        stride //= 2
    if sum is not None:  # stages 5 and 6: one atomicAdd a block
        for t in tr.round("atomicAdd", blockIdx):
            if t == 0:
                tr.atomic_add(sum, 0, input_s[0])


def replay_shared():
    """Stage 4: the first round adds on the way into shared memory; the others run there."""
    tr, input, _ = launch(example(16), grid=1, block=8, warp=4)
    input_s = Array(tr, "input_s", "shared", tr.blockDim)
    for t in tr.round(f"load, stride {tr.blockDim}"):
        i = t
        input_s[t] = input[i] + input[i + tr.blockDim]
    shared_tree(tr, input_s)
    return tr.finish(input_s[0])


def replay_segmented(n=None, load="load", block=8):
    """Stage 5: block b reduces segment b, 2 * blockDim.x elements, and atomicAdds its sum. At
    n = 32 (every bounds check passes), the course notes' segmented kernel (smem_reduction,
    Strided+SMEM) at the size of their coarsening figure, its first round labelled load. No n:
    28 (a partial segment), or in the deck 14 with blocks of 4 threads (the notes' 16 elements
    and 8 threads: 32 two-digit numbers do not fit a frame's width at 10 pt)."""
    if n is None:
        n, block = (14, 4) if DECK else (28, 8)
    tr, input, sum = launch(example(n), grid=2, block=block, warp=4)
    blockDim = tr.blockDim
    for blockIdx in range(tr.gridDim):  # the blocks run independently, in any order
        input_s = Array(tr, "input_s", "shared", blockDim)  # one per block
        segment = 2 * blockDim * blockIdx
        for t in tr.round(load, blockIdx):
            i = segment + t
            first = input[i] if i < n else input.identity(i)
            second = input[i + blockDim] if i + blockDim < n else input.identity(i + blockDim)
            input_s[t] = first + second
        shared_tree(tr, input_s, blockIdx, sum)
    return tr.finish(sum[0])


def replay_coarsened(COARSE_FACTOR):
    """Stage 6: a grid that fills the GPU once; block b walks segments b, b + gridDim.x, ... of
    COARSE_FACTOR * 2 * blockDim.x elements (the stage's own COARSE_FACTOR, read from its
    reduce.cu), thread t adding element i + tile * blockDim.x of each into its register; then
    stage 5's tree, and one atomicAdd per block."""
    tr, input, sum = launch(example(64), grid=2, block=4, warp=4)
    blockDim, n = tr.blockDim, tr.n
    seg = tr.segment = COARSE_FACTOR * 2 * blockDim  # for the picture too
    for blockIdx in range(tr.gridDim):
        input_s = Array(tr, "input_s", "shared", blockDim)
        partial = Array(tr, "partial", "register", blockDim)  # one per thread, the identity
        for walk, segment in enumerate(range(seg * blockIdx, n, seg * tr.gridDim), 1):
            for t in tr.round(f"pass {walk}", blockIdx):  # the grid-stride loop
                i = segment + t
                for tile in range(COARSE_FACTOR * 2):
                    j = i + tile * blockDim
                    partial[t] += input[j] if j < n else input.identity(j)
        for t in tr.round("store", blockIdx):
            input_s[t] = partial[t]
        shared_tree(tr, input_s, blockIdx, sum)
    return tr.finish(sum[0])


def replay_shuffle(COARSE_FACTOR):
    """Stage 7: stage 6's loop over 16-byte vectors (elem4_t); block 0 adds the n % 4 elements
    past the last whole vector; then warp_reduce; lane 0 of each warp writes warp_sums[warp],
    and warp 0 reduces those the same way. COARSE_FACTOR: the stage's own, from its reduce.cu."""
    WARP_SIZE = 8  # a warp of 8 lanes in the picture; 32 on the GPU
    tr, input, sum = launch(example(130), grid=1, block=8, warp=WARP_SIZE)  # n % 4 = 2
    blockDim, n = tr.blockDim, tr.n
    n4, seg = n // 4, COARSE_FACTOR * 2 * blockDim
    for blockIdx in range(tr.gridDim):
        partial = Array(tr, "partial", "register", blockDim)
        warp_sums = Array(tr, "warp_sums", "shared", blockDim // WARP_SIZE)
        for walk, segment in enumerate(range(seg * blockIdx, n4, seg * tr.gridDim), 1):
            for t in tr.round(f"pass {walk}", blockIdx):  # in vectors
                i = segment + t
                for tile in range(COARSE_FACTOR * 2):
                    if i + tile * blockDim < n4:
                        v = input.vector(i + tile * blockDim)
                        partial[t] += v.x + v.y + v.z + v.w
        for t in tr.round("tail", blockIdx):
            if blockIdx == 0 and t < n % 4:  # the last n % 4 elements
                partial[t] += input[4 * n4 + t]
        warp_reduce(tr, blockIdx, partial, "")
        for t in tr.round("warp_sums", blockIdx):
            lane, warp = t % WARP_SIZE, t // WARP_SIZE
            if lane == 0:
                warp_sums[warp] = partial[t]
        for t in tr.round("warp 0", blockIdx):  # after __syncthreads(): warp 0 reduces the sums
            lane, warp = t % WARP_SIZE, t // WARP_SIZE
            if warp == 0:
                partial[t] = warp_sums[lane] if lane < blockDim // WARP_SIZE else Val(IDENTITY)
        warp_reduce(tr, blockIdx, partial, ", warp 0")
        for t in tr.round("atomicAdd", blockIdx):
            if t == 0:  # lane 0 of warp 0
                tr.atomic_add(sum, 0, partial[0])
    return tr.finish(sum[0])


def warp_reduce(tr, blockIdx, x, which):
    """Stage 7's warp_reduce: x += __shfl_down_sync(FULL_MASK, x, offset), the offset halving
    from WARP_SIZE / 2. A shuffle is one instruction: every lane reads, then every lane adds."""
    offset = tr.warp_size // 2
    while offset >= 1:
        got = [tr.shfl_down(x, t, offset) for t in tr.round(f"offset {offset}{which}", blockIdx)]
        for t in tr.round(f"offset {offset}{which}", blockIdx):
            x[t] += got[t]
        offset //= 2


def notes_coarse():
    """The course notes' coarse_reduction: COARSE_FACTOR 2, one block of 8 threads, a segment of
    32 elements; each thread sums its 4 elements in a register, then the tree."""
    COARSE_FACTOR = 2
    tr, A, sum = launch(example(32), grid=1, block=8, warp=4, input="A")
    blockDim, blockIdx = tr.blockDim, 0
    smem_buf = Array(tr, "smem_buf", "shared", blockDim)
    initial = Array(tr, "initial", "register", blockDim)
    segment = COARSE_FACTOR * 2 * blockDim * blockIdx
    for t in tr.round("`initial = A[i]`"):
        initial[t] = A[segment + t]
    for tile in range(1, COARSE_FACTOR * 2):  # the deck's label is shorter (its text larger)
        for t in tr.round(f"`{'' if DECK else 'initial '}+= A[i + {tile * blockDim}]`"):
            i = segment + t
            initial[t] += A[tile * blockDim + i]
    for t in tr.round("store"):
        smem_buf[t] = initial[t]
    shared_tree(tr, smem_buf, blockIdx, sum)
    return tr.finish(sum[0])


# ------------------------------------------------------------------------------------------------
# The emitter: one TikZ vocabulary for every picture, in centimetres, at computed coordinates.

ROW_H = 0.42  # a cell's height
R = 0.18  # a thread circle's radius
THREAD_COLOURS = ["77AADD", "EE8866", "44BB99", "EEDD88", "BBCC33", "FFAABB", "99DDFF", "CCBB44"]
FONTS = ("scriptsize", "footnotesize", "small")  # nothing smaller than \scriptsize
SECTOR = 32  # bytes: what the L1 fetches from the L2 for a global load, at the least

STYLES = {
    # cells: an input element; a partial sum written this round, which the result uses or not;
    # a cell this round left alone; a slot past the end of the input (the identity)
    "cell": "draw=deckblue, fill=white, minimum height=0.42cm, inner sep=0pt, font=\\scriptsize",
    "fresh": "cell, fill=deckblue!16",
    "dead": "cell, draw=deckgray!50, fill=deckgray!10, text=deckgray!80",
    "stale": "cell, draw=deckgray!40, text=deckgray!70",
    "past": "cell, draw=deckgray!70, dashed, text=deckgray",
    # threads: working this round, or idle; warps: busy while any of its threads works, or idle
    "thr": "circle, draw=deckblue, fill=deckblue, text=white, minimum size=0.36cm, inner sep=0pt,"
           " font=\\scriptsize",
    "idle": "thr, draw=deckgray!40, fill=white, text=deckgray!60",
    "warp": "draw=deckblue!60, fill=deckblue!9, rounded corners=3pt",
    "warpidle": "draw=deckgray!45, rounded corners=3pt, dashed",
    # arrows: one for each operand of an addition; grey when the result never uses the sum
    "ln": "deckblue!80, -{Stealth[length=3.2pt]}",
    "lndead": "deckgray!40, -{Stealth[length=3pt]}",
    "lnpast": "deckgray!80, dashed, -{Stealth[length=3pt]}",
    # labels, and the boxes around blocks, shared memory and 16-byte vectors
    "lab": "font=\\scriptsize, text=deckgray, inner sep=1pt, align=left",
    "labb": "lab, text=deckblue",
    "num": "lab, text=black",
    "band": "fill=deckblue!6, rounded corners=3pt",
    "bandgrey": "fill=deckgray!10, rounded corners=3pt",
    "box": "draw=deckgray!60, rounded corners=3pt",
    "tick": "draw=deckgray!70",
    "vec": "draw=deckblue, thick",
}
# The deck's own: labels in the deck's dark slate (notefg), which reads on a projector.
DECK_STYLES = {
    "lab": "font=\\scriptsize, text=notefg, inner sep=1pt, align=left",
}


def tex_text(s):
    """Plain text to LaTeX: `code` in \\texttt, [words] in the deck's blue, _ % # & escaped, a
    newline a line break."""
    out = []
    for k, part in enumerate(s.split("`")):
        part = re.sub(r"([_%#&])", r"\\\1", part).replace("\n", "\\\\")
        if k % 2:
            out.append(f"\\texttt{{{part}}}")
        else:
            out.append(re.sub(r"\[([^]]*)\]", r"\\textcolor{deckblue}{\1}", part))
    return "".join(out)


class Picture:
    """A tikzpicture: backgrounds first, then lines, then cells and circles, then labels. With a
    trace: its arrays as rows of cells, one for each (array, round) the figure places, and an
    arrow from each cell that a write read to the cell it wrote."""

    LAYERS = ("back", "lines", "nodes", "front")

    def __init__(self, tr=None, thread_colours=0):
        self.layers = {k: [] for k in self.LAYERS}  # each: [(step, TikZ command)]
        self.step = 1  # the deck's slide from which what is drawn now shows
        self.colours = THREAD_COLOURS[:thread_colours]
        self.tr, self.at = tr, {}  # at: (array, round) -> {index: (x, y)}

    def node(self, p, text, style, width=None, anchor=None, layer="nodes"):
        opts = style + (f", minimum width={width:.2f}cm" if width else "")
        opts += f", anchor={anchor}" if anchor else ""
        self.layers[layer].append(
            (self.step, f"\\node[{opts}] at ({p[0]:.2f},{p[1]:.2f}) {{{text}}};"))

    def text(self, p, s, anchor="west", style="lab"):
        self.node(p, tex_text(s), style, anchor=anchor, layer="front")

    def line(self, a, b, style="ln", op="--", layer="lines"):
        cmd = "\\fill" if style.startswith("band") else "\\draw"
        self.layers[layer].append(
            (self.step, f"{cmd}[{style}] ({a[0]:.2f},{a[1]:.2f}) {op} ({b[0]:.2f},{b[1]:.2f});"))

    def rect(self, x1, y1, x2, y2, style, layer="back"):
        self.line((x1, y1), (x2, y2), style, "rectangle", layer)

    def tex(self, comment, deck=False):
        """The tikzpicture; deck: the deck's (steps as overlays, \\figsize, dark labels)."""
        body = [line for k in self.LAYERS for _, line in self.layers[k]]
        for size in re.findall(r"\\(tiny|scriptsize|footnotesize|small)\b",
                               "\n".join(body) + str(STYLES)):
            assert size in FONTS, f"\\{size} is smaller than \\scriptsize"
        colours = "".join(f"\\definecolor{{thread{k}}}{{HTML}}{{{c}}}\n"
                          for k, c in enumerate(self.colours))
        styles = ",\n".join(f"  {k}/.style={{{v}}}" for k, v in STYLES.items())
        if deck:
            body = [line if step == 1 else line.replace("[", f"[visible on=<{step}->, ", 1)
                    for k in self.LAYERS for step, line in self.layers[k]]
            styles = ",\n".join(f"  {k}/.style={{{DECK_STYLES.get(k, v)}}}"
                                 for k, v in STYLES.items())
            body, styles = (re.sub(r"\\(scriptsize|footnotesize|small)\b",
                                   lambda m: "\\figsize{%d}" % (8 + FONTS.index(m[1])), t)
                            for t in ("\n".join(body), styles))
            return (f"% {comment}\n% Drawn by tools/figures/mapping.py --tex for the deck, from the"
                    f" stage's own loops: change the script, not this file.\n"
                    f"\\begin{{tikzpicture}}[\n"
                    f"{styles}]\n{colours}" + body + "\n\\end{tikzpicture}\n")
        return (f"% {comment}\n% Drawn by tools/figures/mapping.py from the stage's own loops:"
                f" change the script, not this file.\n\\begin{{tikzpicture}}[\n{styles}]\n{colours}"
                + "\n".join(body) + "\n\\end{tikzpicture}\n")

    def row(self, array, rnd, place, indices=None, colour=None, values=True, width=0.5,
            hide_dead=False):
        """Draws array as it is after round rnd (a number or a name); place(index) gives the
        cell's centre; colour(index), the cell's fill; hide_dead leaves out the values that no
        thread reads again."""
        rnd = rnd if isinstance(rnd, int) else self.tr.rounds.index(rnd)
        cells, at = self.tr.state(array, rnd), {}
        for k in range(len(array.cells)) if indices is None else indices:
            at[k] = place(k)
            if k >= len(cells):  # a slot past the end: the identity, no memory behind it
                self.node(at[k], str(IDENTITY) if values else "", "past", width)
                continue
            v, w = cells[k]
            style = (f"cell, fill={colour(k)}" if colour else
                     "cell" if rnd == 0 or (w is None and array.space != "global") else
                     "stale" if w is None or w.round != rnd else
                     "fresh" if w.id in self.tr.used else "dead")
            show = values and not (hide_dead and style == "dead")
            self.node(at[k], str(v) if show else "", style, width)
        self.at[(array, rnd)] = at
        return at

    def arrows(self, rnd, via=None, own=True):
        """An arrow for each operand of each write of round rnd into a placed row, from where the
        operand's cell is drawn last before rnd; through the writer's circle where via gives each
        thread's. own=False leaves out the operand that a cell adds to itself (x += ...)."""
        rnd = rnd if isinstance(rnd, int) else self.tr.rounds.index(rnd)
        for w in self.tr.writes:
            dst = self.at.get((w.array, rnd), {}).get(w.index)
            if w.round != rnd or dst is None:
                continue
            top, used = (dst[0], dst[1] + ROW_H / 2), w.id in self.tr.used
            for p in dict.fromkeys(w.parts):
                earlier = [r for (a, r) in self.at if a is p.array and r < rnd]
                src = self.at[(p.array, max(earlier))].get(p.index) if earlier else None
                if src is None or (not own and p.array is w.array and p.index == w.index):
                    continue
                style = "lnpast" if p.past_end else "ln" if used else "lndead"
                # into the top of the writer's circle: an arrow from far away then runs above
                # the other threads' circles, never through them
                end = (via[w.thread][0], via[w.thread][1] + R) if via else top
                self.line((src[0], src[1] - ROW_H / 2), end, style)
            if via:
                c = via[w.thread]
                self.line((c[0], c[1] - R), top, "ln" if used else "lndead")


# ------------------------------------------------------------------------------------------------
# The figures: where each row goes. What a row holds, and every arrow, comes from the replay.

def figure01(tr, pitch=0.62, x0=1.45):
    """The 16 elements in blocks of 4, a thread each, every atomicAdd into the one sum."""
    pic = Picture(tr)
    input, sum = tr.arrays
    at = pic.row(input, 0, lambda k: (x0 + k * pitch, 0.0), width=pitch - 0.1)
    y, total = -0.8, (x0 + 7.5 * pitch, -2.3)
    pic.node(total, str(tr.result), "cell, fill=deckblue!30, font=\\footnotesize", 0.9)
    for b in range(tr.gridDim):
        x1 = x0 + b * tr.blockDim * pitch - 0.27
        x2 = x0 + ((b + 1) * tr.blockDim - 1) * pitch + 0.27
        pic.rect(x1, y - 0.28, x2, ROW_H / 2 + 0.07, "box")
        pic.text(((x1 + x2) / 2, ROW_H / 2 + 0.07), f"block {b}", "south")
    for w in tr.writes:  # the atomicAdds, in the order the replay ran them (the GPU's varies)
        (p,) = [p for p in w.parts if p.array is input]
        c, end = (at[p.index][0], y), (total[0], total[1] + ROW_H / 2)
        d = math.dist(c, end)  # the arrow to the sum leaves the circle where it faces the sum
        pic.node(c, str(w.thread), "thr")
        pic.line((c[0], at[p.index][1] - ROW_H / 2), (c[0], c[1] + R))
        pic.line((c[0] + R * (end[0] - c[0]) / d, c[1] + R * (end[1] - c[1]) / d), end)
    pic.text((x0 - 0.4, 0), "`input`", "east")
    pic.text((x0 - 0.4, y), "`threadIdx.x`", "east")
    pic.text((total[0] + 0.55, total[1]), "`sum`: one address\nin global memory")
    if DECK:  # the deck's caption says it, in one line
        return pic
    pic.text((x0 - 0.4, total[1] - 0.4),
             "thread `i = blockIdx.x * blockDim.x + threadIdx.x` adds element `i` into `sum`:\n"
             f"{tr.n} `atomicAdd`s on one address, one after another in any order: [a chain,"
             " not a tree]", "north west")
    return pic


def figure_tree(tr, owner=lambda t: t, pitch=0.56, dy=None):
    """Stages 2-4: the array after each round, a row a round; above each row the threads, each
    over the element it owns (owner(t)), the warps boxed; on the right each round's stride and
    how many threads and warps work in it. In place, unless stage 4's tree is in shared memory.
    The deck's rows are closer (dy): the figure is as high as a frame allows, and grows wider."""
    dy = dy or (1.15 if DECK else 1.3)
    pic = Picture(tr)
    input, shared = tr.arrays[0], [a for a in tr.arrays if a.space == "shared"]
    for r in range(len(tr.rounds)):  # the deck: round r on its slide r, the input with round 1
        array = shared[0] if shared and r > 0 else input
        pic.step = max(r, 1)
        pic.row(array, r, lambda k, y=-r * dy: (k * pitch, y), width=pitch - 0.08)
    pic.step = 1
    if shared:  # a band behind the rows in shared memory
        last, end = -(len(tr.rounds) - 1) * dy, (tr.blockDim - 0.5) * pitch
        pic.rect(-pitch / 2 - 0.04, -dy + ROW_H / 2 + 0.08, end + 0.04, last - ROW_H / 2 - 0.08,
                 "band")
        pic.text((end + 0.15, -dy), "`input_s`: shared memory\n(on chip, one per block)")
    right = (tr.n - 0.5) * pitch + 0.2
    kept = "read once, never written" if shared else "changed in place"
    pic.text((right, 0), f"`input`: global memory,\n{kept}")
    x_of = lambda t: owner(t) * pitch
    assert all(w.index == owner(w.thread) for w in tr.writes), "a thread wrote what it does not own"
    for r in range(1, len(tr.rounds)):
        y = -r * dy + ROW_H / 2 + R + 0.09  # just above the row the round writes
        pic.step = r
        active = tr.writers(r)
        busy = {t // tr.warp_size for t in active}
        for warp in range(tr.blockDim // tr.warp_size):  # boxed, blue while any thread works
            x1, x2 = x_of(warp * tr.warp_size), x_of((warp + 1) * tr.warp_size - 1)
            pic.rect(x1 - 0.27, y - 0.26, x2 + 0.27, y + 0.26, "warpidle" if warp not in busy
                     else "warp")
        circles = {t: (x_of(t), y) for t in range(tr.blockDim)}
        for t, c in circles.items():
            pic.node(c, str(t), "thr" if t in active else "idle")
        pic.arrows(r, via=circles)
        s = lambda k: "" if k == 1 else "s"
        pic.text((right, -r * dy + 0.24), f"[round {r}: {tr.rounds[r]}]\n{len(active)} thread"
                 f"{s(len(active))} active\n{len(busy)} warp{s(len(busy))} busy")
    return pic


def figure05(tr, g=0.35, x0=1.25, dy=0.74):
    """Two blocks side by side under their segments, each block's tree in its own shared
    memory, drawn with direct arrows (stage 4's tree); then one atomicAdd per block."""
    g, gap = (0.62, 0.1) if DECK else (g, 0.05)  # the deck: 16 elements, larger text
    pic = Picture(tr)
    input, sum = tr.arrays[:2]
    seg = 2 * tr.blockDim
    pic.row(input, 0, lambda k: (x0 + k * g, 0.0), range(tr.gridDim * seg), width=g - gap)
    tree = [r for r in range(1, len(tr.rounds)) if tr.rounds[r] != "atomicAdd"]
    y_of = lambda r: -0.4 - r * dy
    for b, input_s in enumerate(a for a in tr.arrays if a.space == "shared"):
        left = x0 + b * seg * g
        x1, x2, y = left - g / 2 + 0.02, left + (seg - 0.5) * g - 0.02, ROW_H / 2 + 0.1
        for p, q in (((x1, y - 0.06), (x1, y)), ((x1, y), (x2, y)), ((x2, y), (x2, y - 0.06))):
            pic.line(p, q, "tick")  # a bracket over the segment
        pic.text(((x1 + x2) / 2, y), f"block {b}: segment {b}, elements {b * seg}-"
                 f"{(b + 1) * seg - 1}", "south")
        pic.rect(left - g / 2, y_of(1) + ROW_H / 2 + 0.07, left + (seg - 0.5) * g,
                 y_of(tree[-1]) - ROW_H / 2 - 0.07, "band")
        for k, r in enumerate(tree, 1):  # the deck: a round a slide, then the atomicAdd
            pic.step = k
            pic.row(input_s, r, lambda t, y=y_of(r): (left + (2 * t + 0.5) * g, y),
                    width=2 * g - 0.08)
        pic.step = 1
    for k, r in enumerate(tree, 1):
        pic.step = k
        pic.arrows(r)
        pic.text((x0 - g / 2 - 0.1, y_of(r)), tr.rounds[r], "east")
    pic.step = 1
    pic.text((x0 - g / 2 - 0.1, 0), "`input`", "east")
    pic.step = len(tree) + 1
    last = len(tr.rounds) - 1
    total = (x0 + (seg - 0.5) * g, y_of(last) - 0.1)
    pic.row(sum, last, lambda k: total, width=0.9)
    pic.arrows(last)
    pic.text((total[0] - 0.55, total[1]), "one `atomicAdd` a block into `sum`", "east")
    pic.step = 1
    pic.text((x0 + (tr.gridDim * seg - 0.5) * g, total[1]), "`input_s`: shared memory, one\n"
             f"per block; dashed: past n = {tr.n},\nthe identity, no memory read", "east")
    return pic


def figure06(tr, g=0.31, x0=1.1, gap=0.5, dy=0.8):
    """The grid-stride loop: the input wrapped a pass of the grid a row, the segments a block
    walks in its column, each element coloured and numbered by the thread that adds it; then
    each block's tree and its atomicAdd."""
    pic = Picture(tr, thread_colours=tr.blockDim)
    input, sum = tr.arrays[:2]
    who, seg = tr.loaded_by(input), tr.segment
    tiles = seg // tr.blockDim  # COARSE_FACTOR * 2
    passes = sorted({rnd for _, _, rnd in who.values()})  # the rounds of the grid-stride loop
    width = seg * g + (tiles - 1) * 0.05  # a segment: its tiles 0.05 cm apart
    col = lambda b: x0 + b * (width + gap)  # block b's column

    def place(j):  # in the column of the block that reads element j, in the row of its pass
        block, _, rnd = who[j]
        k = j % seg
        return (col(block) + k * g + (k // tr.blockDim) * 0.05, -passes.index(rnd) * dy)

    pic.row(input, 0, place, colour=lambda j: f"thread{who[j][1]}", values=False, width=g - 0.04)
    for j in range(tr.n):
        pic.text(place(j), str(who[j][1]), "center", "num")
    for s in range(tr.n // seg):
        x, y = place(s * seg)
        pic.text((x - g / 2, y + ROW_H / 2), f"segment {s}: elements {s * seg}-{(s + 1) * seg - 1}",
                 "south west")
    for k, rnd in enumerate(passes):
        pic.text((x0 - g / 2 - 0.1, -k * dy), tr.rounds[rnd], "east")
    for b in range(tr.gridDim):
        pic.text((col(b) - g / 2 + width / 2, 0.55), f"block {b}", "south", "labb")
    pic.text((col(0) - g / 2, -dy - 0.3), "thread t adds element `segment + t + tile *"
             f" blockDim.x` of each of its segments,\ntile 0-{tiles - 1} (`COARSE_FACTOR`"
             f" {tiles // 2}), into its register `partial`, then stores it in `input_s[t]`",
             "north west")
    y_of = {"store": -2.3, "stride 2": -2.95, "stride 1": -3.6}
    step = {"store": 2, "stride 2": 3, "stride 1": 4}  # the deck's slides: the loop first
    for b, input_s in enumerate(a for a in tr.arrays if a.space == "shared"):
        pitch = width / tr.blockDim
        pic.step = 2
        pic.rect(col(b) - g / 2, y_of["store"] + ROW_H / 2 + 0.07, col(b) - g / 2 + width,
                 y_of["stride 1"] - ROW_H / 2 - 0.07, "band")
        for name, y in y_of.items():
            pic.step = step[name]
            colour = (lambda t: f"thread{t}") if name == "store" else None
            pic.row(input_s, name, lambda t, y=y, b=b: (col(b) - g / 2 + (t + 0.5) * pitch, y),
                    colour=colour, width=0.62)
    for name, y in y_of.items():
        pic.step = step[name]
        pic.arrows(name)
        pic.text((x0 - g / 2 - 0.1, y), "`input_s`" if name == "store" else name, "east")
    pic.step = 4
    total = ((col(0) + col(1) + width - g) / 2, -4.35)
    pic.row(sum, "atomicAdd", lambda k: total, width=0.9)
    pic.arrows("atomicAdd")
    pic.text((x0 - g / 2 - 0.1, total[1]), "`atomicAdd`", "east")
    pic.text((total[0] + 0.55, total[1]), "`sum`")
    return pic


def figure07(tr, g=0.27, x0=0.95, dy=0.47):
    """(a) a block's 16-byte loads, a tile of blockDim.x vectors a row; (b) the shuffles of
    warp_reduce in one warp."""
    pic = Picture(tr, thread_colours=tr.blockDim)
    input = tr.arrays[0]
    partial = [a for a in tr.arrays if a.name == "partial"][0]
    who, row_len, n4 = tr.loaded_by(input), 4 * tr.blockDim, tr.n // 4  # a tile: blockDim.x vectors

    def place(j):
        if j >= 4 * n4:  # the tail, past the last whole vector: after the last tile's row
            return (x0 + row_len * g + 0.4 + (j - 4 * n4) * g, -((n4 - 1) // tr.blockDim) * dy)
        return (x0 + (j % row_len) * g, -(j // row_len) * dy)

    pic.text((x0 - g / 2 - 0.9, ROW_H / 2 + 0.1), "(a) 16-byte loads: thread t loads vector"
             " `i + tile * blockDim.x`, 4 elements", "south west")
    pic.row(input, 0, place, colour=lambda j: f"thread{who[j][1]}, draw=white", values=False,
            width=g)
    for _, t, v in tr.vector_reads:
        (x1, y), (x2, _) = place(4 * v), place(4 * v + 3)
        pic.rect(x1 - g / 2 + 0.01, y - ROW_H / 2, x2 + g / 2 - 0.01, y + ROW_H / 2, "vec", "front")
        pic.node(((x1 + x2) / 2, y), str(t), f"num, fill=thread{t}", layer="front")
    for j in range(4 * n4, tr.n):
        pic.text(place(j), str(who[j][1]), "center", "num")
    for tile in range(n4 // tr.blockDim):
        pic.text((x0 - g / 2 - 0.1, -tile * dy), f"tile {tile}", "east")
    xr = x0 + (row_len - 0.5) * g + 0.15
    pic.text((xr, -0.5 * dy), f"one block,\n{tr.blockDim} threads,\n`COARSE_FACTOR` 2")
    x, y = place(4 * n4)
    pic.text((x - g / 2, y + ROW_H / 2), f"n % 4 = {tr.n % 4}", "south west")
    # (b) the first warp_reduce, in warp 0
    pitch, xb, yb, dyb = 0.78, x0 + 0.25, -2.65, 0.72
    names = ["tail"] + [r for r in tr.rounds if r.startswith("offset") and "warp 0" not in r]
    lane = "lane `l`" if DECK else "lane l"  # the deck's sans-serif l reads as an I
    pic.text((x0 - g / 2 - 0.9, yb + ROW_H / 2 + 0.12), f"(b) `warp_reduce`: {lane} adds lane"
             f"{' `l + offset`' if DECK else ' l + offset'}'s `partial` (`__shfl_down_sync`)",
             "south west")
    for k, name in enumerate(names):
        y = yb - k * dyb
        pic.step = max(k, 1)  # the deck: an offset a slide
        colour = (lambda t: f"thread{t}") if k == 0 else None
        pic.row(partial, name, lambda t, y=y: (xb + t * pitch, y), range(tr.warp_size),
                colour=colour, width=pitch - 0.1, hide_dead=True)
        if k:
            pic.arrows(name, own=False)
        pic.text((x0 - g / 2 - 0.1, y), "lanes" if k == 0 else name, "east")
    xr = xb + (tr.warp_size - 0.5) * pitch + 0.2
    pic.step = 1
    pic.text((xr, yb), f"{lane} holds thread {'`l`' if DECK else 'l'}'s `partial`")
    pic.text((xr, yb - 1.5 * dyb), "grey: sums no lane reads again\n"
             f"a warp of {tr.warp_size} lanes here; on the GPU\n32 lanes, offsets 16, 8, 4, 2, 1")
    pic.step = len(names) - 1
    pic.text((xr, yb - 3 * dyb), "[valid in lane 0]: to `warp_sums`")
    return pic


def figure_coalescing(tr2, tr3, x0=1.5, pl=0.42, pe=0.21):
    """One warp's global loads in one round, from the replays at the launch's real size (1024
    threads, n = 2048, warps of 32): (a) stage 3's first round, (b) stage 2's third; the memory
    as 32-byte sectors of 8 elements. Then both stages' sector reads over the whole block. The
    deck's: narrower, its labels shorter (its text is larger)."""
    if DECK:
        x0, pl, pe = 1.25, 0.38, 0.19
    pic = Picture()
    lane_x = lambda l: x0 + pl / 2 + l * pl
    elem_x = lambda e: x0 + pe / 2 + e * pe
    per = SECTOR // 4  # elements a sector

    def sector_reads(tr):
        """{(round, warp, k, sector)}: the sectors of input that the k-th load (from 1) of each
        thread of a warp touches in a round; warp None: the host's reads, a request each."""
        kth, out = collections.Counter(), set()
        for r in tr.reads:
            if r.array.name == "input":
                kth[r.round, r.thread] += 1
                warp = None if r.thread is None else r.thread // tr.warp_size
                out.add((r.round, warp, kth[r.round, r.thread], r.index * 4 // SECTOR))
        return out

    def panel(tr, rnd, y, title, summary, sector_labels):
        first = {}  # the first load of each lane of warp 0 in round rnd: input[i]
        for r in tr.reads:
            if r.round == rnd and r.thread in range(tr.warp_size) and r.array.name == "input":
                first.setdefault(r.thread, r.index)
        sectors = {s for rr, warp, k, s in sector_reads(tr) if (rr, warp, k) == (rnd, 0, 1)}
        assert sectors == {e * 4 // SECTOR for e in first.values()}
        pic.text((0, y), title)
        ly, my = y - 0.5, y - 1.5
        pic.text((x0 - 0.1, ly), "lanes", "east")
        pic.text((x0 - 0.1, my), "`input`", "east")
        for lane in range(tr.warp_size):  # numbered every 4 lanes, and the last
            label = str(lane) if lane % 4 == 0 or lane == tr.warp_size - 1 else ""
            pic.node((lane_x(lane), ly), label, "thr" if lane in first else "idle")
        for e in range(8 * per):  # the elements drawn: 8 sectors
            used = e in first.values()
            pic.node((elem_x(e), my), "", "cell, fill=deckblue!55" if used else "cell", pe)
        for k in range(8):
            x1, x2 = elem_x(k * per) - pe / 2, elem_x((k + 1) * per - 1) + pe / 2
            pic.rect(x1, my - ROW_H / 2, x2, my + ROW_H / 2,
                     "draw=deckblue, very thick" if k in sectors else "draw=deckgray!60", "front")
            if sector_labels:
                pic.text(((x1 + x2) / 2, my - ROW_H / 2 - 0.05), f"sector {k}", "north")
        for lane, e in first.items():
            pic.line((lane_x(lane), ly - R), (elem_x(e), my + ROW_H / 2))
        pic.text((x0, my - (0.9 if sector_labels else 0.45)), summary.format(
            loads=len(first), sectors=len(sectors), fetched=SECTOR * len(sectors),
            used=4 * len(first)))

    if DECK:
        panel(tr3, 1, 0.0, "(a) stage 3, round 1: lane t loads `input[t]`", "{loads} loads in a"
              " row: [{sectors} sectors], {fetched} bytes fetched, {used} used", True)
        pic.step = 2  # stage 2's warp on a second slide
        panel(tr2, 3, -2.95, "(b) stage 2, round 3: lane t loads `input[2t]` if `t % 4 == 0`",
              "{loads} loads, 8 elements apart: [{sectors} sectors], {fetched} bytes fetched,"
              " {used} used", False)
        pic.text((0, -5.45), "The whole block, every round: stage 2 reads"
                 f" [{len(sector_reads(tr2))} sectors], stage 3 [{len(sector_reads(tr3))}]")
        return pic
    panel(tr3, 1, 0.0, "(a) stage 3, round 1 (stride 1024): lane t loads `input[t]`, then"
          " `input[t + 1024]`", "{loads} loads of 4 bytes, in a row: [{sectors} sectors] of 32"
          " bytes, {fetched} bytes fetched, {used} used", True)
    pic.step = 2  # the deck: stage 2's warp on a second slide
    panel(tr2, 3, -2.95, "(b) stage 2, round 3 (stride 4): lane t loads `input[2t]` if `t % 4"
          " == 0`, then `input[2t + 4]`", "{loads} loads of 4 bytes, 8 elements apart: [{sectors}"
          " sectors], {fetched} bytes fetched, {used} used", False)
    pic.text((0, -5.45), f"One block, n = {tr2.n}, every round, both loads and thread 0's last"
             f" read: stage 2 reads [{len(sector_reads(tr2))} sectors], stage 3"
             f" [{len(sector_reads(tr3))}]")
    return pic


def figure_coarsening(seg, coarse, pitch=0.43, dy=0.55):
    """The course notes' coarsening figure, from the replays of their two kernels (the segmented
    one is stage 5's at n = 32): each step a row of the block's threads, blue while they add.
    (a) two blocks of 8 threads, one after the other (a GPU that holds one block at a time);
    (b) one coarsened block."""
    pic = Picture()

    def steps(tr, b):  # the rounds in which block b adds (writes of two operands), atomics aside
        return [(b, r) for r in range(1, len(tr.rounds)) if tr.rounds[r] != "atomicAdd" and any(
            w.round == r and w.block == b and len(w.parts) > 1 for w in tr.writes)]

    rows_a = [row for b in range(seg.gridDim) for row in steps(seg, b)]
    rows_b = steps(coarse, 0)
    xa, xb, second = 1.4, 8.25, {}  # second: a block's second step, where its label goes
    if DECK:  # the deck's text is larger: panel (b) further right, its words fewer
        xb = 9.0

    def panel(tr, rows, x, title, total):
        pic.text((x - 0.3, 0.45), title)
        for k, (b, r) in enumerate(rows, 1):
            active = tr.writers(r, b)
            for t in range(tr.blockDim):
                pic.node((x + t * pitch, -k * dy), str(t), "thr" if t in active else "idle")
            pic.text((x + (tr.blockDim - 0.5) * pitch + 0.1, -k * dy), tr.rounds[r])
            if tr is seg and k in second:
                pic.text((xb - 0.55, -k * dy), f"[block {b}]", "east")
        pic.text((x - 0.3, -(len(rows_a) + 1) * dy - 0.05), total)

    for k in range(1, max(len(rows_a), len(rows_b)) + 1):
        pic.text((0.95, -k * dy), f"step {k}", "east")
    for b in range(seg.gridDim):  # a band behind each block's steps
        ks = [k for k, (bb, _) in enumerate(rows_a, 1) if bb == b]
        second[ks[1]] = b
        pic.rect(xa - 0.3, -ks[-1] * dy - 0.25, xb - 0.45, -ks[0] * dy + 0.25,
                 "band" if b % 2 == 0 else "bandgrey")
    if DECK:
        panel(seg, rows_a, xa, f"(a) {seg.gridDim} blocks, {2 * seg.blockDim} elements each",
              f"[{len(rows_a)} steps]: block 1 waits for block 0")
        pic.step = 2  # the coarsened block on a second slide
        panel(coarse, rows_b, xb, f"(b) 1 block, {coarse.n} elements, `COARSE_FACTOR` 2",
              f"[{len(rows_b)} steps]: 3 adds in a register, 1 tree")
        return pic
    panel(seg, rows_a, xa, f"(a) {seg.gridDim} blocks of {seg.blockDim} threads, "
          f"{2 * seg.blockDim} elements each",
          f"[{len(rows_a)} steps]: block 1 waits for block 0's end")
    pic.step = 2  # the deck: the coarsened block on a second slide
    panel(coarse, rows_b, xb, f"(b) 1 block of {coarse.blockDim} threads, {coarse.n} elements "
          "(`COARSE_FACTOR` 2)", f"[{len(rows_b)} steps]: 3 adds in a register, then the tree")
    return pic


# Each [figure] of a stage.ini names one of these replays: (the figure that draws it, its loops).
REPLAYS = {
    "atomic": (figure01, replay_atomic),
    "interleaved": (lambda tr: figure_tree(tr, lambda t: 2 * t), replay_interleaved),
    "strided": (figure_tree, replay_strided),
    "shared": (figure_tree, replay_shared),
    "segmented": (figure05, replay_segmented),
    "coarsened": (figure06, replay_coarsened),
    "shuffle": (figure07, replay_shuffle),
}
COARSENED = ("coarsened", "shuffle")  # replays that take the stage's own COARSE_FACTOR


def coarse_factor(stage):
    """The `#define COARSE_FACTOR N` of the stage's reduce.cu, the one the replay must use."""
    with open(stage.source) as f:
        m = re.search(r"^#define COARSE_FACTOR (\d+)", f.read(), re.M)
    if not m:
        sys.exit(f"mapping.py: {stage.name}'s replay needs the #define COARSE_FACTOR of "
                 f"{os.path.relpath(stage.source)}, which has none.")
    return int(m.group(1))


def stage_figures():
    """(name, caption, figure, replay) of each stage whose stage.ini has a [figure], and the
    folder its PNG goes to: {name: folder}."""
    figures, folders = [], {}
    for st in stages.load():
        if not st.figure:
            continue
        kind = st.figure.get("replay")
        if kind not in REPLAYS:
            sys.exit(f"mapping.py: {st.name}/stage.ini: replay = {kind} is none of "
                     f"{', '.join(REPLAYS)}.")
        figure, replay = REPLAYS[kind]
        if kind in COARSENED:
            replay = (lambda r, cf: lambda: r(cf))(replay, coarse_factor(st))
        figures.append((st.short, st.figure["caption"], figure, replay))
        folders[st.short] = st.dir
    return figures, folders


# The deck's other figures, written by --tex only (no PNG, no lesson shows them).
DECK_FIGURES = [
    ("coalescing", "A warp's loads and the 32-byte sectors they touch, stages 3 and 2",
     figure_coalescing, lambda: replay_interleaved(2048, 1024, 32),
     lambda: replay_strided(2048, 1024, 32)),
    ("coarsening", "The course notes' coarsening figure: two blocks, 8 steps; one coarsened, 6",
     figure_coarsening, lambda: replay_segmented(32, "`A[i] + A[i + 8]`"), notes_coarse),
]


def pictures(figures):
    """(name, caption, Picture) for each of figures; stops at the first replay that is wrong."""
    out = []
    for name, caption, figure, *replays in figures:
        try:
            trs = [replay() for replay in replays]
        except AssertionError as e:
            sys.exit(f"mapping.py: the replay of {name} is wrong: {e}.")
        out.append((name, caption, figure(*trs)))
    return out


# ------------------------------------------------------------------------------------------------
# Output: the .tex files, and the PNGs through LuaLaTeX and pdftoppm.

MAX_W_CM, MAX_H_CM = 12.5, 6.0  # a 16:9 Beamer frame's body, under its title
DPI = 180
ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD = os.path.relpath(os.path.join(ROOT, "build", "figures"))  # the LaTeX files, the PDF

# One page per picture, as large as the picture plus 1 mm around it; its size goes to the log.
# No standalone or preview package: neither is in texlive-latex-recommended.
WRAPPER = r"""\documentclass[11pt]{article}
\usepackage{fontspec}
\renewcommand{\familydefault}{\sfdefault}
\usepackage{tikz}
\usetikzlibrary{arrows.meta}
%(colours)s
\pagestyle{empty}
\hoffset=-1in \voffset=-1in
\newsavebox{\figurebox}
\newcommand{\figurepage}[1]{%%
  \sbox{\figurebox}{\input{#1}}%%
  \typeout{FIGURE-SIZE #1 \the\wd\figurebox\space\the\dimexpr\ht\figurebox+\dp\figurebox\relax}%%
  \pagewidth=\dimexpr\wd\figurebox+2mm\relax
  \pageheight=\dimexpr\ht\figurebox+\dp\figurebox+2mm\relax
  \shipout\vbox{\kern1mm\hbox{\kern1mm\usebox{\figurebox}}}}
\begin{document}
%(pages)s
\end{document}
"""


def deck_colours():
    """The deck's colour definitions, read from slides/preamble.tex: kept in one place."""
    path = os.path.join(ROOT, "slides", "preamble.tex")
    with open(path) as f:
        lines = [line.strip() for line in f if line.startswith("\\definecolor{deck")]
    if not lines:
        sys.exit(f"mapping.py: {path} defines no deck colours (\\definecolor{{deck...}}).")
    return "\n".join(lines)


def write_tex(pics, directory, say=False, deck=False):
    os.makedirs(directory, exist_ok=True)
    for name, caption, pic in pics:
        with open(os.path.join(directory, name + ".tex"), "w") as f:
            f.write(pic.tex(caption, deck))
        if say:
            print(f"{os.path.join(directory, name + '.tex')}: {caption}")


def render_png(pics, folders):
    for tool in ("lualatex", "pdftoppm"):
        if shutil.which(tool) is None:
            sys.exit(f"mapping.py: --png needs {tool}, which is not installed (Debian: apt-get"
                     " install texlive-luatex texlive-pictures lmodern poppler-utils).")
    write_tex(pics, BUILD)
    with open(os.path.join(BUILD, "figures.tex"), "w") as f:
        f.write(WRAPPER % {"colours": deck_colours(),
                           "pages": "\n".join(f"\\figurepage{{{n}.tex}}" for n, _, _ in pics)})
    env = dict(os.environ, max_print_line="10000")
    # LuaLaTeX caches its font names in TEXMFVAR: under build/ when that is not writable.
    texmfvar = subprocess.run(["kpsewhich", "-var-value", "TEXMFVAR"], text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.strip()
    try:
        os.makedirs(texmfvar, exist_ok=True)
        writable = texmfvar and os.access(texmfvar, os.W_OK)
    except OSError:
        writable = False
    if not writable:
        env["TEXMFVAR"] = os.path.abspath(os.path.join(BUILD, "texmf-var"))
    latex = subprocess.run(["lualatex", "--interaction=nonstopmode", "--halt-on-error",
                            "figures.tex"], cwd=BUILD, env=env, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if latex.returncode != 0:
        errors = [line for line in latex.stdout.splitlines() if line.startswith("!")]
        sys.exit(f"mapping.py: lualatex failed ({'; '.join(errors[:2]) or 'no message'}); the"
                 f" log is {os.path.join(BUILD, 'figures.log')}.")
    sizes = {name: (float(w) / 72.27 * 2.54, float(h) / 72.27 * 2.54) for name, w, h in
             re.findall(r"FIGURE-SIZE (\S+)\.tex ([\d.]+)pt ([\d.]+)pt", latex.stdout)}
    too_big = []
    for page, (name, caption, _) in enumerate(pics, 1):
        png = os.path.relpath(os.path.join(folders[name], "figure.png"))
        subprocess.run(["pdftoppm", "-png", "-r", str(DPI), "-f", str(page), "-l", str(page),
                        "-singlefile", os.path.join(BUILD, "figures.pdf"), png[:-4]], check=True)
        with open(png, "rb") as f:  # the PNG's IHDR: its width and height
            head = f.read(24)
        pw, ph = int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
        (w, h) = sizes[name]
        print(f"{png}: {pw}x{ph} px, {w:.1f} x {h:.1f} cm: {caption}")
        if w > MAX_W_CM or h > MAX_H_CM:
            too_big.append(f"{name} is {w:.1f} x {h:.1f} cm")
    if too_big:
        sys.exit(f"mapping.py: larger than a frame's {MAX_W_CM} x {MAX_H_CM} cm: "
                 f"{', '.join(too_big)}.")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tex", metavar="DIR", help="write DIR/stepNN.tex, bare tikzpictures")
    ap.add_argument("--png", action="store_true",
                    help="write each stage's figure.png in its folder, through LuaLaTeX")
    args = ap.parse_args()
    if not (args.tex or args.png):
        ap.error("say --tex DIR, --png, or both")
    global DECK
    figures, folders = stage_figures()
    if args.tex:
        DECK = True
        write_tex(pictures(figures) + pictures(DECK_FIGURES), args.tex, say=True, deck=True)
        DECK = False
    if args.png:
        render_png(pictures(figures), folders)


if __name__ == "__main__":
    main()
