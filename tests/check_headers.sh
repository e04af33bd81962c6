#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# tests/check_headers.sh CC INCLUDE_DIR: every public header compiles on its
# own (it includes what it uses), as C11 with -Wall -Wextra -Wpedantic
# -Werror, and twice in one unit (its guard holds).
cc=$1
inc=$2
passed=0
failed=0
for h in "$inc"/rfx.h "$inc"/rfx/*.h; do
    name=${h#"$inc"/}
    if printf '#include "%s"\n#include "%s"\n' "$name" "$name" |
        "$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror -fsyntax-only -I "$inc" -x c -; then
        passed=$((passed + 1))
    else
        echo "FAIL: $name does not compile on its own"
        failed=$((failed + 1))
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
