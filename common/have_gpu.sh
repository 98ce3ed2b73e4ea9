#!/usr/bin/env bash
# have_gpu.sh WHAT WHY: exits 0 when this machine has an NVIDIA GPU; otherwise prints
# "WHAT: no CUDA device (...): WHY" and exits 3. It asks nvidia-smi, which comes with the driver
# (or, without it, the driver's /proc/driver/nvidia/gpus), and builds nothing: the GPU-only targets
# (make grade, bench, variants, mutants, metrics, sanitize, flush) run it before compiling, so a
# machine without a GPU is told so in well under a second, not after minutes of nvcc.
what=${1:-make} why=${2:-this needs an NVIDIA GPU}
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi -L 2>/dev/null | grep -q '^GPU ' && exit 0
    echo "$what: no CUDA device (the driver sees no GPU: nvidia-smi -L lists none): $why." >&2
    exit 3
fi
compgen -G '/proc/driver/nvidia/gpus/*' >/dev/null && exit 0
echo "$what: no CUDA device (no NVIDIA driver is installed): $why." >&2
exit 3
