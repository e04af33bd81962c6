#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Install the Debian packages rfx needs to build, test, run the demo and the
# benchmarks (Open MPI: librfx_dist and its tests). Installs only what is
# missing; needs root (or prints the line).
# Packages named as arguments are added (make fuzz: clang).
set -eu

PKGS="build-essential cmake pkg-config libopenblas-openmp-dev libsleef-dev
librandom123-dev zlib1g-dev libcsv-dev gnuplot-nox python3 python3-dev
python3-numpy python3-sklearn python3-pytest python3-cffi python3-setuptools python3-pip python3-wheel
python3-openturns python3-matplotlib locales doxygen groff-base valgrind time
openmpi-bin libopenmpi-dev $*"

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $p"
    fi
done

# The locale test (tests/test_locale.c, tests/test_cli.sh) runs rfx under a
# decimal-comma locale; without de_DE.UTF-8 those checks are skipped.
need_locale=0
if ! locale -a 2>/dev/null | grep -qi '^de_DE\.utf-\?8$'; then
    need_locale=1
fi

if [ -z "$missing" ] && [ "$need_locale" -eq 0 ]; then
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    if [ -n "$missing" ]; then
        echo "rfx needs these Debian packages; install them as root with:" >&2
        echo "  apt-get update && apt-get install -y --no-install-recommends$missing" >&2
        exit 1
    fi
    echo "note: the locale tests are skipped without de_DE.UTF-8; as root:" >&2
    echo "  sed -i 's/^# *de_DE.UTF-8/de_DE.UTF-8/' /etc/locale.gen && locale-gen" >&2
    exit 0
fi

if [ -n "$missing" ]; then
    echo "installing:$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
if [ "$need_locale" -eq 1 ]; then
    echo "generating the locale de_DE.UTF-8" >&2
    grep -q '^de_DE.UTF-8 UTF-8' /etc/locale.gen 2>/dev/null ||
        sed -i 's/^# *de_DE.UTF-8 UTF-8/de_DE.UTF-8 UTF-8/' /etc/locale.gen
    grep -q '^de_DE.UTF-8 UTF-8' /etc/locale.gen || echo 'de_DE.UTF-8 UTF-8' >>/etc/locale.gen
    locale-gen >/dev/null
fi
