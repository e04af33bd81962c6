#!/bin/sh
# Install the Debian packages rfx needs to build, test, run the demo and the
# benchmarks. Installs only what is missing; needs root (or prints the line).
# Packages named as arguments are added (make fuzz: clang).
set -eu

PKGS="build-essential cmake pkg-config libopenblas-openmp-dev libsleef-dev
librandom123-dev zlib1g-dev libcsv-dev gnuplot-nox python3 python3-dev
python3-numpy python3-sklearn python3-pytest python3-cffi python3-setuptools python3-pip python3-wheel
python3-openturns python3-matplotlib valgrind $*"

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $p"
    fi
done

if [ -z "$missing" ]; then
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "rfx needs these Debian packages; install them as root with:" >&2
    echo "  apt-get update && apt-get install -y --no-install-recommends$missing" >&2
    exit 1
fi

echo "installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
