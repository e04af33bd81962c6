#!/bin/sh
# make install works: install the build into a scratch prefix, then build the
# C quick start against it with pkg-config alone, and run it and the tool.
# Usage: test_install.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
pc=$(find "$tmp/prefix" -name rfx.pc | head -n 1)
[ -n "$pc" ] || { echo "rfx.pc was not installed"; exit 1; }
export PKG_CONFIG_PATH="$(dirname "$pc")"
libdir=$(pkg-config --variable=libdir rfx)
# shellcheck disable=SC2046 # the flags split on purpose
cc "$src/examples/quickstart.c" $(pkg-config --cflags --libs rfx) -lm -Wl,-rpath,"$libdir" \
    -o "$tmp/quickstart"
(cd "$tmp" && ./quickstart)
"$tmp/prefix/bin/rfx" --version
echo "1 passed, 0 failed"
