#!/usr/bin/env bash
# tests/deps.sh -- make the Criterion test library (Debian: libcriterion-dev 2.4.1)
# available to the test build.
#
#   bash tests/deps.sh            Default (used by `make deps` and CI). If Criterion's
#                                 header and library are usable on this system, do
#                                 nothing. Otherwise install libcriterion-dev with
#                                 apt-get when running as root; else say what to
#                                 install and exit 1.
#
#   bash tests/deps.sh --vendor [--force]
#                                 Copy Criterion plus the full closure of its shared
#                                 library dependencies (everything but glibc) into
#                                 third_party/criterion/{include,lib}, for a machine
#                                 that has neither network nor Criterion (the GPU
#                                 machine: Ubuntu 24.04, glibc 2.39, x86-64). The
#                                 .debs come from this machine's apt sources (Debian
#                                 12, glibc 2.36, so they run on any newer glibc).
#                                 Skipped when third_party/criterion/.done exists,
#                                 unless --force is given.
#
# Link a test against the vendored copy with (gcc):
#   -I third_party/criterion/include -L third_party/criterion/lib -lcriterion \
#   -Wl,--disable-new-dtags -Wl,-rpath,'$ORIGIN/../third_party/criterion/lib'
# (nvcc: -Xlinker --disable-new-dtags -Xlinker -rpath='$ORIGIN/../third_party/criterion/lib')
# DT_RPATH (not RUNPATH) is what lets the transitive dependencies resolve too.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
export LC_ALL=C

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="$ROOT/third_party/criterion"
PKG_DEV=libcriterion-dev
PKG_RT=libcriterion3

# Libraries of glibc itself (package libc6): present on every target, never vendored.
GLIBC_RE='^(libc\.so\.6|libm\.so\.6|libmvec\.so\.1|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|libresolv\.so\.2|libutil\.so\.1|libanl\.so\.1|libnsl\.so\.1|libBrokenLocale\.so\.1|libthread_db\.so\.1|ld-linux-x86-64\.so\.2)$'

say() { printf 'deps.sh: %s\n' "$*"; }
die() { printf 'deps.sh: ERROR: %s\n' "$*" >&2; exit 1; }

