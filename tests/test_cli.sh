#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# tests/test_cli.sh RFX [DATA_DIR]: the command-line tool end to end - exit
# codes, messages and files. Data sets are generated here with awk (with
# its own MINSTD generator, not rand()), in a scratch directory removed at
# exit. Prints "N passed, M failed" last and
# exits non-zero when something failed.
# shellcheck disable=SC2016  # the single-quoted $ are awk's, not the shell's

RFX=${1:?usage: sh tests/test_cli.sh path/to/rfx [tests/data]}
case $RFX in /*) ;; *) RFX=$(pwd)/$RFX ;; esac
[ -x "$RFX" ] || { echo "test_cli.sh: $RFX is not an executable"; exit 2; }
DATA=${2:-$(dirname "$0")/data}

T=$(mktemp -d "${TMPDIR:-/tmp}/rfx-cli.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
trap 'exit 130' HUP INT TERM
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"

passed=0
failed=0

pass() { passed=$((passed + 1)); }
fail() {
    failed=$((failed + 1))
    echo "FAIL: $*"
    [ -s "$T/stderr" ] && sed -n '1,4s/^/    stderr: /p' "$T/stderr"
    return 0
}

# expect RC NAME CMD...: run CMD (stdout in $T/stdout, stderr in $T/stderr)
# and check its exit code; error exits must print "rfx: <message>".
expect() {
    want=$1
    name=$2
    shift 2
    "$@" >"$T/stdout" 2>"$T/stderr"
    got=$?
    if [ "$got" -ne "$want" ]; then
        fail "$name: exit code $got, expected $want"
    elif grep -Eq 'Sanitizer|runtime error:' "$T/stderr"; then
        fail "$name: sanitizer report"
    elif [ "$want" -ne 0 ] && ! grep -q '^rfx: ' "$T/stderr"; then
        fail "$name: no 'rfx: <message>' on stderr"
    else
        pass
    fi
}

# check NAME CMD...: CMD must succeed.
check() {
    name=$1
    shift
    if "$@"; then pass; else fail "$name"; fi
}

# stderr_has NAME ERE: the last command's stderr matches the extended regex.
stderr_has() {
    if grep -Eq -- "$2" "$T/stderr"; then pass; else fail "$1: stderr does not match '$2'"; fi
}

# json_check NAME FILE PYTHON-EXPRESSION: FILE parses as JSON (d) and the
# expression holds.
json_check() {
    if python3 -c 'import json, math, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$2" "$3"; then pass; else fail "$1: $3"; fi
}

# The data's uniforms come from MINSTD (Park & Miller 1988: x <- 48271 x
# mod 2^31 - 1), whose products stay below 2^53 and so are exact in every
# awk's doubles: the same data with mawk, gawk or busybox, unlike rand().
MINSTD='
function u() { s_ = (48271 * s_) % 2147483647; return s_ / 2147483647 }
function useed(seed,  k) { s_ = 1 + (seed * 7919) % 2147483646; for (k = 0; k < 10; k++) u() }'

# gen_data FILE ROWS SEED: y = sin(x0) + 0.5 x1^2 + small noise; x2 unused.
gen_data() {
    awk -v n="$2" -v seed="$3" "$MINSTD"'
    BEGIN {
        useed(seed)
        print "x0,x1,x2,y"
        for (i = 0; i < n; i++) {
            x0 = 4 * u() - 2; x1 = 4 * u() - 2; x2 = 4 * u() - 2
            y = sin(x0) + 0.5 * x1 * x1 + 0.02 * (u() - 0.5)
            printf "%.10g,%.10g,%.10g,%.10g\n", x0, x1, x2, y
        }
    }' >"$1"
}

# field NAME FILE: the value of a "name value" line.
field() { awk -v k="$1" '$1 == k { print $2; exit }' "$2"; }

# ---- help, version, usage errors ---------------------------------------
expect 0 "rfx --help" "$RFX" --help
check "rfx --help lists the exit codes" grep -q "Exit codes" "$T/stdout"
printf 'a,y\n1,1\n2,2\n3,3\n4,5\n5,4\n' >"$T/small.csv"
printf 'a\n0.5\n1.7e308\n' >"$T/far.csv"
expect 0 "fit on five rows" "$RFX" fit "$T/small.csv" --method ridge -o "$T/small.rfx"
expect 4 "predict a row far outside the training scale" "$RFX" predict "$T/small.rfx" "$T/far.csv"
stderr_has "a non-finite prediction names its row" "row 1: the prediction is (nan|-?inf)"
expect 1 "fit -o ''" "$RFX" fit "$T/small.csv" -o ''
stderr_has "fit -o ''" "the output path is empty"
expect 1 "fit -o the data file" "$RFX" fit "$T/small.csv" -o "$T/small.csv"
stderr_has "fit -o DATA" "is the input file"
check "fit -o DATA leaves the data" grep -q '^a,y$' "$T/small.csv"
expect 5 "fit -o into a missing folder, before the fit" "$RFX" fit "$T/small.csv" \
    -o "$T/no/such/m.rfx"
stderr_has "fit -o missing folder" "cannot write into"
expect 5 "sample -o into a missing folder" "$RFX" sample ishigami -n 5 -o "$T/no/such/s.csv"
stderr_has "sample -o missing folder" "cannot write into"
expect 0 "predict -o /dev/null" "$RFX" predict "$T/small.rfx" "$T/small.csv" -o /dev/null
check "/dev/null is still a device" test -c /dev/null
expect 0 "rfx --version" "$RFX" --version
check "rfx --version names the instruction set and the CPU's best" \
    grep -Eq '^instruction set (generic|avx2|avx512) \(this CPU: (generic|avx2|avx512)\)$' "$T/stdout"
expect 0 "RFX_ISA=generic rfx --version" env RFX_ISA=generic "$RFX" --version
check "RFX_ISA=generic runs the generic path" grep -q '^instruction set generic ' "$T/stdout"
expect 1 "RFX_ISA=sse9 is refused" env RFX_ISA=sse9 "$RFX" --version
stderr_has "RFX_ISA=sse9" "RFX_ISA: unknown instruction set 'sse9'"
expect 1 "rfx with no command" "$RFX"
expect 1 "rfx unknown command" "$RFX" frobnicate
for cmd in fit predict eval info kernel-approx sample sobol; do
    expect 0 "rfx $cmd --help" "$RFX" "$cmd" --help
    check "rfx $cmd --help documents the exit codes" grep -q "6  out of memory" "$T/stdout"
    expect 0 "rfx help $cmd" "$RFX" help "$cmd"
    expect 1 "rfx $cmd --no-such-option" "$RFX" "$cmd" --no-such-option
    stderr_has "rfx $cmd --no-such-option" "unknown option '--no-such-option'"
done
check "rfx fit --help shows every option" sh -c \
    "'$RFX' fit --help | grep -q -- '--noise-var' && '$RFX' fit --help | grep -q -- '--delimiter'"

gen_data "$T/train.csv" 400 1
gen_data "$T/test.csv" 200 2

expect 1 "fit without -o" "$RFX" fit "$T/train.csv"
expect 1 "fit -o without its value" "$RFX" fit "$T/train.csv" -o
stderr_has "fit -o without its value" "needs a value"
expect 1 "fit -D 0" "$RFX" fit "$T/train.csv" -o "$T/m.rfx" -D 0
expect 1 "fit -D 12x" "$RFX" fit "$T/train.csv" -o "$T/m.rfx" -D 12x
expect 1 "fit --gamma abc" "$RFX" fit "$T/train.csv" -o "$T/m.rfx" --gamma abc
expect 1 "fit --gamma -1" "$RFX" fit "$T/train.csv" -o "$T/m.rfx" --gamma -1
expect 1 "fit --threads -1" "$RFX" fit "$T/train.csv" -o "$T/m.rfx" --threads -1
expect 1 "fit --threads above 4096" "$RFX" fit "$T/train.csv" -o "$T/m.rfx" --threads 4097
stderr_has "--threads above 4096" "^rfx: --threads: 4097 is too large \(at most 4096\)$"
expect 1 "kernel-approx --threads far too large" "$RFX" kernel-approx -D 10 \
    --threads 99999999999999999999
stderr_has "--threads far too large" "^rfx: --threads: 99999999999999999999 is too large"
expect 1 "kernel-approx --kernel custom" "$RFX" kernel-approx -D 10 --kernel custom
stderr_has "--kernel custom names the APIs that take a sampler" "^rfx: --kernel: the custom kernel takes a sampler"
# One data row is a data error (exit 2) for every method.
printf 'x0,x1,y\n1,2,3\n' >"$T/one_row.csv"
for m in bayes ridge srfe lasso harfe pce projected; do
    expect 2 "fit --method $m on one row" "$RFX" fit "$T/one_row.csv" --method "$m" -o "$T/m.rfx"
    stderr_has "fit --method $m on one row" "rows"
done
expect 2 "fit --task classify on one row" "$RFX" fit "$T/one_row.csv" --task classify -o "$T/m.rfx"
# eval -o writes its report to a file, what stdout would show
expect 0 "eval --pred --truth -o" "$RFX" eval --pred "$T/train.csv" --truth "$T/train.csv" -o "$T/e.txt"
check "eval -o: the report in the file, nothing on stdout" sh -c "grep -q '^RMSE' '$T/e.txt' && ! test -s '$T/stdout'"
expect 5 "eval -o into a missing folder, before any work" "$RFX" eval --pred "$T/train.csv" --truth "$T/train.csv" -o "$T/no/such/e.txt"
expect 1 "fit --nu 0.7" "$RFX" fit "$T/train.csv" -o "$T/m.rfx" --kernel matern --nu 0.7
expect 1 "fit --kernel nope" "$RFX" fit "$T/train.csv" -o "$T/m.rfx" --kernel nope
expect 1 "fit --lambda with bayes" "$RFX" fit "$T/train.csv" -o "$T/m.rfx" --lambda 1
expect 1 "fit --gamma with cauchy" "$RFX" fit "$T/train.csv" -o "$T/m.rfx" --kernel cauchy --gamma 1
expect 1 "fit cos-sin with odd D" "$RFX" fit "$T/train.csv" -o "$T/m.rfx" --form cos-sin -D 101
check "no model written by failed fits" test ! -e "$T/m.rfx"

# ---- fit, info, predict, eval round trip --------------------------------
expect 0 "fit with defaults" "$RFX" fit "$T/train.csv" --target y -o "$T/model.rfx"
check "fit reports the chosen length scale" grep -q "length scale" "$T/stderr"
check "fit reports the evidence" grep -q "log evidence" "$T/stderr"
check "fit prints no progress when stderr is not a terminal" sh -c "! grep -q '%' '$T/stderr'"

expect 0 "info" "$RFX" info "$T/model.rfx"
check "info prints the kernel" grep -Eq '^kernel +gaussian' "$T/stdout"
check "info prints D" grep -Eq '^features D +1024' "$T/stdout"
check "info prints the method" grep -Eq '^method +bayes' "$T/stdout"

mkdir "$T/pred"
expect 0 "predict -o" "$RFX" predict "$T/model.rfx" "$T/test.csv" -o "$T/pred/p.csv"
check "predict writes a header and 200 rows" \
    awk 'NR == 1 && $0 != "prediction" { exit 1 } END { exit NR != 201 }' "$T/pred/p.csv"
check "predict leaves no temporary files" test "$(ls -A "$T/pred")" = "p.csv"

expect 0 "predict to stdout" "$RFX" predict "$T/model.rfx" "$T/test.csv"
check "predict to stdout equals predict -o" cmp -s "$T/stdout" "$T/pred/p.csv"

# -o a FIFO is written in place; -o /dev/full is an I/O error.
if mkfifo "$T/out.fifo" 2>/dev/null; then
    cat "$T/out.fifo" >"$T/fifo.csv" &
    reader=$!
    expect 0 "predict -o a FIFO" "$RFX" predict "$T/model.rfx" "$T/test.csv" -o "$T/out.fifo"
    wait "$reader"
    check "the FIFO passes the predictions and stays a FIFO" \
        sh -c "cmp -s '$T/fifo.csv' '$T/pred/p.csv' && test -p '$T/out.fifo'"
fi
if [ -c /dev/full ]; then
    expect 5 "predict -o /dev/full" "$RFX" predict "$T/model.rfx" "$T/test.csv" -o /dev/full
    stderr_has "predict -o /dev/full" "^rfx: /dev/full: cannot write: No space left on device$"
fi

expect 0 "predict --std" "$RFX" predict "$T/model.rfx" "$T/test.csv" --std -o "$T/pred/s.csv"
check "predict --std writes 2 columns with positive std" awk -F, '
    NR == 1 { if ($0 != "prediction,std") exit 1; next }
    NF != 2 || !($2 > 0) { exit 1 }
    END { exit NR != 201 }' "$T/pred/s.csv"

cut -d, -f1-3 "$T/test.csv" >"$T/test_x.csv"
expect 0 "predict on inputs without the target" "$RFX" predict "$T/model.rfx" "$T/test_x.csv" -o "$T/pred/x.csv"
check "predictions without the target column are the same" cmp -s "$T/pred/x.csv" "$T/pred/p.csv"

expect 0 "eval" "$RFX" eval "$T/model.rfx" "$T/test.csv" --target y
r2=$(field 'R^2' "$T/stdout")
check "eval R^2 >= 0.9 (got $r2)" awk -v r="$r2" 'BEGIN { exit !(r != "" && r >= 0.9) }'
check "eval prints RMSE, MAE and the relative L2 error" \
    sh -c "grep -q '^RMSE ' '$T/stdout' && grep -q '^MAE ' '$T/stdout' && grep -q '^rel_L2 ' '$T/stdout'"

expect 0 "eval --pred --truth" "$RFX" eval --pred "$T/pred/p.csv" --truth "$T/test.csv" --target y
r2b=$(field 'R^2' "$T/stdout")
check "eval --pred gives the same R^2 ($r2b)" test "$r2" = "$r2b"

# A decimal-comma locale changes no byte: rfx reads and writes '.' always.
if locale -a 2>/dev/null | grep -qi '^de_DE\.utf-\?8$'; then
    expect 0 "predict under LC_ALL=de_DE.UTF-8" env LC_ALL=de_DE.UTF-8 "$RFX" predict \
        "$T/model.rfx" "$T/test.csv" -o "$T/pred/p_de.csv"
    check "predictions under de_DE.UTF-8 are the same bytes" cmp -s "$T/pred/p_de.csv" \
        "$T/pred/p.csv"
    "$RFX" eval "$T/model.rfx" "$T/test.csv" --target y >"$T/eval_c.txt" 2>&1
    expect 0 "eval under LC_ALL=de_DE.UTF-8" env LC_ALL=de_DE.UTF-8 "$RFX" eval "$T/model.rfx" \
        "$T/test.csv" --target y
    check "eval under de_DE.UTF-8 prints the same bytes" cmp -s "$T/stdout" "$T/eval_c.txt"
    expect 0 "fit under LC_ALL=de_DE.UTF-8" env LC_ALL=de_DE.UTF-8 "$RFX" fit "$T/train.csv" \
        --method ridge -D 64 --length-scale 0.5 --lambda 1e-3 -o "$T/de.rfx"
    expect 0 "the same fit under LC_ALL=C" env LC_ALL=C "$RFX" fit "$T/train.csv" \
        --method ridge -D 64 --length-scale 0.5 --lambda 1e-3 -o "$T/c.rfx"
    check "fit under de_DE.UTF-8 writes the same model bytes" cmp -s "$T/de.rfx" "$T/c.rfx"
else
    echo "note: de_DE.UTF-8 is not available; the locale checks are skipped"
fi

# --classes: integer labels; round(sin(x0) + ...) as a class problem
awk -F, 'NR == 1 { print; next } { printf "%s,%s,%s,%d\n", $1, $2, $3, ($4 > 1) }' \
    "$T/test.csv" >"$T/classes.csv"
expect 0 "eval --classes" "$RFX" eval --pred "$T/pred/p.csv" --truth "$T/classes.csv" --classes
check "eval --classes prints the accuracy" grep -q '^accuracy ' "$T/stdout"

expect 0 "fit ridge" "$RFX" fit "$T/train.csv" --method ridge -D 256 -o "$T/ridge.rfx"
check "fit ridge reports GCV" grep -q "GCV" "$T/stderr"
expect 0 "eval ridge" "$RFX" eval "$T/ridge.rfx" "$T/test.csv"
r2r=$(field 'R^2' "$T/stdout")
check "ridge R^2 >= 0.9 (got $r2r)" awk -v r="$r2r" 'BEGIN { exit !(r != "" && r >= 0.9) }'
expect 1 "predict --std on a ridge model" "$RFX" predict "$T/ridge.rfx" "$T/test.csv" --std

# ---- input data errors ---------------------------------------------------
cut -d, -f1-2 "$T/test.csv" >"$T/two_cols.csv"
expect 2 "predict with a wrong number of columns" "$RFX" predict "$T/model.rfx" "$T/two_cols.csv"
stderr_has "wrong number of columns" "column"

printf 'x0,x1,x2,y\n1,2,3,4\n5,6,7,8\n1,2,3,4\n1,2,3\n1,2,3,4\n' >"$T/ragged.csv"
expect 2 "ragged CSV" "$RFX" fit "$T/ragged.csv" -o "$T/bad.rfx"
stderr_has "ragged CSV names line 5" "(:5([^0-9]|$)|line 5([^0-9]|$))"

printf 'x0,x1,x2,y\n1,2,3,4\n5,6,7,8\n1,abc,3,4\n1,2,3,4\n' >"$T/word.csv"
expect 2 "non-numeric cell" "$RFX" fit "$T/word.csv" -o "$T/bad.rfx"
stderr_has "non-numeric cell names line:col" "4:2"

printf 'x0,x1,x2,y\n1,2,3,4\n5,nan,7,8\n1,2,3,4\n' >"$T/nan.csv"
expect 2 "NaN cell" "$RFX" fit "$T/nan.csv" -o "$T/bad.rfx"
check "no model written for bad data" test ! -e "$T/bad.rfx"

# A .npy header that claims (10^11, 4) float64 values before 8 values: from
# a pipe it is read as the data come (no allocation of what it claims), and
# either way it is a data error naming what was claimed and what came.
npy_header() {
    printf '\223NUMPY\001\000\166\000'
    printf "%-117s\n" "{'descr': '<f8', 'fortran_order': False, 'shape': ($1, $2), }"
}
{ npy_header 100000000000 4; head -c 64 /dev/zero; } >"$T/lie.npy"
expect 2 "a .npy file whose header claims more than it holds" "$RFX" predict "$T/model.rfx" \
    "$T/lie.npy"
stderr_has "lying .npy file" "lie.npy: truncated .npy file: shape \(100000000000, 4\) needs 3200000000000 data bytes, the file has 64$"
expect 2 "the same .npy from a pipe" sh -c "cat '$T/lie.npy' | '$RFX' predict '$T/model.rfx' /dev/stdin"
stderr_has "lying .npy from a pipe" "^rfx: /dev/stdin: truncated .npy data: shape \(100000000000, 4\) needs 400000000000 values, the input ended after 8$"
{ npy_header 3 4; head -c 95 /dev/zero; } >"$T/short.npy"
expect 2 "a .npy from a pipe cut inside a value" sh -c "cat '$T/short.npy' | '$RFX' predict '$T/model.rfx' /dev/stdin"
stderr_has "a .npy cut inside a value" "needs 12 values, the input ended after 11$"
expect 0 "rfx writes the inputs as .npy" "$RFX" sample ishigami -n 300 --seed 5 -o "$T/ish.npy"
expect 0 "fit on a .npy file" "$RFX" fit "$T/ish.npy" --method ridge -D 64 --length-scale 1 \
    -o "$T/ish.rfx"
{ npy_header 5 3; head -c 120 /dev/zero; } >"$T/zeros.npy"
expect 0 "predict on a .npy file" "$RFX" predict "$T/ish.rfx" "$T/zeros.npy" -o "$T/pred/ish1.csv"
expect 0 "predict on a .npy from a pipe" sh -c "cat '$T/zeros.npy' | '$RFX' predict '$T/ish.rfx' /dev/stdin -o '$T/pred/ish2.csv'"
check "a .npy from a pipe gives the file's predictions" cmp -s "$T/pred/ish1.csv" "$T/pred/ish2.csv"

# Control bytes of the input are quoted in messages as \xHH, never sent raw
# to the terminal: ESC [ 2 J (clear screen) in a cell and in a header name.
ESC=$(printf '\033')
printf 'x0,x1%s[2J,y\n1,2,3\n4,5%s[2J,6\n' "$ESC" "$ESC" >"$T/esc.csv"
expect 2 "a cell with control bytes" "$RFX" fit "$T/esc.csv" -o "$T/bad.rfx"
stderr_has "the cell is quoted" "esc.csv:3:2: '5\\\\x1b\[2J' is not a number$"
check "no raw ESC on stderr (cell)" sh -c "! grep -q '$ESC' '$T/stderr'"
expect 2 "a header name with control bytes" "$RFX" fit "$T/esc.csv" --target z -o "$T/bad.rfx"
stderr_has "the header name is quoted" "target column 'z' not found \(columns: x0, x1\\\\x1b\[2J, y\)$"
check "no raw ESC on stderr (header)" sh -c "! grep -q '$ESC' '$T/stderr'"
cp "$T/esc.csv" "$T/esc$ESC[2J.csv"
expect 2 "a file name with control bytes" "$RFX" fit "$T/esc$ESC[2J.csv" -o "$T/bad.rfx"
stderr_has "the file name is quoted" "esc\\\\x1b\[2J.csv:3:2: "
check "no raw ESC on stderr (file name)" sh -c "! grep -q '$ESC' '$T/stderr'"

expect 5 "missing data file" "$RFX" fit "$T/no-such-file.csv" -o "$T/bad.rfx"
expect 5 "missing model file" "$RFX" predict "$T/no-such-model.rfx" "$T/test.csv"
expect 5 "unwritable model path" "$RFX" fit "$T/train.csv" -D 64 --length-scale 1 \
    -o "$T/no-such-dir/m.rfx"

# ---- model file errors ----------------------------------------------------
size=$(wc -c <"$T/model.rfx" | tr -d ' ')
off=$((size / 2))
cp "$T/model.rfx" "$T/corrupt.rfx"
byte=$(od -An -tu1 -j "$off" -N1 "$T/model.rfx" | tr -d ' ')
# shellcheck disable=SC2059  # the format is the octal escape of the new byte
printf "\\$(printf '%03o' $(((byte + 1) % 256)))" |
    dd of="$T/corrupt.rfx" bs=1 seek="$off" conv=notrunc 2>/dev/null
check "the corrupt copy differs" sh -c "! cmp -s '$T/model.rfx' '$T/corrupt.rfx'"
expect 3 "corrupt model (predict)" "$RFX" predict "$T/corrupt.rfx" "$T/test.csv"
expect 3 "corrupt model (info)" "$RFX" info "$T/corrupt.rfx"
head -c "$off" "$T/model.rfx" >"$T/truncated.rfx"
expect 3 "truncated model" "$RFX" info "$T/truncated.rfx"
head -c 20 "$T/model.rfx" >"$T/stub.rfx"
expect 3 "model shorter than its header" "$RFX" info "$T/stub.rfx"
expect 3 "a CSV file as a model" "$RFX" info "$T/test.csv"

# ---- kernel-approx ----------------------------------------------------------
expect 0 "kernel-approx on the S-curve" "$RFX" kernel-approx -D 10,100,1000
check "kernel-approx error falls with D, and is < 0.1 at D = 1000" awk '
    $1 ~ /^[0-9]+$/ { e[$1] = $2 }
    END { exit !((1000 in e) && e[1000] < e[100] && e[100] < e[10] && e[1000] < 0.1) }' "$T/stdout"
expect 1 "kernel-approx -D 10,,100" "$RFX" kernel-approx -D 10,,100
expect 1 "kernel-approx cos-sin with odd D" "$RFX" kernel-approx --form cos-sin -D 10,101
expect 5 "kernel-approx --plot without gnuplot" env PATH=/nonexistent "$RFX" kernel-approx \
    -D 10 -n 10 --plot "$T/k.png"
stderr_has "kernel-approx --plot without gnuplot" "gnuplot"
if command -v gnuplot >/dev/null 2>&1; then
    mkdir "$T/plot"
    expect 0 "kernel-approx --plot" "$RFX" kernel-approx -D 10,100 -n 200 --plot "$T/plot/k.png"
    check "the plot is a PNG" sh -c "od -An -c -N4 '$T/plot/k.png' | grep -q 'P   N   G'"
    check "the plot leaves no temporary files" test "$(ls -A "$T/plot")" = "k.png"
fi

# ---- sample ---------------------------------------------------------------
expect 0 "sample --list" "$RFX" sample --list
check "sample --list names every function" sh -c \
    "for f in gfunction ishigami friedman1 borehole srfe otl wingweight; do grep -q \"^\$f \" '$T/stdout' || exit 1; done"
expect 0 "sample ishigami -o" "$RFX" sample ishigami -n 50 --seed 3 -o "$T/ish.csv"
check "sample writes the header x0,x1,x2,y" sh -c "head -n 1 '$T/ish.csv' | grep -qx 'x0,x1,x2,y'"
check "sample writes n rows" test "$(wc -l <"$T/ish.csv" | tr -d ' ')" -eq 51
expect 0 "sample to stdout" "$RFX" sample ishigami -n 50 --seed 3
check "sample: stdout and -o agree" cmp -s "$T/stdout" "$T/ish.csv"
expect 0 "sample --seed 4" "$RFX" sample ishigami -n 50 --seed 4
check "sample: another seed gives other rows" sh -c "! cmp -s '$T/stdout' '$T/ish.csv'"
check "sample: ishigami inputs in [-pi, pi]" awk -F, 'NR > 1 {
    for (j = 1; j <= 3; j++) if ($j < -3.1416 || $j > 3.1416) exit 1 } END { exit NR != 51 }' "$T/ish.csv"
expect 0 "sample gfunction -d 4" "$RFX" sample gfunction -n 5 -d 4
check "sample -d sets the inputs" sh -c "head -n 1 '$T/stdout' | grep -qx 'x0,x1,x2,x3,y'"
expect 0 "sample borehole .npy" "$RFX" sample borehole -n 20 -o "$T/bh.npy"
check "sample .npy has the numpy magic" sh -c "od -An -c -N6 '$T/bh.npy' | grep -q 'N   U   M   P   Y'"
# the engineering functions: their inputs and y, inside the published boxes
expect 0 "sample otl" "$RFX" sample otl -n 30 --seed 2 -o "$T/otl.csv"
check "sample otl writes x0..x5,y" sh -c "head -n 1 '$T/otl.csv' | grep -qx 'x0,x1,x2,x3,x4,x5,y'"
check "sample otl: 30 rows of 7 columns, Rb1 in [50, 150], beta in [50, 300]" awk -F, '
    NR > 1 && (NF != 7 || $1 < 50 || $1 > 150 || $6 < 50 || $6 > 300) { bad = 1 }
    END { exit bad || NR != 31 }' "$T/otl.csv"
expect 0 "sample wing-weight (alias)" "$RFX" sample wing-weight -n 30 --design lhs -o "$T/ww.csv"
check "sample wingweight writes x0..x9,y" sh -c "head -n 1 '$T/ww.csv' | grep -qx 'x0,x1,x2,x3,x4,x5,x6,x7,x8,x9,y'"
check "sample wingweight: 30 rows of 11 columns, Lambda in [-10, 10] degrees" awk -F, '
    NR > 1 && (NF != 11 || $4 < -10 || $4 > 10 || $11 <= 0) { bad = 1 }
    END { exit bad || NR != 31 }' "$T/ww.csv"
expect 1 "sample otl -d 5" "$RFX" sample otl -n 5 -d 5
stderr_has "sample otl -d 5" "otl has 6 inputs"
# designs: a plain Sobol sequence's first points in closed form, and one point
# per stratum of each input for a Latin hypercube and a scrambled Sobol net
expect 0 "sample --design sobol --no-scramble" "$RFX" sample gfunction -n 4 -d 2 --design sobol --no-scramble
check "sobol: the first points are 0, 1/2, (3/4, 1/4), (1/4, 3/4) (cell midpoints)" awk -F, '
    NR == 2 { ok = $1 < 1e-9 && $2 < 1e-9 }
    NR == 3 { ok = ok && $1 - 0.5 < 1e-9 && $2 - 0.5 < 1e-9 }
    NR == 4 { ok = ok && $1 - 0.75 < 1e-9 && $2 - 0.25 < 1e-9 }
    NR == 5 { ok = ok && $1 - 0.25 < 1e-9 && $2 - 0.75 < 1e-9 }
    END { exit !(ok && NR == 5) }' "$T/stdout"
for design in lhs sobol; do
    expect 0 "sample --design $design" "$RFX" sample gfunction -n 64 -d 3 --design $design --seed 5
    check "$design: one point per stratum of 1/64 in every input" awk -F, '
        NR > 1 { for (j = 1; j <= 3; j++) { k = int($j * 64); if (seen[j, k]++) bad = 1 } }
        END { exit bad || NR != 65 }' "$T/stdout"
done
expect 0 "sample --design halton" "$RFX" sample ishigami -n 16 --design halton
check "halton: ishigami inputs in [-pi, pi]" awk -F, 'NR > 1 && ($1 < -3.1416 || $1 > 3.1416) { bad = 1 } END { exit bad }' "$T/stdout"
expect 1 "sample --design grid" "$RFX" sample ishigami -n 4 --design grid
stderr_has "sample --design grid" "unknown design 'grid' \\(expected random, lhs, sobol or halton\\)"
expect 1 "sample --no-scramble without sobol or halton" "$RFX" sample ishigami -n 4 --no-scramble
expect 1 "sample sobol beyond its 1024 inputs" "$RFX" sample gfunction -n 4 -d 1100 --design sobol
expect 0 "sample friedman1 for a fit" "$RFX" sample friedman1 -n 300 --seed 1 -o "$T/fr.csv"
expect 0 "fit on a sample" "$RFX" fit "$T/fr.csv" --target y --method ridge -D 128 \
    --length-scale 1 --lambda 1e-3 -o "$T/fr.rfx"
expect 1 "sample unknown function" "$RFX" sample rosenbrock -n 5
stderr_has "sample unknown function" "unknown test function 'rosenbrock'"
expect 1 "sample without -n" "$RFX" sample ishigami
stderr_has "sample without -n" "missing -n"
expect 1 "sample -n 0" "$RFX" sample ishigami -n 0
expect 1 "sample without FUNCTION" "$RFX" sample -n 5
expect 1 "sample ishigami -d 4" "$RFX" sample ishigami -n 5 -d 4
stderr_has "sample ishigami -d 4" "ishigami has 3 inputs"
expect 1 "sample srfe -d 1" "$RFX" sample srfe -n 5 -d 1
expect 5 "sample to an unwritable path" "$RFX" sample ishigami -n 5 -o "$T/no-such-dir/s.csv"

# ---- srfe and sobol ---------------------------------------------------------
expect 0 "sample ishigami 300" "$RFX" sample ishigami -n 300 --seed 1 -o "$T/ish3.csv"
expect 0 "fit --method srfe" "$RFX" fit "$T/ish3.csv" --method srfe -D 600 -o "$T/ish.rfx"
stderr_has "fit --method srfe reports its terms" "terms nonzero"
expect 0 "info of an srfe model" "$RFX" info "$T/ish.rfx"
check "info says srfe" grep -q "srfe" "$T/stdout"
expect 0 "sobol --like ishigami" "$RFX" sobol "$T/ish.rfx" --like ishigami -n 2000 --bootstrap 50
check "sobol prints one line per input with the closed-form and exact indices" \
    awk '$1 ~ /^x[0-9]$/ { n++; if (NF != 11) exit 1 } END { exit n != 3 }' "$T/stdout"
check "sobol: S_1 of x1 near the exact 0.4424" \
    awk '$1 == "x1" { d = $2 - $10; if (d < 0) d = -d; exit d > 0.1 }' "$T/stdout"
check "sobol: the closed-form indices of the model near its Monte Carlo ones" \
    awk '$1 ~ /^x[0-9]$/ { for (k = 0; k < 2; k++) { d = $(2 + 3 * k) - $(8 + k);
         if (d < 0) d = -d; if (d > 0.1) bad = 1 } } END { exit bad }' "$T/stdout"
check "sobol: the closed-form header" grep -q "model_first, model_total: the model's indices in closed form" "$T/stdout"
expect 0 "sobol --uniform" "$RFX" sobol "$T/ish.rfx" --uniform -3.14159,3.14159 -n 500 --bootstrap 0
expect 0 "sobol without a distribution: the training box" "$RFX" sobol "$T/ish.rfx" -n 300 --format json -o "$T/box_default.json"
if command -v python3 >/dev/null 2>&1; then
    "$RFX" info "$T/ish.rfx" --format json | python3 -c 'import json, sys
print(" ".join("--uniform %d=%r,%r" % (j, lo, hi) for j, (lo, hi) in enumerate(json.load(sys.stdin)["input_box"])))' >"$T/box_args"
    # shellcheck disable=SC2046  # the words of box_args are meant to split
    expect 0 "sobol with the box given" "$RFX" sobol "$T/ish.rfx" -n 300 --format json -o "$T/box_given.json" $(cat "$T/box_args")
    check "the default is uniform on the training box" cmp -s "$T/box_default.json" "$T/box_given.json"
fi
expect 1 "sobol without a distribution or a box" "$RFX" sobol "$DATA/model_v1_bayes.rfx"
stderr_has "sobol without a distribution or a box" "--like FUNCTION or --uniform A,B \(the model has no training box"
expect 1 "sobol --uniform 1,0" "$RFX" sobol "$T/ish.rfx" --uniform 1,0
expect 2 "sobol --like with other inputs" "$RFX" sobol "$T/ish.rfx" --like borehole
expect 3 "sobol of a corrupt model" "$RFX" sobol "$T/bh.npy" --uniform 0,1

# ---- srfe (basis pursuit denoising), lasso, harfe ----------------------------
# The training RMS residual of a model is the RMSE that eval prints on the
# training rows: an independent check of what fit reports.
expect 0 "fit srfe --eta" "$RFX" fit "$T/ish3.csv" --method srfe --eta 0.5 --weight-scale 1 \
    -D 400 --threads 1 -o "$T/bpdn.rfx"
stderr_has "fit srfe --eta says basis pursuit denoising" "^method +srfe \(basis pursuit denoising\)"
stderr_has "fit srfe --eta reports eta as given" "^eta +0\.5 \(given\)"
expect 0 "eval the srfe --eta model on its training rows" "$RFX" eval "$T/bpdn.rfx" "$T/ish3.csv"
rmse=$(field RMSE "$T/stdout")
check "srfe --eta 0.5: training RMS residual 0.5 within 1% (got $rmse)" \
    awk -v r="$rmse" 'BEGIN { exit !(r != "" && r > 0.495 && r < 0.505) }'
expect 0 "fit srfe without --eta" "$RFX" fit "$T/ish3.csv" --method srfe -D 400 --threads 1 \
    --folds 3 -o "$T/srfe.rfx"
eta=$(awk '$1 == "eta" { print $2 }' "$T/stderr")
stderr_has "srfe reports the equivalent eta" "^eta .*equivalent"
stderr_has "srfe reports the folds" "chosen by 3-fold cross-validation"
expect 0 "eval the srfe model on its training rows" "$RFX" eval "$T/srfe.rfx" "$T/ish3.csv"
rmse=$(field RMSE "$T/stdout")
check "srfe: the equivalent eta $eta is the training RMS residual $rmse" \
    awk -v a="$eta" -v b="$rmse" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a > 0 && d <= 1e-4 * b) }'
for lam in 0.001 0.1; do
    expect 0 "fit lasso --lambda $lam" "$RFX" fit "$T/ish3.csv" --method lasso --lambda "$lam" \
        --weight-scale 1 -D 400 --threads 1 -o "$T/lasso_$lam.rfx"
    stderr_has "lasso --lambda $lam is reported as given" "^lambda +$lam \(given\)"
    awk '$1 == "sparse" { print $(NF - 4) }' "$T/stderr" >"$T/nnz_$lam"
done
check "lasso: lambda 0.1 keeps fewer terms than 0.001 ($(cat "$T/nnz_0.1") < $(cat "$T/nnz_0.001"))" \
    test "$(cat "$T/nnz_0.1")" -lt "$(cat "$T/nnz_0.001")"
expect 0 "fit harfe --terms 25" "$RFX" fit "$T/ish3.csv" --method harfe --terms 25 -D 400 \
    --threads 1 --activation cos --weights uniform --sparsity 1 -o "$T/harfe.rfx"
stderr_has "harfe keeps at most 25 terms" " (25|1[0-9]|2[0-4]|[1-9]) of 400 terms nonzero"
stderr_has "harfe reports its features" "N = 400, q = 1 inputs per feature, cos"
expect 0 "info of a harfe model" "$RFX" info "$T/harfe.rfx"
check "info: harfe, cos, uniform weights" sh -c "grep -Eq '^method +harfe' '$T/stdout' &&
    grep -Eq '^activation +cos' '$T/stdout' && grep -Eq '^weights +uniform' '$T/stdout'"

# ---- kitchen sinks and the greedy baseline ------------------------------------
expect 0 "fit --method sinks" "$RFX" fit "$T/train.csv" --method sinks -D 256 --threads 1 \
    -o "$T/sinks.rfx"
stderr_has "sinks reports its box" "^box +C = [0-9.e+]+: "
stderr_has "sinks chose the box by cross-validation" "chosen by 5-fold cross-validation, held-out MSE: .*\\(C = inf\\)$"
stderr_has "sinks reports its features" "K = 256, cos of the gaussian kernel's frequencies, length scale 1.732"
expect 0 "eval a sinks model" "$RFX" eval "$T/sinks.rfx" "$T/test.csv" --target y
check "sinks: test relative L2 error below 0.05" \
    awk '$1 == "rel_L2" { exit !($2 < 0.05) }' "$T/stdout"
expect 0 "info of a sinks model" "$RFX" info "$T/sinks.rfx"
check "info: a sinks model with a stored scaler" sh -c "grep -Eq '^method +sinks' '$T/stdout' &&
    grep -Eqi '^standardi[sz]ed +yes' '$T/stdout'"
# the box bounds the fit minus its intercept: a tight box binds every weight
expect 0 "fit sinks --box 0.05" "$RFX" fit "$T/train.csv" --method sinks -D 64 --box 0.05 \
    --threads 1 -o "$T/sinks_box.rfx"
stderr_has "a tight box binds every weight" " 64 of 64 weights at the bound"
expect 0 "predict with the tight box" "$RFX" predict "$T/sinks_box.rfx" "$T/test.csv" -o "$T/pbox.csv"
check "a box of C = 0.05 keeps the predictions within 2 C of each other" \
    awk -F, 'NR > 1 { if (lo == "" || $1 < lo) lo = $1; if (hi == "" || $1 > hi) hi = $1 }
             END { exit !(hi - lo <= 0.1 + 1e-12) }' "$T/pbox.csv"
expect 0 "fit sinks with sigmoid features of uniform weights" "$RFX" fit "$T/train.csv" \
    --method sinks -D 128 --activation sigmoid --weights uniform --weight-scale 2 --box inf \
    --no-standardize --threads 1 -o "$T/sinks_sig.rfx"
stderr_has "sinks with --weights" "K = 128, sigmoid of uniform frequencies, scale 2"
stderr_has "sinks without scaling" "^inputs +as they are"
expect 1 "sinks with --weights and --kernel" "$RFX" fit "$T/train.csv" --method sinks \
    --weights normal --kernel laplacian -o "$T/x.rfx"
expect 1 "sinks --box 0" "$RFX" fit "$T/train.csv" --method sinks --box 0 -o "$T/x.rfx"
expect 2 "sinks choosing the box on 5 rows" "$RFX" fit "$T/small.csv" --method sinks -o "$T/x.rfx"
stderr_has "sinks on too few rows to choose the box" "needs at least 10 rows, got 5 \\(give --box\\)"
expect 1 "greedy with --box" "$RFX" fit "$T/train.csv" --method greedy --box 3 -o "$T/x.rfx"
stderr_has "greedy with --box" "--box applies to --method sinks, not greedy"
# the greedy fit adds terms one at a time with the same draws: 16 terms fit
# the training rows at least as well as their first 4
expect 0 "fit --method greedy --terms 4" "$RFX" fit "$T/train.csv" --method greedy --terms 4 \
    --threads 1 -o "$T/g4.rfx"
g4=$(awk '$1 == "training" { print $3 }' "$T/stderr")
expect 0 "fit --method greedy --terms 16" "$RFX" fit "$T/train.csv" --method greedy --terms 16 \
    --threads 1 -o "$T/g16.rfx"
g16=$(awk '$1 == "training" { print $3 }' "$T/stderr")
check "greedy: the training MSE of 16 terms <= that of 4 ($g16 <= $g4)" \
    awk -v a="$g16" -v b="$g4" 'BEGIN { exit !(a != "" && b != "" && a + 0 <= b + 0) }'
expect 0 "eval a greedy model" "$RFX" eval "$T/g16.rfx" "$T/test.csv" --target y
check "greedy, 16 terms: test relative L2 error below 0.05" \
    awk '$1 == "rel_L2" { exit !($2 < 0.05) }' "$T/stdout"
expect 1 "greedy --draws 0" "$RFX" fit "$T/train.csv" --method greedy --draws 0 -o "$T/x.rfx"
expect 1 "sinks with --draws" "$RFX" fit "$T/train.csv" --method sinks --draws 3 -o "$T/x.rfx"
expect 0 "fit --method greedy --update relaxed" "$RFX" fit "$T/train.csv" --method greedy \
    --update relaxed --terms 16 --threads 1 -o "$T/g16r.rfx"
stderr_has "greedy --update relaxed" "^method +greedy \\(relaxed greedy fit\\)"
expect 0 "eval a relaxed greedy model" "$RFX" eval "$T/g16r.rfx" "$T/test.csv" --target y
check "relaxed greedy, 16 terms: test relative L2 error below 0.1" \
    awk '$1 == "rel_L2" { exit !($2 < 0.1) }' "$T/stdout"
expect 1 "greedy --update nope" "$RFX" fit "$T/train.csv" --method greedy --update nope \
    -o "$T/x.rfx"
stderr_has "greedy --update nope" "unknown update 'nope' \\(orthogonal or relaxed\\)"
expect 1 "sinks with --update" "$RFX" fit "$T/train.csv" --method sinks --update relaxed \
    -o "$T/x.rfx"
expect 1 "sinks regression with --loss" "$RFX" fit "$T/train.csv" --method sinks \
    --loss logistic -o "$T/x.rfx"
stderr_has "sinks regression with --loss" "--loss applies to --method sinks with --task classify"

# the phase-free form: tanh(w.x), no phase
expect 0 "fit sinks --form phase-free" "$RFX" fit "$T/train.csv" --method sinks -D 64 \
    --activation tanh --weights normal --form phase-free --box 8 --threads 1 -o "$T/spf.rfx"
stderr_has "sinks phase-free features" "K = 64, tanh \\(phase-free\\) of normal frequencies"
expect 0 "info of a phase-free model" "$RFX" info "$T/spf.rfx"
check "info: the phase-free form" grep -Eq '^form +phase-free' "$T/stdout"
expect 0 "fit greedy --form phase-free" "$RFX" fit "$T/train.csv" --method greedy --terms 8 \
    --activation tanh --weights normal --form phase-free --threads 1 -q -o "$T/gpf.rfx"
expect 0 "fit srfe --form phase-free" "$RFX" fit "$T/train.csv" --method srfe -D 200 \
    --activation sin --form phase-free --threads 1 -q -o "$T/srfepf.rfx"
expect 1 "cos with --form phase-free" "$RFX" fit "$T/train.csv" --method sinks --form phase-free \
    -o "$T/x.rfx"
stderr_has "cos with --form phase-free" "phase-free form is for the activations other than cos"
expect 1 "--form nope" "$RFX" fit "$T/train.csv" --form nope -o "$T/x.rfx"
stderr_has "--form nope" "cos-bias, cos-sin or phase-free"

# ---- sums and products of kernels, and frequencies from a file ---------------
# a product of one term draws that term's frequencies: the map of --kernel gaussian
expect 0 "fit --kernel 'gaussian*'" "$RFX" fit "$T/train.csv" --method ridge -D 64 \
    --kernel 'gaussian*' --length-scale 1 --lambda 0.01 --threads 1 -q -o "$T/kprod1.rfx"
expect 0 "fit --kernel gaussian" "$RFX" fit "$T/train.csv" --method ridge -D 64 \
    --kernel gaussian --length-scale 1 --lambda 0.01 --threads 1 -q -o "$T/kgauss.rfx"
expect 0 "predict, product of one term" "$RFX" predict "$T/kprod1.rfx" "$T/test.csv" \
    -o "$T/pred/kprod1.csv"
expect 0 "predict, gaussian" "$RFX" predict "$T/kgauss.rfx" "$T/test.csv" -o "$T/pred/kgauss.csv"
check "a one-term product predicts as its kernel, byte for byte" \
    cmp -s "$T/pred/kprod1.csv" "$T/pred/kgauss.csv"
expect 0 "fit --kernel gaussian:1+laplacian:0.5:2" "$RFX" fit "$T/train.csv" -D 256 \
    --kernel gaussian:1+laplacian:0.5:2 --threads 1 -o "$T/ksum.rfx"
stderr_has "a sum of kernels is a custom kernel" "^kernel +custom, cos-bias features, D = 256"
expect 0 "eval the sum of kernels" "$RFX" eval "$T/ksum.rfx" "$T/test.csv" --target y
check "sum of kernels: test relative L2 error below 0.05" \
    awk '$1 == "rel_L2" { exit !($2 < 0.05) }' "$T/stdout"
expect 0 "fit sinks on a product of kernels" "$RFX" fit "$T/train.csv" --method sinks -D 64 \
    --kernel 'gaussian*matern:2' --nu 2.5 --box 8 --threads 1 -q -o "$T/ksinks.rfx"
expect 1 "--kernel mixing + and *" "$RFX" fit "$T/train.csv" --kernel 'gaussian+laplacian*cauchy' \
    -o "$T/x.rfx"
stderr_has "--kernel mixing + and *" "mixes \\+ and \\*"
expect 1 "--kernel with a weight in a product" "$RFX" fit "$T/train.csv" \
    --kernel 'gaussian*cauchy:1:3' -o "$T/x.rfx"
expect 1 "--kernel with a length scale 0" "$RFX" fit "$T/train.csv" --kernel 'gaussian:0+cauchy' \
    -o "$T/x.rfx"
stderr_has "--kernel with a length scale 0" "length scale '0' of term 1"
expect 1 "--kernel with an unknown term" "$RFX" fit "$T/train.csv" --kernel 'gaussian+nope' \
    -o "$T/x.rfx"
expect 1 "--nu with no matern term" "$RFX" fit "$T/train.csv" --kernel 'gaussian+cauchy' --nu 2.5 \
    -o "$T/x.rfx"
# --frequencies: rows at unit length scale, divided by the map's length scale,
# so rows doubled at length scale 2 give the same map
awk 'BEGIN { s = 12345; for (i = 0; i < 80; i++) { line = ""
        for (j = 0; j < 3; j++) { s = (s * 1103515245 + 12345) % 2147483648
            line = line (j ? "," : "") sprintf("%.6f", 4 * s / 2147483648 - 2) }
        print line } }' >"$T/freq.csv"
awk -F, '{ printf "%.6f,%.6f,%.6f\n", 2 * $1, 2 * $2, 2 * $3 }' "$T/freq.csv" >"$T/freq2.csv"
expect 0 "fit --frequencies" "$RFX" fit "$T/train.csv" --method ridge -D 64 \
    --frequencies "$T/freq.csv" --length-scale 1 --lambda 0.01 --threads 1 -o "$T/kf1.rfx"
stderr_has "--frequencies: a custom kernel" "^kernel +custom"
expect 0 "fit --frequencies, doubled, length scale 2" "$RFX" fit "$T/train.csv" --method ridge \
    -D 64 --frequencies "$T/freq2.csv" --length-scale 2 --lambda 0.01 --threads 1 -q \
    -o "$T/kf2.rfx"
expect 0 "predict, --frequencies" "$RFX" predict "$T/kf1.rfx" "$T/test.csv" -o "$T/pred/kf1.csv"
expect 0 "predict, doubled --frequencies" "$RFX" predict "$T/kf2.rfx" "$T/test.csv" \
    -o "$T/pred/kf2.csv"
check "frequencies doubled at length scale 2: the same predictions, byte for byte" \
    cmp -s "$T/pred/kf1.csv" "$T/pred/kf2.csv"
expect 0 "fit bayes on --frequencies" "$RFX" fit "$T/train.csv" -D 80 --frequencies "$T/freq.csv" \
    --threads 1 -q -o "$T/kf3.rfx"
expect 2 "--frequencies with too few rows" "$RFX" fit "$T/train.csv" -D 81 \
    --frequencies "$T/freq.csv" -o "$T/x.rfx"
stderr_has "--frequencies with too few rows" "has 80 rows, too few for frequency 81"
expect 2 "--frequencies with the wrong columns" "$RFX" fit "$T/train.csv" -D 8 \
    --frequencies "$T/train.csv" -o "$T/x.rfx"
stderr_has "--frequencies with the wrong columns" "has 4 columns, the data 3 inputs"
expect 5 "--frequencies of a missing file" "$RFX" fit "$T/train.csv" \
    --frequencies "$T/no_such_freq.csv" -o "$T/x.rfx"
expect 1 "--frequencies and --kernel" "$RFX" fit "$T/train.csv" --frequencies "$T/freq.csv" \
    --kernel laplacian -o "$T/x.rfx"
expect 1 "--frequencies with greedy" "$RFX" fit "$T/train.csv" --method greedy \
    --frequencies "$T/freq.csv" -o "$T/x.rfx"

# ---- rfx blr: Bayesian linear regression on a basis ----------------------------
expect 0 "blr --basis poly:2" "$RFX" blr "$T/train.csv" --basis poly:2 --threads 1
stderr_has "blr names its monomials" "^ +x0\\^2 "
stderr_has "blr reports the evidence" "^log evidence "
expect 0 "blr --predict" "$RFX" blr "$T/train.csv" --basis poly:4 --threads 1 -q \
    --predict "$T/test.csv" -o "$T/pred/blr.csv"
check "blr --predict writes mean and std for every row" \
    awk -F, 'NR == 1 { ok = $1 == "mean" && $2 == "std"; next } { n++; if (!($2 > 0)) ok = 0 }
             END { exit !(ok && n == 200) }' "$T/pred/blr.csv"
expect 0 "blr --predict --latent" "$RFX" blr "$T/train.csv" --basis poly:4 --threads 1 -q \
    --predict "$T/test.csv" --latent -o "$T/pred/blr_latent.csv"
check "blr: the latent std is below the std of y, the means are equal" \
    sh -c "paste -d, '$T/pred/blr.csv' '$T/pred/blr_latent.csv' | awk -F, 'NR > 1 {
        if (\$1 != \$3 || !(\$4 < \$2)) bad = 1 } END { exit bad }'"
expect 0 "blr --format json" "$RFX" blr "$T/train.csv" --format json --threads 1
check "blr json: the columns basis has one weight per input" \
    sh -c "grep -c '\"term\"' '$T/stdout' | grep -qx 3"
expect 1 "blr --basis nope" "$RFX" blr "$T/train.csv" --basis nope
stderr_has "blr --basis nope" "unknown basis 'nope' \\(columns, or poly:K"
expect 1 "blr --basis poly:0" "$RFX" blr "$T/train.csv" --basis poly:0
expect 1 "blr -o without --predict" "$RFX" blr "$T/train.csv" -o "$T/pred/x.csv"
expect 1 "blr --noise-var 0" "$RFX" blr "$T/train.csv" --noise-var 0
awk '{ print $0 ",1,2" }' "$T/test.csv" >"$T/wide.csv"
expect 2 "blr --predict with other columns" "$RFX" blr "$T/train.csv" --predict "$T/wide.csv" \
    -o "$T/pred/x.csv"
stderr_has "blr --predict with other columns" "has 6 input columns, DATA has 3"
expect 2 "blr on one row" "$RFX" blr "$T/one_row.csv"
expect 2 "blr --basis poly:64 of 5 inputs" "$RFX" blr "$T/wide.csv" --basis poly:64
stderr_has "blr with too many monomials" "too many monomials"

# ---- rfx pso: a swarm over a model or a program -------------------------------
printf '#!/bin/sh\nawk -v a="$1" -v b="$2" "BEGIN { printf \\"%%.17g\\\\n\\", (a - 0.3) ^ 2 + 2 * (b + 0.2) ^ 2 }"\n' \
    >"$T/obj.sh"
chmod +x "$T/obj.sh"
expect 0 "pso of a program" "$RFX" pso --lower -1,-1 --upper 1,1 --iterations 60 --seed 3 \
    --format json -- "$T/obj.sh"
check "pso: the program's minimiser (0.3, -0.2) to 1e-3" \
    sh -c "tr -d ' \n' <'$T/stdout' | sed 's/.*\"x\":\\[\\([^]]*\\)\\].*/\\1/' |
        awk -F, '{ exit !((\$1 - 0.3) ^ 2 + (\$2 + 0.2) ^ 2 < 1e-6) }'"
