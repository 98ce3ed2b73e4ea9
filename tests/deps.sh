#!/usr/bin/env bash
# deps.sh [--sandbox] [--model] [--nvcc] [--vendor [--force]] | --notebook | --model-only: the
# Criterion test library (Debian: libcriterion-dev) for make test; with --model (make test
# MODEL=cpu, the default without a GPU), also what the CPU model builds with: g++ and
# Boost.Context (Debian: g++, libboost-context-dev), and libclang's Python module (PyPI:
# libclang), its CUDA front end; with --sandbox (make grade) bubblewrap; --notebook:
# only nbclient, nbformat and ipykernel (tools/notebook.py); --model-only (make run): only the
# CPU model's own.
#   (default)  nothing to do when third_party/criterion/ is vendored or Criterion already builds
#              and links here; else, as root, apt-get install libcriterion-dev; else say what to do.
#   --vendor   (make deps VENDOR=1) copy Criterion and the closure of its shared libraries, all but
#              glibc and libgcc_s, into third_party/criterion/, for a machine with neither network
#              nor Criterion (Ubuntu 24.04 on x86-64, say). The .debs come from this machine's apt
#              sources (Debian 12, glibc 2.36: they run on any newer glibc). When it is already
#              there (.done), only the closure is checked, unless --force.
# The Makefile links the vendored copy with an RPATH (-Xlinker --disable-new-dtags): unlike a
# RUNPATH, it lets the libraries' own dependencies resolve there too.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive LC_ALL=C
DEST="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/third_party/criterion"
DEV=libcriterion-dev RT=libcriterion3
# glibc's own libraries (package libc6): on every target, never vendored.
GLIBC='^(libc|libm|libmvec|libdl|libpthread|librt|libresolv|libutil|libanl|libnsl|libBrokenLocale|'
GLIBC+='libthread_db)\.so\.[0-9]+$|^ld-linux-x86-64\.so\.2$'

say() { echo "deps.sh: $*"; }
die() { echo "deps.sh: ERROR: $*" >&2; exit 1; }
apt_update() { say "apt-get update"; apt-get update -qq >/dev/null || die "apt-get update failed"; }

# links: a test program builds and links with the system's Criterion.
links() {
    printf '#include <criterion/criterion.h>\nTest(deps, links) { cr_assert(1); }\n' |
        cc -x c - -o /dev/null -lcriterion >/dev/null 2>&1
}

# model_links: a C++ program links with Boost.Context's jump_fcontext, as model/model.cc does (the
# vendored copy of make deps VENDOR=1 counts).
model_links() {
    printf 'extern "C" int jump_fcontext(void *, void *);\nint main() { return !&jump_fcontext; }\n' |
        ${CXX:-g++} -x c++ - -o /dev/null -L"$(dirname "$DEST")/boost_context" -lboost_context \
            >/dev/null 2>&1
}

# model_parses: python3 has libclang (the CPU model's CUDA front end, model/rewrite.py).
model_parses() {
    python3 -c 'import clang.cindex as c; c.Index.create()' >/dev/null 2>&1
}

# has_cccl: CCCL's headers (<cuda/atomic>, <cuda/std/...>) where model/rewrite.py looks for them:
# the CUDA toolkit's, or PyPI's nvidia-cuda-cccl.
has_cccl() {
    python3 -c "import sys; sys.path.insert(0, '$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/model'); import rewrite
sys.exit(rewrite.cccl_include() is None)" >/dev/null 2>&1
}

# pip_install PACKAGE: into this python3, as the environment allows; as root, for every user
# (sudo bash tests/deps.sh --model in the Classroom workflow, then make grade as the runner).
pip_install() {
    local how out order=("" --user --break-system-packages)
    [ "$(id -u)" -ne 0 ] || order=("" --break-system-packages --user)
    for how in "${order[@]}"; do
        out=$(python3 -m pip install -q --disable-pip-version-check $how "$1" 2>&1) && return 0
    done
    echo "$out" >&2
    return 1
}

