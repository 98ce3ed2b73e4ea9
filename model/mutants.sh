#!/usr/bin/env bash
# model/mutants.sh BUILD [MUTANT...]: make mutants on the CPU model (MODEL=cpu, no GPU needed). Each
# known-wrong kernel of stepNN_name/mutants/ (default: all) is built as its stage, by the model,
# twice: with AddressSanitizer (BUILD/model-mutants/NAME/stepNN) and with ThreadSanitizer
# (.../thread/stepNN), and run as tests/sanitize.sh runs a stage (n = 100003 and 1000, single- block
# stages 2047 and 33, a partial last block each; ThreadSanitizer in three schedules), plus n = 2^24
# + 3 with 32 threads a block, the tests' largest. What caught it is one of
#   sum        a wrong sum (result=MISMATCH): what the tests see
#   memory     AddressSanitizer: an access outside an allocation or a shared array (memcheck)
#   race       ThreadSanitizer: a data race (racecheck; on a GPU, shared memory only)
#   barrier    the model: a barrier or warp-synchronous call not every thread reaches (synccheck;
#              on a GPU, a hang)
#   symbols    tests/exploits.py symbols: the object the model built defines a function of the C
#              library, the CUDA runtime or the harness (make grade's symbols check, on the same
#              file compiled by g++ instead of nvcc)
#   build      the model could not build it (a library call: the model has no CUB)
# and it must be what the mutant's "Caught by:" line names on a GPU (tests: sum, memcheck: memory,
# racecheck: race, timeout: barrier, symbols: symbols), or better: "nothing" on a GPU may be
# anything here. Mutants the model cannot observe (huge: n past 2^32, 17 GiB and minutes on one
# core; speed and guard: the model has no time, and bench --guard is a GPU's; library: Nsight
# Compute's kernel names, where the model cannot even compile CUB, so that "build" catches it) are
# listed as such and pass when nothing, or only the build, caught them; those caught by huge, speed
# or guard are not run at all, nor are the right files (a patch that opens "Right:"), which make
# mutants on a GPU grades as a class. Writes the table to
# BUILD/model-mutants/mutants.md and prints it; exit status 1 when a mutant was not caught for its
# reason.
set -u
build=${1:?usage: model/mutants.sh BUILD [MUTANT...]}
shift
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$build/model-mutants
mkdir -p "$out"
patches=() # by the mutant's name, whatever its stage
mapfile -t patches < <(cd "$root" && for p in step*/mutants/*.patch; do
    echo "$(basename "$p") $root/$p"; done | sort | cut -d' ' -f2-)
if [ $# -gt 0 ]; then
    wanted=()
    for m in "$@"; do
        p=$(printf '%s\n' "${patches[@]}" | grep "/mutants/$m\.patch\$") ||
            { echo "model/mutants.sh: no mutant $m (stepNN_name/mutants/$m.patch)" >&2; exit 2; }
        wanted+=("$p")
    done
    patches=("${wanted[@]}")
fi
status=0
table="| mutant | stage | caught on a GPU by | on the model, caught by | verdict |"
table+=$'\n'"|---|---|---|---|---|"
for patch in "${patches[@]}"; do
    name=$(basename "$patch" .patch)
    stage=$(basename "$(dirname "$(dirname "$patch")")") # stepNN_name/mutants/NAME.patch
    short=${stage%%_*}
    gpu=$(sed -n 's/^Caught by: *//p' "$patch" | head -n 1)
    # Not run here (CI's time): a right file (its patch opens "Right:"; make mutants on a GPU
    # grades it), and mistakes only a GPU's checks can see (their time, n past 2^32).
    if head -n 1 "$patch" | grep -q '^Right:'; then
        table+=$'\n'"| $name | $short | nothing | - | not run: a right file, graded on a GPU |"
        continue
    elif [[ $gpu == speed || $gpu == guard || $gpu == huge ]]; then
        table+=$'\n'"| $name | $short | $gpu | - | not run: not observable on the model ($gpu) |"
        continue
    fi
    dir=$out/$name
    mkdir -p "$dir"
    src=$out/$name.cu # outside BUILD=$dir, where make's rule for programs would claim it
    bash "$root/tools/bench/variant.sh" "$patch" "$src" || { status=1; continue; }
    caught=() log=$dir/runs.log
    : >"$log"
    # built as its stage and linked with BUILD's harness (the Makefile built it), twice
    if ! python3 "$root/tests/corpus.py" build "$build" "${short#step}" address "$src" "$dir" \
        >>"$log" 2>&1 || ! python3 "$root/tests/corpus.py" build "$build" "${short#step}" thread \
        "$src" "$dir/thread" >>"$log" 2>&1; then
        caught+=(build)
    else
        python3 "$root/tests/exploits.py" symbols "$dir/stage.o" >>"$log" 2>&1
        case $? in
        1) caught+=(symbols) ;;
        0) ;;
        *) echo "model/mutants.sh: tests/exploits.py could not read $dir/stage.o" >&2
            status=1 ;;
        esac
        info=$("$dir/$short" --stage-info)
        sizes="100003 1000 16777219" single=0
        grep -q 'single_block=1' <<<"$info" && sizes="2047 33" single=1
        for n in $sizes; do
            block=""
            grep -q 'fixed_block=0' <<<"$info" && [ "$n" != 2047 ] && [ "$n" != 100003 ] && block=32
            args=(--n "$n" ${block:+--block "$block"})
            runs=("$dir/$short")
            [ "$n" = 16777219 ] || runs+=("$dir/thread/$short")
            for prog in "${runs[@]}"; do
                for seed in 1 2 3; do
                    text=$(CUDA_MODEL_SEED=$seed timeout 120 "$prog" "${args[@]}" 2>&1)
                    echo "== CUDA_MODEL_SEED=$seed $prog ${args[*]}"$'\n'"$text" >>"$log"
                    grep -q 'AddressSanitizer' <<<"$text" && caught+=(memory)
                    grep -q 'ThreadSanitizer: data race' <<<"$text" && caught+=(race)
                    grep '^CPU model:' <<<"$text" | grep -qE 'cannot go on| calls __' &&
                        caught+=(barrier)
                    grep -q 'result=MISMATCH' <<<"$text" && caught+=(sum)
                    [ "$prog" = "$dir/$short" ] && [ "$seed" = 1 ] && [ "$single" = 0 ] && break
                done
            done
        done
    fi
    found=$(printf '%s\n' "${caught[@]}" | sort -u | paste -sd, -)
    case $gpu in
    tests) want=sum ;;
    memcheck) want=memory ;;
    racecheck) want=race ;;
    timeout) want=barrier ;;
    symbols) want=symbols ;;
    *) want="" ;;
    esac
    if [ -n "$want" ]; then
        [[ ",$found," == *",$want,"* ]] && verdict="caught, for its reason ($want)" ||
            { verdict="NOT caught for its reason ($want)"; status=1; }
    elif [ "$gpu" = nothing ]; then
        [ -n "$found" ] && verdict="caught (a GPU's tools see nothing)" ||
            verdict="not caught: as on a GPU"
    elif [ "$gpu" = library ] && [ "$found" = build ]; then
        verdict="caught at its build: the model cannot compile CUB (a GPU needs library)"
    else
        [ -z "$found" ] && verdict="not observable on the model ($gpu)" ||
            verdict="caught here, though a GPU needs $gpu"
    fi
    table+=$'\n'"| $name | $short | $gpu | ${found:-nothing} | $verdict |"
done
echo "$table" | tee "$out/mutants.md"
exit $status