check "pso: the best value never rises" \
    sh -c "tr -d ' \n' <'$T/stdout' | sed 's/.*\"history\":\\[\\([^]]*\\)\\].*/\\1/' |
        awk -F, '{ for (i = 2; i <= NF; i++) if (\$i > \$(i - 1)) exit 1 }'"
awk 'BEGIN { s = 7; print "u,v,y"; for (i = 0; i < 300; i++) {
        s = (s * 1103515245 + 12345) % 2147483648; u = 2 * s / 2147483648 - 1
        s = (s * 1103515245 + 12345) % 2147483648; v = 2 * s / 2147483648 - 1
        printf "%.9f,%.9f,%.9f\n", u, v, (u - 0.3) ^ 2 + (v + 0.2) ^ 2 } }' >"$T/quad.csv"
expect 0 "fit the quadratic" "$RFX" fit "$T/quad.csv" --threads 1 -q -o "$T/quad.rfx"
expect 0 "pso --model" "$RFX" pso --model "$T/quad.rfx" --seed 1 --threads 1
check "pso --model: the surrogate's minimiser near (0.3, -0.2)" \
    awk '$1 == "u" { u = $2 } $1 == "v" { v = $2 }
         END { exit !(u != "" && (u - 0.3) ^ 2 + (v + 0.2) ^ 2 < 0.05 ^ 2) }' "$T/stdout"
