#!/usr/bin/env python3
"""rewrite.py: the CPU model's front end. Reads a .cu file with clang's CUDA front end (libclang)
and writes it again as C++ that a host compiler builds against model/cuda_runtime.h, every line
where it was (so that the compiler's and the model's messages name the file's own lines):

  kernel<<<grid, block, bytes, stream>>>(args)
      -> cudamodel::launch([=](auto &&...a) { kernel(a...); }, "kernel", grid, block, bytes,
                           stream)(args)            (templates, deduced or not, as written)
  __shared__ T name[N];             (in a function)
      -> static T (*holder)[N]; auto &name = cudamodel::shared_var(holder, "name");
  extern __shared__ T name[];
      -> static T (*holder)[]; auto &name = cudamodel::dynamic_shared(holder);
  __shared__ at namespace scope     each use becomes cudamodel::shared_var(holder, "name")
  a kernel's body                   starts with cudamodel::kernel_entry(the kernel, its
                                    __launch_bounds__), which checks what a GPU checks at launch
  #include <cuda/...>, <cub/...>    CCCL's headers, included as for the host (no __CUDA_ARCH__)

What the model does not run stops here, in one sentence that names it (inline PTX, launches from
device code, a grid-wide sync, a CUDA name the model does not declare). Any other error is the
file's own, in clang's words.

  python3 model/rewrite.py --out DIR [-I.. -D.. -U.. -include .. -std=..] FILE.cu
writes DIR/FILE.cu (and DIR/<path> for a header of FILE.cu's folder that needed a change).
Exit status: 0 written, 1 the file's error or a feature the model does not run (messages on
stderr), 3 libclang missing.
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CCCL_PREFIXES = ("cuda/", "cub/", "thrust/", "nv/")


def say(msg):
    print(msg, file=sys.stderr)


try:
    import clang.cindex as ci
except ImportError:
    say("cucc: the CPU model reads CUDA with libclang's Python module, which is missing: "
        "make deps installs it (pip install libclang).")
    sys.exit(3)

K = ci.CursorKind


def resource_args():
    """Where clang's own headers (stddef.h, ...) are: libclang from PyPI has none. A clang's
    resource folder if one is installed, else GCC's headers of the same kind."""
    for probe in (["clang", "-print-resource-dir"],):
        try:
            out = subprocess.run(probe, capture_output=True, text=True, timeout=10).stdout.strip()
            if out and os.path.isfile(os.path.join(out, "include", "stddef.h")):
                return ["-resource-dir", out]
        except OSError:
            pass
    for root in sorted(os.listdir("/usr/lib")) if os.path.isdir("/usr/lib") else []:
        base = os.path.join("/usr/lib", root, "lib", "clang")
        if root.startswith("llvm-") and os.path.isdir(base):
            for v in sorted(os.listdir(base), reverse=True):
                if os.path.isfile(os.path.join(base, v, "include", "stddef.h")):
                    return ["-resource-dir", os.path.join(base, v)]
    cxx = os.environ.get("CXX", "g++")
    try:
        inc = subprocess.run([cxx, "-print-file-name=include"], capture_output=True, text=True,
                             timeout=10).stdout.strip()
        if os.path.isfile(os.path.join(inc, "stddef.h")):
            return ["-isystem", inc]
    except OSError:
        pass
    return []


