#!/usr/bin/env bash
# find_nccl.sh: where NCCL is, for building step09 (the Makefile calls it). Prints nvcc's flags
# (-I, -L, -l and an rpath) on one line and exits 0; or, with no NCCL, one sentence on how to get it
# on stderr and exits 1. Looks, in order, at NCCL_HOME (when set: nothing else then), the CUDA
# toolkit beside nvcc (some installs ship NCCL there), /usr/include and the linker's path
# (libnccl-dev, from NVIDIA's CUDA repository), and the Python wheel nvidia-nccl-cu13.
set -u
# try INCLUDE_DIR LIB_DIR...: prints the flags and exits when INCLUDE_DIR has nccl.h and a LIB_DIR
# libnccl.so (or only libnccl.so.2, as the wheel has, under nvidia/nccl/): the first such LIB_DIR.
try() {
    local d lib
    [ -f "$1/nccl.h" ] || return 1
    for d in "${@:2}"; do
        for lib in libnccl.so libnccl.so.2; do
            [ -e "$d/$lib" ] && echo "-I$1 -L$d -l:$lib -Xlinker -rpath=$d" && exit 0
        done
    done
}

if [ -n "${NCCL_HOME:-}" ]; then
    try "$NCCL_HOME/include" "$NCCL_HOME/lib" "$NCCL_HOME/lib64"
    echo "NCCL_HOME=$NCCL_HOME holds no include/nccl.h with libnccl.so beside it in lib/ or lib64/." >&2
    exit 1
fi
if nvcc=$(command -v "${NVCC:-nvcc}"); then
    cuda=$(dirname "$(dirname "$(readlink -f "$nvcc")")")
    try "$cuda/include" "$cuda/lib64" "$cuda/lib" "$cuda/targets/x86_64-linux/lib"
fi
try /usr/include /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib
for py in python3 python; do
    dir=$("$py" -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null) &&
        try "$dir/include" "$dir/lib"
done
echo "NCCL was not found: install libnccl-dev (NVIDIA's CUDA repository) or the Python wheel" \
     "nvidia-nccl-cu13 (pip install nvidia-nccl-cu13), or set NCCL_HOME to a folder with" \
     "include/nccl.h and lib/libnccl.so." >&2
exit 1
