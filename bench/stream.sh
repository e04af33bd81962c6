#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# bench/stream.sh [BUILD_DIR] - rfx fit reading DATA in blocks (ridge, D =
# 2048, the command line's defaults otherwise) against the in-memory fit of
# the same rows (bench_fit_memory: rfx_data_read + rfx_model_fit), in the
# same run: rows per second of the whole fit (reading included) and peak
# resident memory; then the streamed fit of all N rows; then, when rfx was
# built with MPI, the streamed fit under mpirun with 1 and 2 ranks. Writes
# a markdown table to bench/results/stream.md (the README quotes it).
#
# Environment: N=10000000 rows x DIM=20 inputs (friedman1, made once into
# DATA_DIR=/tmp/rfx-bench-stream), SMALL=1000000 rows for the comparisons,
# D=2048, THREADS=2, OUT_DIR=bench/results. The full run takes about an
# hour on 2 cores. ONLY=classify runs only the classifier's comparison:
# the least-squares classifier (rfx fit --task classify) on SMALL rows
# labelled 0, 1, 2 by the thirds of the response, in memory against
# streamed, into bench/results/stream_classify.md.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${1:-build}
RFX=$BUILD/rfx
MEM=$BUILD/bench/rfx_bench_fit_memory
N=${N:-10000000}
SMALL=${SMALL:-1000000}
DIM=${DIM:-20}
D=${D:-2048}
DIR=${DATA_DIR:-/tmp/rfx-bench-stream}
OUT=${OUT_DIR:-$HERE/results}
export OMP_NUM_THREADS=${THREADS:-2}
mkdir -p "$DIR" "$OUT"
[ -x "$RFX" ] && [ -x "$MEM" ] || { echo "stream.sh: build first (make bench)" >&2; exit 1; }

BIG=$DIR/friedman1-$N-$DIM.csv
SUB=$DIR/friedman1-$SMALL-$DIM.csv
[ -s "$BIG" ] || "$RFX" sample friedman1 -d "$DIM" -n "$N" --seed 1 -o "$BIG"
[ -s "$SUB" ] || head -n "$((SMALL + 1))" "$BIG" >"$SUB"

# timed NAME CMD...: "seconds peak_MiB" of CMD (GNU time's %e and %M)
timed() {
    /usr/bin/time -f '%e %M' -o "$DIR/time" "$@" >/dev/null 2>"$DIR/err" ||
        { cat "$DIR/err" >&2; exit 1; }
    awk '{ printf "%s %.0f\n", $1, $2 / 1024 }' "$DIR/time"
}
row() { # label rows seconds mib
    awk -v l="$1" -v n="$2" -v s="$3" -v m="$4" -v ref="${5:-0}" 'BEGIN {
        r = n / s; q = "1.00"; if (ref > 0) q = sprintf("%.2f", r / ref)
        printf "| %s | %d | %.1f | %.0f | %d | %s |\n", l, n, s, r, m, q }'
}

if [ "${ONLY:-}" = classify ]; then
    CLS=$DIR/classes-$SMALL-$DIM.csv
    [ -s "$CLS" ] || awk -F, -v OFS=, 'NR == 1 { $NF = "cls"; print; next }
        { $NF = $NF < 11 ? 0 : $NF < 17 ? 1 : 2; print }' "$SUB" >"$CLS"
    set -- $(timed "$MEM" "$CLS" classify "$D")
    mem_s=$1 mem_mib=$2
    mem_rate=$(awk -v n="$SMALL" -v s="$mem_s" 'BEGIN { print n / s }')
    set -- $(timed "$RFX" fit "$CLS" --task classify -D "$D" -q -o "$DIR/c_small.rfx")
    st_s=$1 st_mib=$2
    {
        echo "Streamed classifier: \`rfx fit DATA --task classify -D $D\` (the least-squares"
        echo "classifier, 3 classes) on friedman1 with $DIM inputs, $(nproc) cores,"
        echo "OMP_NUM_THREADS=$OMP_NUM_THREADS, CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'),"
        echo "$("$RFX" --version | grep '^instruction set')."
        echo
        echo "| fit | rows | seconds | rows/s | peak MiB | rows/s ratio |"
        echo "|---|---|---|---|---|---|"
        row "in memory (rfx_data_read + rfx_model_fit)" "$SMALL" "$mem_s" "$mem_mib"
        row "streamed (rfx fit, blocks of 4096 rows)" "$SMALL" "$st_s" "$st_mib" "$mem_rate"
    } >"$OUT/stream_classify.md"
    cat "$OUT/stream_classify.md"
    exit 0
fi

set -- $(timed "$MEM" "$SUB" ridge "$D")
mem_s=$1 mem_mib=$2
mem_rate=$(awk -v n="$SMALL" -v s="$mem_s" 'BEGIN { print n / s }')
set -- $(timed "$RFX" fit "$SUB" --method ridge -D "$D" -q -o "$DIR/m_small.rfx")
st_s=$1 st_mib=$2
set -- $(timed "$RFX" fit "$BIG" --method ridge -D "$D" -q -o "$DIR/m_big.rfx")
big_s=$1 big_mib=$2
{
    echo "Streamed fits: \`rfx fit DATA --method ridge -D $D\` on friedman1 with $DIM inputs,"
    echo "$(nproc) cores, OMP_NUM_THREADS=$OMP_NUM_THREADS, CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'),"
    echo "$("$RFX" --version | grep '^instruction set')."
    echo "Rows per second count the whole fit, reading the CSV included; the ratio is to"
    echo "the in-memory fit of the same rows in the same run."
    echo
    echo "| fit | rows | seconds | rows/s | peak MiB | rows/s ratio |"
    echo "|---|---|---|---|---|---|"
    row "in memory (rfx_data_read + rfx_model_fit)" "$SMALL" "$mem_s" "$mem_mib"
    row "streamed (rfx fit, blocks of 4096 rows)" "$SMALL" "$st_s" "$st_mib" "$mem_rate"
    row "streamed, all rows" "$N" "$big_s" "$big_mib" "$mem_rate"
    if "$RFX" fit --help | grep -q -- '--distributed' && command -v mpirun >/dev/null 2>&1; then
        for k in 1 2; do
            set -- $(timed env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
                mpirun --oversubscribe -np "$k" --bind-to none -x OMP_NUM_THREADS=$((${THREADS:-2} / k)) \
                "$RFX" fit "$SUB" --method ridge -D "$D" -q --distributed -o "$DIR/m_mpi$k.rfx")
            row "MPI, $k rank(s), $((${THREADS:-2} / k)) thread(s) each" "$SMALL" "$1" "$2" "$mem_rate"
        done
        echo
        echo "(MPI peak memory is that of mpirun's largest child as GNU time sees it.)"
    fi
} >"$OUT/stream.md"
cat "$OUT/stream.md"
