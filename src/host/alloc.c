/* Deterministic best-fit offset allocator for the symmetric heap (see alloc.h). Blocks
 * tile [0, limit) in an address-ordered list; free blocks also sit in bins by
 * floor(log2(size)); used blocks are found by offset through an open-addressing hash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

struct gshmemi_block {
    uint64_t off, size;
    bool free;
    gshmemi_block *prev, *next;          /* address order */
    gshmemi_block *bin_prev, *bin_next;  /* free list of its bin */
};

static int bin_of(uint64_t size) { return 63 - __builtin_clzll(size); }
static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

static void bin_insert(gshmemi_alloc *a, gshmemi_block *b) {
    int i = bin_of(b->size);
    b->bin_prev = NULL;
    b->bin_next = a->bins[i];
    if (a->bins[i]) a->bins[i]->bin_prev = b;
    a->bins[i] = b;
}

static void bin_remove(gshmemi_alloc *a, gshmemi_block *b) {
    if (b->bin_prev) b->bin_prev->bin_next = b->bin_next;
    else a->bins[bin_of(b->size)] = b->bin_next;
    if (b->bin_next) b->bin_next->bin_prev = b->bin_prev;
    b->bin_prev = b->bin_next = NULL;
}

/* ---- offset -> used block hash (linear probing, tombstone-free deletion) ---------- */
static uint64_t hash_off(uint64_t off, uint64_t cap) {
    return ((off / GSHMEMI_ALLOC_MIN_ALIGN) * 0x9E3779B97F4A7C15ull) & (cap - 1);
}

static bool table_put(gshmemi_alloc *a, gshmemi_block *b);

static bool table_grow(gshmemi_alloc *a) {
    uint64_t old_cap = a->table_cap;
    gshmemi_block **old = a->table;
    uint64_t cap = old_cap ? 2 * old_cap : 64;
    a->table = calloc(cap, sizeof *a->table);
    if (!a->table) { a->table = old; return false; }
    a->table_cap = cap;
    a->table_used = 0;
    for (uint64_t i = 0; i < old_cap; i++)
        if (old[i]) table_put(a, old[i]);
    free(old);
    return true;
}

static bool table_put(gshmemi_alloc *a, gshmemi_block *b) {
    if ((a->table_used + 1) * 2 > a->table_cap && !table_grow(a)) return false;
    uint64_t i = hash_off(b->off, a->table_cap);
    while (a->table[i]) i = (i + 1) & (a->table_cap - 1);
    a->table[i] = b;
    a->table_used++;
    return true;
}

static int64_t table_find(const gshmemi_alloc *a, uint64_t off) {
    if (!a->table_cap) return -1;
    uint64_t i = hash_off(off, a->table_cap);
    while (a->table[i]) {
        if (a->table[i]->off == off) return (int64_t)i;
        i = (i + 1) & (a->table_cap - 1);
    }
    return -1;
}

/* Removes slot i and re-seats the rest of its probe run (backward-shift deletion). */
static void table_del(gshmemi_alloc *a, uint64_t i) {
    uint64_t mask = a->table_cap - 1;
    a->table[i] = NULL;
    a->table_used--;
    for (uint64_t j = (i + 1) & mask; a->table[j]; j = (j + 1) & mask) {
        gshmemi_block *b = a->table[j];
        a->table[j] = NULL;
        a->table_used--;
        table_put(a, b);
    }
}

/* ---- blocks ------------------------------------------------------------------------ */
static gshmemi_block *new_block(uint64_t off, uint64_t size, bool is_free) {
    gshmemi_block *b = calloc(1, sizeof *b);
    if (b) { b->off = off; b->size = size; b->free = is_free; }
    return b;
}

/* Splits `b` so that a new block of `size` starts at b->off + at; returns it. The pieces
 * before and after stay with b's free status (caller fixes bins). */
static gshmemi_block *split(gshmemi_alloc *a, gshmemi_block *b, uint64_t at) {
    gshmemi_block *n = new_block(b->off + at, b->size - at, b->free);
    if (!n) return NULL;
    n->prev = b;
    n->next = b->next;
    if (b->next) b->next->prev = n;
    else a->last = n;
    b->next = n;
    b->size = at;
    return n;
}

/* Merges b->next into b (both free, b->next already out of its bin). */
static void absorb_next(gshmemi_alloc *a, gshmemi_block *b) {
    gshmemi_block *n = b->next;
    b->size += n->size;
    b->next = n->next;
    if (n->next) n->next->prev = b;
    else a->last = b;
    free(n);
}

void gshmemi_alloc_init(gshmemi_alloc *a) { memset(a, 0, sizeof *a); }

void gshmemi_alloc_destroy(gshmemi_alloc *a) {
    gshmemi_block *b = a->last;
    while (b) {
        gshmemi_block *p = b->prev;
        free(b);
        b = p;
    }
    free(a->table);
    memset(a, 0, sizeof *a);
}

bool gshmemi_alloc_grow(gshmemi_alloc *a, uint64_t new_limit) {
    if (new_limit <= a->limit) return new_limit == a->limit;
    uint64_t add = new_limit - a->limit;
    if (a->last && a->last->free) {
        bin_remove(a, a->last);
        a->last->size += add;
        bin_insert(a, a->last);
    } else {
        gshmemi_block *b = new_block(a->limit, add, true);
        if (!b) return false;
        b->prev = a->last;
        if (a->last) a->last->next = b;
        a->last = b;
        bin_insert(a, b);
    }
    a->limit = new_limit;
    return true;
}

/* Bytes a free block b must give up in front to start at `align`, or UINT64_MAX if the
 * request does not fit in it. */
