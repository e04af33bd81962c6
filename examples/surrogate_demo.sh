#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The surrogate showcase (part of make demo): the experiment of the talk the
# project started from. Sobol G-function, d = 20, 800 training and 1000
# validation points; each method's relative L2 validation error
# |f - y|_2 / |y - mean(y)|_2 and fit time, the first-order Sobol indices of
# the best surrogate next to the exact ones, and a PNG of predicted against
# true values. The rows: sparse random features (srfe, harfe), polynomial
# chaos (pce), Bayesian and ridge random features with one length scale
# (bayes, ridge) and with one learned per input (bayes-ard: a particle swarm
# of 10 iterations, a third of the default, to keep the demo short), and
# the self-supervised projection (projected: a ridge surrogate on a kernel
# PCA whose input weights a particle swarm learns; projected-srfe: a sparse
# random feature surrogate on it, the final weights, scale and components
# chosen among finalists by its own GCV). Usage:
# surrogate_demo.sh RFX_BINARY OUT_DIR
set -eu
RFX=$1
OUT=$2
mkdir -p "$OUT"

"$RFX" sample gfunction -n 800 --seed 1 -o "$OUT/g_train.csv"
"$RFX" sample gfunction -n 1000 --seed 2 -o "$OUT/g_valid.csv"

best=""
best_err=""
printf '%-15s %12s %10s\n' "method" "rel. L2 err" "fit time" >"$OUT/g_table.txt"
for method in srfe harfe pce bayes ridge bayes-ard projected projected-srfe; do
    t0=$(date +%s.%N)
    case $method in
    # PCE: degrees 1..4 with at most two inputs per term (20 inputs make the
    # full degree-4 basis 10626 terms for 800 rows)
    pce) args="--method pce --degree 4 --max-interaction 2" ;;
    bayes-ard) args="--method bayes --length-scales learn --learn-iterations 10" ;;
    projected-srfe) args="--method projected --surrogate srfe" ;;
    *) args="--method $method" ;;
    esac
    # shellcheck disable=SC2086
    "$RFX" fit "$OUT/g_train.csv" --target y $args -o "$OUT/g_$method.rfx" \
        2>"$OUT/g_fit_$method.log"
    t1=$(date +%s.%N)
    err=$("$RFX" eval "$OUT/g_$method.rfx" "$OUT/g_valid.csv" --target y |
          awk '$1 == "rel_L2" { print $2 }')
    printf '%-15s %12.4f %9.1fs\n' "$method" "$err" "$(echo "$t1 $t0" | awk '{ print $1 - $2 }')" \
        >>"$OUT/g_table.txt"
    if [ -z "$best" ] || awk -v a="$err" -v b="$best_err" 'BEGIN { exit !(a < b) }'; then
        best=$method
        best_err=$err
    fi
done

echo "== surrogate: Sobol G-function, d = 20, 800 training / 1000 validation points"
cat "$OUT/g_table.txt"
echo
echo "== first-order Sobol indices of the best surrogate ($best) and the exact ones"
"$RFX" sobol "$OUT/g_$best.rfx" --like gfunction -n 4000 --bootstrap 100 >"$OUT/g_sobol.txt"
awk 'NR <= 4 || $1 ~ /^x[0-9]$/' "$OUT/g_sobol.txt" | head -11
echo "(x7 .. x19 have a = 5000: exact indices below 1e-6)"
echo
echo "== the projected srfe surrogate: its kernel PCA and the input weights theta it learned"
awk '$1 == "method" || $1 == "kernel" || $1 == "search" || $1 == "finalists" ||
     $1 == "final" || $1 == "evaluations" || ($1 == "theta" && $3 > 0.001)' \
    "$OUT/g_fit_projected-srfe.log"
echo "(theta of the other inputs <= 0.001: the projection ignores them)"

# predicted against true, through gnuplot
"$RFX" predict "$OUT/g_$best.rfx" "$OUT/g_valid.csv" --target y -o "$OUT/g_pred.csv"
if command -v gnuplot >/dev/null 2>&1; then
    paste -d, "$OUT/g_valid.csv" "$OUT/g_pred.csv" |
        awk -F, 'NR > 1 { print $21, $22 }' >"$OUT/g_pred_true.dat"
    gnuplot <<GP
set terminal pngcairo size 760,600 noenhanced
set output "$OUT/g_pred_true.png.tmp"
set title "G-function, d = 20: $best surrogate on 1000 validation points (rel. error $best_err)"
set xlabel "true y"
set ylabel "predicted y"
set key top left
plot "$OUT/g_pred_true.dat" using 1:2 with points pt 7 ps 0.4 title "validation points", \
     x with lines lw 2 title "y = x"
GP
    mv "$OUT/g_pred_true.png.tmp" "$OUT/g_pred_true.png"
    echo "plot: $OUT/g_pred_true.png"
fi
