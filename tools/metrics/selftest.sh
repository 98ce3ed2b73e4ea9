#!/usr/bin/env bash
# selftest.sh: checks make metrics (tools/metrics/) on a machine without a GPU. First table.py's
# parsing of real NVIDIA H200 output (testdata/), then run.sh end to end with testdata/fake_ncu
# standing in for ncu and small scripts for the stage programs: the tables, a variant given as
# NAME=PATH:ARGS, and each failure's sentence and exit status.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/reduction-metrics-test-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
failed=0
python3 "$here/table.py" selftest || failed=$((failed + 1))

# fake SHORT LONG RESULT STATUS [SINGLE]: a stand-in for build/SHORT that prints the harness's
# line, and its --stage-info (single_block=SINGLE, default 0)
fake() {
    cat >"$tmp/build/$1" <<END
#!/usr/bin/env bash
n=16777216
[ "\$1" = --stage-info ] && { echo "stage=$2 on_gpu=1 single_block=${5:-0} in_place=0 fixed_block=0 default_block=256"; exit 0; }
while [ \$# -gt 0 ]; do [ "\$1" = --n ] && n=\$2; shift; done
echo "stage=$2 device=\"NVIDIA H200\" n=\$n sum=228 ref=228 result=$3 median_ms=0.1 GB/s=0.1 peak%=0.0"
exit $4
END
    chmod +x "$tmp/build/$1"
}
mkdir -p "$tmp/build"
fake step02 step02_blocked ok 0 1
fake step05 step05_segmented ok 0
fake step03 step03_strided MISMATCH 1 1
fake variant step04_smem ok 0
printf '#!/bin/sh\necho "step07_warp_shuffle: no CUDA device (the driver sees no GPU); this stage needs an NVIDIA GPU (step00_cpu runs without)." >&2\nexit 3\n' >"$tmp/build/step07"
chmod +x "$tmp/build/step07"

# expect STATUS TEXT COMMAND...: the command exits with STATUS and prints each line of TEXT
expect() {
    local want=$1 text=$2 out rc line
    shift 2
    out=$(NCU=${NCU:-$here/testdata/fake_ncu} METRICS_OUT=$tmp/out "$@" 2>&1)
    rc=$?
    while read -r line; do
        [[ $out == *"$line"* ]] || rc="$rc, not printing '$line'"
    done <<<"$text"
    if [ "$rc" != "$want" ]; then
        printf "selftest: '%s' exited %s, printing:\n%s\nselftest: expected exit status %s\n" \
            "$*" "$rc" "$out" "$want" >&2
        failed=$((failed + 1))
    fi
}
run=(bash "$here/run.sh" "$tmp/build")
# n: step02's --stage-info says single_block=1, the variant was given --n; a variant goes by its
# name; its row: step04's counters (testdata/step04_raw.csv), its grid and block
expect 0 "NVIDIA H200, Nsight Compute 2025.3.1.0, first launch of reduce_kernel;
n = 2,048 for step02_blocked, variant; n = 16,777,216 for step05_segmented. Command:
| step05_segmented | 16,777,216 | 3.23 |
| variant | 2,048 | 3.23 | 1 | 1,024 | 3,911 | 31.94 | 19.64 | 64 | 256 | 1 |" \
    "${run[@]}" step02 step05 "variant=$tmp/build/variant:--n,2048"
expect 1 "step03 gave a wrong sum" "${run[@]}" step02 step03
expect 3 "no CUDA device (the driver sees no GPU): Nsight Compute needs an NVIDIA GPU." "${run[@]}" step07
expect 3 "NVreg_RestrictProfilingToAdminUsers=0" env FAKE_NCU_DENY=1 "${run[@]}" step02
expect 1 "ncu profiled no kernel named reduce_kernel in step02" env FAKE_NCU_NO_KERNEL=1 "${run[@]}" step02
NCU=$tmp/no/ncu expect 3 "ncu was not found ($tmp/no/ncu)" "${run[@]}" step02
expect 2 "is not a program" "${run[@]}" step99
expect 2 "usage" bash "$here/run.sh"
echo "metrics selftest (run.sh): $([ $failed -eq 0 ] && echo ok || echo "$failed failed")"
exit $((failed > 0))
