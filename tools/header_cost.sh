#!/usr/bin/env bash
# What including gshmem.h costs a user's .cu file (issue 20's measure): a hello kernel compiled
# with and without `#include <gshmem.h>` (a kernel calling gshmem_int_p; a host main calling
# init, malloc, barrier and finalize), alternately, 5 times each; prints each side's times and
# the median difference. No GPU needed. usage: tools/header_cost.sh [INCLUDE_DIR (default include)]
set -eu
inc=$(cd "${1:-$(dirname "$0")/../include}" && pwd)
export PATH=/usr/local/cuda/bin:$PATH
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
cat >"$t/plain.cu" <<'CU'
__global__ void k(int *p) { p[0] = 1; }
int main() { k<<<1, 1>>>(nullptr); return 0; }
CU
cat >"$t/gshmem.cu" <<'CU'
#include <gshmem.h>
__global__ void k(int *p) { gshmem_int_p(p, 1, (gshmem_my_pe() + 1) % gshmem_n_pes()); }
int main() {
    gshmem_init();
    int *p = (int *)gshmem_malloc(4);
    k<<<1, 1>>>(p);
    gshmem_barrier_all();
    gshmem_finalize();
    return 0;
}
CU
for i in 1 2 3 4 5; do
  for v in plain gshmem; do
    s=$(date +%s%N)
    nvcc -std=c++17 -arch=sm_90 -I"$inc" -c "$t/$v.cu" -o "$t/$v.o"
    echo "$v $(( ($(date +%s%N) - s) / 1000000 ))"
  done
done | sort -k1,1 -k2n | awk '{t[$1]=t[$1]" "$2; n[$1]++; v[$1,n[$1]]=$2}
  END {for (k in t) print k " ms:" t[k]; print "median difference: " v["gshmem",3] - v["plain",3] " ms"}'