expect 0 "pso --model --maximize" "$RFX" pso --model "$T/quad.rfx" --maximize --seed 1 -q
check "pso --maximize: a corner near (-1, 1)" \
    awk '$1 == "u" { u = $2 } $1 == "v" { v = $2 } END { exit !(u < -0.9 && v > 0.9) }' \
    "$T/stdout"
expect 1 "pso with nothing to minimise" "$RFX" pso --lower 0 --upper 1
expect 1 "pso: --lower and --upper of other lengths" "$RFX" pso --lower 0,0 --upper 1 -- \
    "$T/obj.sh"
expect 1 "pso: --lower above --upper" "$RFX" pso --lower 2 --upper 1 -- "$T/obj.sh"
expect 1 "pso: a program without a box" "$RFX" pso -- "$T/obj.sh"
expect 1 "pso --model with a box of other inputs" "$RFX" pso --model "$T/quad.rfx" --lower 0 \
    --upper 1
expect 5 "pso: a failing program" "$RFX" pso --lower 0 --upper 1 -- false
stderr_has "pso: a failing program" "exited with status 1"
expect 2 "pso: a program that prints no number" "$RFX" pso --lower 0 --upper 1 -- echo abc
stderr_has "pso: a program that prints no number" "printed no number"

# options of another method, and bad values: usage errors, no model written
expect 1 "fit --method nope" "$RFX" fit "$T/ish3.csv" --method nope -o "$T/x.rfx"
stderr_has "fit --method nope lists the methods" "harfe, pce, projected, auto, sinks, greedy or classify"
expect 1 "pce with --kernel" "$RFX" fit "$T/ish3.csv" --method pce --kernel matern -o "$T/x.rfx"
stderr_has "pce with --kernel" "--kernel applies to --method bayes, ridge, classify, sinks or greedy, not pce"
expect 1 "pce with --seed" "$RFX" fit "$T/ish3.csv" --method pce --seed 3 -o "$T/x.rfx"
expect 1 "pce with -D" "$RFX" fit "$T/ish3.csv" --method pce -D 100 -o "$T/x.rfx"
expect 1 "ridge with --degree" "$RFX" fit "$T/ish3.csv" --method ridge --degree 3 -o "$T/x.rfx"
stderr_has "ridge with --degree" "--degree applies to --method pce, not ridge"
expect 1 "bayes with --sparsity" "$RFX" fit "$T/ish3.csv" --sparsity 2 -o "$T/x.rfx"
expect 1 "lasso with --eta" "$RFX" fit "$T/ish3.csv" --method lasso --eta 0.1 -o "$T/x.rfx"
stderr_has "lasso with --eta" "--eta applies to --method srfe, not lasso"
expect 1 "harfe with --lambda" "$RFX" fit "$T/ish3.csv" --method harfe --lambda 0.1 -o "$T/x.rfx"
expect 1 "srfe with --terms" "$RFX" fit "$T/ish3.csv" --method srfe --terms 5 -o "$T/x.rfx"
expect 1 "pce with --noise-var" "$RFX" fit "$T/ish3.csv" --method pce --noise-var 1 -o "$T/x.rfx"
expect 1 "srfe with --eta and --lambda" "$RFX" fit "$T/ish3.csv" --method srfe --eta 0.1 \
    --lambda 0.1 -o "$T/x.rfx"
