/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tree.h - the fixed summation tree of the deterministic distributed mode
 * (no MPI here: tests/test_dist.c also builds it on its own).
 *
 * Chunks c = 0 .. C - 1 are added in the canonical tree of aligned dyadic
 * intervals [k 2^l, (k + 1) 2^l) truncated at C: an interval's value is
 * (its left half) + (its right half), down to the chunks. A stack of
 * finished intervals, pushed in increasing order, merges its top two while
 * they are siblings (same level l, contiguous, the lower one starting on a
 * multiple of 2^(l+1)), as a binary counter carries. Pushed from an empty
 * stack, starting at any a, the stack is always the partition of [a, x)
 * into its maximal aligned intervals, each built from its two halves; so
 * the stacks of the ranges [a, b) and [b, c) pushed one after the other
 * give the stack of [a, c), node for node, and a split of the chunks among
 * ranks does not change a bit. rfx__tree_fold then adds the stack from the
 * right: the truncated intervals at the end of [0, C).
 */
#ifndef RFX_DIST_TREE_H
#define RFX_DIST_TREE_H

#include "rfx/core.h"

#include <stddef.h>
#include <stdint.h>

typedef struct rfx__tree_node {
    uint64_t start; /* the first chunk of the interval, a multiple of 2^level */
    unsigned level; /* the interval holds 2^level chunks                      */
    void *value;
} rfx__tree_node;

typedef struct rfx__tree {
    /* left = left + right; right is released after (by release) */
    void (*merge)(void *user, void *left, const void *right);
    void (*release)(void *user, void *value);
    void *user;
    rfx__tree_node *node;
    size_t n, cap;
} rfx__tree;

/* An empty stack with its operations. */
void rfx__tree_init(rfx__tree *t, void (*merge)(void *, void *, const void *),
                    void (*release)(void *, void *), void *user);

/* Push the interval [start, start + 2^level) (start a multiple of 2^level,
 * after every interval on the stack) and merge while the top two are
 * siblings. The stack owns value from here, also on failure (RFX_ENOMEM:
 * value released; RFX_EINTERNAL for an interval out of order). */
rfx_status rfx__tree_push(rfx__tree *t, uint64_t start, unsigned level, void *value);

/* Add the stack from the right (node[i] = node[i] + (the sum of those
 * above it)), empty it, and return the sum (NULL when empty). */
void *rfx__tree_fold(rfx__tree *t);

/* Release every value and the stack. */
void rfx__tree_free(rfx__tree *t);

#endif /* RFX_DIST_TREE_H */
