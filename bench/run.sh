#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# bench/run.sh [BUILD_DIR] - rfx's core kernels against scikit-learn and
# numpy/scipy, in the same run, on the same data, once per instruction-set
# path (RFX_ISA): a markdown table of times, ratios and cycles per feature
# for each path, written to bench/results/core-PATH.md (the README quotes
# those files). It builds nothing: `make bench` builds, then runs it with
# the build directory (default: build).
#
# Sizes (environment); the full run takes about five minutes a path on 2
# cores, and a few for the peer:
#   N=100000 D=2048 DIM=20 THREADS=2 REPEATS=3   transform and fit
#   ROWS_FIT=10*N                                 the peak-RSS fits (1e6)
#   PATHS="generic avx2 avx512"                   the paths to run; those
#                                                 above this CPU's are skipped
#   PYTHON=/usr/bin/python3                       numpy, scipy, scikit-learn
#   OUT_DIR=<folder>                              where the tables go
# At the documented sizes the tables go to bench/results; any other size (a
# smoke run: N=5000 sh bench/run.sh build) writes to BUILD_DIR/bench instead,
# so that a quick run never replaces the quoted results. A path's table is
# replaced only when that path ran: the AVX-512 table of another machine
# stays until an AVX-512 machine runs this.
# shellcheck disable=SC2086 # $SIZES and $COMMON split into options on purpose
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${1:-build}
BIN=$BUILD/bench/rfx_bench_core
N=${N:-100000}
D=${D:-2048}
DIM=${DIM:-20}
THREADS=${THREADS:-2}
REPEATS=${REPEATS:-3}
ROWS_FIT=${ROWS_FIT:-10N}
PY=${PYTHON:-/usr/bin/python3}

whole() {
    case $2 in
    '' | *[!0-9]* | 0) echo "run.sh: $1 must be a whole number >= 1, not '$2'" >&2
                       exit 1 ;;
    esac
}
whole N "$N"; whole D "$D"; whole DIM "$DIM"; whole THREADS "$THREADS"; whole REPEATS "$REPEATS"
PATHS=${PATHS:-generic avx2 avx512}
for p in $PATHS; do
    case $p in generic | avx2 | avx512) ;; *) echo "run.sh: PATHS: '$p' is not generic, avx2 or avx512" >&2
                                              exit 1 ;; esac
done
if [ "$ROWS_FIT" = 10N ]; then ROWS_FIT=$((10 * N)); fi
whole ROWS_FIT "$ROWS_FIT"
if [ ! -x "$BIN" ]; then
    echo "run.sh: $BIN not found; build first (make bench, or cmake --build $BUILD)" >&2
    exit 1
fi
if ! "$PY" -c 'import numpy, scipy, sklearn' 2>/dev/null; then
    echo "run.sh: $PY lacks numpy, scipy or scikit-learn (Debian: python3-sklearn);" \
         "set PYTHON=" >&2
    exit 1
fi
if [ -z "${OUT_DIR:-}" ]; then
    if [ "$N" = 100000 ] && [ "$D" = 2048 ] && [ "$DIM" = 20 ] && [ "$THREADS" = 2 ] &&
       [ "$ROWS_FIT" = 1000000 ]; then
        OUT_DIR=$HERE/results
    else
        OUT_DIR=$BUILD/bench
    fi
fi
mkdir -p "$OUT_DIR"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM

# The OpenBLAS of this machine's environment: on some processors the
# workplace sets OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE, which slow a current
# numpy; the peer runs with both unset (rfx keeps what the environment says).
OB_ENV="OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE-(unset)} OPENBLAS_L2_SIZE=${OPENBLAS_L2_SIZE-(unset)}"

SIZES="-n $N -d $DIM -D $D --threads $THREADS"
COMMON="$SIZES --repeats $REPEATS"
NATIVE=$(OMP_NUM_THREADS=1 "$BIN" --mode transform -n 8 -d 2 -D 8 \
    --threads 1 --repeats 1 | awk '$1 == "isa_native" { print $2 }')