expect 1 "srfe --lambda 0" "$RFX" fit "$T/ish3.csv" --method srfe --lambda 0 -o "$T/x.rfx"
expect 1 "srfe --activation softplus" "$RFX" fit "$T/ish3.csv" --method srfe \
    --activation softplus -o "$T/x.rfx"
expect 1 "srfe --weights kernel" "$RFX" fit "$T/ish3.csv" --method srfe --weights kernel \
    -o "$T/x.rfx"
expect 1 "harfe --folds 1" "$RFX" fit "$T/ish3.csv" --method harfe --folds 1 -o "$T/x.rfx"
expect 1 "pce --uniform 1,0" "$RFX" fit "$T/ish3.csv" --method pce --uniform 1,0 -o "$T/x.rfx"
expect 1 "pce --uniform a,b" "$RFX" fit "$T/ish3.csv" --method pce --uniform a,b -o "$T/x.rfx"
expect 1 "pce --normal 0,0" "$RFX" fit "$T/ish3.csv" --method pce --normal 0,0 -o "$T/x.rfx"
# per-input marginals: the last one given for an input wins, a default for the rest
expect 0 "pce: --uniform for all, --normal for one" "$RFX" fit "$T/ish3.csv" --method pce --degree 2 \
    --uniform 0,1 --normal 1=0,2 -o "$T/pm.rfx"
stderr_has "the marginal of input 1 is reported" "^ +x1 normal N\(0, 2\^2\)$"
if command -v python3 >/dev/null 2>&1; then
    expect 0 "info of per-input marginals" "$RFX" info "$T/pm.rfx" --format json -o "$T/pm.json"
    json_check "per-input marginals are in the model" "$T/pm.json" \
        "[(m['kind'], m['a'], m['b']) for m in d['marginals']] == [('uniform', 0, 1), ('normal', 0, 2), ('uniform', 0, 1)]"
fi
expect 0 "pce: one input named, the others on their range" "$RFX" fit "$T/ish3.csv" --method pce --degree 2 \
    --uniform x2=-4,4 -o "$T/pm2.rfx"
stderr_has "the others keep their training range" "^ +x2 uniform \[-4, 4\]$"
expect 1 "pce: an unknown input" "$RFX" fit "$T/ish3.csv" --method pce --uniform speed=0,1 -o "$T/x.rfx"
stderr_has "pce: the unknown input is named" "'speed' is not an input"
expect 1 "pce --q-norm 1.5" "$RFX" fit "$T/ish3.csv" --method pce --q-norm 1.5 -o "$T/x.rfx"
expect 1 "pce --q-norm 0" "$RFX" fit "$T/ish3.csv" --method pce --q-norm 0 -o "$T/x.rfx"
expect 1 "pce --degree-min above --degree" "$RFX" fit "$T/ish3.csv" --method pce --degree 3 \
    --degree-min 5 -o "$T/x.rfx"
expect 1 "pce --pce-method omp" "$RFX" fit "$T/ish3.csv" --method pce --pce-method omp \
    -o "$T/x.rfx"
expect 1 "pce --max-interaction 4 with 3 inputs" "$RFX" fit "$T/ish3.csv" --method pce \
    --max-interaction 4 -o "$T/x.rfx"
check "no model written by the refused fits" test ! -e "$T/x.rfx"

# ---- polynomial chaos --------------------------------------------------------
# Ishigami (a = 7, b = 0.1) on U(-pi, pi)^3 has closed-form moments and Sobol
# indices (Sobol' & Levitan 1999): V1 = (1 + b pi^4 / 5)^2 / 2, V2 = a^2 / 8,
# V13 = b^2 pi^8 (1/18 - 1/50), V = V1 + V2 + V13, mean a / 2.
ISHIGAMI_EXACT='BEGIN {
    pi = 3.141592653589793; a = 7; b = 0.1
    v1 = 0.5 * (1 + b * pi^4 / 5)^2; v2 = a * a / 8; v13 = b * b * pi^8 * (1 / 18 - 1 / 50)
    v = v1 + v2 + v13
    s[0] = v1 / v; s[1] = v2 / v; s[2] = 0; st[0] = (v1 + v13) / v; st[1] = v2 / v; st[2] = v13 / v
}'
PI=3.141592653589793
expect 0 "sample ishigami 600" "$RFX" sample ishigami -n 600 --seed 11 -o "$T/ish6.csv"
expect 0 "sample ishigami 200 (test)" "$RFX" sample ishigami -n 200 --seed 12 -o "$T/ish6t.csv"
expect 0 "fit --method pce" "$RFX" fit "$T/ish6.csv" --method pce --uniform "-$PI,$PI" \
    --degree 12 --threads 1 -o "$T/pce.rfx"
stderr_has "fit pce reports the degree chosen" "^degree +[0-9]+ \(chosen by the corrected leave-one-out error from 1\.\.12\)"
stderr_has "fit pce reports terms and candidates" "^terms +[0-9]+ of 455 candidates"
stderr_has "fit pce reports the LOO error" "^LOO error "
expect 0 "info of a pce model" "$RFX" info "$T/pce.rfx"
cp "$T/stdout" "$T/pce_info.txt"
check "info: method pce, marginals, terms" sh -c "grep -Eq '^method +pce$' '$T/pce_info.txt' &&
    grep -Eq '^marginals +uniform \[-3.14159, 3.14159\], every input \(Legendre\)' '$T/pce_info.txt' &&
    grep -Eq '^terms +[0-9]+ of 455 candidates' '$T/pce_info.txt' &&
    grep -Eq '^ +3\.5[0-9]* +\(0,0,0\)$' '$T/pce_info.txt'"
check "info: pce mean a/2 and variance V within 0.5%" awk "$ISHIGAMI_EXACT"'
    function off(x, y) { return x - y > 0.005 * y || y - x > 0.005 * y }
    $1 == "mean" { m = $2 } $1 == "variance" { w = $2 }
    END { exit off(m, 3.5) || off(w, v) }' "$T/pce_info.txt"
expect 0 "sobol of a pce model (coefficients only)" "$RFX" sobol "$T/pce.rfx"
cp "$T/stdout" "$T/pce_sobol.txt"
check "sobol pce: three inputs, the exact Ishigami indices within 1e-2" awk "$ISHIGAMI_EXACT"'
    function off(x, y) { return x - y > 0.01 || y - x > 0.01 }
    $1 ~ /^x[0-9]$/ { j = substr($1, 2) + 0; n++; if (NF != 3 || off($2, s[j]) || off($3, st[j])) bad = 1 }
    END { exit bad || n != 3 }' "$T/pce_sobol.txt"
check "sobol pce equals the indices of rfx info" awk '
    FNR == NR && $1 == "Sobol" { for (i = 3; i <= NF; i++) v[$2, i - 3] = $i; next }
    $1 ~ /^x[0-9]$/ { j = substr($1, 2) + 0; if ($2 != v["first", j] || $3 != v["total", j]) bad = 1 }
    END { exit bad }' "$T/pce_info.txt" "$T/pce_sobol.txt"
expect 0 "sobol of a pce model --like ishigami" "$RFX" sobol "$T/pce.rfx" --like ishigami -n 2000 \
    --bootstrap 20
check "sobol pce --like: Monte Carlo, pce and exact columns" awk '
    $1 ~ /^x[0-9]$/ { n++; d = $9 - $11; if (d < 0) d = -d; if (NF != 11 || d > 0.01) exit 1 }
    END { exit n != 3 }' "$T/stdout"
expect 1 "sobol of a pce model with -n alone" "$RFX" sobol "$T/pce.rfx" -n 100
expect 1 "sobol with --like and --uniform" "$RFX" sobol "$T/pce.rfx" --like ishigami --uniform 0,1
expect 0 "predict with a pce model" "$RFX" predict "$T/pce.rfx" "$T/ish6t.csv" -o "$T/pce_pred.csv"
check "pce predict writes a header and 200 rows" \
    awk 'NR == 1 && $0 != "prediction" { exit 1 } END { exit NR != 201 }' "$T/pce_pred.csv"
expect 1 "predict --std with a pce model" "$RFX" predict "$T/pce.rfx" "$T/ish6t.csv" --std
expect 0 "eval a pce model" "$RFX" eval "$T/pce.rfx" "$T/ish6t.csv"
r2p=$(field 'R^2' "$T/stdout")
check "pce on Ishigami: test R^2 >= 0.999 (got $r2p)" awk -v r="$r2p" 'BEGIN { exit !(r != "" && r >= 0.999) }'
expect 0 "eval --pred of the pce predictions" "$RFX" eval --pred "$T/pce_pred.csv" --truth "$T/ish6t.csv"
check "eval --pred gives the pce model's R^2" test "$(field 'R^2' "$T/stdout")" = "$r2p"

# candidate bases of a given degree by least squares: every candidate is a
# term, and the counts are those of the truncations: C(3 + 4, 4) = 35; with
# q = 1/2, sum sqrt(a_i) <= sqrt(4): 1 + 3 x 4 + 3 = 16; one input per term,
# degree 3: 1 + 3 x 3 = 10.
expect 0 "fit pce lsq, degree 4" "$RFX" fit "$T/ish6.csv" --method pce --pce-method lsq \
    --degree 4 --degree-min 4 -o "$T/pce_lsq.rfx"
stderr_has "pce lsq degree 4: 35 of 35" "^terms +35 of 35 candidates"
stderr_has "pce lsq: least squares" "^method +pce \(least squares\)"
expect 0 "fit pce lsq, q = 0.5" "$RFX" fit "$T/ish6.csv" --method pce --pce-method lsq \
    --degree 4 --degree-min 4 --q-norm 0.5 -o "$T/pce_q.rfx"
stderr_has "pce q = 0.5: 16 of 16" "^terms +16 of 16 candidates"
expect 0 "fit pce lsq, one input per term" "$RFX" fit "$T/ish6.csv" --method pce \
    --pce-method lsq --degree 3 --degree-min 3 --max-interaction 1 -o "$T/pce_m1.rfx"
stderr_has "pce max-interaction 1: 10 of 10" "^terms +10 of 10 candidates"
# default marginals (each column's training range) and degrees; normal inputs
expect 0 "fit pce with the defaults" "$RFX" fit "$T/ish3.csv" --method pce --threads 1 \
    -o "$T/pce_default.rfx"
stderr_has "pce default marginals" "uniform on each column's training \[min, max\]"
# degrees past 10 while C(3 + P, P) <= 2 n = 600 terms: 1..13 (560 terms)
stderr_has "pce default degrees 1..13 for 3 inputs and 300 rows" "from 1\.\.13\)"
expect 0 "info of the default pce model" "$RFX" info "$T/pce_default.rfx"
check "info lists one marginal per input" \
    test "$(grep -Ec '^ .*uniform \[.*\], x[0-9] \(Legendre\)$|^marginals +uniform \[.*\], x0 ' "$T/stdout")" -eq 3
awk -F, 'NR == 1 { print "a,b,y"; next }
    { a = $1 / 2; b = $2 / 2; printf "%.17g,%.17g,%.17g\n", a, b, 2 * a + 4 * b * b }' \
    "$T/ish3.csv" >"$T/normal.csv"
expect 0 "fit pce --normal" "$RFX" fit "$T/normal.csv" --method pce --normal 0,1.5 \
    --pce-method lsq --degree 2 --degree-min 2 -o "$T/pce_n.rfx"
expect 0 "info of a normal pce model" "$RFX" info "$T/pce_n.rfx"
check "info: normal marginals (Hermite)" \
    grep -Eq '^marginals +normal N\(0, 1\.5\^2\), every input \(Hermite\)' "$T/stdout"
expect 0 "eval the normal pce on its data (exact: 2 a + 4 b^2 is in the basis)" \
    "$RFX" eval "$T/pce_n.rfx" "$T/normal.csv"
check "a quadratic is fitted exactly (rel_L2 < 1e-10)" \
    awk '$1 == "rel_L2" { exit !($2 < 1e-10) }' "$T/stdout"
