#!/usr/bin/env bash
# What including gshmem.h costs a user's .cu file: a hello kernel compiled
# with and without `#include <gshmem.h>` (a kernel calling gshmem_int_p; a host main calling
# init, malloc, barrier and finalize), alternately, 5 times each; prints each side's times and
# the median difference, wall clock and CPU (user+sys of nvcc and its children: steadier where
# other jobs share the machine). No GPU needed.
# usage: tools/header_cost.sh [INCLUDE_DIR (default include)]
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
TIMEFORMAT='%3U %3S'   # bash's `time`: CPU seconds of the command and its children
for i in 1 2 3 4 5; do
  for v in plain gshmem; do
    s=$(date +%s%N)
    if ! { time nvcc -std=c++17 -arch=sm_90 -I"$inc" -c "$t/$v.cu" -o "$t/$v.o" 2>"$t/err"; } 2>"$t/cpu"; then
      cat "$t/err" >&2; exit 1
    fi
    echo "$v $(( ($(date +%s%N) - s) / 1000000 )) $(awk '{printf "%d", ($1 + $2) * 1000}' "$t/cpu")"
  done
done >"$t/times"
# sorted values of column $1 (2: wall ms, 3: CPU ms) for variant $2, and their median
list() { awk -v c="$1" -v v="$2" '$1 == v {print $c}' "$t/times" | sort -n | tr '\n' ' '; }
med() { list "$1" "$2" | cut -d' ' -f3; }
for v in plain gshmem; do echo "$v ms: $(list 2 $v)(CPU: $(list 3 $v))"; done
echo "median difference: $(( $(med 2 gshmem) - $(med 2 plain) )) ms (CPU: $(( $(med 3 gshmem) - $(med 3 plain) )) ms)"