def cccl_include():
    """CCCL's headers (libcu++, CUB, Thrust): the CUDA toolkit's, or PyPI's nvidia-cuda-cccl
    (CUCC_TOOLKIT=none: PyPI's only, as on a machine without the toolkit)."""
    toolkits = [] if os.environ.get("CUCC_TOOLKIT") == "none" else [
        os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", ""), "/usr/local/cuda"]
    for d in toolkits:
        if d and os.path.isfile(os.path.join(d, "include", "cccl", "cuda", "std", "version")):
            return os.path.join(d, "include", "cccl")
    try:
        import nvidia  # the wheels' namespace package
        for base in nvidia.__path__:
            for sub in ("cu13/include/cccl", "cu13/include", "cuda_cccl/include",
                        "cu12/include/cccl", "cu12/include"):
                d = os.path.join(base, sub)
                if os.path.isfile(os.path.join(d, "cuda", "std", "version")):
                    return d
    except ImportError:
        pass
    return None


# ---- what the model does not run: names that look like CUDA's -----------------------------------
CUDA_NAME = re.compile(r"^(__\w+|cuda[A-Z]\w*|cu[A-Z]\w*|atomic\w+|make_\w+|tex\w*|surf\w*|"
                       r"nv\w+|cg|cooperative_groups|wmma|mma|cub|thrust)$")
CUDA_NS = re.compile(r"(cooperative_groups|cg|cuda|cub|thrust|nvcuda|wmma)")
CUDA_FILE = re.compile(r"^(cuda\w*\.h|cu\w+\.h|cooperative_groups/.*|cub/.*|thrust/.*|cuda/.*|"
                       r"mma\.h|sm_\d+_\w+\.h|nvrtc\.h|curand\w*\.h|cublas\w*\.h|cufft\w*\.h|"
                       r"nccl\.h|device_\w+\.h|\w+_intrinsics\.h|vector_\w+\.h)$")


def unsupported(where, what, instead=""):
    return (f"{where}: the CPU model does not run {what}: {instead}build and run this file on "
            f"a GPU (make MODEL=gpu), where nvcc compiles it.")


def translate(diag):
    """A clang error, in the model's words when it names CUDA the model lacks; else None."""
    msg = diag.spelling
    loc = diag.location
    where = f"{loc.file.name if loc.file else '?'}:{loc.line}"
    m = re.match(r"use of undeclared identifier '([\w:]+)'|unknown type name '([\w:]+)'|"
                 r"no template named '(\w+)'$|use of undeclared '(\w+)'", msg)
    if m:
        name = next(g for g in m.groups() if g)
        if CUDA_NAME.match(name.split("::")[-1]) or CUDA_NS.match(name.split("::")[0]):
            return unsupported(where, name)
        return None
    m = re.match(r"no (?:member|template) named '(\w+)' in (?:namespace )?'([\w:]+)'", msg)
    if m and CUDA_NS.fullmatch(m.group(2).split("::")[0]):
        return unsupported(where, f"{m.group(2)}::{m.group(1)}")
    if re.match(r"reference to __global__ function '\w+' in __global__ function", msg):
        return unsupported(where, "kernel launches from device code (dynamic parallelism)")
    m = re.match(r"'(.+)' file not found", msg)
    if m and CUDA_FILE.match(m.group(1)):
        return unsupported(where, f"what <{m.group(1)}> declares")
    m = re.match(r"no matching function for call to '(\w+)'", msg)
    if m and CUDA_NAME.match(m.group(1)):
        return (f"{where}: no {m.group(1)} for these argument types, in the CPU model at least: "
                f"if nvcc builds it, the model lacks it; run this file on a GPU (make MODEL=gpu).")
    return None


# ---- the rewrite -------------------------------------------------------------------------------
class Edits:
    """Text edits of one file, by byte offset: (start, end, text), never overlapping."""

    def __init__(self, path):
        self.path = path
        self.data = open(path, "rb").read()
        self.edits = {}

    def replace(self, start, end, text):
        self.edits[(start, end)] = text

    def insert(self, at, text):
        self.edits[(at, at, len(self.edits))] = text

    def apply(self):
        out, pos = [], 0
        for key in sorted(self.edits, key=lambda k: (k[0], k[1])):
            start, end = key[0], key[1]
            if start < pos:
                raise SystemExit(f"cucc: rewrite.py: overlapping edits in {self.path} at byte {start}")
            out.append(self.data[pos:start])
            out.append(self.edits[key].encode())
            pos = end
        out.append(self.data[pos:])
        return b"".join(out)


class Rewriter:
    def __init__(self, tu, main, user_dirs, skip_dirs):
        self.tu = tu
        self.main = os.path.realpath(main)
        self.user_dirs = user_dirs
        self.skip_dirs = skip_dirs
        self.files = {}
        self.errors = []
        self.namespace_shared = {}  # USR -> (holder, dynamic, name)
        self.file_cache = {}

    def user_file(self, f):
        if f is None:
            return False
        name = f.name
        if name not in self.file_cache:
            real = os.path.realpath(name)
            ok = real == self.main or (
                any(real.startswith(d + os.sep) for d in self.user_dirs) and
                not any(real.startswith(d + os.sep) for d in self.skip_dirs))
            self.file_cache[name] = ok
        return self.file_cache[name]

    def edits(self, f):
        real = os.path.realpath(f.name)
        if real not in self.files:
            self.files[real] = Edits(real)
        return self.files[real]

    def where(self, c):
        loc = c.location
        return f"{loc.file.name if loc.file else '?'}:{loc.line}"

    def tokens(self, c):
        """The file's tokens over c's extent, as written: the extent's ends are taken where the
        file has them (a macro's use, not its definition)."""
        start, end = c.extent.start, c.extent.end
        if start.file is None or end.file is None or start.file.name != end.file.name:
            return []
        f = start.file
        rng = ci.SourceRange.from_locations(ci.SourceLocation.from_offset(self.tu, f, start.offset),
                                            ci.SourceLocation.from_offset(self.tu, f, end.offset))
        return list(self.tu.get_tokens(extent=rng))

    # -- launches
    def launch(self, c, in_device):
        toks = self.tokens(c)
        opens = [t for t in toks if t.spelling == "<<<"]
        closes = [t for t in toks if t.spelling == ">>>"]
        if not opens or not closes or not self.user_file(opens[0].location.file):
            self.errors.append(f"{self.where(c)}: the CPU model does not run a kernel launch "
                               "written inside a macro: write the <<<...>>> launch out in the code "
                               "(or run this file on a GPU, make MODEL=gpu).")
            return
        if in_device:
            self.errors.append(unsupported(self.where(c), "kernel launches from device code "
                                           "(dynamic parallelism)"))
            return
        op, cl = opens[0], closes[0]
        e = self.edits(op.location.file)
        start = c.extent.start.offset
        callee = e.data[start:op.extent.start.offset].decode()
        name = " ".join(callee.split()).replace('"', "'")
        e.insert(start, "cudamodel::launch([=](auto &&...cuda_model_a) { ")
        e.replace(op.extent.start.offset, op.extent.end.offset,
                  f"(cuda_model_a...); }}, \"{name}\", ")
        e.replace(cl.extent.start.offset, cl.extent.end.offset, ")")

    # -- __shared__ variables
    def shared(self, c, decl_stmt):
        # `__shared__ int a, b;`: b's own extent starts at b; the statement's has the specifiers
        toks = self.tokens(decl_stmt) if decl_stmt is not None else self.tokens(c)
        if not any(t.spelling == "__shared__" for t in toks) and decl_stmt is None:
            toks = self.declaration_tokens(c)
        shared_tok = [t for t in toks if t.spelling == "__shared__"]
        if not shared_tok or not self.user_file(shared_tok[0].location.file):
            self.errors.append(f"{self.where(c)}: the CPU model does not run a __shared__ "
                               "declaration written by a macro: write __shared__ out in the code "
                               "(or run this file on a GPU, make MODEL=gpu).")
            return
        name_tok = [t for t in toks if t.spelling == c.spelling and
                    t.location.offset == c.location.offset]
        first = [t for t in toks if t.location.offset <= c.location.offset]
        # the specifiers: the tokens before the first declarator of the statement
        spec_end = next((t.location.offset for t in first if t.spelling in (",",)), None)
        if not name_tok:
            self.errors.append(f"{self.where(c)}: the CPU model cannot find the name of the "
                               f"__shared__ variable {c.spelling}: run this file on a GPU.")
            return
        e = self.edits(c.location.file)
        dynamic = c.type.kind == ci.TypeKind.INCOMPLETEARRAY
        holder = f"cuda_model_shared_{c.location.line}_{c.spelling}"
        before = [t for t in toks if t.location.offset < name_tok[0].location.offset and
                  (spec_end is None or t.location.offset < spec_end)]
        has_static = any(t.spelling == "static" for t in before)
        for t in before:
            if t.spelling == "extern":
                e.replace(t.extent.start.offset, t.extent.end.offset, "")
        st = shared_tok[0]
        e.replace(st.extent.start.offset, st.extent.end.offset, "" if has_static else "static")
        nt = name_tok[0]
        e.replace(nt.extent.start.offset, nt.extent.end.offset, f"(*{holder})")
        use = (f"cudamodel::dynamic_shared({holder})" if dynamic else
               f"cudamodel::shared_var({holder}, \"{c.spelling}\")")
        if decl_stmt is not None:
            e.insert(decl_stmt.extent.end.offset, f" auto &{c.spelling} = {use};")
        else:
            self.namespace_shared[c.get_usr()] = use

    def declaration_tokens(self, c):
        """The tokens of the namespace-scope declaration that declares c, from the end of the
        one before it (a later declarator's own extent starts at its name)."""
        f = c.location.file
        data = open(f.name, "rb").read()
        start = max(data.rfind(b";", 0, c.location.offset), data.rfind(b"}", 0, c.location.offset),
                    data.rfind(b"{", 0, c.location.offset)) + 1
        rng = ci.SourceRange.from_locations(ci.SourceLocation.from_offset(self.tu, f, start),
                                            ci.SourceLocation.from_offset(self.tu, f,
                                                                          c.extent.end.offset))
        return list(self.tu.get_tokens(extent=rng))

    # -- kernels
    def kernel(self, c, body):
        children = list(c.get_children())
        targs = []
        for ch in children:
            if ch.kind in (K.TEMPLATE_TYPE_PARAMETER, K.TEMPLATE_NON_TYPE_PARAMETER,
                           K.TEMPLATE_TEMPLATE_PARAMETER):
                pack = any(t.spelling == "..." for t in self.tokens(ch))
                targs.append(ch.spelling + ("..." if pack else ""))
        ptypes = [ch.type.spelling for ch in children if ch.kind == K.PARM_DECL]
        bound = ["0", "0"]
        for ch in children:
            if ch.kind == K.UNEXPOSED_ATTR:
                toks = [t.spelling for t in self.tokens(ch)]
                if toks[:2] == ["__launch_bounds__", "("] and toks[-1] == ")":
                    args, depth, cur = [], 0, []
                    for t in toks[2:-1]:
                        if t == "," and depth == 0:
                            args.append(" ".join(cur))
                            cur = []
                            continue
                        depth += t in "([{<"
                        depth -= t in ")]}>"
                        cur.append(t)
                    args.append(" ".join(cur))
                    for i, a in enumerate(args[:2]):
                        bound[i] = f"({a})"
        name = c.spelling + (f"<{', '.join(targs)}>" if c.kind == K.FUNCTION_TEMPLATE else "")
        odd = any(s in p for p in ptypes for s in ("(anonymous", "(lambda", "(unnamed"))
        me = ("nullptr" if odd else
              f"(const void *)static_cast<void (*)({', '.join(ptypes)})>(&{name})")
        self.edits(body.location.file).insert(
            body.extent.start.offset + 1,
            f" cudamodel::kernel_entry({me}, {bound[0]}, {bound[1]});")

    # -- the walk
    def walk(self, c, in_device=False, decl_stmt=None):
        kind = c.kind
        if kind in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE, K.CXX_METHOD, K.LAMBDA_EXPR):
            attrs = {ch.kind for ch in c.get_children()}
            is_kernel = K.CUDAGLOBAL_ATTR in attrs
            device = is_kernel or (K.CUDADEVICE_ATTR in attrs and K.CUDAHOST_ATTR not in attrs)
            if kind != K.LAMBDA_EXPR:
                in_device = device
            body = next((ch for ch in c.get_children() if ch.kind == K.COMPOUND_STMT), None)
            if is_kernel and body is not None and c.is_definition():
                self.kernel(c, body)
        elif kind == K.CALL_EXPR:
            kids = list(c.get_children())
            if any(k.kind == K.CALL_EXPR and k.spelling in ("__cudaPushCallConfiguration",
                                                            "cudaConfigureCall") for k in kids):
                self.launch(c, in_device)
            self.check_supported(c)
        elif kind in (K.DECL_REF_EXPR, K.MEMBER_REF_EXPR):
            self.check_supported(c)
            ref = c.referenced
            if kind == K.DECL_REF_EXPR and ref is not None and ref.kind == K.VAR_DECL:
                use = self.namespace_shared.get(ref.get_usr())
                if use is not None and self.user_file(c.location.file):
                    toks = self.tokens(c)
                    if len(toks) == 1 and toks[0].spelling == ref.spelling:
                        self.edits(c.location.file).replace(
                            toks[0].extent.start.offset, toks[0].extent.end.offset, use)
                    else:
                        self.errors.append(f"{self.where(c)}: the CPU model cannot rewrite this "
                                           f"use of the __shared__ variable {ref.spelling}: run "
                                           "this file on a GPU.")
        elif kind == K.VAR_DECL:
            if any(ch.kind == K.CUDASHARED_ATTR for ch in c.get_children()):
                parent = c.semantic_parent
                local = parent is not None and parent.kind in (
                    K.FUNCTION_DECL, K.FUNCTION_TEMPLATE, K.CXX_METHOD, K.LAMBDA_EXPR,
                    K.CONSTRUCTOR, K.DESTRUCTOR)
                self.shared(c, decl_stmt if local else None)
        elif kind == K.ASM_STMT:
            self.errors.append(unsupported(self.where(c), "inline PTX (asm)",
                                           "write it in CUDA C, or "))
        elif kind == K.INCLUSION_DIRECTIVE:
            self.include(c)
        for ch in c.get_children():
            self.walk(ch, in_device, c if kind == K.DECL_STMT else None)

    def check_supported(self, c):
        ref = c.referenced
        if ref is None:
            return
        for ch in ref.get_children():
            if ch.kind == K.ANNOTATE_ATTR and ch.spelling.startswith("cuda_model_unsupported:"):
                self.errors.append(unsupported(self.where(c), ch.spelling.split(":", 1)[1]))

    def include(self, c):
        name = c.spelling
        if not name.startswith(CCCL_PREFIXES) or not self.user_file(c.location.file):
            return
        e = self.edits(c.location.file)
        line = c.location.line
        lines = e.data.split(b"\n")
        start = sum(len(x) + 1 for x in lines[:line - 1])
        text = lines[line - 1].decode()
        path = c.location.file.name
        e.replace(start, start + len(text),
                  CCCL_HOST +
                  "#pragma push_macro(\"__CUDA_ARCH__\")\n#pragma push_macro(\"__CUDACC__\")\n"
                  "#undef __CUDA_ARCH__\n#undef __CUDACC__\n" + text +
                  "\n#pragma pop_macro(\"__CUDACC__\")\n#pragma pop_macro(\"__CUDA_ARCH__\")\n"
                  f"#line {line + 1} \"{path}\"")  # as cccl_prelude includes them

    def keywords(self):
        """__noinline__, a keyword of clang's CUDA, spelled out for the host compiler."""
        for f in {c.location.file.name for c in self.tu.cursor.get_children()
                  if c.location.file is not None and self.user_file(c.location.file)}:
            data = open(f, "rb").read()
            if b"__noinline__" not in data:
                continue
            ff = self.tu.get_file(f)
            rng = ci.SourceRange.from_locations(ci.SourceLocation.from_offset(self.tu, ff, 0),
                                                ci.SourceLocation.from_offset(self.tu, ff, len(data)))
            for t in self.tu.get_tokens(extent=rng):
                if t.spelling == "__noinline__":
                    self.edits(ff).replace(t.extent.start.offset, t.extent.end.offset,
                                           "__attribute__((noinline))")

    def run(self):
        self.keywords()
        for c in self.tu.cursor.get_children():
            if self.user_file(c.location.file):
                self.walk(c)
        # namespace-scope __shared__ variables are declared before they are used: a second walk
        # rewrites the uses the first one met before their declaration was known
        if self.namespace_shared:
            for c in self.tu.cursor.get_children():
                if self.user_file(c.location.file) and c.kind != K.VAR_DECL:
                    self.walk_uses(c)

    def walk_uses(self, c):
        if c.kind == K.DECL_REF_EXPR:
            ref = c.referenced
            if ref is not None and ref.kind == K.VAR_DECL and \
                    ref.get_usr() in self.namespace_shared and self.user_file(c.location.file):
                toks = self.tokens(c)
                if len(toks) == 1:
                    self.edits(c.location.file).replace(toks[0].extent.start.offset,
                                                        toks[0].extent.end.offset,
                                                        self.namespace_shared[ref.get_usr()])
        for ch in c.get_children():
            self.walk_uses(ch)