# parser_mode: installs libclang's Python module (PyPI libclang: the library and its binding)
# for this python3 and, without the CUDA toolkit, CCCL's headers (PyPI nvidia-cuda-cccl), or says
# what to install.
parser_mode() {
    if ! model_parses; then
        say "pip install libclang (the CPU model reads CUDA with clang's front end)"
        pip_install libclang && model_parses ||
            die "python3 -m pip install libclang failed: install PyPI's libclang (or Debian's python3-clang) for $(command -v python3)"
    fi
    if ! has_cccl; then
        say "pip install nvidia-cuda-cccl (CCCL's headers: <cuda/atomic>, <cuda/std/...>)"
        pip_install nvidia-cuda-cccl || say "nvidia-cuda-cccl could not be installed: a file that includes <cuda/...> will not build on the model"
    fi
}

# model_mode: installs g++ and Boost.Context as root with apt, or says what to install; then
# libclang's Python module.
model_mode() {
    local out pkgs="g++ libboost-context-dev"
    parser_mode
    model_links && return 0
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
        apt_update
        say "apt-get install -y --no-install-recommends $pkgs (the CPU model: model/)"
        out=$(apt-get install -y -qq --no-install-recommends $pkgs </dev/null 2>&1) ||
            { echo "$out" >&2; die "apt-get install $pkgs failed"; }
        model_links || die "$pkgs were installed but a program still does not link with -lboost_context"
    else
        echo "deps.sh: the CPU model needs g++ and Boost.Context: install the Debian/Ubuntu packages" \
             "'g++' and 'libboost-context-dev' (as root: apt-get install $pkgs)." >&2
        exit 1
    fi
}

install_mode() {
    local out
    if [ -f "$DEST/.done" ]; then
        echo "deps: using the vendored Criterion in third_party/criterion"
    elif links; then
        say "Criterion is already installed and links" \
            "(/usr/include/criterion/criterion.h, -lcriterion); nothing to do."
    elif [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
        apt_update
        say "apt-get install -y --no-install-recommends $DEV"
        out=$(apt-get install -y -qq --no-install-recommends "$DEV" </dev/null 2>&1) ||
            { echo "$out" >&2; die "apt-get install $DEV failed"; }
        links || die "$DEV was installed but a test program still does not link with -lcriterion"
        say "Criterion installed ($DEV $(dpkg-query -W -f='${Version}' "$DEV"))."
    else
        echo "deps.sh: the Criterion test library is missing: install the Debian/Ubuntu package" \
             "'$DEV' (as root: apt-get install $DEV), or run 'bash tests/deps.sh --vendor' on a" \
             "machine that has apt." >&2
        exit 1
    fi
}

# closure: checks mechanically what is in third_party/criterion/: the header, the dev symlink, and
# every library's every DT_NEEDED either vendored beside it or glibc's.
closure() {
    local bad=0 elf n f
    for elf in "$DEST"/lib/*; do
        [ -e "$elf" ] || { echo "dangling symlink: $elf" >&2; bad=1; }
        [ -L "$elf" ] && continue
        for n in $(readelf -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
            [[ $n =~ $GLIBC ]] || [ -e "$DEST/lib/$n" ] || {
                echo "deps.sh: UNRESOLVED: ${elf##*/} needs $n (neither vendored nor glibc)" >&2
                bad=1
            }
        done
    done
    for f in include/criterion/criterion.h lib/libcriterion.so; do
        [ -e "$DEST/$f" ] || { echo "deps.sh: $f missing" >&2; bad=1; }
    done
    [ "$bad" -eq 0 ] || die "vendored closure in $DEST is incomplete"
}

