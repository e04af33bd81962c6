#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The manual page rfx(1) says what --help says: every command and each of its
# options appears in `rfx help --man`, and groff formats it without a
# warning. Usage: check_man.sh RFX
set -eu
rfx=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$rfx" help --man > "$tmp/rfx.1"
pass=0 fail=0
if command -v groff >/dev/null 2>&1; then
    groff -man -Tutf8 -ww -z "$tmp/rfx.1" 2> "$tmp/groff.err" || true
    if [ -s "$tmp/groff.err" ]; then echo "groff warns:"; cat "$tmp/groff.err"; fail=$((fail + 1))
    else pass=$((pass + 1)); fi
fi
# roff escapes '-' as '\-': undo it to compare with the help text
sed 's/\\-/-/g; s/\\f[BIR]//g' "$tmp/rfx.1" > "$tmp/plain"
cmds=$("$rfx" --help | awk '/^Commands:/ { on = 1; next } on && /^$/ { exit } on { print $1 }')
[ -n "$cmds" ] || { echo "no commands in rfx --help"; exit 1; }
for c in $cmds; do
    upper=$(echo "$c" | tr a-z A-Z)
    if ! grep -q "^\.SH \"RFX $upper\"" "$tmp/rfx.1"; then
        echo "rfx $c has no section"; fail=$((fail + 1)); continue
    fi
    for o in $("$rfx" help "$c" | grep -o -- '--[a-z][a-z0-9-]*' | sort -u); do
        if grep -q -- "$o" "$tmp/plain"; then pass=$((pass + 1))
        else echo "rfx $c: $o is not in the manual page"; fail=$((fail + 1)); fi
    done
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