usage() {
    sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

# ---------------------------------------------------------------- default mode
criterion_usable() {
    [ -f /usr/include/criterion/criterion.h ] || return 1
    local cc
    cc="$(command -v cc || command -v gcc || command -v clang || true)"
    if [ -n "$cc" ]; then
        local tmp rc=0
        tmp="$(mktemp -d)"
        printf '#include <criterion/criterion.h>\nTest(deps, links) { cr_assert(1); }\n' > "$tmp/t.c"
        "$cc" "$tmp/t.c" -o "$tmp/t" -lcriterion >/dev/null 2>&1 || rc=1
        rm -rf "$tmp"
        return "$rc"
    fi
    # No C compiler to try with: fall back on the linker cache.
    ldconfig -p 2>/dev/null | grep -q 'libcriterion\.so '
}

apt_lists_know() {  # $1 = package; true when apt has a candidate for it
    local cand
    cand="$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2; exit}')"
    [ -n "$cand" ] && [ "$cand" != "(none)" ]
}

apt_update_quiet() {
    say "apt-get update"
    apt-get update -qq >/dev/null || die "apt-get update failed"
}

install_mode() {
    if criterion_usable; then
        say "Criterion is already installed and links (/usr/include/criterion/criterion.h, -lcriterion); nothing to do."
        return 0
    fi
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt_update_quiet
        say "apt-get install -y --no-install-recommends $PKG_DEV"
        local log
        log="$(mktemp)"
        if ! apt-get install -y -qq --no-install-recommends "$PKG_DEV" </dev/null >"$log" 2>&1; then
            cat "$log" >&2; rm -f "$log"
            die "apt-get install $PKG_DEV failed"
        fi
        rm -f "$log"
        criterion_usable || die "$PKG_DEV was installed but a test program still does not build and link with -lcriterion"
        say "Criterion installed ($PKG_DEV $(dpkg-query -W -f='${Version}' "$PKG_DEV"))."
        return 0
    fi
    echo "deps.sh: the Criterion test library is missing: install the Debian/Ubuntu package '$PKG_DEV' (as root: apt-get install $PKG_DEV), or run 'bash tests/deps.sh --vendor' on a machine that has apt." >&2
    exit 1
}

# ----------------------------------------------------------------- vendor mode
vendor_mode() {
    local force="$1"
    if [ -f "$DEST/.done" ] && [ "$force" -eq 0 ]; then
        say "$DEST is already vendored (.done present; use --force to redo)."
        return 0
    fi
    local tool
    for tool in apt-get apt-cache dpkg dpkg-deb; do
        command -v "$tool" >/dev/null || die "--vendor needs $tool (a Debian/Ubuntu machine)"
    done
    command -v readelf >/dev/null || die "--vendor needs readelf (package binutils)"
    [ "$(dpkg --print-architecture)" = amd64 ] || die "--vendor only supports amd64 (the GPU machine is x86-64)"

    if ! apt_lists_know "$PKG_RT" || ! apt_lists_know "$PKG_DEV"; then
        [ "$(id -u)" -eq 0 ] || die "apt has no package lists for $PKG_DEV; run 'apt-get update' as root first"
        apt_update_quiet
        apt_lists_know "$PKG_RT" || die "apt knows no package $PKG_RT even after apt-get update"
    fi

    local work
    work="$(mktemp -d)"
    # shellcheck disable=SC2064
    trap "rm -rf '$work'" EXIT

    # 1. Candidate packages: the runtime package and its recursive Depends/Pre-Depends
    #    (virtual packages in <...> dropped; glibc and libgcc_s, on every target, too). The
    #    headers come from libcriterion-dev alone; its own -dev dependencies are not wanted.
    local pkgs
    pkgs="$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
                --no-breaks --no-replaces --no-enhances "$PKG_RT" 2>/dev/null \
            | grep -v '^ ' | grep -v '^<' | grep -vxE 'libc6|libgcc-s1|gcc-[0-9]+-base' | sort -u)"
    [ -n "$pkgs" ] || die "apt-cache depends gave no packages for $PKG_RT"
    pkgs="$PKG_DEV"$'\n'"$pkgs"
    say "candidate packages: ${pkgs//$'\n'/ }"

    # 2. Download and unpack every candidate.
    local sandbox=()
    [ "$(id -u)" -eq 0 ] && sandbox=(-o APT::Sandbox::User=root)
    mkdir -p "$work/debs" "$work/root"
    # shellcheck disable=SC2086
    (cd "$work/debs" && apt-get -q "${sandbox[@]}" download $pkgs >/dev/null) \
        || die "apt-get download failed for: ${pkgs//$'\n'/ }"
    local deb
    for deb in "$work"/debs/*.deb; do
        dpkg -x "$deb" "$work/root"
    done

    # 3. Lay out third_party/criterion afresh: the headers, and every shared object the packages
    #    hold (all of them are in libcriterion3's closure: step 1), with their soname links.
    rm -rf "$DEST"
    mkdir -p "$DEST/include" "$DEST/lib" "$DEST/copyright"
    cp -a "$work/root/usr/include/criterion" "$DEST/include/"
    find "$work/root/lib" "$work/root/usr/lib" -maxdepth 2 -name 'lib*.so*' \( -type f -o -type l \) \
        -exec cp -a -t "$DEST/lib/" {} + 2>/dev/null
    [ -e "$DEST/lib/libcriterion.so" ] || die "libcriterion.so (the dev symlink) missing from $PKG_DEV"
    # Which packages they came from, with their copyright files.
    local pkg
    for deb in "$work"/debs/*.deb; do
        pkg="$(dpkg-deb -f "$deb" Package)"
        echo "$pkg $(dpkg-deb -f "$deb" Version)" >> "$DEST/packages.txt"
        [ -f "$work/root/usr/share/doc/$pkg/copyright" ] \
            && cp "$work/root/usr/share/doc/$pkg/copyright" "$DEST/copyright/$pkg"
    done
    sort -o "$DEST/packages.txt" "$DEST/packages.txt"

    # 4. Verify the closure mechanically on what actually landed in lib/.
    local bad=0 elf n
    for elf in "$DEST"/lib/*; do
        [ -L "$elf" ] && { [ -e "$elf" ] || { echo "dangling symlink: $elf" >&2; bad=1; }; continue; }
        while IFS= read -r n; do
            if [[ "$n" =~ $GLIBC_RE ]] || [ -e "$DEST/lib/$n" ]; then continue; fi
            echo "deps.sh: UNRESOLVED: $(basename "$elf") needs $n (neither vendored nor glibc)" >&2
            bad=1
        done < <(readelf -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
    done
    [ -f "$DEST/include/criterion/criterion.h" ] || { echo "deps.sh: criterion.h missing" >&2; bad=1; }
    [ "$bad" -eq 0 ] || die "vendored closure in $DEST is incomplete"

    touch "$DEST/.done"
    say "vendored Criterion into $DEST ($(du -sh "$DEST" | cut -f1)):"
    say "  $(cd "$DEST/lib" && echo *)"
}

# ------------------------------------------------------------------------ main
mode=install force=0
for arg in "$@"; do
    case "$arg" in
        --vendor) mode=vendor ;;
        --force) force=1 ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $arg" ;;
    esac
done

case "$mode" in
    install) [ "$force" -eq 0 ] || die "--force only applies to --vendor"; install_mode ;;
    vendor) vendor_mode "$force" ;;
esac
