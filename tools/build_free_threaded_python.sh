#!/usr/bin/env bash
# Builds a free-threaded CPython (`python3.13t`, configure --disable-gil) from Debian's source package into a
# cache outside the clone, for tests/test_free_threaded.py and CI. Idempotent: an interpreter already
# built there (and working) is kept, and the script only prints its path.
#
#   bash tools/build_free_threaded_python.sh            # -> ~/.cache/dltensor/pythons/3.13t/bin/python3.13t
#   bash tools/build_free_threaded_python.sh --tsan     # the same built --with-thread-sanitizer: 3.13t-tsan
#
# DLTENSOR_PYTHONS moves the cache (default ~/.cache/dltensor/pythons); DLTENSOR_PYTHON_VERSION picks the
# source package (default 3.13: python3.13; 3.14 and 3.15 are listed by Debian's indexes but their files are
# not served on these machines today, so their fetch fails with the message below).
#
# Needs: root (or sudo) for apt: it adds a deb-src entry for Debian trixie
# (/etc/apt/sources.list.d/dltensor-deb-src.sources, same host and key as the machine's Debian entry), runs
# `apt-get update` and `apt-get source python3.X` (dpkg-dev), and builds with the machine's compiler and the
# -dev packages pyenv builds need (libssl-dev, zlib1g-dev, libffi-dev, ...). Build time on 2 cores: printed
# at the end (measured: see docs/getting-started.md, Free-threaded Python).
set -euo pipefail

VERSION="${DLTENSOR_PYTHON_VERSION:-3.13}"
VARIANT="${VERSION}t"
CONFIGURE_EXTRA=()
if [ "${1:-}" = "--tsan" ]; then
    VARIANT="${VERSION}t-tsan"
    # configure adds -fsanitize=thread to its LDFLAGS, but Debian's Makefile.pre.in links with
    # LDFLAGS_NODIST only (CONFIGURE_LDFLAGS=@LDFLAGS_NODIST@), so without this the first program links
    # without the TSAN runtime ("undefined reference to __tsan_init").
    CONFIGURE_EXTRA=(--with-thread-sanitizer LDFLAGS_NODIST=-fsanitize=thread)
fi
CACHE="${DLTENSOR_PYTHONS:-$HOME/.cache/dltensor/pythons}"
PREFIX="$CACHE/$VARIANT"
PYTHON="$PREFIX/bin/python${VERSION}t"

say() { echo "[python $VARIANT] $*" >&2; }

if [ -x "$PYTHON" ] && "$PYTHON" -c 'import sys, ssl, pip; sys.exit(0 if not sys._is_gil_enabled() else 1)' 2>/dev/null; then
    say "already built: $PYTHON"
    echo "$PYTHON"
    exit 0
fi

SUDO=""
if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { say "needs root (or sudo) for apt-get"; exit 1; }
    SUDO=sudo
fi

start=$SECONDS
SRC_LIST=/etc/apt/sources.list.d/dltensor-deb-src.sources
if ! grep -rqs "^Types:.*deb-src" /etc/apt/sources.list.d/ || ! grep -rqs "trixie" /etc/apt/sources.list.d/*src*; then
    host=$(grep -hs "^URIs:" /etc/apt/sources.list.d/*.sources | grep -v security | head -n1 | awk '{print $2}')
    key=$(grep -hs "^Signed-By:" /etc/apt/sources.list.d/*.sources | head -n1 | awk '{print $2}')
    host="${host:-http://deb.debian.org/debian}"
    key="${key:-/usr/share/keyrings/debian-archive-keyring.gpg}"
    say "adding a deb-src entry for Debian trixie ($host) in $SRC_LIST"
    printf 'Types: deb-src\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: %s\n' "$host" "$key" |
        $SUDO tee "$SRC_LIST" >/dev/null
fi
say "apt-get update"
$SUDO apt-get update -qq >/dev/null
command -v dpkg-source >/dev/null || $SUDO apt-get install -y -qq dpkg-dev >/dev/null

WORK="$CACHE/src-$VARIANT"
rm -rf "$WORK"
mkdir -p "$WORK"
say "apt-get source python$VERSION (into $WORK)"
if ! (cd "$WORK" && apt-get source -qq "python$VERSION" >/dev/null 2>"$WORK/fetch.log"); then
    say "cannot fetch Debian's source of python$VERSION:"
    tail -n 5 "$WORK/fetch.log" >&2
    say "(the archive's index may list it while its files are not served here: no interpreter built)"
    exit 1
fi
src=$(find "$WORK" -maxdepth 1 -mindepth 1 -type d -name "python$VERSION*" | head -n1)
[ -n "$src" ] || { say "the source package unpacked no python$VERSION folder"; exit 1; }

say "configure --disable-gil ${CONFIGURE_EXTRA[*]} --prefix=$PREFIX"
mkdir -p "$WORK/build"
cd "$WORK/build"
# Debian's source disables ensurepip (and drops its bundled wheels): pip is bootstrapped below from PyPI.
"$src/configure" --disable-gil "${CONFIGURE_EXTRA[@]}" --prefix="$PREFIX" --with-ensurepip=no --disable-test-modules \
    >"$WORK/configure.log" 2>&1 || { tail -n 20 "$WORK/configure.log" >&2; exit 1; }
say "make -j$(nproc) (progress every 200 lines; log: $WORK/make.log)"
if ! make -j"$(nproc)" 2>&1 | tee "$WORK/make.log" |
        awk 'NR % 200 == 0 { print "[python] make: " NR " lines"; fflush() }' >&2; then
    tail -n 30 "$WORK/make.log" >&2
    exit 1
fi
say "make install"
make install >"$WORK/install.log" 2>&1 || { tail -n 20 "$WORK/install.log" >&2; exit 1; }
"$PYTHON" -c 'import sys, ssl; assert not sys._is_gil_enabled(); print(sys.version)' >&2
say "pip, from PyPI's wheel (a pip wheel runs itself: python pip.whl/pip install pip.whl)"
mkdir -p "$WORK/pip"
python3 -m pip download --quiet --no-deps --only-binary :all: --dest "$WORK/pip" pip >&2
wheel=$(ls "$WORK"/pip/pip-*.whl | head -n1)
"$PYTHON" "$wheel/pip" install --quiet --no-index --root-user-action=ignore --disable-pip-version-check "$wheel" >&2
"$PYTHON" -m pip --version >&2
rm -rf "$WORK"
say "built in $((SECONDS - start)) s: $PYTHON"
echo "$PYTHON"
