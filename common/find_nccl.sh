#!/usr/bin/env bash
# find_nccl.sh: where NCCL is, for building step09 (the Makefile calls it). Prints nvcc's flags
# (-I, -L, -l and an rpath) on one line and exits 0; or, with no NCCL, one sentence on how to get it
# on stderr and exits 1. Looks, in order, at:
#   1. NCCL_HOME (its include/ and lib/ or lib64/), when set: nothing else then;
#   2. the CUDA toolkit beside nvcc (some installs ship NCCL there);
#   3. /usr/include and the linker's path: libnccl-dev, from NVIDIA's CUDA repository;
#   4. the Python wheel nvidia-nccl-cu13 (pip install nvidia-nccl-cu13), which holds nccl.h and
#      libnccl.so.2 under nvidia/nccl/.
set -u
found()
{
    local inc=$1 lib=$2 name=$3
    printf -- "-I%s -L%s -l%s -Xlinker -rpath=%s\n" "$inc" "$lib" "$name" "$lib"
    exit 0
}
lib_in()
{ # lib_in DIR...: the first DIR holding libnccl.so (or only libnccl.so.2, as the wheel has)
    local d
    for d in "$@"; do
        [ -e "$d/libnccl.so" ] && { echo "$d nccl"; return 0; }
        [ -e "$d/libnccl.so.2" ] && { echo "$d :libnccl.so.2"; return 0; }
    done
    return 1
}
try()
{ # try INCLUDE_DIR LIB_DIR...
    local inc=$1 where
    shift
    [ -f "$inc/nccl.h" ] && where=$(lib_in "$@") && found "$inc" ${where}
    return 1
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
