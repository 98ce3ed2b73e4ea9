#!/usr/bin/env python3
"""resources.py: each kernel's registers a thread, as ptxas counts them for an H200 (sm_90), for
the CPU model, which then refuses a launch a GPU refuses for its registers (model/model.cc).

  python3 model/resources.py FILE.cu [-I.. -D.. -std=..]
prints C++ to append to the rewritten FILE.cu: one call of cuda_model_kernel_registers(kernel,
registers) for each kernel ptxas compiled. nvcc (on PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)
compiles the file for sm_90 (-cubin -Xptxas -v); the answer is kept in ~/.cache/cucc by the file's
and the options' hash. PyPI's nvidia-cuda-nvcc counts as nvcc (make deps WITH_NVCC=1 installs
it). Without nvcc, prints nothing and says, on stderr, that registers are not checked. Exit status 1 when nvcc refuses the file (its message on stderr: a GPU's build would
fail the same way), else 0.
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile


def find_nvcc():
    if os.environ.get("CUCC_TOOLKIT") == "none":  # as on a machine without the CUDA toolkit
        return None
    for d in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if d and os.access(os.path.join(d, "bin", "nvcc"), os.X_OK):
            return os.path.join(d, "bin", "nvcc")
    if shutil.which("nvcc"):
        return shutil.which("nvcc")
    try:  # PyPI's nvidia-cuda-nvcc (make deps WITH_NVCC=1)
        import nvidia
        for base in nvidia.__path__:
            for sub in ("cu13", "cu12"):
                nvcc = os.path.join(base, sub, "bin", "nvcc")
                if os.access(nvcc, os.X_OK):
                    return nvcc
    except ImportError:
        pass
    return None


def split_signature(demangled):
    """'void k<256u>(int const*, int*)' -> ('k<256u>', 'int const*, int*'), or None."""
    if not demangled.endswith(")"):
        return None
    depth = 0
    for i in range(len(demangled) - 1, -1, -1):
        c = demangled[i]
        depth += c == ")"
        depth -= c == "("
        if depth == 0:
            name, params = demangled[:i], demangled[i + 1:-1]
            break
    else:
        return None
    # a template's return type comes first: the name is the last top-level word
    depth, start = 0, 0
    for i, c in enumerate(name):
        depth += c == "<"
        depth -= c == ">"
        if c == " " and depth == 0:
            start = i + 1
    return name[start:], params


def main(argv):
    if argv[:1] == ["--find"]:  # tests/deps.sh: where nvcc is, or nothing
        print(find_nvcc() or "")
        return 0 if find_nvcc() else 1
    src, flags = argv[0], [a for a in argv[1:] if a.startswith(("-I", "-D", "-U", "-std="))]
    nvcc = find_nvcc()
    if nvcc is None:
        print("cucc: no nvcc here, so the kernels' registers are not checked (a launch a GPU "
              "refuses for them runs on the model); make deps WITH_NVCC=1 installs nvcc from PyPI.",
              file=sys.stderr)
        return 0
    text = open(src, "rb").read()
    key = hashlib.sha256(text + "\0".join(flags).encode() + nvcc.encode()).hexdigest()[:24]
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "cucc")
    cached = os.path.join(cache, key + ".ptxas")
    if os.path.isfile(cached):
        log = open(cached).read()
    else:
        with tempfile.TemporaryDirectory() as tmp:
            # -DCUDA_MODEL: the file's own paths for the model (the harness leaves CUB out there)
            p = subprocess.run([nvcc, "-arch=sm_90", "-cubin", "-Xptxas", "-v", "-DCUDA_MODEL",
                                "-o", os.path.join(tmp, "k.cubin")] + flags +
                               ["-x", "cu", src], capture_output=True, text=True)
        if p.returncode != 0:
            lines = [l for l in (p.stdout + p.stderr).splitlines() if "error" in l.lower()]
            print(f"cucc: nvcc refuses {src}, as a GPU's build would:", file=sys.stderr)
            for l in lines[:6] or (p.stdout + p.stderr).splitlines()[-6:]:
                print("    " + l, file=sys.stderr)
            return 1
        log = p.stderr + p.stdout
        try:
            os.makedirs(cache, exist_ok=True)
            with open(cached, "w") as f:
                f.write(log)
        except OSError:
            pass
    kernels, entry = [], None
    for line in log.splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m:
            entry = m.group(1)
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m and entry:
            kernels.append((entry, int(m.group(1))))
            entry = None
    if not kernels:
        return 0
    names = subprocess.run(["c++filt"], input="\n".join(k for k, _ in kernels),
                           capture_output=True, text=True).stdout.splitlines()
    out = ["", "/* model/resources.py: ptxas's registers for each kernel (sm_90) */",
           'extern "C" void cuda_model_kernel_registers(const void *kernel, int registers);',
           "namespace {"]
    for i, ((mangled, regs), demangled) in enumerate(zip(kernels, names)):
        sig = split_signature(demangled)
        if sig is None or "(anonymous" in demangled or "{lambda" in demangled:
            continue
        name, params = sig
        base = re.sub(r"<.*", "", name).split("::")[-1]
        if not re.search(rb"\b" + re.escape(base).encode() + rb"\b", text):
            continue  # a library's kernel (CUB's, say), not the file's
        out.append(f"const int cuda_model_registers_{i} = (cuda_model_kernel_registers("
                   f"(const void *)static_cast<void (*)({params})>(&{name}), {regs}), 0);")
    out.append("}")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
