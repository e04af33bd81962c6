#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# examples/demo.sh RFX [OUTDIR]: the `make demo` walk-through of the rfx
# command line on built-in data.
#
#  1. generate Friedman's regression problem #1 (Friedman 1991): five inputs
#     x ~ U(0, 1)^5, y = 10 sin(pi x1 x2) + 20 (x3 - 1/2)^2 + 10 x4 + 5 x5 + e,
#     e ~ N(0, 1); 5000 training rows and 1000 test rows;
#  2. rfx fit with no options (length scale and variances chosen by evidence);
#  3. rfx info, rfx predict --std, rfx eval, and the coverage of the predictive
#     intervals y_hat +- 1.96 std (about 95% when the std is calibrated);
#  4. rfx kernel-approx: the kernel approximation error against D on the
#     S-curve, plotted to OUTDIR/kernel_approx.png when gnuplot is installed.
#
# Everything is written into OUTDIR (default ./demo-out).

RFX=${1:?usage: sh examples/demo.sh path/to/rfx [outdir]}
OUT=${2:-demo-out}
case $RFX in /*) ;; *) RFX=$(pwd)/$RFX ;; esac
[ -x "$RFX" ] || { echo "demo.sh: $RFX is not an executable (run 'make build')" >&2; exit 1; }
mkdir -p "$OUT" || exit 1

die() {
    echo "demo.sh: $1 failed (exit code $2); see the messages above" >&2
    exit "$2"
}

# step ARGS...: run "rfx ARGS...", echoing it; stop on failure.
step() {
    echo
    echo "== rfx $*"
    "$RFX" "$@" || die "rfx $1" $?
}

# friedman FILE ROWS SEED: the data set above, as CSV with a header.
friedman() {
    awk -v n="$2" -v seed="$3" 'BEGIN {
        srand(seed)
        pi = atan2(0, -1)
        print "x1,x2,x3,x4,x5,y"
        for (i = 0; i < n; i++) {
            for (j = 1; j <= 5; j++) x[j] = rand()
            u = rand(); if (u < 1e-300) u = 1e-300
            e = sqrt(-2 * log(u)) * cos(2 * pi * rand())   # Box-Muller N(0, 1)
            y = 10 * sin(pi * x[1] * x[2]) + 20 * (x[3] - 0.5)^2 + 10 * x[4] + 5 * x[5] + e
            printf "%.8f,%.8f,%.8f,%.8f,%.8f,%.8f\n", x[1], x[2], x[3], x[4], x[5], y
        }
    }' >"$1"
}

start=$(date +%s)
echo "rfx demo: $("$RFX" --version), output in $OUT/"

echo
echo "== data: Friedman #1, 5 inputs, noise sd 1 -> $OUT/train.csv, $OUT/test.csv"
friedman "$OUT/train.csv" 5000 1
friedman "$OUT/test.csv" 1000 2

step fit "$OUT/train.csv" --target y -o "$OUT/model.rfx" 2>"$OUT/fit.log"
cat "$OUT/fit.log"
step info "$OUT/model.rfx"
step predict "$OUT/model.rfx" "$OUT/test.csv" --std -o "$OUT/pred.csv"
head -4 "$OUT/pred.csv"
echo "..."
step eval "$OUT/model.rfx" "$OUT/test.csv" --target y >"$OUT/eval.txt"
cat "$OUT/eval.txt"

# The predictive std covers the noise: |y - y_hat| < 1.96 std for ~95%.
coverage=$(paste -d, "$OUT/pred.csv" "$OUT/test.csv" | awk -F, '
    NR > 1 { n++; if (($8 - $1) ^ 2 < (1.96 * $2) ^ 2) k++ }
    END { printf "%.1f%%", 100 * k / n }')
echo "coverage of y_hat +- 1.96 std on the test rows: $coverage"

plot_opt=""
if command -v gnuplot >/dev/null 2>&1; then
    plot_opt="--plot $OUT/kernel_approx.png"
else
    echo
    echo "(gnuplot is not installed: kernel-approx runs without --plot)"
fi
# shellcheck disable=SC2086
step kernel-approx $plot_opt >"$OUT/kernel_approx.txt"
cat "$OUT/kernel_approx.txt"

# ---- the surrogate showcase ------------------------------------------------
echo
sh "$(dirname "$0")/surrogate_demo.sh" "$RFX" "$OUT"

# ---- summary ----------------------------------------------------------------
val() { awk -v k="$1" '$1 == k { print $2; exit }' "$2"; }
fitline() { sed -n "s/^$1  *//p" "$OUT/fit.log" | head -1; }
kerr=$(awk '$1 ~ /^[0-9]+$/ { if (!first) first = $2 " at D = " $1; last = $2 " at D = " $1 }
            END { print first " -> " last }' "$OUT/kernel_approx.txt")
slope=$(sed -n 's/^# log-log slope \([-0-9.]*\).*/\1/p' "$OUT/kernel_approx.txt")

echo
echo "== summary"
printf '%-15s %s\n' "step" "result"
printf '%-15s %s\n' "data" "Friedman #1: 5000 train / 1000 test rows, 5 inputs, noise sd 1"
printf '%-15s %s\n' "fit" "length scale $(fitline 'length scale'), noise variance $(fitline 'noise variance'), $(fitline time)"
printf '%-15s %s\n' "info" "$OUT/model.rfx: $(wc -c <"$OUT/model.rfx" | tr -d ' ') bytes"
printf '%-15s %s\n' "predict" "1000 predictions with std -> $OUT/pred.csv"
printf '%-15s %s\n' "eval" "R^2 $(val 'R^2' "$OUT/eval.txt"), RMSE $(val RMSE "$OUT/eval.txt") (the noise sd is 1)"
printf '%-15s %s\n' "uncertainty" "$coverage of test targets within y_hat +- 1.96 std (95% if calibrated)"
printf '%-15s %s\n' "kernel-approx" "error $kerr, log-log slope $slope (theory -0.5)"
if [ -n "$plot_opt" ]; then
    printf '%-15s %s\n' "plot" "$OUT/kernel_approx.png"
else
    printf '%-15s %s\n' "plot" "skipped (no gnuplot)"
fi
printf '%-15s %s\n' "total time" "$(($(date +%s) - start)) s"
