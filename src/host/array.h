/* Arrays that grow by doubling, for the tables the library appends to (heap chunks, mapped
 * peer chunks, device-state updaters, partly received operations). */
#ifndef GSHMEMI_ARRAY_H
#define GSHMEMI_ARRAY_H

#include <stddef.h>
#include <stdlib.h>

/* Room for element n of `arr` (*cap elements of elem bytes): `arr` itself when n < *cap, else
 * the array reallocated to twice *cap (`first` when empty) with *cap updated; NULL when out of
 * memory (arr and *cap untouched). */
static inline void *gshmemi_grow(void *arr, int n, int *cap, size_t elem, int first) {
    if (n < *cap) return arr;
    int c = *cap ? 2 * *cap : first;
    void *p = realloc(arr, (size_t)c * elem);
    if (p) *cap = c;
    return p;
}

#endif
