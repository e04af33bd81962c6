#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Every dynamic symbol the library defines carries the rfx_ prefix.
lib="$1"
stray=$(nm -D --defined-only "$lib" | awk '$2 ~ /[TDBRVW]/ {print $3}' \
        | grep -v -E '^(rfx_|_init$|_fini$|_edata$|_end$|__bss_start$)')
if [ -n "$stray" ]; then
    echo "exported symbols without the rfx_ prefix:"; echo "$stray"
    exit 1
fi
echo "all exported symbols carry the rfx_ prefix"