# CCCL on the host without the toolkit's extended floating types (their headers are PTX)
CCCL_HOST = ("#ifndef CCCL_DISABLE_FP16_SUPPORT\n#define CCCL_DISABLE_FP16_SUPPORT 1\n#endif\n"
             "#ifndef CCCL_DISABLE_FLOAT128_SUPPORT\n#define CCCL_DISABLE_FLOAT128_SUPPORT 1\n"
             "#endif\n")
CCCL_INCLUDE = re.compile(r"^\s*#\s*include\s*[<\"]((?:cuda|cub|thrust|nv)/[^>\"]+)[>\"]", re.M)


def cccl_prelude(src, out):
    """CCCL's headers that the file includes, included first in the parse as a host compiler
    includes them (no __CUDA_ARCH__, no __CUDA__), as model/cucc's compile includes them: their
    device paths are PTX, which the model does not run. Later includes of them are no-ops."""
    names = CCCL_INCLUDE.findall(open(src, encoding="utf-8", errors="replace").read())
    if not names:
        return []
    macros = ["__CUDA_ARCH__", "__CUDA__", "__CUDACC__", "__NVCC__", "CUDA_VERSION",
              "__CUDACC_VER_MAJOR__", "__CUDACC_VER_MINOR__", "__CUDACC_VER_BUILD__"]
    text = "#pragma clang force_cuda_host_device begin\n" + CCCL_HOST
    text += "".join(f"#pragma push_macro(\"{m}\")\n#undef {m}\n" for m in macros)
    text += "".join(f"#include <{n}>\n" for n in dict.fromkeys(names))
    text += "".join(f"#pragma pop_macro(\"{m}\")\n" for m in reversed(macros))
    text += "#pragma clang force_cuda_host_device end\n"
    path = os.path.join(out, "cccl_prelude.h")
    with open(path, "w") as f:
        f.write(text)
    return ["-include", path]