rank() { case $1 in generic) echo 0 ;; avx2) echo 1 ;; *) echo 2 ;; esac; }
RUN_PATHS=""
for p in $PATHS; do
    if [ "$(rank "$p")" -le "$(rank "$NATIVE")" ]; then RUN_PATHS="$RUN_PATHS $p"
    else echo "run.sh: this CPU's best is $NATIVE; path $p skipped (its table is kept)" >&2; fi
done

# run_c PATH MODE [extra options]: one process per mode, so each peak RSS is its own
run_c() {
    path=$1
    mode=$2
    shift 2
    echo "RFX_ISA=$path OMP_NUM_THREADS=$THREADS $BIN --mode $mode $*" >> "$TMP/$path/commands"
    echo "run.sh: rfx $mode on $path" >&2
    RFX_ISA=$path OMP_NUM_THREADS=$THREADS "$BIN" --mode "$mode" "$@" > "$TMP/$path/$mode.txt"
}

for path in $RUN_PATHS; do
    mkdir -p "$TMP/$path"
    : > "$TMP/$path/commands"
    run_c "$path" transform $COMMON
    run_c "$path" transform32 $COMMON
    run_c "$path" fit $COMMON
    # where the environment picks OpenBLAS's kernels (OPENBLAS_CORETYPE,
    # OPENBLAS_L2_SIZE), the fit once more as the peer runs, both unset:
    # the like-for-like comparison with the peer's Ridge and DSYRK
    if [ -n "${OPENBLAS_CORETYPE+x}${OPENBLAS_L2_SIZE+x}" ]; then
        echo "env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE RFX_ISA=$path OMP_NUM_THREADS=$THREADS $BIN --mode fit $COMMON" \
            >> "$TMP/$path/commands"
        echo "run.sh: rfx fit on $path, OpenBLAS environment unset" >&2
        env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE RFX_ISA="$path" OMP_NUM_THREADS="$THREADS" \
            "$BIN" --mode fit $COMMON | sed 's/^/unset_/' > "$TMP/$path/fit_unset.txt"
    fi
    # fit32 exits 3 while a single-precision fit is not in the API
    echo "RFX_ISA=$path OMP_NUM_THREADS=$THREADS $BIN --mode fit32 $COMMON" >> "$TMP/$path/commands"
    FIT32=0
    RFX_ISA=$path OMP_NUM_THREADS=$THREADS "$BIN" --mode fit32 $COMMON > "$TMP/$path/fit32.txt" \
        2>/dev/null || FIT32=$?
    if [ "$FIT32" != 0 ] && [ "$FIT32" != 3 ]; then
        echo "run.sh: rfx fit32 failed on $path (exit $FIT32)" >&2
        exit 1
    fi
    echo "$FIT32" > "$TMP/$path/fit32.rc"
    # one pass each (bench_core's default in these modes): they are about memory
    run_c "$path" memory $SIZES --rows-fit "$ROWS_FIT"
    run_c "$path" memory-inmem $SIZES --rows-fit "$ROWS_FIT"
done

PEER_CMD="env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=$THREADS \
OPENBLAS_NUM_THREADS=$THREADS MKL_NUM_THREADS=$THREADS $PY $HERE/peer_sklearn.py $COMMON"
echo "run.sh: scikit-learn / numpy peer" >&2
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS="$THREADS" \
    OPENBLAS_NUM_THREADS="$THREADS" MKL_NUM_THREADS="$THREADS" \
    "$PY" "$HERE/peer_sklearn.py" $COMMON > "$TMP/peer.txt"

