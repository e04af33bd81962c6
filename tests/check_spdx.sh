#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Every source file of the repository names its license: an SPDX line
# (BSD-3-Clause, LICENSE) in its first lines. Usage: check_spdx.sh SOURCE_DIR
set -eu
cd "$1"
if ! command -v git >/dev/null 2>&1 || ! git rev-parse --git-dir >/dev/null 2>&1; then
    echo "not a git checkout: skipped"
    exit 77
fi
pass=0 fail=0
for f in $(git ls-files '*.c' '*.h' '*.py' '*.sh' '*.in' '*.toml' 'CMakeLists.txt' '*/CMakeLists.txt' \
           Makefile .ci/run); do
    [ -L "$f" ] && continue
    if head -n 3 "$f" | grep -q 'SPDX-License-Identifier: BSD-3-Clause'; then
        pass=$((pass + 1))
    else
        echo "FAIL: $f has no SPDX-License-Identifier line"
        fail=$((fail + 1))
    fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