# marginals fitted to the data: borehole's r is lognormal, rw normal
expect 0 "sample borehole" "$RFX" sample borehole -n 200 --seed 5 -o "$T/bh.csv"
expect 0 "fit pce to borehole with the default marginals" "$RFX" fit "$T/bh.csv" --method pce \
    --threads 1 -o "$T/pce_bh.rfx"
stderr_has "pce: marginals fitted to the data" "^marginals +fitted to the data"
stderr_has "pce: r is lognormal" "^ +x1 lognormal, log x ~ N\("
stderr_has "pce: Tu stays uniform" "^ +x2 uniform \["
expect 0 "info of the borehole pce" "$RFX" info "$T/pce_bh.rfx"
check "info: a lognormal marginal (Hermite in log x)" \
    grep -Eq '^ +lognormal, log x ~ N\(.*\), x1 \(Hermite in log x\)$' "$T/stdout"
check "a model with a lognormal input is format version 5" \
    test "$(od -An -tu1 -j8 -N1 "$T/pce_bh.rfx" | tr -d ' ')" -eq 5
awk -F, 'NR == 1 { print; next } NR == 2 { $2 = -5; print; exit }' OFS=, "$T/bh.csv" >"$T/bh_neg.csv"
expect 2 "predict a lognormal input <= 0" "$RFX" predict "$T/pce_bh.rfx" "$T/bh_neg.csv"
stderr_has "predict names the row, column and support" "column 1: -5 is outside the support"
awk -F, 'NR == 1 { print; next } NR <= 3 { $2 = $2 * 1000; print }' OFS=, "$T/bh.csv" >"$T/bh_far.csv"
expect 0 "predict past the training range of a lognormal input" "$RFX" predict "$T/pce_bh.rfx" \
    "$T/bh_far.csv" -o "$T/bh_far.txt"
check "the continued predictions are finite" \
    awk 'NR > 1 { if ($1 + 0 != $1 || $1 != $1) exit 1 } END { exit NR != 3 }' "$T/bh_far.txt"
expect 0 "fit pce --lognormal" "$RFX" fit "$T/bh.csv" --method pce --lognormal x1=7.71,1.0056 \
    --normal 0=0.1,0.0161812 --threads 1 -o "$T/pce_bh2.rfx"
stderr_has "--lognormal is reported" "^ +x1 lognormal, log x ~ N\(7\.71, 1\.0056\^2\)$"
expect 1 "pce --lognormal with SIGMA 0" "$RFX" fit "$T/bh.csv" --method pce --lognormal 1=7,0 \
    -o "$T/x.rfx"
stderr_has "--lognormal SIGMA 0 is named" "SIGMA > 0"
expect 2 "pce --lognormal on a column with values <= 0" "$RFX" fit "$T/ish3.csv" --method pce \
    --lognormal 0=0,1 -o "$T/x.rfx"
# screening: Friedman #1 in d = 20 lives on 5 inputs
expect 0 "sample friedman1 d = 20" "$RFX" sample friedman1 -n 300 -d 20 --seed 5 -o "$T/fr.csv"
expect 0 "sample friedman1 d = 20, held out" "$RFX" sample friedman1 -n 500 -d 20 --seed 6 \
    -o "$T/fr_t.csv"
expect 0 "fit pce to friedman1 (automatic basis)" "$RFX" fit "$T/fr.csv" --method pce \
    --threads 1 -o "$T/pce_fr.rfx"
stderr_has "pce: most of the 15 inert inputs screened out" \
    "^screening +1[0-5] of 20 inputs left out"
expect 0 "eval the screened pce on fresh rows" "$RFX" eval "$T/pce_fr.rfx" "$T/fr_t.csv"
check "the screened pce is close to friedman1 (rel_L2 < 0.01)" \
    awk '$1 == "rel_L2" { exit !($2 < 0.01) }' "$T/stdout"
expect 0 "fit pce to friedman1 at degrees 1..3 (no screening)" "$RFX" fit "$T/fr.csv" \
    --method pce --degree 3 --degree-min 1 --threads 1 -o "$T/pce_fr3.rfx"
check "a given degree is not screened" sh -c "! grep -q '^screening' '$T/stderr'"
expect 0 "eval the degree 1..3 pce on fresh rows" "$RFX" eval "$T/pce_fr3.rfx" "$T/fr_t.csv"
check "without screening the error is over 0.05" \
    awk '$1 == "rel_L2" { exit !($2 > 0.05) }' "$T/stdout"
# damaged pce files
size=$(wc -c <"$T/pce.rfx" | tr -d ' ')
head -c $((size - 9)) "$T/pce.rfx" >"$T/pce_cut.rfx"
expect 3 "truncated pce model (info)" "$RFX" info "$T/pce_cut.rfx"
expect 3 "truncated pce model (sobol)" "$RFX" sobol "$T/pce_cut.rfx"
cp "$T/pce.rfx" "$T/pce_bad.rfx"
printf 'X' | dd of="$T/pce_bad.rfx" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
expect 3 "corrupt pce model (predict)" "$RFX" predict "$T/pce_bad.rfx" "$T/ish6t.csv"

# ---- learned per-input length scales (--length-scales learn) -------------
gen_data "$T/ard.csv" 200 11
expect 0 "fit --length-scales learn" "$RFX" fit "$T/ard.csv" --length-scales learn \
    --learn-iterations 5 -D 128 --seed 2 -o "$T/ard.rfx"
stderr_has "learned scales in the fit report" "^length scales( +[0-9.e+-]+){3} \(learned"
stderr_has "learned objective in the fit report" "candidates; log evidence per row"
# x2 does not enter y = sin(x0) + 0.5 x1^2: its scale is the largest
check "the unused input has the largest learned scale" \
    awk '$1 == "length" && $2 == "scales" { exit !($5 > $3 && $5 > $4) }' "$T/stderr"
expect 0 "info of an ARD model" "$RFX" info "$T/ard.rfx"
check "info lists the three learned scales" \
    grep -Eq '^length scales( +[0-9.e+-]+){3}$' "$T/stdout"
expect 0 "eval the ARD model" "$RFX" eval "$T/ard.rfx" "$T/ard.csv"
expect 0 "fit ridge --length-scales learn" "$RFX" fit "$T/ard.csv" --method ridge \
    --length-scales learn --learn-iterations 3 -D 64 -o "$T/ard_ridge.rfx"
stderr_has "ridge: GCV before and after" "candidates; GCV score"
expect 1 "--length-scales with another value" "$RFX" fit "$T/ard.csv" --length-scales 2 \
    -o "$T/bad.rfx"
stderr_has "--length-scales 2" "--length-scales: expected 'learn', got '2'"
expect 1 "--length-scales learn for srfe" "$RFX" fit "$T/ard.csv" --method srfe \
    --length-scales learn -o "$T/bad.rfx"
stderr_has "--length-scales for srfe" "length-scales"
expect 1 "--learn-iterations alone" "$RFX" fit "$T/ard.csv" --learn-iterations 3 -o "$T/bad.rfx"
stderr_has "--learn-iterations alone" "needs --length-scales learn"
expect 1 "--learn-iterations 0" "$RFX" fit "$T/ard.csv" --length-scales learn \
    --learn-iterations 0 -o "$T/bad.rfx"
check "no model written by the usage errors" test ! -e "$T/bad.rfx"

# ---- the projected surrogate (--method projected) ------------------------
"$RFX" sample ishigami -n 150 --seed 5 -o "$T/pj.csv" 2>/dev/null
expect 0 "fit projected" "$RFX" fit "$T/pj.csv" --method projected --k 2 --iterations 3 \
    --particles 4 --surrogate ridge -D 50 --seed 1 --threads 1 -o "$T/pj.rfx"
cp "$T/stderr" "$T/pj_report"
check "projected report: one history line per iteration 0..3" \
    test "$(grep -Ec '^iteration +[0-9]+ [0-9.e+-]+$' "$T/pj_report")" -eq 4
check "projected report: the best loss never rises" \
    awk '$1 == "iteration" { if (n++ && $3 > last) bad = 1; last = $3 } END { exit bad || n != 4 }' \
    "$T/pj_report"
check "projected report: the search loss is the last history value" \
    awk '$1 == "iteration" { last = $3 } $1 == "search" { f = $3 } END { exit !(f == last) }' \
    "$T/pj_report"
check "projected report: ridge has no finalists, its final loss is the search loss" \
    awk '$1 == "finalists" { bad = 1 } $1 == "search" { s = $3 } $1 == "final" { f = $3 }
        END { exit bad || f != s }' "$T/pj_report"
check "projected report: 4 particles x (3 + 1) evaluations" \
    grep -Eq '^evaluations +16 in 3 iterations$' "$T/pj_report"
check "projected report: one theta in [0, 1] per input" \
    awk '$1 == "theta" { n++; if (!($3 >= 0 && $3 <= 1)) bad = 1 } END { exit bad || n != 3 }' \
    "$T/pj_report"
expect 0 "info of a projected model" "$RFX" info "$T/pj.rfx"
check "info: method, k and the surrogate" \
    sh -c "grep -Eq '^method +projected$' '$T/stdout' && grep -Eq '^components k +2$' '$T/stdout' &&
        grep -Eq '^surrogate +ridge, on the 2 scores:$' '$T/stdout' &&
        grep -Eq '^features D +50$' '$T/stdout'"
check "info: theta and loss equal the fit report's" \
    awk 'FNR == NR { if ($1 == "theta") t = t " " $3; if ($1 == "final") f = $3; next }
        $1 == "theta" { for (j = 2; j <= NF; j++) u = u " " $j }
        $1 == "loss" { l = $2 }
        END { exit !(t == u && l == f) }' "$T/pj_report" "$T/stdout"
expect 0 "predict with a projected model" "$RFX" predict "$T/pj.rfx" "$T/pj.csv" -o "$T/pj_pred.csv"
check "one prediction per row" test "$(wc -l <"$T/pj_pred.csv" | tr -d ' ')" -eq 151
expect 0 "eval a projected model" "$RFX" eval "$T/pj.rfx" "$T/pj.csv"
rmse_model=$(field RMSE "$T/stdout")
expect 0 "eval its predictions" "$RFX" eval --pred "$T/pj_pred.csv" --truth "$T/pj.csv"
check "eval of the model = eval of its predictions" test "$(field RMSE "$T/stdout")" = "$rmse_model"
expect 0 "sobol --like of a projected model" "$RFX" sobol "$T/pj.rfx" --like ishigami -n 500 \
    --bootstrap 20
check "sobol: one line per input" test "$(grep -Ec '^x[0-2] ' "$T/stdout")" -eq 3
# a fixed theta: no swarm; theta_2 = 0 removes x2 from the model exactly
gen_data "$T/pj3.csv" 120 13
expect 0 "fit projected --theta" "$RFX" fit "$T/pj3.csv" --method projected --theta 1,0.5,0 \
    --surrogate pce -o "$T/pj3.rfx"
stderr_has "--theta: no swarm" "^swarm +none: theta given"
stderr_has "--theta: one evaluation" "^evaluations +1 in 0 iterations"
check "--theta: no history" test "$(grep -Ec '^iteration ' "$T/stderr")" -eq 0
check "--theta: the weights as given" \
    awk '$1 == "theta" { t = t $3 " " } END { exit !(t == "1 0.5 0 ") }' "$T/stderr"
expect 0 "info of a projected pce model" "$RFX" info "$T/pj3.rfx"
check "info: the loss is the pce surrogate's corrected LOO error" \
    awk '$1 == "loss" { l = $2 } $1 == "LOO" && $2 == "corrected" { c = $3 }
        END { exit !(l != "" && l == c) }' "$T/stdout"
awk -F, 'NR == 1 { print; next } { $3 = -$3 * 3 + 1; print }' OFS=, "$T/pj3.csv" >"$T/pj3b.csv"
expect 0 "predict (x2 as given)" "$RFX" predict "$T/pj3.rfx" "$T/pj3.csv" -o "$T/pj3_a.csv"
expect 0 "predict (x2 changed)" "$RFX" predict "$T/pj3.rfx" "$T/pj3b.csv" -o "$T/pj3_b.csv"
check "theta_2 = 0: predictions do not depend on x2" cmp -s "$T/pj3_a.csv" "$T/pj3_b.csv"
expect 0 "sobol --uniform of the theta_2 = 0 model" "$RFX" sobol "$T/pj3.rfx" --uniform -2,2 \
    -n 400 --bootstrap 10
check "sobol: the total index of x2 is 0" awk '$1 == "x2" { exit !($5 == 0) }' "$T/stdout"
expect 0 "fit projected --surrogate bayes --folds 3" "$RFX" fit "$T/pj3.csv" --method projected \
    --surrogate bayes --folds 3 --k 3 --iterations 1 --particles 2 -D 40 -o "$T/pj3s.rfx"
stderr_has "--folds: the loss is k-fold CV" "^loss +relative MSE: 3-fold cross-validation"
expect 0 "predict --std with a bayes surrogate" "$RFX" predict "$T/pj3s.rfx" "$T/pj3.csv" --std
check "predict --std: a std column" grep -q '^prediction,std$' "$T/stdout"
# the pce surrogate: finalists chosen by its corrected leave-one-out error
expect 0 "fit projected --surrogate pce (finalists)" "$RFX" fit "$T/pj.csv" --method projected \
    --surrogate pce --iterations 2 --particles 3 -o "$T/pjf.rfx"
cp "$T/stderr" "$T/pjf_report"
stderr_has "pce: the finalists line" "^finalists +[0-9]+ candidates .* pce surrogate's own corrected"
expect 0 "info of the finalists' model" "$RFX" info "$T/pjf.rfx"
check "pce: the final loss is the model's corrected LOO error" \
    awk 'FNR == NR { if ($1 == "final") f = $3; next }
        $1 == "LOO" && $2 == "corrected" { c = $3 } END { exit !(f != "" && f == c) }' \
    "$T/pjf_report" "$T/stdout"
# the default surrogate on y > 0: its candidates fitted to log y as well;
# y = exp(x0 + x1 / 2) is linear under the log, and a log one wins
awk -v n=80 -v seed=29 "$MINSTD"'
BEGIN {
    useed(seed)
    print "x0,x1,x2,y"
    for (i = 0; i < n; i++) {
        x0 = 2 * u() - 1; x1 = 2 * u() - 1; x2 = 2 * u() - 1
        printf "%.10g,%.10g,%.10g,%.10g\n", x0, x1, x2, exp(x0 + 0.5 * x1)
    }
}' >"$T/pjl.csv"
expect 0 "fit projected on y > 0" "$RFX" fit "$T/pjl.csv" --method projected --theta 1,0.5,0.1 \
    --k 2 -o "$T/pjl.rfx"
stderr_has "y > 0: the log candidates' line" "^of log y +ridge [0-9.e-]+, srfe [0-9.e-]+, pce [0-9.e-]+"
stderr_has "y > 0: a surrogate of log y chosen" "^method +projected \(a [a-z]+ surrogate of log y on k = 2"
expect 0 "info of a projected model of log y" "$RFX" info "$T/pjl.rfx"
check "info: the surrogate of log(y)" grep -Eq '^surrogate +[a-z]+ of log\(y\), on the 2 scores \(predicts y\):$' "$T/stdout"
expect 0 "predict with the log y surrogate" "$RFX" predict "$T/pjl.rfx" "$T/pjl.csv" -o "$T/pjl_pred.csv"
check "its predictions are exp of a fit: all > 0" \
    awk -F, 'NR > 1 && !($1 > 0) { bad = 1 } END { exit bad }' "$T/pjl_pred.csv"
expect 0 "fit projected on y with a 0" sh -c "sed '5s/,[^,]*\$/,0/' '$T/pjl.csv' >'$T/pjl0.csv' &&
    '$RFX' fit '$T/pjl0.csv' --method projected --theta 1,0.5,0.1 --k 2 -o '$T/pjl0.rfx'"
check "a y <= 0: no log candidate" sh -c "! grep -q '^of log y' '$T/stderr'"
# --plot
expect 5 "fit projected --plot without gnuplot" env PATH=/nonexistent "$RFX" fit "$T/pj.csv" \
    --method projected --iterations 1 --particles 2 --plot "$T/pj.png" -o "$T/pjn.rfx"
stderr_has "--plot without gnuplot" "gnuplot is not installed"
check "no model written without gnuplot" test ! -e "$T/pjn.rfx"
if command -v gnuplot >/dev/null 2>&1; then
    expect 0 "fit projected --plot" "$RFX" fit "$T/pj.csv" --method projected --iterations 2 \
        --particles 3 --surrogate ridge -D 30 --plot "$T/pj.png" -o "$T/pjp.rfx"
    check "--plot writes a PNG" sh -c "head -c 4 '$T/pj.png' | od -An -c | grep -q 'P   N   G'"
    check "--plot leaves no temporary file" test -z "$(ls "$T" | grep 'pj\.png\.')"
else
    echo "skip: gnuplot not installed, --plot not checked"
fi
# usage errors
expect 1 "--k with --method ridge" "$RFX" fit "$T/pj.csv" --method ridge --k 2 -o "$T/bad.rfx"
stderr_has "--k with ridge" "--k applies to --method projected, not ridge"
expect 1 "--surrogate harfe" "$RFX" fit "$T/pj.csv" --method projected --surrogate harfe \
    -o "$T/bad.rfx"
stderr_has "--surrogate harfe" "unknown surrogate 'harfe'"
expect 1 "--theta with 2 values for 3 inputs" "$RFX" fit "$T/pj.csv" --method projected \
    --theta 0.5,0.5 -o "$T/bad.rfx"
