#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# tests/test_cli_mpi.sh RFX: rfx fit --distributed under mpirun on this
# machine (loopback, --oversubscribe): the deterministic mode gives the same
# model file, byte for byte, for 1, 2, 3 and 4 ranks and 1 or 2 threads; the
# fast mode and one file per rank agree with the single-process fit; a
# rank whose columns differ and a rank that dies both end the job with an
# error naming the rank, in bounded time, and no model file. Prints
# "N passed, M failed" last.
RFX=${1:?usage: sh tests/test_cli_mpi.sh path/to/rfx}
case $RFX in /*) ;; *) RFX=$(pwd)/$RFX ;; esac
T=$(mktemp -d "${TMPDIR:-/tmp}/rfx-mpi.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
passed=0
failed=0
pass() { passed=$((passed + 1)); }
fail() {
    failed=$((failed + 1))
    echo "FAIL: $*"
    [ -s "$T/err" ] && sed -n '1,6s/^/    stderr: /p' "$T/err"
    return 0
}
check() {
    name=$1
    shift
    if "$@"; then pass; else fail "$name"; fi
}
run() { # NP THREADS ARGS...: mpirun's exit code
    np=$1 th=$2
    shift 2
    timeout 120 mpirun -np "$np" --bind-to none -x OMP_NUM_THREADS="$th" "$RFX" "$@" \
        >"$T/out" 2>"$T/err"
}
same_predictions() { # A B TOL: the models predict alike on data.csv
    "$RFX" predict "$1" "$T/data.csv" -o "$T/pa.csv" && "$RFX" predict "$2" "$T/data.csv" -o "$T/pb.csv" &&
        awk -F, -v tol="$3" 'NR == FNR { a[FNR] = $1; next }
            FNR > 1 { d = $1 - a[FNR]; if (d < 0) d = -d; s = a[FNR] < 0 ? -a[FNR] : a[FNR]
                      if (d > tol * (s + 1)) bad = 1 } END { exit bad }' "$T/pa.csv" "$T/pb.csv"
}

"$RFX" sample friedman1 -n 20000 --seed 3 -o "$T/data.csv" 2>/dev/null
# lambda 1: a solve of condition ~1e4, so that rounding in the sums (the
# exact column sums against the one process's, the statistics in another
# order) stays near 1e-12 in the predictions
FIT="fit $T/data.csv --method ridge -D 96 --lambda 1 -q"

# the single-process fit, in blocks
"$RFX" $FIT -o "$T/single.rfx" 2>"$T/err"
check "single-process fit" test -s "$T/single.rfx"

# deterministic: one model file for every rank count and thread count
for np in 1 2 3 4; do
    run "$np" 1 $FIT --distributed --deterministic --chunk-rows 1500 -o "$T/det$np.rfx"
    check "deterministic fit on $np ranks" test -s "$T/det$np.rfx"
done
for np in 2 3 4; do
    check "deterministic: $np ranks give the 1-rank model, byte for byte" cmp -s "$T/det1.rfx" "$T/det$np.rfx"
done
run 2 2 $FIT --distributed --deterministic --chunk-rows 1500 -o "$T/det2t.rfx"
check "deterministic: 2 threads per rank, the same bytes" cmp -s "$T/det1.rfx" "$T/det2t.rfx"
check "deterministic agrees with the single-process fit (1e-10)" \
    same_predictions "$T/single.rfx" "$T/det3.rfx" 1e-10

# fast mode: byte ranges of one file
run 3 1 $FIT --distributed -o "$T/fast3.rfx"
check "fast mode on 3 ranks" test -s "$T/fast3.rfx"
check "fast mode agrees with the single-process fit (1e-10)" \
    same_predictions "$T/single.rfx" "$T/fast3.rfx" 1e-10
# bayes with the length scale chosen: the same selection rows on every split
run 2 1 fit "$T/data.csv" -D 96 -q --distributed -o "$T/bayes2.rfx"
"$RFX" fit "$T/data.csv" -D 96 -o "$T/bayes1.rfx" 2>"$T/err1"
check "bayes on 2 ranks chose the single fit's length scale" sh -c '
    a=$("$1" info "$2" | grep "^length scale"); b=$("$1" info "$3" | grep "^length scale")
    [ -n "$a" ] && [ "$a" = "$b" ]' sh "$RFX" "$T/bayes1.rfx" "$T/bayes2.rfx"

# one file per rank (DATA with %d)
awk -v dir="$T" 'NR == 1 { h = $0; for (k = 0; k < 3; k++) print h > (dir "/part" k ".csv"); next }
    { print > (dir "/part" ((NR - 2) % 3) ".csv") }' "$T/data.csv"
run 3 1 fit "$T/part%d.csv" --method ridge -D 96 --lambda 1 -q --distributed -o "$T/own.rfx"
check "one file per rank" test -s "$T/own.rfx"
check "one file per rank agrees with the single fit on its rows (1e-10)" \
    same_predictions "$T/single.rfx" "$T/own.rfx" 1e-10

# a rank whose file has other columns: every rank fails, naming it
sed '1s/x3/speed/' "$T/part1.csv" >"$T/odd1.csv"
cp "$T/part0.csv" "$T/odd0.csv"
cp "$T/part2.csv" "$T/odd2.csv"
run 3 1 fit "$T/odd%d.csv" --method ridge -D 96 -q --distributed -o "$T/odd.rfx"
rc=$?
check "mismatched columns: a non-zero exit" test "$rc" -ne 0 -a "$rc" -ne 124
check "mismatched columns: the rank is named" grep -q "rank 1's columns differ from rank 0's" "$T/err"
check "mismatched columns: no model file" test ! -e "$T/odd.rfx"

# classification: labels 0, 1, 2 from the Friedman response's thirds
awk -F, -v OFS=, 'NR == 1 { $NF = "cls"; print; next }
    { $NF = $NF < 11 ? 0 : $NF < 17 ? 1 : 2; print }' "$T/data.csv" >"$T/cls.csv"
same_proba() { # A B TOL: the classifiers' probabilities agree on cls.csv
    "$RFX" predict "$1" "$T/cls.csv" --proba -o "$T/pa.csv" &&
        "$RFX" predict "$2" "$T/cls.csv" --proba -o "$T/pb.csv" &&
        awk -F, -v tol="$3" 'NR == FNR { for (k = 2; k <= NF; k++) a[FNR, k] = $k; next }
            FNR > 1 { for (k = 2; k <= NF; k++) { d = $k - a[FNR, k]; if (d < 0) d = -d
                      if (d > tol) bad = 1 } } END { exit bad }' "$T/pa.csv" "$T/pb.csv"
}
# lambda 1e-3 given: a well-posed solve, so that rounding stays small (the
# chosen one here, ~1e-12, turns 1e-16 into 1e-6); the length scale is
# still chosen, on the same selection rows by every split
# (the least-squares classifier: a distributed fit is not refined by the
# squared hinge, which needs every row's features in one process)
CFIT="fit $T/cls.csv --task classify --loss squared -D 96 --lambda 1e-3 -q"
"$RFX" $CFIT -o "$T/csingle.rfx" 2>"$T/err"
check "classify: single-process fit" test -s "$T/csingle.rfx"
for np in 1 2 3; do
    run "$np" 1 $CFIT --distributed --deterministic --chunk-rows 1500 -o "$T/cdet$np.rfx"
    check "classify: deterministic fit on $np ranks" test -s "$T/cdet$np.rfx"
done
for np in 2 3; do
    check "classify: deterministic, $np ranks give the 1-rank model, byte for byte" \
        cmp -s "$T/cdet1.rfx" "$T/cdet$np.rfx"
done
check "classify: deterministic agrees with the single-process fit (1e-10)" \
    same_proba "$T/csingle.rfx" "$T/cdet3.rfx" 1e-10
run 2 1 fit $T/cls.csv --task classify -D 96 --lambda 1e-3 -q --distributed --deterministic \
    --chunk-rows 1500 -o "$T/cauto2.rfx"
check "classify: the default loss on 2 ranks is the least-squares classifier, byte for byte" \
    cmp -s "$T/cdet1.rfx" "$T/cauto2.rfx"
"$RFX" $CFIT --loss logistic -o "$T/clsingle.rfx" 2>"$T/err"
run 2 1 $CFIT --loss logistic --distributed -o "$T/cl2.rfx"
check "classify: logistic on 2 ranks" test -s "$T/cl2.rfx"
check "classify: logistic on 2 ranks agrees with the single-process fit (1e-5)" \
    same_proba "$T/clsingle.rfx" "$T/cl2.rfx" 1e-5
run 2 1 $CFIT --loss logistic --distributed --deterministic -o "$T/cld.rfx"
check "classify: logistic with --deterministic is refused" test $? -ne 0 -a ! -e "$T/cld.rfx"
check "classify: ... saying why" grep -q "the deterministic mode fits from statistics" "$T/err"
run 2 1 $CFIT --class-weight 0:2 --distributed -o "$T/cw.rfx"
check "classify: --class-weight pairs with --distributed is a usage error" test $? -eq 1
check "classify: --class-weight pairs, no model file" test ! -e "$T/cw.rfx"

# a rank that dies mid-fit (SIGKILL from outside): the job ends, naming
# it, and no model file
"$RFX" sample friedman1 -n 300000 --seed 4 -o "$T/big.csv" 2>/dev/null
start=$(date +%s)
timeout 120 mpirun -np 3 --bind-to none -x OMP_NUM_THREADS=1 "$RFX" fit "$T/big.csv" -D 512 -q \
    --distributed -o "$T/killed.rfx" >"$T/out" 2>"$T/err" &
job=$!
killed=0
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
    sleep 0.5
    for p in /proc/[0-9]*; do
        grep -q "killed.rfx" "$p/cmdline" 2>/dev/null || continue
        tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=2' || continue
        kill -9 "${p#/proc/}" && killed=1
    done
    [ "$killed" -eq 1 ] && break
done
wait "$job"
rc=$?
took=$(($(date +%s) - start))
check "a killed rank: it was found and killed" test "$killed" -eq 1
check "a killed rank: a non-zero exit, not the timeout" test "$rc" -ne 0 -a "$rc" -ne 124
check "a killed rank: over within 60 s (took $took s)" test "$took" -lt 60
check "a killed rank: named" grep -Eq "process rank 2|rank 2" "$T/err"
check "a killed rank: no model file" test ! -e "$T/killed.rfx"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