vendor_mode() {
    local pkgs deb pkg sandbox=()
    if [ -f "$DEST/.done" ] && [ "$1" -eq 0 ]; then
        closure
        say "$DEST is already vendored (.done present; use --force to redo)."
        return 0
    fi
    apt-cache show $RT >/dev/null 2>&1 && apt-cache show $DEV >/dev/null 2>&1 || apt_update
    work=$(mktemp -d) # global: the EXIT trap runs after vendor_mode has returned
    trap 'rm -rf "$work"' EXIT
    # libcriterion3 and its recursive Depends/Pre-Depends, less virtual packages (<...>) and what
    # every target has; the headers come from libcriterion-dev, without its own -dev dependencies.
    pkgs=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
        --no-replaces --no-enhances $RT 2>/dev/null | grep -v '^[ <]' |
        grep -vxE 'libc6|libgcc-s1|gcc-[0-9]+-base' | sort -u | paste -sd ' ')
    [ -n "$pkgs" ] || die "apt-cache depends gave no packages for $RT"
    pkgs="$DEV $pkgs"
    say "candidate packages: $pkgs"
    [ "$(id -u)" -ne 0 ] || sandbox=(-o APT::Sandbox::User=root)
    mkdir -p "$work/debs"
    (cd "$work/debs" && apt-get -q "${sandbox[@]}" download $pkgs >/dev/null) ||
        die "apt-get download failed for: $pkgs"
    for deb in "$work"/debs/*.deb; do dpkg -x "$deb" "$work/root"; done

    # Afresh: the headers, every shared object of the packages (each in the closure) with its
    # soname links, and which packages they came from, with their copyright files.
    rm -rf "$DEST"
    mkdir -p "$DEST/include" "$DEST/lib" "$DEST/copyright"
    cp -a "$work/root/usr/include/criterion" "$DEST/include/"
    find "$work/root/lib" "$work/root/usr/lib" -maxdepth 2 -name 'lib*.so*' \( -type f -o -type l \) \
        -exec cp -a -t "$DEST/lib/" {} + 2>/dev/null
    for deb in "$work"/debs/*.deb; do
        pkg=$(dpkg-deb -f "$deb" Package)
        echo "$pkg $(dpkg-deb -f "$deb" Version)"
        cp "$work/root/usr/share/doc/$pkg/copyright" "$DEST/copyright/$pkg" 2>/dev/null || true
    done | sort >"$DEST/packages.txt"
    closure
    touch "$DEST/.done"
    say "vendored Criterion into $DEST ($(du -sh "$DEST" | cut -f1)):"
    say "  $(cd "$DEST/lib" && echo *)"
}

# nvcc_mode: nvcc from PyPI (nvidia-cuda-nvcc and what it runs, one CUDA release), for the CPU
# model's register check (model/resources.py) on a machine without the CUDA toolkit.
NVCC_WHEELS="nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-cuda-runtime==13.0.96"
nvcc_mode() {
    local found
    found=$(python3 "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/model/resources.py" --find 2>/dev/null) &&
        [ -n "$found" ] && { say "nvcc is here ($found): the model checks registers"; return 0; }
    say "pip install $NVCC_WHEELS (nvcc for the model's register check, about 300 MB)"
    local pkg
    for pkg in $NVCC_WHEELS; do pip_install "$pkg" || die "pip install $pkg failed"; done
}

# sandbox_mode: bubblewrap (bwrap), make grade's sandbox, unless vendored (--vendor): as root,
# apt-get install bubblewrap; elsewhere, or where apt cannot (no network, another apt running),
# one sentence, and make grade runs its checks unsandboxed and says so.
sandbox_mode() {
    command -v bwrap >/dev/null || [ -x "$(dirname "$DEST")/bwrap/bwrap" ] && return 0
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
        say "apt-get install -y --no-install-recommends bubblewrap (make grade's sandbox)"
        { apt-get update -qq && apt-get install -y -qq --no-install-recommends bubblewrap; } \
            </dev/null >/dev/null 2>&1 ||
            say "apt-get could not install bubblewrap: make grade runs without a sandbox"
    else
        say "make grade's sandbox needs bubblewrap (as root: apt-get install bubblewrap);" \
            "without it the checks run unsandboxed, and the report says so"
    fi
}

# notebook_ready: python3 has what tools/notebook.py runs the Colab notebook with: PyPI's nbclient,
# nbformat and ipykernel 7.3 or later (the first whose `!` can fail a cell).
notebook_ready() {
    python3 -c 'import sys, nbclient, nbformat, ipykernel as k
sys.exit(tuple(int(n) for n in k.__version__.split(".")[:2]) < (7, 3))' >/dev/null 2>&1
}

# notebook_mode: installs them, from third_party/wheels/ where tools/vendor_nbclient.sh put them
# (no network), else from PyPI.
notebook_mode() {
    local p wheels
    wheels="$(dirname "$DEST")/wheels"
    notebook_ready && return 0
    say "pip install nbclient nbformat ipykernel (tools/notebook.py runs the Colab notebook with them)"
    for p in nbclient nbformat "ipykernel>=7.3"; do
        if [ -d "$wheels" ]; then PIP_NO_INDEX=1 PIP_FIND_LINKS="$wheels" pip_install "$p"
        else pip_install "$p"; fi || die "python3 -m pip install nbclient nbformat ipykernel failed"
    done
    notebook_ready || die "nbclient, nbformat and ipykernel 7.3 or later are still not importable by $(command -v python3)"
}

[ "${1:-}" = --notebook ] && { notebook_mode; exit 0; }
[ "${1:-}" = --model-only ] && { model_mode; exit 0; } # make run on the model: no Criterion
[ "${1:-}" = --sandbox ] && shift && sandbox_mode
model=0
[ "${1:-}" = --model ] && model=1 && shift
[ "$model" -eq 0 ] || model_mode
[ "${1:-}" = --nvcc ] && shift && nvcc_mode
# vendor_model: Boost.Context's static library into third_party/boost_context/, for the CPU model
# (model/cucc links it from there) on a machine without network that has g++ but not Boost.
vendor_model() {
    local lib dest
    dest="$(dirname "$DEST")/boost_context"
    model_mode
    lib=$(${CXX:-g++} -print-file-name=libboost_context.a)
    [ -f "$lib" ] || die "libboost_context.a not found (g++ -print-file-name gave '$lib')"
    mkdir -p "$dest" && cp "$lib" "$dest/"
    say "vendored $lib into $dest (the CPU model's fibers)"
}

# vendor_bwrap: bubblewrap and its libraries but glibc into third_party/bwrap/, run through the
# target's own loader, for make grade's sandbox on a machine without network or bubblewrap.
vendor_bwrap() {
    local dest lib
    dest="$(dirname "$DEST")/bwrap"
    sandbox_mode
    command -v bwrap >/dev/null || { say "no bwrap here to vendor"; return 0; }
    rm -rf "$dest" && mkdir -p "$dest"
    cp "$(command -v bwrap)" "$dest/bwrap.bin"
    for lib in $(ldd "$(command -v bwrap)" | awk '$3 ~ /^\// { print $3 }'); do
        [[ $(basename "$lib") =~ $GLIBC ]] || cp -L "$lib" "$dest/"
    done
    cat > "$dest/bwrap" <<'SH'
#!/bin/sh
# bubblewrap, vendored by tests/deps.sh --vendor: its own libraries, the machine's glibc.
d=$(dirname "$(readlink -f "$0")")
exec /lib64/ld-linux-x86-64.so.2 --library-path "$d" "$d/bwrap.bin" "$@"
SH
    chmod +x "$dest/bwrap"
    say "vendored bubblewrap into $dest (make grade's sandbox)"
}

case "$*" in
"") install_mode ;;
--vendor) vendor_mode 0 && vendor_model && vendor_bwrap ;;
"--vendor --force" | "--force --vendor") vendor_mode 1 && vendor_model && vendor_bwrap ;;
--force) die "--force only applies to --vendor" ;;
*) die "unknown argument: $* (usage: tests/deps.sh [--model] [--vendor [--force]])" ;;
esac