stderr_has "--theta count" "2 values for 3 inputs"
expect 1 "--theta above 1" "$RFX" fit "$T/pj.csv" --method projected --theta 0.5,1.5,0 \
    -o "$T/bad.rfx"
stderr_has "--theta above 1" "in \[0, 1\]"
expect 1 "--theta below 0" "$RFX" fit "$T/pj.csv" --method projected --theta -0.1,1,1 \
    -o "$T/bad.rfx"
expect 1 "--theta all zero" "$RFX" fit "$T/pj.csv" --method projected --theta 0,0,0 \
    -o "$T/bad.rfx"
expect 1 "--theta not numbers" "$RFX" fit "$T/pj.csv" --method projected --theta 0.5,,1 \
    -o "$T/bad.rfx"
expect 1 "--theta with --iterations" "$RFX" fit "$T/pj.csv" --method projected \
    --theta 1,1,1 --iterations 3 -o "$T/bad.rfx"
stderr_has "--theta with --iterations" "--iterations sets the particle swarm"
expect 1 "--k 0" "$RFX" fit "$T/pj.csv" --method projected --k 0 -o "$T/bad.rfx"
expect 1 "--k beyond the rows" "$RFX" fit "$T/pj.csv" --method projected --k 150 \
    --iterations 1 --particles 1 -o "$T/bad.rfx"
stderr_has "--k beyond the rows" "n_components"
expect 1 "-D with --surrogate pce" "$RFX" fit "$T/pj.csv" --method projected --surrogate pce \
    -D 10 -o "$T/bad.rfx"
expect 1 "--plot with --method bayes" "$RFX" fit "$T/pj.csv" --plot "$T/x.png" -o "$T/bad.rfx"
check "no model written by the projected usage errors" test ! -e "$T/bad.rfx"
# damaged projected files
size=$(wc -c <"$T/pj.rfx" | tr -d ' ')
head -c $((size - 9)) "$T/pj.rfx" >"$T/pj_cut.rfx"
expect 3 "truncated projected model (info)" "$RFX" info "$T/pj_cut.rfx"
expect 3 "truncated projected model (predict)" "$RFX" predict "$T/pj_cut.rfx" "$T/pj.csv"
head -c $((size / 2)) "$T/pj.rfx" >"$T/pj_half.rfx"
expect 3 "half a projected model (sobol)" "$RFX" sobol "$T/pj_half.rfx" --like ishigami

# ---- classification --------------------------------------------------------
# gen_classes FILE ROWS SEED: three classes 0, 1, 7 on rings around (3, 0)
# (radii < 1, 1.4..1.9, 2.3..2.8; x2 is noise), unscaled inputs
gen_classes() {
    awk -v n="$2" -v seed="$3" "$MINSTD"'
    BEGIN {
        useed(seed)
        print "x0,x1,x2,cls"
        for (i = 0; i < n; i++) {
            k = i % 3; a = 6.283185307 * u()
            r = k == 0 ? sqrt(u()) : (k == 1 ? 1.4 + 0.5 * u() : 2.3 + 0.5 * u())
            printf "%.8f,%.8f,%.8f,%s\n", 3 + r * cos(a), r * sin(a), 10 * u(), \
                k == 0 ? "0" : (k == 1 ? "1" : "7")
        }
    }' >"$1"
}
gen_classes "$T/ctrain.csv" 450 5
gen_classes "$T/ctest.csv" 300 6
# two classes, labels -1 and 2.5: inside or outside the radius 1.6
awk -F, 'NR == 1 { print; next } { d = ($1 - 3) ^ 2 + $2 ^ 2
    printf "%s,%s,%s,%s\n", $1, $2, $3, d < 2.56 ? "-1" : "2.5" }' "$T/ctrain.csv" >"$T/btrain.csv"
awk -F, 'NR == 1 { print; next } { d = ($1 - 3) ^ 2 + $2 ^ 2
    printf "%s,%s,%s,%s\n", $1, $2, $3, d < 2.56 ? "-1" : "2.5" }' "$T/ctest.csv" >"$T/btest.csv"

expect 0 "fit --task classify" "$RFX" fit "$T/ctrain.csv" --task classify -D 256 -o "$T/c.rfx"
stderr_has "fit classify: the method and loss" "^method +classify \(squared loss, one-vs-rest"
stderr_has "fit classify: the classes" "^classes +3: 0 1 7$"
stderr_has "fit classify: the chosen length scale" "^length scale .*chosen by the leave-one-out error"
stderr_has "fit classify: the validation error" "^validation .*leave-one-out error rate"
stderr_has "fit classify: the refinement by held-out rows" "^refinement .*90 held-out rows"
expect 0 "fit --task classify --loss squared" "$RFX" fit "$T/ctrain.csv" --task classify \
    --loss squared -D 256 -o "$T/csq.rfx"
check "fit classify --loss squared: no refinement" sh -c "! grep -q '^refinement' '$T/stderr'"
# five rings (class k at radius k + U(0, 1)): least squares masks the middle
# rings, and Newton steps of the squared hinge gain on held-out rows
gen_rings() {
    awk -v n="$2" -v seed="$3" "$MINSTD"'
    BEGIN {
        useed(seed)
        print "x0,x1,ring"
        for (i = 0; i < n; i++) {
            k = int(5 * u()); if (k > 4) k = 4; r = k + u(); a = 6.283185307 * u()
            printf "%.8f,%.8f,%d\n", r * cos(a), r * sin(a), k
        }
    }' >"$1"
}
gen_rings "$T/rings.csv" 1000 8
gen_rings "$T/rings_test.csv" 3000 9
expect 0 "fit classify on five rings" "$RFX" fit "$T/rings.csv" --task classify -D 48 \
    -o "$T/rings.rfx"
stderr_has "rings: Newton steps kept" "^refinement +[1-3] Newton steps? of the squared hinge"
stderr_has "rings: the refined model's loss" "^method +classify \(squared-hinge loss"
expect 0 "fit classify on five rings, --loss squared" "$RFX" fit "$T/rings.csv" --task classify \
    -D 48 --loss squared -o "$T/rings_sq.rfx"
expect 0 "eval the refined rings classifier" "$RFX" eval "$T/rings.rfx" "$T/rings_test.csv"
acc_refined=$(awk '$1 == "accuracy" { print $2 }' "$T/stdout")
expect 0 "eval the least-squares rings classifier" "$RFX" eval "$T/rings_sq.rfx" \
    "$T/rings_test.csv"
acc_squared=$(awk '$1 == "accuracy" { print $2 }' "$T/stdout")
check "rings: the refined classifier is more accurate on fresh rows ($acc_refined, $acc_squared)" \
    awk -v a="$acc_refined" -v b="$acc_squared" 'BEGIN { exit !(a > b) }'
expect 0 "info on the refined classifier" "$RFX" info "$T/rings.rfx"
check "info: the refined classifier gives probabilities" \
    grep -qE '^probabilities +yes' "$T/stdout"
check "info: its temperature" grep -qE '^temperature +[0-9]' "$T/stdout"
expect 0 "predict --proba with the refined classifier" "$RFX" predict "$T/rings.rfx" \
    "$T/rings_test.csv" --proba -o "$T/pred/rings.csv"
check "refined classifier: probabilities sum to 1" \
    awk -F, 'NR > 1 { s = 0; for (k = 2; k <= NF; k++) s += $k
             if ((s - 1) ^ 2 > 1e-20) bad = 1 } END { exit bad }' "$T/pred/rings.csv"
# read in blocks: gzip on standard input gives the model of the file
expect 0 "fit --task classify from gzip on stdin" sh -c "gzip -c '$T/ctrain.csv' |
    '$RFX' fit - --task classify -D 256 -q -o '$T/c_stdin.rfx'"
expect 0 "predict with the classifier fitted on the file" "$RFX" predict "$T/c.rfx" \
    "$T/ctest.csv" --proba -o "$T/pred/c_file.csv"
expect 0 "predict with the classifier fitted from stdin" "$RFX" predict "$T/c_stdin.rfx" \
    "$T/ctest.csv" --proba -o "$T/pred/c_stdin.csv"
check "classify from stdin: the same probabilities, byte for byte" \
    cmp -s "$T/pred/c_file.csv" "$T/pred/c_stdin.csv"
# ---- rfx kernel-sgd: the four strategies of the kernel trick --------------------
expect 0 "kernel-sgd, all four strategies" "$RFX" kernel-sgd "$T/btrain.csv" --test "$T/btest.csv" \
    --length-scale 1 --step 0.5 --iterations 4000 -D 512 --threads 1
check "kernel-sgd: one row per strategy" \
    sh -c "grep -cE '^(features-on-the-fly|features-cached|kernel-on-the-fly|gram-cached) ' \
        '$T/stdout' | grep -qx 4"
# the u-space strategies are one iteration: the same accuracies; the Gram
# strategy's flops are d n (n + 1) + 2 n T (n = 450, d = 3, T = 4000)
check "kernel-sgd: kernel-on-the-fly and gram-cached classify alike" \
    awk '$1 == "kernel-on-the-fly" { a = $7 " " $8 } $1 == "gram-cached" { b = $7 " " $8 }
         END { exit !(a != "" && a == b) }' "$T/stdout"
check "kernel-sgd: the Gram strategy's flops" \
    awk '$1 == "gram-cached" { f = $3 } END { want = 3 * 450 * 451 + 2 * 450 * 4000
         exit !(f != "" && (f - want) ^ 2 < (1e-3 * want) ^ 2) }' "$T/stdout"
check "kernel-sgd: test accuracy above 0.8 for every strategy" \
    awk '$1 ~ /-/ && NR > 2 { n++; if (!($8 > 0.8)) bad = 1 } END { exit !(n == 4 && !bad) }' \
    "$T/stdout"
expect 0 "kernel-sgd --strategy gram-cached --format json" "$RFX" kernel-sgd "$T/btrain.csv" \
    --strategy gram-cached --format json --threads 1
check "kernel-sgd json: one strategy" sh -c "grep -c '\"strategy\"' '$T/stdout' | grep -qx 1"
expect 2 "kernel-sgd on three classes" "$RFX" kernel-sgd "$T/ctrain.csv"
stderr_has "kernel-sgd on three classes" "more than two values"
expect 1 "kernel-sgd --strategy nope" "$RFX" kernel-sgd "$T/btrain.csv" --strategy nope
expect 1 "kernel-sgd --loss squared" "$RFX" kernel-sgd "$T/btrain.csv" --loss squared
expect 2 "kernel-sgd --test of other classes" "$RFX" kernel-sgd "$T/btrain.csv" \
    --test "$T/ctest.csv" --strategy gram-cached
stderr_has "kernel-sgd --test of other classes" "neither class of DATA"

# kitchen sinks as a classifier: logistic one-vs-rest, the box cross-validated
expect 0 "fit --task classify --method sinks" "$RFX" fit "$T/ctrain.csv" --task classify \
    --method sinks -D 128 --threads 1 -o "$T/csk.rfx"
stderr_has "sinks classifier: the method" "^method +sinks \\(random kitchen sinks classifier\\)"
stderr_has "sinks classifier: the classes" "^classes +3 \\(logistic loss, one-vs-rest\\)"
stderr_has "sinks classifier: the box" "chosen by 5-fold cross-validation, held-out loss: "
expect 0 "eval the sinks classifier" "$RFX" eval "$T/csk.rfx" "$T/ctest.csv"
check "sinks classifier: test accuracy above 0.9" \
    awk '$1 == "accuracy" { exit !($2 > 0.9) }' "$T/stdout"
expect 0 "predict probabilities with the sinks classifier" "$RFX" predict "$T/csk.rfx" \
    "$T/ctest.csv" --proba -o "$T/pred/csk.csv"
check "sinks classifier: probability rows sum to 1" \
    awk -F, 'NR == 1 { m = NF - 1; next }
             { s = 0; for (k = 2; k <= NF; k++) s += $k; if (s < 1 - 1e-9 || s > 1 + 1e-9) bad = 1 }
             END { exit !(m == 3 && NR == 301 && !bad) }' "$T/pred/csk.csv"
expect 0 "fit --task classify --method sinks --loss squared-hinge --box 20" "$RFX" fit \
    "$T/btrain.csv" --task classify --method sinks --loss squared-hinge --box 20 -D 64 \
    --threads 1 -o "$T/bsk.rfx"
stderr_has "two classes: one column" "^classes +2 \\(squared-hinge loss, one column\\)"
expect 1 "sinks classifier with --loss squared" "$RFX" fit "$T/ctrain.csv" --task classify \
    --method sinks --loss squared -o "$T/bad.rfx"
stderr_has "sinks classifier with --loss squared" "takes --loss logistic or squared-hinge"
expect 1 "sinks classifier with --transform" "$RFX" fit "$T/ctrain.csv" --task classify \
    --method sinks --transform log -o "$T/bad.rfx"
expect 0 "fit --task classify --loss logistic" "$RFX" fit "$T/ctrain.csv" --task classify \
    --loss logistic -D 256 -o "$T/cl.rfx"
stderr_has "fit classify: the logistic loss" "^method +classify \(logistic loss, one-vs-rest"
stderr_has "fit classify logistic: the chosen length scale" "^length scale .*chosen on a holdout"
stderr_has "fit classify logistic: the validation log-loss" "^validation .*mean log-loss"
expect 0 "info of a classifier" "$RFX" info "$T/c.rfx"
check "info: method classify" grep -Eq '^method +classify$' "$T/stdout"
check "info: the loss" grep -Eq '^loss +squared$' "$T/stdout"
check "info: the classes" grep -Eq '^classes +3: 0 1 7$' "$T/stdout"
check "info: three score columns" grep -Eq '^score columns +3$' "$T/stdout"
expect 0 "predict with a classifier" "$RFX" predict "$T/c.rfx" "$T/ctest.csv" -o "$T/pred/c.csv"
check "predict writes labels" awk -F, 'NR == 1 { if ($0 != "label") exit 1; next }
    $1 != 0 && $1 != 1 && $1 != 7 { exit 1 } END { exit NR != 301 }' "$T/pred/c.csv"
expect 0 "predict --proba" "$RFX" predict "$T/c.rfx" "$T/ctest.csv" --proba -o "$T/pred/cp.csv"
check "predict --proba: class names as header, rows summing to 1, label of the largest" \
    awk -F, 'NR == 1 { if ($0 != "label,0,1,7") exit 1; next }
    { s = $2 + $3 + $4; if (s < 1 - 1e-12 || s > 1 + 1e-12) exit 1
      m = 2; for (j = 3; j <= 4; j++) if ($j > $m) m = j
      if ((m == 2 ? 0 : m == 3 ? 1 : 7) != $1) exit 1 }
    END { exit NR != 301 }' "$T/pred/cp.csv"
expect 0 "eval a classifier" "$RFX" eval "$T/c.rfx" "$T/ctest.csv"
acc=$(field accuracy "$T/stdout")
check "eval: accuracy >= 0.95 on held-out rings (got $acc)" \
    awk -v a="$acc" 'BEGIN { exit !(a != "" && a >= 0.95) }'
check "eval: per-class precision and recall" grep -Eq '^class +precision +recall +support$' \
    "$T/stdout"
check "eval: a line per class with its support" \
    sh -c "grep -Eq '^7 +[0-9.]+ +[0-9.]+ +100$' '$T/stdout'"
check "eval: the confusion matrix, labelled, summing to the rows" awk '
    /^true\\pred/ { inside = 1; if ($2 != "0" || $3 != "1" || $4 != "7") exit 1; next }
    inside { total += $2 + $3 + $4; rows++ }
    END { exit !(rows == 3 && total == 300) }' "$T/stdout"
check "eval: no regression metrics for a classifier" sh -c "! grep -q '^RMSE' '$T/stdout'"
expect 0 "eval --pred of the labels --classes" "$RFX" eval --pred "$T/pred/c.csv" \
    --truth "$T/ctest.csv" --classes
check "eval --pred --classes gives the same accuracy" test "$(field accuracy "$T/stdout")" = "$acc"

expect 0 "fit classify hinge, balanced weights, 3 folds" "$RFX" fit "$T/btrain.csv" \
    --task classify --loss hinge --class-weight balanced --folds 3 -D 128 -o "$T/ch.rfx"
stderr_has "hinge: the validation error rate" "^validation .*error rate"
expect 0 "info of a hinge classifier" "$RFX" info "$T/ch.rfx"
check "info: hinge, two classes, one score column" sh -c "grep -Eq '^loss +hinge$' '$T/stdout' &&
    grep -Eq '^classes +2: -1 2.5$' '$T/stdout' && grep -Eq '^score columns +1$' '$T/stdout'"
expect 0 "eval a binary classifier" "$RFX" eval "$T/ch.rfx" "$T/btest.csv"
check "eval binary: labels -1 and 2.5 in the confusion matrix" grep -Eq '^true.pred +-1 +2.5 *$' \
    "$T/stdout"
accb=$(field accuracy "$T/stdout")
check "binary hinge accuracy >= 0.9 (got $accb)" \
    awk -v a="$accb" 'BEGIN { exit !(a != "" && a >= 0.9) }'
expect 1 "predict --proba with the hinge loss" "$RFX" predict "$T/ch.rfx" "$T/btest.csv" --proba
stderr_has "--proba with hinge" "gives no probabilities"
expect 1 "predict --std with a classifier" "$RFX" predict "$T/c.rfx" "$T/ctest.csv" --std
stderr_has "--std with a classifier" "a classifier has no predictive standard deviation"
expect 1 "predict --proba with a regression model" "$RFX" predict "$T/ridge.rfx" "$T/test.csv" \
    --proba