static uint64_t fit_waste(const gshmemi_block *b, uint64_t size, uint64_t align) {
    uint64_t pad = align_up(b->off, align) - b->off;
    return (b->size >= pad && b->size - pad >= size) ? b->size - pad - size : UINT64_MAX;
}

bool gshmemi_alloc_alloc(gshmemi_alloc *a, uint64_t size, uint64_t align, uint64_t *off,
                         uint64_t *need) {
    if (align < GSHMEMI_ALLOC_MIN_ALIGN) align = GSHMEMI_ALLOC_MIN_ALIGN;
    if (size == 0) size = 1;
    if (size > UINT64_MAX / 2) return false;
    size = align_up(size, GSHMEMI_ALLOC_MIN_ALIGN);
    /* best fit: smallest leftover; ties go to the lowest offset (deterministic) */
    gshmemi_block *best = NULL;
    uint64_t best_waste = UINT64_MAX;
    for (int i = bin_of(size); i < GSHMEMI_ALLOC_NBINS; i++) {
        for (gshmemi_block *b = a->bins[i]; b; b = b->bin_next) {
            uint64_t w = fit_waste(b, size, align);
            if (w < best_waste || (w == best_waste && w != UINT64_MAX && b->off < best->off)) {
                best = b;
                best_waste = w;
            }
        }
        if (best) break;  /* a larger bin can only leave more over */
    }
    if (!best) {
        if (need) {
            uint64_t start = a->last && a->last->free ? a->last->off : a->limit;
            *need = align_up(start, align) + size - a->limit;
        }
        return false;
    }
    bin_remove(a, best);
    uint64_t pad = align_up(best->off, align) - best->off;
    gshmemi_block *b = best;
    if (pad) {  /* the front piece stays free */
        b = split(a, best, pad);
        if (!b) { bin_insert(a, best); return false; }
        bin_insert(a, best);
    }
    if (b->size > size) {
        gshmemi_block *rest = split(a, b, size);
        if (!rest) { bin_insert(a, b); return false; }
        bin_insert(a, rest);
    }
    b->free = false;
    if (!table_put(a, b)) {
        b->free = true;
        bin_insert(a, b);
        return false;
    }
    a->in_use += b->size;
    a->n_live++;
    *off = b->off;
    return true;
}

bool gshmemi_alloc_free(gshmemi_alloc *a, uint64_t off) {
    int64_t slot = table_find(a, off);
    if (slot < 0) return false;
    gshmemi_block *b = a->table[slot];
    table_del(a, (uint64_t)slot);
    a->in_use -= b->size;
    a->n_live--;
    b->free = true;
    if (b->next && b->next->free) {
        bin_remove(a, b->next);
        absorb_next(a, b);
    }
    if (b->prev && b->prev->free) {
        gshmemi_block *p = b->prev;
        bin_remove(a, p);
        absorb_next(a, p);
        b = p;
    }
    bin_insert(a, b);
    return true;
}

uint64_t gshmemi_alloc_size(const gshmemi_alloc *a, uint64_t off) {
    int64_t slot = table_find(a, off);
    return slot < 0 ? 0 : a->table[slot]->size;
}

uint64_t gshmemi_alloc_largest_free(const gshmemi_alloc *a) {
    for (int i = GSHMEMI_ALLOC_NBINS - 1; i >= 0; i--) {
        uint64_t m = 0;
        for (gshmemi_block *b = a->bins[i]; b; b = b->bin_next)
            if (b->size > m) m = b->size;
        if (m) return m;
    }
    return 0;
}

bool gshmemi_alloc_check(const gshmemi_alloc *a) {
    uint64_t pos = a->limit, used = 0, live = 0, n_free = 0;
    const gshmemi_block *b = a->last, *after = NULL;
    for (; b; after = b, b = b->prev) {  /* walk down from the top */
        if (b->off + b->size != pos) {
            fprintf(stderr, "alloc: block at %llu size %llu does not end at %llu\n",
                    (unsigned long long)b->off, (unsigned long long)b->size, (unsigned long long)pos);
            return false;
        }
        if (b->off % GSHMEMI_ALLOC_MIN_ALIGN || b->size == 0) {
            fprintf(stderr, "alloc: block at %llu misaligned or empty\n", (unsigned long long)b->off);
            return false;
        }
        if (after && b->free && after->free) {
            fprintf(stderr, "alloc: adjacent free blocks at %llu and %llu\n",
                    (unsigned long long)b->off, (unsigned long long)after->off);
            return false;
        }
        if (b->free) n_free++;
        else { used += b->size; live++; if (table_find(a, b->off) < 0) {
            fprintf(stderr, "alloc: used block at %llu missing from the table\n", (unsigned long long)b->off);
            return false; } }
        pos = b->off;
    }
    if (pos != 0 && a->limit != 0) {
        fprintf(stderr, "alloc: blocks start at %llu, not 0\n", (unsigned long long)pos);
        return false;
    }
    uint64_t in_bins = 0;
    for (int i = 0; i < GSHMEMI_ALLOC_NBINS; i++)
        for (const gshmemi_block *f = a->bins[i]; f; f = f->bin_next) {
            if (!f->free || bin_of(f->size) != i) {
                fprintf(stderr, "alloc: block at %llu in wrong bin %d\n", (unsigned long long)f->off, i);
                return false;
            }
            in_bins++;
        }
    if (in_bins != n_free || used != a->in_use || live != a->n_live || live != a->table_used) {
        fprintf(stderr, "alloc: counts disagree: %llu free blocks, %llu in bins; in_use %llu vs %llu; live %llu/%llu/%llu\n",
                (unsigned long long)n_free, (unsigned long long)in_bins, (unsigned long long)used,
                (unsigned long long)a->in_use, (unsigned long long)live, (unsigned long long)a->n_live,
                (unsigned long long)a->table_used);
        return false;
    }
    return true;
}
