#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Run fuzz targets built by make fuzz (RFX_FUZZ, clang) one after another:
#   fuzz/run.sh BUILD SECONDS [TARGET ...]   (default: every target)
# Each starts from its checked-in corpus fuzz/corpus/TARGET/ and writes the
# new inputs it finds to BUILD/fuzz-corpus/TARGET/ (the checked-in corpus
# is not changed), a crash to BUILD/fuzz-artifacts/, and its output to
# BUILD/fuzz-logs/TARGET.log, whose last lines (libFuzzer's final stats)
# are printed. Exits 1 when a target found a crash, leak or timeout.
set -u
BUILD=$1
SECONDS_EACH=$2
shift 2
[ $# -gt 0 ] || set -- csv npy reader model_file model_buffer cli_args
SRC=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$BUILD/fuzz-artifacts" "$BUILD/fuzz-logs"
# one thread: no OpenMP in this build, and OpenBLAS's own threads off
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
status=0
for t in "$@"; do
    mkdir -p "$BUILD/fuzz-corpus/$t"
    log="$BUILD/fuzz-logs/$t.log"
    echo "fuzz_$t: $SECONDS_EACH s ($(date -u '+%Y-%m-%d %H:%M UTC'))"
    "$BUILD/fuzz/fuzz_$t" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
        -close_fd_mask=3 -print_final_stats=1 -artifact_prefix="$BUILD/fuzz-artifacts/$t-" \
        "$BUILD/fuzz-corpus/$t" "$SRC/corpus/$t" > "$log" 2>&1
    rc=$?
    grep -E '^#[0-9]+[[:space:]]+DONE|^stat::(number_of_executed_units|peak_rss_mb)' "$log" | sed 's/^/  /'
    if [ $rc -ne 0 ]; then
        echo "fuzz_$t: FOUND a failure (exit $rc); see $log and $BUILD/fuzz-artifacts/" >&2
        grep -E '^(==[0-9]+==ERROR|SUMMARY|artifact_prefix|Test unit written)' "$log" | head -5 >&2
        status=1
    fi
done
exit $status