stderr_has "--proba with ridge" "not a classifier"

expect 0 "fit classify, given scale and lambda, squared hinge by L-BFGS, 3 folds" "$RFX" fit \
    "$T/ctrain.csv" --method classify --loss squared-hinge --optimizer lbfgs --folds 3 \
    --length-scale 0.5 --lambda 1e-3 --class-weight 0:2,7:1 -D 64 -o "$T/cs.rfx"
stderr_has "given lambda" "^lambda +0.001 \(given\)"
stderr_has "given length scale" "^length scale +0.5 \(given"
expect 0 "fit classify softmax by SGD" "$RFX" fit "$T/ctrain.csv" --task classify \
    --multiclass softmax --optimizer sgd -D 64 --seed 3 -o "$T/cx.rfx"
expect 0 "info of a softmax classifier" "$RFX" info "$T/cx.rfx"
check "info: softmax" grep -Eq '^multiclass +softmax$' "$T/stdout"
expect 0 "fit classify dual-cd, no intercept, no standardisation" "$RFX" fit "$T/btrain.csv" \
    --task classify --loss hinge --optimizer dual-cd --no-intercept --no-standardize \
    --gamma 0.5 -D 64 -o "$T/cd.rfx"

# classification usage and data errors
expect 1 "--task nope" "$RFX" fit "$T/ctrain.csv" --task nope -o "$T/bad.rfx"
stderr_has "--task nope" "unknown task 'nope'"
expect 1 "--task classify --method ridge" "$RFX" fit "$T/ctrain.csv" --task classify \
    --method ridge -o "$T/bad.rfx"
stderr_has "--task classify --method ridge" "fits --method classify or sinks, not ridge"
expect 1 "--loss nope" "$RFX" fit "$T/ctrain.csv" --task classify --loss nope -o "$T/bad.rfx"
expect 1 "--loss with bayes" "$RFX" fit "$T/ctrain.csv" --loss hinge -o "$T/bad.rfx"
stderr_has "--loss with bayes" "--loss applies to --method classify or sinks, not bayes"
expect 1 "--noise-var with classify" "$RFX" fit "$T/ctrain.csv" --task classify --noise-var 1 \
    -o "$T/bad.rfx"
expect 1 "--multiclass softmax with hinge" "$RFX" fit "$T/ctrain.csv" --task classify \
    --multiclass softmax --loss hinge -o "$T/bad.rfx"
stderr_has "softmax with hinge" "softmax takes --loss logistic"
expect 1 "--optimizer lbfgs with hinge" "$RFX" fit "$T/ctrain.csv" --task classify --loss hinge \
    --optimizer lbfgs -o "$T/bad.rfx"
expect 1 "--optimizer dual-cd with logistic" "$RFX" fit "$T/ctrain.csv" --task classify \
    --optimizer dual-cd -o "$T/bad.rfx"
expect 1 "--optimizer adam" "$RFX" fit "$T/ctrain.csv" --task classify --optimizer adam \
    -o "$T/bad.rfx"
# the library checks the fit's parameters before any data is read: a bad
# combination is a usage error even when the data file does not exist
expect 1 "bad fit parameters before a missing data file" "$RFX" fit "$T/no_such_file.csv" \
    --task classify --loss hinge --optimizer lbfgs -o "$T/bad.rfx"
stderr_has "bad fit parameters before a missing data file" \
    "classify.optimizer: lbfgs needs a differentiable loss"
expect 1 "--lambda 0 with classify before a missing data file" "$RFX" fit \
    "$T/no_such_file.csv" --task classify --lambda 0 -o "$T/bad.rfx"
stderr_has "--lambda 0 before a missing data file" "fit.lambda: a classifier needs lambda > 0"
# ... and so for srfe, lasso, harfe, pce and projected (each option value
# the parser can range is ranged there; the rest is the library's check)
expect 1 "--degree above the largest with pce before a missing data file" "$RFX" fit \
    "$T/no_such_file.csv" --method pce --degree 1001 -o "$T/bad.rfx"
stderr_has "pce --degree 1001 before a missing data file" \
    "pce.degree: 1001 exceeds RFX_PCE_MAX_DEGREE = 1000"
expect 1 "--degree-min above the largest with pce before a missing data file" "$RFX" fit \
    "$T/no_such_file.csv" --method pce --degree-min 1001 -o "$T/bad.rfx"
stderr_has "pce --degree-min 1001 before a missing data file" \
    "pce.degree_min: 1001 exceeds RFX_PCE_MAX_DEGREE = 1000"
for m in srfe lasso harfe; do
    expect 1 "--weight-scale 0 with $m before a missing data file" "$RFX" fit \
        "$T/no_such_file.csv" --method "$m" --weight-scale 0 -o "$T/bad.rfx"
    stderr_has "$m --weight-scale 0 before a missing data file" "--weight-scale: must be > 0"
done
expect 1 "--iterations 0 with projected before a missing data file" "$RFX" fit \
    "$T/no_such_file.csv" --method projected --iterations 0 -o "$T/bad.rfx"
stderr_has "projected --iterations 0 before a missing data file" "--iterations: must be >= 1"
expect 1 "--lambda 0 with classify" "$RFX" fit "$T/ctrain.csv" --task classify --lambda 0 \
    -o "$T/bad.rfx"
expect 1 "--class-weight of an unknown label" "$RFX" fit "$T/ctrain.csv" --task classify \
    --class-weight 5:1 -o "$T/bad.rfx"
stderr_has "--class-weight 5:1" "5 is not a label of the target 'cls' \(its classes: 0 1 7\)"
expect 1 "--class-weight syntax" "$RFX" fit "$T/ctrain.csv" --task classify --class-weight 0:x \
    -o "$T/bad.rfx"
expect 1 "--class-weight negative" "$RFX" fit "$T/ctrain.csv" --task classify \
    --class-weight 0:-1 -o "$T/bad.rfx"
expect 1 "--class-weight twice the same label" "$RFX" fit "$T/ctrain.csv" --task classify \
    --class-weight 0:1,0:2 -o "$T/bad.rfx"
stderr_has "--class-weight 0:1,0:2" "label 0 is given twice"
awk -F, 'NR == 1 { print; next } { printf "%s,%s,%s,4\n", $1, $2, $3 }' "$T/ctrain.csv" \
    >"$T/oneclass.csv"
expect 2 "classify a target with one class" "$RFX" fit "$T/oneclass.csv" --task classify \
    -o "$T/bad.rfx"
stderr_has "one class" "at least 2 classes"
check "no model written by the classify errors" test ! -e "$T/bad.rfx"

# structured frequencies
expect 0 "fit --structure orthogonal" "$RFX" fit "$T/ctrain.csv" --task classify -D 64 \
    --structure orthogonal --lambda 1e-3 -o "$T/co.rfx"
expect 0 "info of a structured map" "$RFX" info "$T/co.rfx"
check "info: the structure" grep -Eq '^structure +orthogonal$' "$T/stdout"
expect 1 "fit --structure spiral" "$RFX" fit "$T/ctrain.csv" --structure spiral -o "$T/bad.rfx"
stderr_has "unknown structure named" "unknown structure 'spiral'"
expect 1 "--structure for srfe" "$RFX" fit "$T/ctrain.csv" --method srfe --structure sorf \
    -o "$T/bad.rfx"
expect 0 "kernel-approx --structure halton" "$RFX" kernel-approx --structure halton -D 16,64 -n 200
check "no model written by the structure errors" test ! -e "$T/bad.rfx"

# ---- interrupts --------------------------------------------------------------
# interrupted SIG STATUS NAME [WRAPPER...]: start a sample whose CSV takes a
# while to write, over an old output; once its temporary file s.csv.tmp.*
# exists, send SIG. Then the exit status is STATUS, no temporary file is
# left and the old output is intact (STATUS 0: the signal was ignored and
# the new output is complete). A run that ends before its temporary file is
# seen is retried with twice the rows, up to four times. WRAPPER runs rfx
# (to set a signal's disposition). Polls, with no assumption on speed.
temporary_left() {
    for f in "$T/int/"*.tmp.*; do [ -e "$f" ] && return 0; done
    return 1
}
interrupted() {
    sig=$1 want=$2 name=$3
    shift 3
    rows=100000
    for attempt in 1 2 3 4; do
        rm -rf "$T/int"
        mkdir "$T/int"
        printf 'x0,y\n1,2\n' >"$T/int/s.csv"
        "$@" "$RFX" sample gfunction -n "$rows" -o "$T/int/s.csv" 2>"$T/stderr" &
        pid=$!
        seen=0
        polls=0
        while [ "$polls" -lt 60000 ]; do
            if temporary_left; then
                seen=1
                break
            fi
            st=
            [ -r "/proc/$pid/stat" ] && read -r st <"/proc/$pid/stat"
            case $st in '' | *') Z '*) break ;; esac
            polls=$((polls + 1))
            sleep 0.01
        done
        [ "$seen" -eq 1 ] && kill "-$sig" "$pid"
        wait "$pid"
        got=$?
        # finished between the poll and the signal (a loaded machine): again,
        # with a larger output
        [ "$seen" -eq 1 ] && [ "$got" -eq 0 ] && [ "$want" -ne 0 ] && seen=0
        [ "$seen" -eq 1 ] && break
        rows=$((rows * 2))
    done
    if [ "$seen" -ne 1 ]; then
        fail "$name: the temporary file was never seen (exit $got)"
    elif [ "$got" -ne "$want" ]; then
        fail "$name: exit status $got, expected $want"
    elif temporary_left; then
        fail "$name: a temporary file is left: $(ls "$T/int")"
    elif [ "$want" -ne 0 ] && [ "$(cat "$T/int/s.csv")" != "$(printf 'x0,y\n1,2')" ]; then
        fail "$name: the old output changed"
    elif [ "$want" -eq 0 ] && [ "$(wc -l <"$T/int/s.csv" | tr -d ' ')" -ne $((rows + 1)) ]; then
        fail "$name: the output is not complete"
    else
        pass
    fi
    rm -rf "$T/int"
}

# sh starts background jobs with SIGINT ignored: the wrapper restores it.
interrupted TERM 143 "SIGTERM while writing -o"
# Under nohup the tests start with SIGHUP ignored: the wrapper restores it too.
if command -v perl >/dev/null 2>&1; then
    interrupted HUP 129 "SIGHUP while writing -o" perl -e '$SIG{HUP} = "DEFAULT"; exec @ARGV or die'
    interrupted INT 130 "SIGINT while writing -o" perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV or die'
else
    interrupted HUP 129 "SIGHUP while writing -o"
fi
interrupted INT 0 "an ignored SIGINT stays ignored" sh -c 'trap "" INT; exec "$@"' sh

# target transforms and the automatic surrogate
awk -F, 'NR == 1 { print; next } { $NF = exp($NF); print }' OFS=, "$T/train.csv" >"$T/pos.csv"
expect 0 "fit --transform log" "$RFX" fit "$T/pos.csv" -o "$T/log.rfx" --method ridge --transform log
stderr_has "fit --transform log says so" "fitted to log\(y\)"
expect 0 "info of a log-target model" "$RFX" info "$T/log.rfx"
check "info names the transform" grep -q '^target transform *log' "$T/stdout"
expect 2 "fit --transform log on targets <= 0" "$RFX" fit "$T/train.csv" -o "$T/x.rfx" --method ridge --transform log
stderr_has "--transform log names the row" "train.csv: the target of data row [0-9]+ .*needs every target > 0"
expect 1 "--transform with two for one method" "$RFX" fit "$T/pos.csv" -o "$T/x.rfx" --method srfe --transform log,boxcox
expect 1 "--budget without --method auto" "$RFX" fit "$T/pos.csv" -o "$T/x.rfx" --method srfe --budget 5
stderr_has "--budget names auto" "applies to --method auto"
expect 1 "--candidates classify" "$RFX" fit "$T/pos.csv" -o "$T/x.rfx" --method auto --candidates ridge,classify
expect 1 "--transform sqrt" "$RFX" fit "$T/pos.csv" -o "$T/x.rfx" --transform sqrt
expect 1 "--transform auto with a method option" "$RFX" fit "$T/pos.csv" -o "$T/x.rfx" --method ridge --transform auto --lambda 0.1
expect 0 "fit --method auto" "$RFX" fit "$T/pos.csv" -o "$T/auto.rfx" --method auto --candidates ridge,harfe --folds 3
stderr_has "auto prints its table" "^  harfe +log "
stderr_has "auto says what it chose" "^chosen +(ridge|harfe) on the (none|log|boxcox) target"
expect 0 "predict with the auto model" "$RFX" predict "$T/auto.rfx" "$T/pos.csv" -o "$T/auto_pred.csv"
check "auto predictions are positive (exp of the log target)" awk -F, 'NR > 1 && !($1 > 0) { bad = 1 } END { exit bad }' "$T/auto_pred.csv"
expect 0 "fit --transform auto" "$RFX" fit "$T/pos.csv" -o "$T/ta.rfx" --method harfe --transform auto
stderr_has "--transform auto reports the comparison" "^transform +(none|log|boxcox) \(chosen by 5-fold cross-validation of harfe: none "

# ---- the model's schema: columns matched by name ----------------------
expect 0 "fit on named columns" "$RFX" fit "$T/train.csv" -o "$T/named.rfx" --method ridge -D 64
expect 0 "info of a named model" "$RFX" info "$T/named.rfx"
check "info lists the input names" grep -q '^input names *x0, x1, x2$' "$T/stdout"
check "info names the target" grep -q '^target name *y$' "$T/stdout"
expect 0 "eval in the file's order" "$RFX" eval "$T/named.rfx" "$T/train.csv"
cp "$T/stdout" "$T/eval_in_order"
awk -F, '{ print $3 "," $4 "," $1 "," $2 }' OFS=, "$T/train.csv" >"$T/reordered.csv"
expect 0 "eval with the columns reordered" "$RFX" eval "$T/named.rfx" "$T/reordered.csv"
check "reordered columns give the same errors" cmp -s "$T/stdout" "$T/eval_in_order"
expect 0 "predict with the columns reordered" "$RFX" predict "$T/named.rfx" "$T/reordered.csv" -o "$T/p_re.csv"
expect 0 "predict in the file's order" "$RFX" predict "$T/named.rfx" "$T/train.csv" -o "$T/p_in.csv"
check "reordered columns give the same predictions" cmp -s "$T/p_re.csv" "$T/p_in.csv"
sed '1s/x1/speed/' "$T/train.csv" >"$T/renamed.csv"
expect 2 "eval with a renamed column" "$RFX" eval "$T/named.rfx" "$T/renamed.csv"
stderr_has "a renamed column is named" "renamed.csv: the model's input 'x1' is not a column \(columns: x0, speed, x2, y\)"
awk -F, '{ print $0 "," (NR == 1 ? "extra" : 1) }' "$T/train.csv" >"$T/extra.csv"
expect 2 "predict with an unexpected column" "$RFX" predict "$T/named.rfx" "$T/extra.csv"
stderr_has "an unexpected column is named" "unexpected column 'extra' \(column 4\): the model's inputs are x0, x1, x2 and its target is 'y'"
cut -d, -f1,2,4 "$T/train.csv" >"$T/missing.csv"
expect 2 "eval without an input column" "$RFX" eval "$T/named.rfx" "$T/missing.csv"
stderr_has "the missing input is named" "the model's input 'x2' is not a column"
cut -d, -f1-3 "$T/train.csv" >"$T/no_target.csv"
expect 2 "eval without the target column" "$RFX" eval "$T/named.rfx" "$T/no_target.csv"
stderr_has "eval asks for the target" "no target column"
expect 0 "predict without the target column" "$RFX" predict "$T/named.rfx" "$T/no_target.csv" -o "$T/p_nt.csv"
check "the target column changes no prediction" cmp -s "$T/p_nt.csv" "$T/p_in.csv"
tail -n +2 "$T/train.csv" >"$T/headerless.csv"
expect 0 "eval without a header: by position" "$RFX" eval "$T/named.rfx" "$T/headerless.csv"
check "by position, the same errors" cmp -s "$T/stdout" "$T/eval_in_order"
cut -d, -f1,2 "$T/headerless.csv" >"$T/two.csv"
expect 2 "predict with too few columns, no header" "$RFX" predict "$T/named.rfx" "$T/two.csv"
stderr_has "the count is checked" "the table has 2 columns; the model takes 3 inputs"
expect 0 "eval from a pipe with the target column" sh -c 'cat "$1" | "$2" eval "$3" /dev/stdin' sh "$T/reordered.csv" "$RFX" "$T/named.rfx"
check "from a pipe, the same errors" cmp -s "$T/stdout" "$T/eval_in_order"
expect 0 "predict from a pipe with the target column" sh -c 'cat "$1" | "$2" predict "$3" /dev/stdin' sh "$T/train.csv" "$RFX" "$T/named.rfx"
awk 'NR > 1' "$T/stdout" >"$T/p_pipe.csv"
check "from a pipe, the same predictions" sh -c 'tail -n +2 "$1" | cmp -s - "$2"' sh "$T/p_in.csv" "$T/p_pipe.csv"
expect 0 "sobol labels the inputs by name" "$RFX" sobol "$T/named.rfx" --uniform -2,2 -n 200
check "sobol's rows are the input names" sh -c 'grep -q "^x1 " "$1" && ! grep -q "^x1x" "$1"' sh "$T/stdout"
# a header whose names repeat: the fit keeps no names, with a warning
sed '1s/x2/x0/' "$T/train.csv" >"$T/dup.csv"
expect 0 "fit on repeated column names" "$RFX" fit "$T/dup.csv" -o "$T/dup.rfx" --method ridge -D 32
stderr_has "repeated names are warned of" "warning: model names: inputs 0 and 2 are both named 'x0'"
expect 0 "predict by position after repeated names" "$RFX" predict "$T/dup.rfx" "$T/reordered.csv"
# control bytes of a column name never reach the terminal
printf 'a,b\033[2J,c,y\n1,2,3,4\n' >"$T/esc.csv"
expect 2 "predict with a hostile column name" "$RFX" predict "$T/named.rfx" "$T/esc.csv"
check "the escape byte is escaped" sh -c '! grep -q "$(printf "\033")" "$1" && grep -q "b\\\\x1b\[2J" "$1"' sh "$T/stderr"
# a model file written before names existed (format version 1) still loads
for kind in bayes pce; do
    std=
    [ $kind = bayes ] && std=--std
    expect 0 "predict with a version 1 $kind model" "$RFX" predict "$DATA/model_v1_$kind.rfx" "$DATA/model_v1_train.csv" $std -o "$T/v1_$kind.csv"
    check "version 1 $kind model: its predictions (to 1e-12)" awk -F, '
        NR == FNR { want[FNR] = $0; next }
        { split(want[FNR], w, ","); for (k = 1; k <= NF; k++) if (FNR > 1) {
              d = $k - w[k]; if (d < 0) d = -d; s = w[k] < 0 ? -w[k] : w[k]
              if (d > 1e-12 * (1 + s)) bad = 1 } else if ($0 != want[FNR]) bad = 1 }
        END { exit bad }' "$DATA/model_v1_$kind.pred.csv" "$T/v1_$kind.csv"
