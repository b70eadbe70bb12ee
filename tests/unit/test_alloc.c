/* Proves the heap's offset allocator: live blocks never overlap and honour alignment; bad
 * and double frees are refused without damage; freeing everything coalesces back to one
 * block; `need` says exactly how much growth makes a failed request fit; the same call
 * sequence gives the same offsets (determinism across PEs); churn does not fragment badly.
 * Checked against a reference model after every step. Seed: argv[1] or the clock. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"

#include "unit.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

typedef struct { uint64_t off, size; } live_t;

static bool overlaps(const live_t *l, int n, uint64_t off, uint64_t size) {
    for (int i = 0; i < n; i++)
        if (off < l[i].off + l[i].size && l[i].off < off + size) return true;
    return false;
}

static void basic(void) {
    gshmemi_alloc a;
    gshmemi_alloc_init(&a);
    uint64_t off, need = 0;
    EXPECT(!gshmemi_alloc_alloc(&a, 100, 1, &off, &need) && need == 256,
           "empty allocator: need %llu, expected 256", (unsigned long long)need);
    EXPECT(gshmemi_alloc_grow(&a, 1 << 20), "grow failed");
    EXPECT(gshmemi_alloc_alloc(&a, 100, 1, &off, NULL) && off == 0, "first alloc at %llu", (unsigned long long)off);
    EXPECT(gshmemi_alloc_size(&a, 0) == 256, "size rounds to 256, got %llu", (unsigned long long)gshmemi_alloc_size(&a, 0));
    EXPECT(!gshmemi_alloc_free(&a, 128), "free of a non-start offset accepted");
    EXPECT(!gshmemi_alloc_free(&a, 4096), "free of a free offset accepted");
    EXPECT(gshmemi_alloc_free(&a, 0), "free failed");
    EXPECT(!gshmemi_alloc_free(&a, 0), "double free accepted");
    EXPECT(gshmemi_alloc_check(&a), "inconsistent after basic");
    EXPECT(gshmemi_alloc_largest_free(&a) == 1 << 20, "not coalesced: largest %llu",
           (unsigned long long)gshmemi_alloc_largest_free(&a));
    gshmemi_alloc_destroy(&a);
}

static void alignment(void) {
    gshmemi_alloc a;
    gshmemi_alloc_init(&a);
    gshmemi_alloc_grow(&a, 8ull << 30);
    uint64_t off;
    gshmemi_alloc_alloc(&a, 300, 1, &off, NULL);   /* knock the start off alignment */
    for (int sh = 0; sh <= 30; sh++) {
        bool ok = gshmemi_alloc_alloc(&a, 1000, 1ull << sh, &off, NULL);
        EXPECT(ok && off % (1ull << sh) == 0 && off % 256 == 0, "align 2^%d gave %llu", sh, (unsigned long long)off);
    }
    EXPECT(gshmemi_alloc_check(&a), "inconsistent after alignment");
    gshmemi_alloc_destroy(&a);
}

static void need_and_grow(void) {
    gshmemi_alloc a;
    gshmemi_alloc_init(&a);
    gshmemi_alloc_grow(&a, 1 << 20);
    uint64_t off, need = 0;
    gshmemi_alloc_alloc(&a, 1000, 1, &off, NULL);
    EXPECT(!gshmemi_alloc_alloc(&a, 4 << 20, 1 << 20, &off, &need), "too large fits");
    EXPECT(gshmemi_alloc_grow(&a, a.limit + need), "grow by need failed");
    EXPECT(gshmemi_alloc_alloc(&a, 4 << 20, 1 << 20, &off, NULL) && off % (1 << 20) == 0,
           "after growing by need=%llu the request still fails", (unsigned long long)need);
    EXPECT(gshmemi_alloc_check(&a), "inconsistent after need");
    gshmemi_alloc_destroy(&a);
}

/* Random alloc/free/grow against the model; returns a checksum of the offsets handed out. */
static uint64_t churn(uint64_t seed, int steps, uint64_t limit, bool check_each, bool grow,
                      int *fails, uint64_t *final_largest) {
    enum { N = 512 };
    live_t live[N];
    int n = 0;
    gshmemi_alloc a;
    gshmemi_alloc_init(&a);
    gshmemi_alloc_grow(&a, limit);
    rng = seed | 1;
    uint64_t sum = 0;
    *fails = 0;
    for (int s = 0; s < steps; s++) {
        uint64_t r = rnd();
        if (n > 0 && (r % 2 == 0 || n == N)) {
            int k = (int)(rnd() % (uint64_t)n);
            EXPECT(gshmemi_alloc_free(&a, live[k].off), "free of live %llu refused", (unsigned long long)live[k].off);
            live[k] = live[--n];
        } else {
            uint64_t size = 1 + rnd() % (256ull << (rnd() % 15));
            uint64_t align = 1ull << (rnd() % 14);
            uint64_t off, need;
            if (gshmemi_alloc_alloc(&a, size, align, &off, &need)) {
                EXPECT(off % align == 0 && off + size <= a.limit, "bad block %llu+%llu", (unsigned long long)off, (unsigned long long)size);
                EXPECT(!overlaps(live, n, off, size), "overlap at %llu", (unsigned long long)off);
                live[n++] = (live_t){off, size};
                sum = sum * 31 + off;
            } else if (grow) {
                gshmemi_alloc_grow(&a, a.limit + need);
                sum = sum * 31 + a.limit;
            } else {
                (*fails)++;
            }
        }
        if (check_each && !gshmemi_alloc_check(&a)) {
            EXPECT(false, "invariants broken at step %d", s);
            break;
        }
    }
    while (n > 0) gshmemi_alloc_free(&a, live[--n].off);
    EXPECT(gshmemi_alloc_check(&a), "inconsistent after churn");
    *final_largest = gshmemi_alloc_largest_free(&a);
    EXPECT(*final_largest == a.limit && a.in_use == 0, "after freeing all: largest %llu of %llu, in_use %llu",
           (unsigned long long)*final_largest, (unsigned long long)a.limit, (unsigned long long)a.in_use);
    gshmemi_alloc_destroy(&a);
    return sum;
}

int main(int argc, char **argv) {
    uint64_t seed = argc > 1 ? strtoull(argv[1], 0, 0) : (uint64_t)time(NULL);
    printf("alloc: seed %llu\n", (unsigned long long)seed);
    basic();
    alignment();
    need_and_grow();
    int f1, f2, f3;
    uint64_t l1, l2, l3;
    churn(seed, 3000, 64ull << 20, true, false, &f1, &l1);
    uint64_t s1 = churn(seed + 1, 100000, 0, false, true, &f2, &l2);
    uint64_t s2 = churn(seed + 1, 100000, 0, false, true, &f2, &l2);
    EXPECT(s1 == s2, "same sequence, different offsets: %llx vs %llx", (unsigned long long)s1, (unsigned long long)s2);
    /* fragmentation: live data averages ~150 MiB (256 live blocks of mean ~0.6 MiB) in a
     * 1 GiB range, so a sound allocator almost never fails a request */
    churn(seed + 2, 200000, 1ull << 30, false, false, &f3, &l3);
    EXPECT(f3 < 200, "fragmentation: %d of ~100000 requests failed in a 1 GiB range", f3);
    printf("alloc: churn in 1 GiB: %d failed requests\n", f3);
    printf("alloc: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
