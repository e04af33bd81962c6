#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# tests/check_headers.sh CC INCLUDE_DIR [mpi [MPI_INCLUDE_DIR...]]: every
# public header compiles on its own (it includes what it uses), as C11 with
# -Wall -Wextra -Wpedantic -Werror, and twice in one unit (its guard holds).
# rfx/dist.h includes <mpi.h>: it is compiled (with MPI's include folders)
# when the word mpi follows, given when librfx_dist is built; else skipped.
cc=$1
inc=$2
shift 2
with_mpi=0
extra_mpi=""
if [ "${1-}" = mpi ]; then
    with_mpi=1
    shift
    # MPI's own headers are system headers: their warnings are not ours
    for dir in "$@"; do extra_mpi="$extra_mpi -isystem $dir"; done
fi
passed=0
failed=0
skipped=0
for h in "$inc"/rfx.h "$inc"/rfx/*.h; do
    name=${h#"$inc"/}
    extra=""
    if [ "$name" = rfx/dist.h ]; then
        if [ "$with_mpi" -eq 0 ]; then
            echo "skipped: $name (librfx_dist is not built: no MPI)"
            skipped=$((skipped + 1))
            continue
        fi
        extra=$extra_mpi
    fi
    # shellcheck disable=SC2086 # $extra splits into options on purpose
    if printf '#include "%s"\n#include "%s"\n' "$name" "$name" |
        "$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror -fsyntax-only -I "$inc" $extra -x c -; then
        passed=$((passed + 1))
    else
        echo "FAIL: $name does not compile on its own"
        failed=$((failed + 1))
    fi
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
