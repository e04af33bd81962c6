#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# make install works: install the build into a scratch prefix, then build the
# C quick start against it as a user would, with pkg-config (the README's
# line) and with CMake's find_package(rfx) (tests/consumer), run them and
# the installed tool, and import the installed Python package; librfx_dist
# and rfx/dist.h when rfx was built with MPI. Also: a /usr install puts the
# Python package on /usr/bin/python3's sys.path.
# Usage: test_install.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null

# 1. pkg-config, the README's line
pc=$(find "$tmp/prefix" -name rfx.pc | head -n 1)
[ -n "$pc" ] || { echo "rfx.pc was not installed"; exit 1; }
export PKG_CONFIG_PATH="$(dirname "$pc")"
libdir=$(pkg-config --variable=libdir rfx)
# shellcheck disable=SC2046 # the flags split on purpose
cc "$src/examples/quickstart.c" $(pkg-config --cflags --libs rfx) -lm -Wl,-rpath,"$libdir" \
    -o "$tmp/quickstart"
(cd "$tmp" && ./quickstart >/dev/null)
pass=$((pass + 1))

# 2. CMake: find_package(rfx), rfx::rfx and rfx::rfx_static
cmake -S "$src/tests/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
    -DCMAKE_BUILD_TYPE=Release >"$tmp/consumer.log" 2>&1 || { cat "$tmp/consumer.log"; exit 1; }
cmake --build "$tmp/consumer" >>"$tmp/consumer.log" 2>&1 || { cat "$tmp/consumer.log"; exit 1; }
(cd "$tmp/consumer" && ./consumer_shared >/dev/null && ./consumer_static >/dev/null)
if ldd "$tmp/consumer/consumer_static" | grep -q librfx; then
    echo "consumer_static is linked to the shared librfx"; exit 1
fi
ldd "$tmp/consumer/consumer_shared" | grep -q "$tmp/prefix/.*librfx" ||
    { echo "consumer_shared does not use the installed librfx"; ldd "$tmp/consumer/consumer_shared"; exit 1; }
pass=$((pass + 1))

# 2b. librfx_dist and rfx/dist.h come together, or neither (no MPI); with
# them, find_package(rfx COMPONENTS dist) links rfx::dist
if [ -n "$(find "$tmp/prefix" -name 'librfx_dist.so*' | head -n 1)" ]; then
    [ -f "$tmp/prefix/include/rfx/dist.h" ] || { echo "librfx_dist without rfx/dist.h"; exit 1; }
    [ -x "$tmp/consumer/consumer_dist" ] || { echo "rfx::dist was not found"; cat "$tmp/consumer.log"; exit 1; }
    ldd "$tmp/consumer/consumer_dist" | grep -q "$tmp/prefix/.*librfx_dist" ||
        { echo "consumer_dist does not use the installed librfx_dist"; exit 1; }
    pass=$((pass + 1))
elif [ -f "$tmp/prefix/include/rfx/dist.h" ]; then
    echo "rfx/dist.h installed without librfx_dist"; exit 1
fi

# 3. the tool, its manual page and the docs, and the Python package of the install
"$tmp/prefix/bin/rfx" --version >/dev/null
for f in share/man/man1/rfx.1 share/doc/rfx/README.md share/doc/rfx/ARCHITECTURE.md; do
    [ -s "$tmp/prefix/$f" ] || { echo "make install did not install $f"; exit 1; }
done
pass=$((pass + 1))
if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c "import numpy, sklearn, cffi" 2>/dev/null; then
    pydir=$(find "$tmp/prefix" -type d -name dist-packages | head -n 1)
    [ -n "$pydir" ] || { echo "the Python package was not installed"; exit 1; }
    (cd "$tmp" && PYTHONPATH="$pydir" /usr/bin/python3 -c \
        "import rfx, os; assert rfx.__file__.startswith('$pydir'), rfx.__file__")
    pass=$((pass + 1))
    # a /usr install: the package's folder must be one /usr/bin/python3 searches
    cmake -S "$src" -B "$tmp/usr" -DCMAKE_INSTALL_PREFIX=/usr -DRFX_BUILD_TESTS=OFF >/dev/null
    dir=$(sed -n 's/^RFX_PYTHON_INSTALL_DIR:[A-Z]*=//p' "$tmp/usr/CMakeCache.txt")
    /usr/bin/python3 -c "import sys; p = '/usr/$dir'; assert p in sys.path, (p, sys.path)"
    pass=$((pass + 1))
fi
echo "$pass passed, 0 failed"
