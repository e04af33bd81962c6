/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Numbers as text in the C locale, whatever the host program's locale.
 *
 * The CSV reader parses with strtod and the CSV writer prints with "%.17g";
 * both follow LC_NUMERIC, so a program that called setlocale(LC_ALL, "")
 * under a decimal-comma locale (de_DE.UTF-8) would read "1.5" as text and
 * write "1,5". The library never calls setlocale: it switches the calling
 * thread alone to the C locale with uselocale (POSIX 2008) for the length
 * of one read or write, and then back.
 */
#include "internal.h"

void rfx__c_numeric_begin(rfx__c_numeric *n)
{
    /* glibc returns its static C locale object here: no allocation */
    n->c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    n->old = n->c != (locale_t)0 ? uselocale(n->c) : (locale_t)0;
}

void rfx__c_numeric_end(rfx__c_numeric *n)
{
    if (n->c == (locale_t)0) return;
    uselocale(n->old);
    freelocale(n->c);
    n->c = (locale_t)0;
}
