#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Make the model-file seeds of fuzz/corpus/model_*/ with the rfx tool from
# tiny data: one file per kind of model. These models keep input names and
# their training box (format version 2); bayes_v1.rfx and pce_v1.rfx are
# the version 1 files of tests/data, written before either existed. Usage: fuzz/make_seeds.sh RFX
# (run from the repository; the CSV, .npy and argv seeds are written by
# hand and by fuzz/make_seeds.py).
set -eu
RFX=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
awk 'BEGIN { srand(7); print "x1,x2,y,c"
    for (i = 0; i < 24; i++) { a = rand() * 2 - 1; b = rand() * 2 - 1
        printf "%.6f,%.6f,%.6f,%d\n", a, b, sin(3 * a) + b * b, (a > 0) + (b > 0.3) } }' \
    > "$T/train.csv"
cut -d, -f1,2,3 "$T/train.csv" > "$T/reg.csv"
cut -d, -f1,2,4 "$T/train.csv" > "$T/cls.csv"
sed 's/,[0-9]$/,0/; 2~2s/,0$/,1/' "$T/cls.csv" > "$T/bin.csv"
for dir in fuzz/corpus/model_file fuzz/corpus/model_buffer; do
    mkdir -p "$dir"
    q() { "$RFX" fit "$@" 2>/dev/null; }
    q "$T/reg.csv" -o "$dir/bayes.rfx" -D 8 --length-scale 1
    q "$T/reg.csv" -o "$dir/bayes_cossin.rfx" -D 8 --form cos-sin --kernel matern --nu 2.5
    q "$T/reg.csv" -o "$dir/ridge.rfx" --method ridge -D 8 --structure orthogonal --length-scale 1
    q "$T/reg.csv" -o "$dir/ridge_ard.rfx" --method ridge -D 8 --length-scales learn \
        --learn-iterations 2 --no-standardize
    q "$T/reg.csv" -o "$dir/ridge_fastfood.rfx" --method ridge -D 8 --structure fastfood --length-scale 1
    q "$T/reg.csv" -o "$dir/srfe.rfx" --method srfe -D 8 --sparsity 1 --weight-scale 1 --lambda 0.01
    q "$T/reg.csv" -o "$dir/harfe.rfx" --method harfe -D 8 --terms 2 --sparsity 2 --weight-scale 1 \
        --activation tanh
    q "$T/reg.csv" -o "$dir/pce.rfx" --method pce --degree 2
    cp tests/data/model_v1_bayes.rfx "$dir/bayes_v1.rfx"
    cp tests/data/model_v1_pce.rfx "$dir/pce_v1.rfx"
    q "$T/reg.csv" -o "$dir/projected.rfx" --method projected --surrogate ridge -D 8 --k 1 \
        --gamma 0.1 --iterations 1 --particles 2
    q "$T/bin.csv" -o "$dir/classify_bin.rfx" --task classify -D 8 --length-scale 1 --lambda 0.1
    q "$T/cls.csv" -o "$dir/classify_softmax.rfx" --task classify -D 8 --multiclass softmax \
        --length-scale 1 --lambda 0.1
    q "$T/cls.csv" -o "$dir/classify_hinge.rfx" --task classify -D 8 --loss hinge \
        --length-scale 1 --lambda 0.1
done
ls -l fuzz/corpus/model_file
