/* SPDX-License-Identifier: BSD-3-Clause */
/* The fixed summation tree of the deterministic distributed mode (tree.h). */
#include "tree.h"

#include <stdlib.h>

void rfx__tree_init(rfx__tree *t, void (*merge)(void *, void *, const void *),
                    void (*release)(void *, void *), void *user)
{
    t->merge = merge;
    t->release = release;
    t->user = user;
    t->node = NULL;
    t->n = t->cap = 0;
}

static int siblings(const rfx__tree_node *a, const rfx__tree_node *b)
{
    const unsigned l = a->level;
    return l == b->level && l < 63 && b->start - a->start == (uint64_t)1 << l &&
           a->start % ((uint64_t)1 << (l + 1)) == 0;
}

rfx_status rfx__tree_push(rfx__tree *t, uint64_t start, unsigned level, void *value)
{
    const rfx__tree_node *top = t->n ? &t->node[t->n - 1] : NULL;
    if (level > 63 || start % ((uint64_t)1 << level) != 0 ||
        (top && top->start + ((uint64_t)1 << top->level) > start)) {
        t->release(t->user, value);
        return rfx_set_error(RFX_EINTERNAL, "distributed: interval out of order in the sum tree");
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        rfx__tree_node *node = realloc(t->node, cap * sizeof *node);
        if (!node) {
            t->release(t->user, value);
            return rfx_set_error(RFX_ENOMEM, "distributed: cannot allocate the sum tree");
        }
        t->node = node;
        t->cap = cap;
    }
    t->node[t->n++] = (rfx__tree_node){start, level, value};
    while (t->n >= 2 && siblings(&t->node[t->n - 2], &t->node[t->n - 1])) {
        rfx__tree_node *a = &t->node[t->n - 2], *b = &t->node[t->n - 1];
        t->merge(t->user, a->value, b->value);
        t->release(t->user, b->value);
        a->level++;
        t->n--;
    }
    return RFX_OK;
}

void *rfx__tree_fold(rfx__tree *t)
{
    if (!t->n) return NULL;
    void *acc = t->node[t->n - 1].value;
    for (size_t i = t->n - 1; i-- > 0;) {
        t->merge(t->user, t->node[i].value, acc);
        t->release(t->user, acc);
        acc = t->node[i].value;
    }
    t->n = 0;
    return acc;
}

void rfx__tree_free(rfx__tree *t)
{
    for (size_t i = 0; i < t->n; i++) t->release(t->user, t->node[i].value);
    free(t->node);
    t->node = NULL;
    t->n = t->cap = 0;
}