# report PATH: the table of one path, from its runs and the peer's
report() {
path=$1
cat "$TMP/$path"/*.txt "$TMP/peer.txt" > "$TMP/all"
FIT32=$(cat "$TMP/$path/fit32.rc")

# get KEY: the value printed for KEY (first occurrence), or "" when none
get() { awk -v k="$1" '$1 == k { print $2; exit }' "$TMP/all"; }
# ratio A B [digits]: A / B, or n/a
ratio() {
    awk -v a="$1" -v b="$2" -v p="${3:-2}" 'BEGIN {
        if (a == "" || b == "" || b + 0 == 0) print "n/a"; else printf "%.*f\n", p, a / b }'
}
# sec X: seconds as "0.123 s"
sec() { awk -v a="$1" 'BEGIN { if (a == "") print "n/a"; else printf "%.3f s\n", a }'; }
mib() { awk -v a="$1" 'BEGIN { if (a == "") print "n/a"; else printf "%.0f MiB\n", a / 1048576 }'; }
# met A OP B: yes / no / n/a
met() {
    awk -v a="$1" -v op="$2" -v b="$3" 'BEGIN {
        if (a == "" || a == "n/a") { print "n/a"; exit }
        ok = (op == ">=") ? (a + 0 >= b + 0) : (op == "<=") ? (a + 0 <= b + 0) : (a + 0 < b + 0)
        print ok ? "yes" : "no" }'
}

# the two sides must have made the same data
C_SY=$(awk '$1 == "data_sum_y" { print $2; exit }' "$TMP/$path/fit.txt")
P_SY=$(awk '$1 == "data_sum_y" { print $2; exit }' "$TMP/peer.txt")
DATA_OK=$(awk -v a="$C_SY" -v b="$P_SY" -v n="$N" 'BEGIN {
    d = a - b; if (d < 0) d = -d; print (d <= 1e-9 * n) ? "same" : "DIFFERENT" }')

T64=$(get transform_f64_seconds)
T64F=$(get transform_f64_fresh_seconds)
T64H=$(get transform_f64_fresh_hugepage_seconds)
T32=$(get transform_f32_seconds)
T32H=$(get transform_f32_fresh_hugepage_seconds)
E32=$(get transform_f32_max_abs_err)
E32S=$(get transform_f32_max_abs_err_same_input)
ZMAX=$(get feature_max_abs)
FIT=$(get fit_f64_seconds)
ACC=$(get fit_f64_accumulate_seconds)
SOLVE=$(get fit_f64_solve_seconds)
RMSE=$(get fit_rmse_train)
FIT32S=$(get fit_f32_seconds)
MS=$(get memory_stream_seconds)
MSR=$(get memory_stream_peak_rss_bytes)
MI=$(get memory_inmem_seconds)
MIR=$(get memory_inmem_peak_rss_bytes)
TR64=$(get transform_f64_peak_rss_bytes)
PT64=$(get peer_transform_f64_seconds)
PT32=$(get peer_transform_f32_seconds)
PE32=$(get peer_transform_f32_max_abs_err)
PRIDGE=$(get peer_ridge_seconds)
WF64=$(get transform_f64_write_floor_seconds)
PFIT=$(get peer_fit_seconds)
PRMSE=$(get peer_fit_rmse_train)
PSYRK=$(get peer_dsyrk_seconds)
RSYRK=$(get fit_f64_dsyrk_floor_seconds)
UFIT=$(get unset_fit_f64_seconds)
USYRK=$(get unset_fit_f64_dsyrk_floor_seconds)
PTR64=$(get peer_transform_f64_peak_rss_bytes)
SK_BYTES=$(awk -v n="$ROWS_FIT" -v D="$D" 'BEGIN { printf "%.0f", n * D * 8 }')

R_T64=$(ratio "$PT64" "$T64")
R_T64F=$(ratio "$PT64" "$T64F")
R_T64H=$(ratio "$PT64" "$T64H")
R_T32=$(ratio "$PT32" "$T32")
R_T32H=$(ratio "$PT32" "$T32H")
R_FIT=$(ratio "$PFIT" "$FIT")
R_FLOOR=$(ratio "$FIT" "$PSYRK")
R_FLOOR_OWN=$(ratio "$FIT" "$RSYRK")
R_UFIT=$(ratio "$PFIT" "$UFIT")
R_UFLOOR=$(ratio "$UFIT" "$USYRK")
R_UFLOOR_PEER=$(ratio "$UFIT" "$PSYRK")
R_WF=$(ratio "$T64" "$WF64")
R_MEM=$(ratio "$SK_BYTES" "$MSR" 1)
if [ "$ROWS_FIT" = 1000000 ] && [ "$D" = 2048 ]; then
    MET_MEM=$(met "$MSR" "<" 1073741824)
    MEM_TARGET="< 1 GiB"
else
    MET_MEM="(not 1e6 x 2048)"
    MEM_TARGET="< 1 GiB at 1e6 x 2048"
fi
if [ "$FIT32" = 0 ] && [ -n "$FIT32S" ]; then
    FIT32_CELL="$(sec "$FIT32S") | $(sec "$PFIT") transform + Ridge, f64 | $(ratio "$PFIT" "$FIT32S")"
else
    FIT32_CELL="n/a (the fit32 run failed) | | "
fi

CPU=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
MEMTOTAL=$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576; exit }' /proc/meminfo 2>/dev/null || true)
C_BLAS=$(ldd "$BIN" 2>/dev/null | awk '/openblas/ { print $3; exit }')
if [ -n "$C_BLAS" ]; then C_BLAS=$(readlink -f "$C_BLAS"); fi
C_CORE=$(OPENBLAS_VERBOSE=2 "$BIN" --help 2>&1 >/dev/null | awk '/Core:/ { print $2; exit }')

C64=$(get transform_f64_cycles_per_feature)
C32=$(get transform_f32_cycles_per_feature)
GHZ=$(get transform_f64_tsc_ghz)
R_3264=$(ratio "$T64" "$T32")
if [ "$path" = "$NATIVE" ]; then HOW="native: this CPU's best"; else HOW="forced by RFX_ISA on a $NATIVE CPU"; fi

{
echo "# rfx core benchmark: the $path path"
echo
echo "Instruction-set path: **$path** ($HOW). CPU: $CPU."
echo "rfx $(get rfx_version) against scikit-learn $(get peer_sklearn_version)" \
     "(numpy $(get peer_numpy_version), scipy $(get peer_scipy_version)), same machine, same run."
echo "n = $N rows, d = $DIM inputs, D = $D features, $THREADS threads, best of $REPEATS;" \
     "peak-RSS fits on $ROWS_FIT rows."
echo "Gaussian kernel, gamma = $(awk -v g="$(get gamma)" 'BEGIN { printf "%g", g }') (1/(2d): scikit-learn's 'scale' for this data)," \
     "cos-bias features; ridge lambda = $(get lambda) with an intercept."
echo "Data: X[i,j] = 2 sin(0.37 (i d + j) + j), y[i] = sum_j sin(X[i,j]), made by each side" \
     "(sum of y: rfx $C_SY, peer $P_SY: $DATA_OK)."
echo "Ratios are peer / rfx (above 1: rfx is faster), except fit / floor."
echo
echo "| measure | rfx | peer | ratio | target | met |"
echo "| --- | ---: | ---: | ---: | --- | --- |"
echo "| transform f64, into a preallocated output | $(sec "$T64") | $(sec "$PT64") RBFSampler.transform | $R_T64 | >= 8 | $(met "$R_T64" ">=" 8) |"
echo "| ... the floor: writing the n x D f64 output once ($THREADS threads, memset) | $(sec "$WF64") | | $R_WF (transform / floor) | | |"
echo "| transform f64, fresh output (malloc, page faults) | $(sec "$T64F") | same | $R_T64F | >= 8 | $(met "$R_T64F" ">=" 8) |"
echo "| transform f64, fresh output advised for huge pages (as numpy allocates) | $(sec "$T64H") | same | $R_T64H | >= 8 | $(met "$R_T64H" ">=" 8) |"
echo "| ... cycles per feature per core (time-stamp counter at $GHZ GHz, times $THREADS threads, over n D) | $C64 | | | | |"
echo "| transform f32, into a preallocated output | $(sec "$T32") | $(sec "$PT32") RBFSampler.transform, f32 | $R_T32 | | |"
echo "| ... cycles per feature per core | $C32 | | | | |"
echo "| f32 speed-up over f64 (rfx's f64 time / f32 time) | $R_3264 | | | >= 1.8 | $(met "$R_3264" ">=" 1.8) |"
echo "| transform f32, fresh output advised for huge pages | $(sec "$T32H") | same | $R_T32H | | |"
echo "| transform f32, max abs error against f64 features (features are at most $ZMAX) | $E32 ($E32S from the same rounded inputs) | $PE32 | | | |"
echo "| fit: featurise + accumulate + solve (rfx_ridge_fit, primal) vs transform + Ridge(cholesky) | $(sec "$FIT") | $(sec "$PFIT") | $R_FIT | >= 1.5 | $(met "$R_FIT" ">=" 1.5) |"
echo "| ... of which accumulate (rfx_stats_add) / solve (rfx_ridge_solve); Ridge.fit alone | $(sec "$ACC") / $(sec "$SOLVE") | $(sec "$PRIDGE") | | | |"
echo "| fit vs the floor: one DSYRK Z^T Z of the same n x D f64 matrix, with rfx's BLAS and environment | $(sec "$FIT") | $(sec "$RSYRK") | $R_FLOOR_OWN (fit / floor) | <= 1.3 | $(met "$R_FLOOR_OWN" "<=" 1.3) |"
echo "| ... the same floor with the peer's BLAS and environment (scipy) | $(sec "$FIT") | $(sec "$PSYRK") | $R_FLOOR (fit / floor) | | |"
if [ -n "$UFIT" ]; then
echo "| fit, run as the peer runs (OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset) vs transform + Ridge(cholesky) | $(sec "$UFIT") | $(sec "$PFIT") | $R_UFIT | >= 1.5 | $(met "$R_UFIT" ">=" 1.5) |"
echo "| ... against its own DSYRK floor, so run / against the peer's (scipy) | $(sec "$UFIT") | $(sec "$USYRK") / $(sec "$PSYRK") | $R_UFLOOR / $R_UFLOOR_PEER (fit / floor) | <= 1.3 | $(met "$R_UFLOOR" "<=" 1.3) |"
fi
echo "| fit f32 (f32 features, SSYRK blocks into f64 statistics) vs f64 transform + Ridge | $FIT32_CELL | | |"
echo "| training RMSE of the fit (a sanity check; y has std $(get data_y_std)) | $RMSE | $PRMSE | | | |"
echo "| peak RSS, fit of $ROWS_FIT x $D from a source that generates rows (rfx_ridge_fit_source) | $(mib "$MSR") | $(mib "$SK_BYTES") for the feature matrix alone ($ROWS_FIT x $D x 8 bytes, computed, not run) | $R_MEM | $MEM_TARGET | $MET_MEM |"
echo "| ... its time | $(sec "$MS") | | | | |"
echo "| peak RSS, the same fit with X in memory (rfx_ridge_fit) | $(mib "$MIR") | | | | |"
echo "| ... its time | $(sec "$MI") | | | | |"
echo "| peak RSS of the f64 transform run (one n x D output) | $(mib "$TR64") | $(mib "$PTR64") | | | |"
echo
echo "Machine: $(nproc) cores, $CPU, $MEMTOTAL; $(uname -srm)."
echo "BLAS: rfx ${C_BLAS:-?} (core ${C_CORE:-?}); peer $(get peer_blas)" \
     "(numpy huge-page advice: $(get peer_numpy_madvise_hugepage))." \
     "Environment: $OB_ENV; the peer ran with both unset."
echo "Date: $(date -u '+%Y-%m-%d %H:%M UTC')."
echo
echo "Commands, run by \`N=$N D=$D DIM=$DIM THREADS=$THREADS REPEATS=$REPEATS ROWS_FIT=$ROWS_FIT" \
     "sh bench/run.sh $BUILD\`:"
echo
echo '```'
cat "$TMP/$path/commands"
echo "$PEER_CMD"
echo '```'
} > "$TMP/core-$path.md"

cp "$TMP/core-$path.md" "$OUT_DIR/core-$path.md"
cat "$OUT_DIR/core-$path.md"
echo "run.sh: wrote $OUT_DIR/core-$path.md" >&2
}

for path in $RUN_PATHS; do report "$path"; done