done
# a SORF model written by rfx 0.2 (the first construction, no tag 59)
# rebuilds that map and predicts as it did
expect 0 "predict with an rfx 0.2 sorf model" "$RFX" predict "$DATA/model_sorf1.rfx" "$DATA/model_v1_train.csv" -o "$T/sorf1.csv"
check "rfx 0.2 sorf model: its predictions (to 1e-12)" awk -F, '
    NR == FNR { want[FNR] = $0; next }
    FNR > 1 { d = $1 - want[FNR]; if (d < 0) d = -d; s = want[FNR] < 0 ? -want[FNR] : want[FNR]
              if (d > 1e-12 * (1 + s)) bad = 1 }
    END { exit bad }' "$DATA/model_sorf1.pred.csv" "$T/sorf1.csv"
expect 0 "info of an rfx 0.2 sorf model" "$RFX" info "$DATA/model_sorf1.rfx"
check "an rfx 0.2 sorf model has the first construction" grep -q '^structure *sorf, construction 1 (rfx 0.2)$' "$T/stdout"
expect 0 "info of a version 1 model" "$RFX" info "$DATA/model_v1_bayes.rfx"
check "a version 1 model has no names" grep -q '^input names *none' "$T/stdout"

# ---- reports as JSON, and -o on eval, info, sobol and kernel-approx ------
if command -v python3 >/dev/null 2>&1; then
    expect 0 "eval --format json" "$RFX" eval "$T/named.rfx" "$T/train.csv" --format json -o "$T/eval.json"
    json_check "eval json: the text's numbers" "$T/eval.json" \
        "d['rows'] == 400 and abs(d['rmse'] - float('$(field RMSE "$T/eval_in_order")')) <= 1e-5 * d['rmse'] and set(d) == {'rows', 'rmse', 'mae', 'r2', 'rel_l2'}"
    expect 0 "eval --format json of a classifier" "$RFX" eval "$T/c.rfx" "$T/ctrain.csv" --format json
    cp "$T/stdout" "$T/eval_c.json"
    json_check "eval json of a classifier" "$T/eval_c.json" \
        "0 <= d['accuracy'] <= 1 and len(d['confusion']) == len(d['classes']) == len(d['per_class']) and sum(map(sum, d['confusion'])) == d['rows'] and all(p['support'] == sum(r) for p, r in zip(d['per_class'], d['confusion']))"
    expect 0 "info --format json" "$RFX" info "$T/named.rfx" --format json -o "$T/info.json"
    json_check "info json" "$T/info.json" \
        "d['method'] == 'ridge' and d['inputs'] == 3 and d['input_names'] == ['x0', 'x1', 'x2'] and d['target_name'] == 'y' and d['features'] == 64 and d['predictive_std'] is False"
    expect 0 "info -o as text" "$RFX" info "$T/named.rfx" -o "$T/info.txt"
    expect 0 "info on stdout" "$RFX" info "$T/named.rfx"
    check "info -o writes what stdout shows" cmp -s "$T/stdout" "$T/info.txt"
    expect 0 "sobol --format json" "$RFX" sobol "$T/named.rfx" --uniform -2,2 -n 200 --format json -o "$T/sobol.json"
    json_check "sobol json" "$T/sobol.json" \
        "d['source'] == 'monte carlo' and d['evaluations'] == 1000 and [i['name'] for i in d['inputs']] == ['x0', 'x1', 'x2'] and all(i['first_lo'] <= i['first_hi'] and 'model_first' in i for i in d['inputs'])"
    expect 0 "kernel-approx --format json" "$RFX" kernel-approx -D 16,64 -n 100 --format json -o "$T/ka.json"
    json_check "kernel-approx json" "$T/ka.json" \
        "[r['D'] for r in d['results']] == [16, 64] and d['results'][1]['rel_error'] < d['results'][0]['rel_error'] and d['data'] is None and d['slope'] < 0"
    expect 1 "--format yaml" "$RFX" eval "$T/named.rfx" "$T/train.csv" --format yaml
    stderr_has "--format names the choices" "is not a format \(text or json\)"
    expect 1 "eval -o its own DATA" "$RFX" eval "$T/named.rfx" "$T/train.csv" -o "$T/train.csv"
    check "eval -o DATA leaves the data" grep -q '^x0,x1,x2,y$' "$T/train.csv"
fi

# ---- --quiet and --progress -------------------------------------------------
expect 0 "fit --quiet" "$RFX" fit "$T/train.csv" -o "$T/q.rfx" --method ridge -D 32 --quiet
check "fit --quiet prints nothing" sh -c '! test -s "$1"' sh "$T/stderr"
expect 0 "fit --progress into a file" "$RFX" fit "$T/train.csv" -o "$T/q.rfx" -D 32 --progress
stderr_has "--progress writes whole lines when stderr is no terminal" "^rfx: progress: choose length scale [0-9]+%$"
check "--progress: no carriage returns in a log" sh -c '! grep -q "$(printf "\r")" "$1"' sh "$T/stderr"
stderr_has "--progress keeps the summary" "^length scale "
expect 0 "fit without --progress, stderr no terminal" "$RFX" fit "$T/train.csv" -o "$T/q.rfx" -D 32
check "no progress lines by default in a log" sh -c '! grep -q "progress" "$1"' sh "$T/stderr"
expect 1 "--progress with --quiet" "$RFX" fit "$T/train.csv" -o "$T/q.rfx" --progress -q
stderr_has "--progress with --quiet is refused" "contradict"

# ---- per-input distributions and the bar chart of rfx sobol ----------------
if command -v python3 >/dev/null 2>&1; then
    expect 0 "sobol with a narrow range for x1" "$RFX" sobol "$T/named.rfx" --uniform -2,2 --uniform x1=0,0.001 -n 400 --format json -o "$T/s1.json"
    json_check "an input held almost fixed has indices near 0" "$T/s1.json" \
        "abs(d['inputs'][1]['total']) < 0.01 and d['inputs'][0]['total'] > 0.2"
    expect 0 "sobol: an input by index, another normal" "$RFX" sobol "$T/named.rfx" --uniform 0=-2,2 --uniform x1=-2,2 --normal 2=0,1 -n 400 --format json -o "$T/s2.json"
    json_check "sobol: x2 is unused whatever its distribution" "$T/s2.json" "abs(d['inputs'][2]['total']) < 0.02"
fi
expect 1 "sobol: an input without a distribution, and no box" "$RFX" sobol "$DATA/model_v1_bayes.rfx" --uniform 0=-1,1 --uniform 1=-1,1
stderr_has "the input without a distribution is named" "input x2 has no distribution: give --uniform x2=A,B"
expect 1 "sobol: an unknown input" "$RFX" sobol "$T/named.rfx" --uniform -2,2 --uniform speed=0,1
stderr_has "the unknown input is named" "'speed' is not an input \(3 inputs, by name or 0-based index\)"
expect 1 "sobol: --normal with SD 0" "$RFX" sobol "$T/named.rfx" --normal x0=0,0
expect 5 "sobol --plot without gnuplot" env PATH=/nonexistent "$RFX" sobol "$T/named.rfx" --uniform -2,2 -n 50 --plot "$T/s.png"
if command -v gnuplot >/dev/null 2>&1; then
    expect 0 "sobol --plot" "$RFX" sobol "$T/named.rfx" --uniform -2,2 -n 200 --plot "$T/s.png"
    check "sobol --plot wrote a PNG" sh -c 'head -c 8 "$1" | od -An -c | grep -q "P   N   G"' sh "$T/s.png"
fi

# ---- second-order Sobol indices: Ishigami, S_13 = 8 b^2 pi^8 / 225 / V = 0.2437
if command -v python3 >/dev/null 2>&1; then
    expect 0 "sample ishigami" "$RFX" sample ishigami -n 600 --seed 4 -o "$T/ish.csv"
    expect 0 "fit pce on ishigami" "$RFX" fit "$T/ish.csv" --method pce -o "$T/ish.rfx" -q
    expect 0 "sobol --second-order of a PCE" "$RFX" sobol "$T/ish.rfx" --second-order --format json -o "$T/s2p.json"
    json_check "PCE second order: S_13 and nothing else" "$T/s2p.json" \
        "[p['inputs'] for p in d['second_order']] == [['x0', 'x1'], ['x0', 'x2'], ['x1', 'x2']] and abs(d['second_order'][1]['index'] - 0.2437) < 0.01 and abs(d['second_order'][0]['index']) < 0.01 and abs(d['second_order'][2]['index']) < 0.01"
    expect 0 "sobol --second-order by Monte Carlo" "$RFX" sobol "$T/ish.rfx" --like ishigami -n 20000 --second-order --format json -o "$T/s2m.json"
    json_check "Monte Carlo second order: the interval holds S_13" "$T/s2m.json" \
        "d['evaluations'] == 20000 * 8 and d['second_order'][1]['lo'] < 0.2437 < d['second_order'][1]['hi'] and all(p['lo'] <= p['index'] <= p['hi'] for p in d['second_order'])"
fi

# ---- row weights: --sample-weight COL ---------------------------------------
awk -F, 'NR == 1 { print $0 ",w"; next } { print $0 "," (NR % 3 + 1) }' "$T/train.csv" >"$T/weighted.csv"
awk -F, 'NR == 1 { print "x0,x1,x2,y"; next } { for (k = 0; k < $5; k++) print $1 "," $2 "," $3 "," $4 }' \
    "$T/weighted.csv" >"$T/repeated.csv"
expect 0 "fit --sample-weight" "$RFX" fit "$T/weighted.csv" --target y --sample-weight w --method ridge \
    -D 64 --length-scale 1 --lambda 0.01 -o "$T/wt.rfx" -q
expect 0 "fit on the rows repeated" "$RFX" fit "$T/repeated.csv" --method ridge -D 64 --length-scale 1 \
    --lambda 0.01 -o "$T/rep.rfx" -q
expect 0 "predict with the weighted model" "$RFX" predict "$T/wt.rfx" "$T/train.csv" -o "$T/p_wt.csv"
expect 0 "predict with the repeated-rows model" "$RFX" predict "$T/rep.rfx" "$T/train.csv" -o "$T/p_rep.csv"
check "integer weights are repeated rows (to 1e-10)" awk -F, '
    NR == FNR { a[FNR] = $1; next }
    FNR > 1 { d = $1 - a[FNR]; if (d < 0) d = -d; if (d > 1e-10) bad = 1 } END { exit bad }' \
    "$T/p_wt.csv" "$T/p_rep.csv"
expect 0 "info: the weight column is not an input" "$RFX" info "$T/wt.rfx"
check "the inputs without w" grep -q '^input names *x0, x1, x2$' "$T/stdout"
expect 2 "--sample-weight naming the target" "$RFX" fit "$T/weighted.csv" --sample-weight w -o "$T/x.rfx"
stderr_has "the target is not a weight" "column 'w' is the target column"
sed '3s/,[0-9]$/,-1/' "$T/weighted.csv" >"$T/negw.csv"
expect 2 "a negative weight" "$RFX" fit "$T/negw.csv" --target y --sample-weight w -o "$T/x.rfx"
stderr_has "the negative weight's row is named" "data row 2 has the weight -1; weights are >= 0"
expect 1 "--sample-weight with srfe" "$RFX" fit "$T/weighted.csv" --target y --sample-weight w --method srfe -o "$T/x.rfx"

# ---- DATA in row blocks: standard input, gzip, .npy out, the memory limit ----
gen_data "$T/big.csv" 9000 17
expect 0 "fit ridge from a file (in blocks)" "$RFX" fit "$T/big.csv" --method ridge -D 64 -o "$T/sf.rfx" -q
expect 0 "fit ridge from standard input" sh -c '"$1" fit - --method ridge -D 64 -o "$2" -q < "$3"' sh "$RFX" "$T/si.rfx" "$T/big.csv"
check "standard input (a file) gives the same model" cmp -s "$T/sf.rfx" "$T/si.rfx"
expect 0 "fit ridge from a pipe (spooled for the passes)" sh -c 'cat "$3" | "$1" fit - --method ridge -D 64 -o "$2" -q' sh "$RFX" "$T/sp.rfx" "$T/big.csv"
check "a pipe gives the same model" cmp -s "$T/sf.rfx" "$T/sp.rfx"
gzip -c "$T/big.csv" >"$T/big.csv.gz"
expect 0 "fit from a gzip file" "$RFX" fit "$T/big.csv.gz" --method ridge -D 64 -o "$T/sg.rfx" -q
check "gzip gives the same model" cmp -s "$T/sf.rfx" "$T/sg.rfx"
expect 0 "fit bayes from gzip on a pipe" sh -c 'gzip -c "$3" | "$1" fit - -D 64 -o "$2" -q' sh "$RFX" "$T/sb.rfx" "$T/big.csv"
expect 0 "fit bayes from the file" "$RFX" fit "$T/big.csv" -D 64 -o "$T/sb2.rfx" -q
check "bayes: a gzip pipe gives the same model" cmp -s "$T/sb.rfx" "$T/sb2.rfx"
expect 0 "predict from a file" "$RFX" predict "$T/sb.rfx" "$T/big.csv" --std -o "$T/pf.csv"
expect 0 "predict from a gzip pipe to stdout" sh -c 'gzip -c "$3" | "$1" predict "$2" - --std' sh "$RFX" "$T/sb.rfx" "$T/big.csv"
check "predict: the same rows from a pipe" cmp -s "$T/pf.csv" "$T/stdout"
check "predict: every row, in blocks" sh -c '[ "$(wc -l < "$1")" -eq 9001 ]' sh "$T/pf.csv"
expect 0 "predict to .npy in blocks" "$RFX" predict "$T/sb.rfx" "$T/big.csv" --std -o "$T/pf.npy"
if python3 -c "import numpy" >/dev/null 2>&1; then
    check ".npy predictions equal the CSV ones" python3 -c 'import numpy as np, sys
a = np.load(sys.argv[1]); b = np.loadtxt(sys.argv[2], delimiter=",", skiprows=1)
sys.exit(0 if a.shape == (9000, 2) and np.array_equal(a, b) else 1)' "$T/pf.npy" "$T/pf.csv"
fi
awk 'NR == 8001 { print "1,oops,2,3"; next } { print }' "$T/big.csv" >"$T/late.csv"
expect 2 "predict: a bad cell in a later block" "$RFX" predict "$T/sb.rfx" "$T/late.csv" -o "$T/late_p.csv"
stderr_has "the later block's error names its line and column" "late.csv:8001:2: 'oops' is not a number"
check "no predictions file after an error in a later block" test ! -e "$T/late_p.csv"
expect 2 "fit: a bad cell in a later block" "$RFX" fit "$T/late.csv" --method ridge -D 32 -o "$T/late.rfx"
stderr_has "fit names the line" "late.csv:8001:2"
check "no model after an error in a later block" test ! -e "$T/late.rfx"
expect 0 "fit --progress shows rows per second" "$RFX" fit "$T/big.csv" -D 32 -o "$T/q.rfx" --progress
stderr_has "a line per pass with rows and their rate" "^rfx: progress: read: statistics 9000 rows, [0-9.e+]+ rows/s$"
expect 6 "pce over --memory-limit" "$RFX" fit "$T/big.csv" --method pce -o "$T/x.rfx" --memory-limit 100K
stderr_has "the limit and the way out are named" "over the memory limit of 102400 bytes.*--method pce keeps every row in memory"
expect 0 "ridge streams past the same limit" "$RFX" fit "$T/big.csv" --method ridge -D 32 -o "$T/x.rfx" --memory-limit 100K -q
expect 1 "--memory-limit 2X" "$RFX" fit "$T/big.csv" -o "$T/x.rfx" --memory-limit 2X
expect 2 "a cut gzip file" sh -c 'head -c 3000 "$2" > "$3"; "$1" fit "$3" -o "$4"' sh "$RFX" "$T/big.csv.gz" "$T/cut.csv.gz" "$T/x.rfx"
stderr_has "a cut gzip file is named as such" "cut.csv.gz:[0-9]+: gzip data cut short"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
