#!/usr/bin/env bash
# Proves the NVSHMEM compatibility headers (include/nvshmem-compat) without a GPU: the names file
# is what tools/gen_nvshmem_names.py writes from gshmem's headers today; nvshmem.h + nvshmemx.h
# compile as C and as C++ with -Wall -Wextra -Werror; and NVSHMEM programs (an example, and
# nvshmem_api.cu: the calls NVSHMEM's perftests and typical programs make, host and device)
# compile with nvcc (the example with -rdc=true).
# usage: test_nvshmem_compat.sh NVCC SOURCE_DIR CUDA_INCLUDE_DIR ARCH
set -u
nvcc=$1 src=$2 cudainc=$3 arch=$4
inc="-I$src/include/nvshmem-compat -I$src/include -I$cudainc"
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
pass=0; fail=0
check() {
  local name=$1; shift
  if "$@" >"$w/out" 2>&1; then pass=$((pass + 1)); echo "ok   $name"
  else fail=$((fail + 1)); echo "FAIL $name"; head -30 "$w/out" | sed 's/^/     /'; fi
}
check "nvshmem_names.h is current (tools/gen_nvshmem_names.py --check)" \
  python3 "$src/tools/gen_nvshmem_names.py" "$nvcc" "$src/include" "$arch" --check
check "C: nvshmem.h + nvshmemx.h, -std=c99 -Wall -Wextra -Werror" \
  gcc -std=c99 -Wall -Wextra -Werror -fsyntax-only $inc "$src/tests/consumers/nvshmem/host.c"
check "C++: nvshmem.h + nvshmemx.h, -std=c++17 -Wall -Wextra -Werror" \
  g++ -x c++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only $inc "$src/tests/consumers/nvshmem/host.c"
check "C++11 host code (NVSHMEM's perftests before CUDA 13)" \
  g++ -x c++ -std=c++11 -fsyntax-only $inc "$src/tests/consumers/nvshmem/host.c"
# (tests/consumers/run.sh builds and links the example plain and with -rdc=true from an install)
check "nvcc -rdc=true: an NVSHMEM example" \
  "$nvcc" -std=c++17 -rdc=true -arch=sm_$arch $inc -c "$src/tests/consumers/nvshmem/ring.cu" -o "$w/ring.o"
check "nvcc: the calls of NVSHMEM's perftests (host and device)" \
  "$nvcc" -std=c++17 -arch=sm_$arch $inc -c "$src/tests/unit/nvshmem_api.cu" -o "$w/api.o"
echo "nvshmem_compat: $pass passed, $fail failed"
[ $fail -eq 0 ]