def foreign_headers(tu, src_dir, cccl):
    """A CUDA toolkit header the model does not provide (cuda_fp16.h, curand_kernel.h, ...),
    included by the file: the model's one sentence, before the errors clang finds in it."""
    out = []
    own = [HERE] + ([os.path.realpath(cccl)] if cccl else [])
    for c in tu.cursor.get_children():
        if c.kind != K.INCLUSION_DIRECTIVE or c.location.file is None:
            continue
        if not os.path.realpath(c.location.file.name).startswith(src_dir + os.sep):
            continue
        f = c.get_included_file()
        real = os.path.realpath(f.name) if f else ""
        if any(real.startswith(d + os.sep) for d in own):
            continue
        if CUDA_FILE.match(c.spelling) or re.search(r"/cuda[-\w.]*/(targets/[^/]+/)?include/", real):
            m = unsupported(f"{c.location.file.name}:{c.location.line}",
                            f"what <{c.spelling}> declares (a CUDA header the model does not have)")
            if m not in out:
                out.append(m)
    return out


def main(argv):
    out, args, src = None, [], None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--out":
            out = argv[i + 1]
            i += 2
            continue
        if a in ("-I", "-D", "-U", "-include", "-isystem", "-iquote"):
            args += [a, argv[i + 1]]
            i += 2
            continue
        if a.startswith(("-I", "-D", "-U", "-std=", "-isystem", "-iquote")):
            args.append(a)
        elif a.endswith((".cu", ".c", ".cc", ".cpp", ".cuh")) and not a.startswith("-"):
            src = a
        i += 1
    if out is None or src is None:
        say("usage: rewrite.py --out DIR [-I.. -D.. -U.. -include .. -std=..] FILE.cu")
        return 2
    src_dir = os.path.dirname(os.path.realpath(src))
    cccl = cccl_include()
    os.makedirs(out, exist_ok=True)
    clang_args = (["-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=sm_90", "-nocudainc",
                   "-nocudalib", "-Wno-unknown-cuda-version", "-w", "-ferror-limit=0",
                   "-std=c++20", "-I", HERE, "-iquote", src_dir, "-include", "cuda_runtime.h"] +
                  cccl_prelude(src, out) + resource_args() + (["-isystem", cccl] if cccl else []) +
                  args)
    index = ci.Index.create()
    try:
        tu = index.parse(src, args=clang_args,
                         options=ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD)
    except ci.TranslationUnitLoadError as e:
        say(f"cucc: clang could not read {src}: {e}")
        return 1
    messages, plain = foreign_headers(tu, src_dir, cccl), []
    for d in tu.diagnostics:
        if d.severity < ci.Diagnostic.Error:
            continue
        # the parse makes the libraries' functions __host__ __device__, which clang reports in
        # their headers (a redeclaration, in the parse only): the file's own code and the model's
        # headers are what count
        f = d.location.file
        real = os.path.realpath(f.name) if f else ""
        if f and not (real.startswith(src_dir + os.sep) or real.startswith(HERE + os.sep) or
                      real == os.path.realpath(src)):
            continue
        t = translate(d)
        if t is not None:
            if t not in messages:
                messages.append(t)
        else:
            loc = d.location
            plain.append(f"{loc.file.name if loc.file else src}:{loc.line}:{loc.column}: "
                         f"error: {d.spelling}")
    if messages or plain:
        for m in messages or plain: # what the model lacks explains the rest
            say(m)
        return 1
    user_dirs = [src_dir] + [os.path.realpath(a[2:] or "") for a in args
                             if a.startswith("-I") and len(a) > 2]
    skip = [HERE] + ([os.path.realpath(cccl)] if cccl else [])
    r = Rewriter(tu, src, user_dirs, skip)
    r.run()
    if r.errors:
        for m in dict.fromkeys(r.errors):
            say(m)
        return 1
    os.makedirs(out, exist_ok=True)
    main_real = os.path.realpath(src)
    for path, e in r.files.items():
        if path != main_real and not path.startswith(src_dir + os.sep):
            say(f"cucc: {path}, outside {src}'s folder, declares what the CPU model must rewrite "
                "(a launch, a __shared__ variable or a kernel): move it beside the .cu file, or "
                "run this file on a GPU (make MODEL=gpu).")
            return 1
    for path, e in r.files.items():
        if path == main_real:
            continue
        dest = os.path.join(out, os.path.relpath(path, src_dir))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "wb") as f:
            f.write(f"#line 1 \"{path}\"\n".encode() + e.apply())
    text = r.files[main_real].apply() if main_real in r.files else open(src, "rb").read()
    with open(os.path.join(out, os.path.basename(src)), "wb") as f:
        f.write(f"#line 1 \"{src}\"\n".encode() + text)
    if cccl and any(i.include and os.path.realpath(i.include.name).startswith(
            os.path.realpath(cccl) + os.sep) for i in tu.get_includes()):
        with open(os.path.join(out, "cccl"), "w") as f:
            f.write(cccl)  # model/cucc compiles with CCCL's headers on the path
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
