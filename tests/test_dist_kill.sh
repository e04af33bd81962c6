#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# tests/test_dist_kill.sh MPIEXEC TEST_DIST: rank 2 of 3 kills itself
# (SIGKILL) in the middle of a distributed fit, while the others wait for it
# in rfx_dist_stats_reduce. mpirun must end the whole job with a non-zero
# status, within 60 s, and name rank 2.
set -u
mpiexec=$1
prog=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$(date +%s)
timeout 60 "$mpiexec" --oversubscribe --bind-to none -np 3 -x RFX_TEST_DIST_KILL=2 "$prog" \
    >"$out" 2>&1
rc=$?
elapsed=$(($(date +%s) - start))
cat "$out"
echo "mpirun exited with status $rc after ${elapsed} s"
if [ "$rc" -eq 0 ]; then
    echo "FAIL: the job succeeded with a rank killed"
    exit 1
fi
if [ "$rc" -eq 124 ]; then
    echo "FAIL: the job was still running after 60 s"
    exit 1
fi
if ! grep -q "process rank 2" "$out"; then
    echo "FAIL: mpirun did not name rank 2"
    exit 1
fi
echo "1 passed, 0 failed"
