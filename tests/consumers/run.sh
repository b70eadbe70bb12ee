#!/usr/bin/env bash
# Downstream use of an installed gshmem, as a new user's project would do it: the install
# layout; pkg-config with gcc (host file) and nvcc (kernel file); CMake find_package(gshmem
# CONFIG); NVSHMEM programs through pkg-config gshmem-nvshmem and the CMake package NVSHMEM
# (plain and -rdc); meson with gshmem as a subproject; the installed gshmem-info on this machine (which
# may have no GPU and no driver). Ends with "consumers: N passed, M failed"; exit 1 if any failed.
# usage: tests/consumers/run.sh PREFIX   (gshmem installed there; the source tree is this one)
set -u
PREFIX=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
ARCH=${GPU_ARCH:-90}
export PATH=/usr/local/cuda/bin:$PATH
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
pass=0; fail=0
# check NAME COMMAND...: runs the command, its output in $W/out
check() {
  local name=$1; shift
  if "$@" >"$W/out" 2>&1; then pass=$((pass + 1)); echo "ok   $name"
  else fail=$((fail + 1)); echo "FAIL $name"; tail -20 "$W/out" | sed 's/^/     /'; fi
}
has() { grep -q -- "$1" "$W/out"; }
runs() { "$@" >"$W/out" 2>&1; }

# ---- install layout --------------------------------------------------------------------------
check "layout: lib/libgshmem.so" test -e "$PREFIX/lib/libgshmem.so"
check "layout: lib/pkgconfig/gshmem.pc" test -f "$PREFIX/lib/pkgconfig/gshmem.pc"
check "layout: lib/cmake/gshmem/gshmem-config.cmake" test -f "$PREFIX/lib/cmake/gshmem/gshmem-config.cmake"
check "layout: include/gshmem.h" test -f "$PREFIX/include/gshmem.h"
check "libgshmem does not link libcuda" bash -c "! readelf -d '$PREFIX/lib/libgshmem.so' | grep -q 'NEEDED.*libcuda\.so'"
check "gshmem-info has an \$ORIGIN rpath" bash -c "readelf -d '$PREFIX/bin/gshmem-info' | grep -q 'R.*PATH.*\\\$ORIGIN/../lib'"

for t in init latency bandwidth atomics collectives; do
  check "perftest: gshmem-perftest-$t --help (no GPU needed)" \
    bash -c "'$PREFIX/bin/gshmem-perftest-$t' --help | grep -q '^usage: '"
done
for e in ring uid_init halo dispatch; do
  check "example: share/gshmem/examples/$e (built) and $e.cu" \
    test -x "$PREFIX/share/gshmem/examples/$e" -a -f "$PREFIX/share/gshmem/examples/$e.cu"
done

# ---- pkg-config: gcc host file, nvcc kernel file -----------------------------------------------
export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig
check "pkg-config: version $(pkg-config --modversion gshmem 2>&1)" \
  test "$(pkg-config --modversion gshmem)" = "$(sed -n "s/^  version: '\(.*\)',/\1/p" "$SRC/meson.build")"
check "pkg-config: gcc links a host file" \
  bash -c "gcc -std=c99 '$SRC/tests/consumers/host.c' -o '$W/host' \$(pkg-config --cflags --libs gshmem)"
check "pkg-config: the host program runs (no driver needed)" \
  bash -c "env -u LD_LIBRARY_PATH '$W/host' | grep -q '^consumer: gshmem [0-9.]*$'"
check "pkg-config: nvcc builds a kernel file" \
  bash -c "nvcc -arch=sm_$ARCH '$SRC/tests/consumers/kernel.cu' -o '$W/kernel' \$(pkg-config --cflags --libs gshmem)"
check "pkg-config: the kernel program loads (no LD_LIBRARY_PATH): runs, or says why it cannot" \
  bash -c "env -u LD_LIBRARY_PATH '$W/kernel' 2>&1 | grep -q 'received\|gshmem.*error'"
if command -v clang >/dev/null; then
  check "pkg-config: clang links a host file" \
    bash -c "clang '$SRC/tests/consumers/host.c' -o '$W/host-clang' \$(pkg-config --cflags --libs gshmem) && '$W/host-clang' | grep -q '^consumer: '"
fi
check "headers: C -Wall -Wextra -Wshadow -Werror" \
  bash -c "gcc -std=c99 -Wall -Wextra -Wshadow -Werror -fsyntax-only \$(pkg-config --cflags gshmem) '$SRC/tests/consumers/host.c'"
check "headers: C++ -Wall -Wextra -Wshadow -Werror" \
  bash -c "g++ -x c++ -std=c++17 -Wall -Wextra -Wshadow -Werror -fsyntax-only \$(pkg-config --cflags gshmem) '$SRC/tests/consumers/host.c'"

# ---- CMake find_package ----------------------------------------------------------------------
if command -v cmake >/dev/null; then
  check "cmake: configure (find_package(gshmem 0.1 CONFIG))" \
    cmake -S "$SRC/tests/consumers/cmake" -B "$W/cmake" -DCMAKE_PREFIX_PATH="$PREFIX" \
      -DCMAKE_CUDA_ARCHITECTURES="$ARCH" -DCMAKE_BUILD_TYPE=Release
  check "cmake: build host (C) and kernel (CUDA) targets" cmake --build "$W/cmake" -j 2
  check "cmake: the host program runs" bash -c "'$W/cmake/host' | grep -q '^consumer: gshmem'"
else
  fail=$((fail + 1)); echo "FAIL cmake: not installed (apt-get install cmake)"
fi

# ---- NVSHMEM programs: pkg-config gshmem-nvshmem and the CMake package NVSHMEM ---------------------
check "layout: include/gshmem/nvshmem/nvshmem.h (not include/nvshmem.h)" \
  bash -c "test -f '$PREFIX/include/gshmem/nvshmem/nvshmem.h' -a -f '$PREFIX/include/gshmem/nvshmem/nvshmemx.h' -a ! -e '$PREFIX/include/nvshmem.h'"
check "layout: lib/cmake/nvshmem/NVSHMEMConfig.cmake" test -f "$PREFIX/lib/cmake/nvshmem/NVSHMEMConfig.cmake"
check "pkg-config gshmem-nvshmem: gcc builds and runs a C file with NVSHMEM's headers" \
  bash -c "gcc -std=c99 -Wall -Wextra -Werror '$SRC/tests/consumers/nvshmem/host.c' -o '$W/nvhost' \$(pkg-config --cflags --libs gshmem-nvshmem) && env -u LD_LIBRARY_PATH '$W/nvhost' | grep -q '^nvshmem consumer: gshmem .*NVSHMEM 3.4 API, status 0$'"
check "pkg-config gshmem-nvshmem: g++ compiles NVSHMEM's headers as C++" \
  bash -c "g++ -x c++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only \$(pkg-config --cflags gshmem-nvshmem) '$SRC/tests/consumers/nvshmem/host.c'"
check "pkg-config gshmem-nvshmem: plain nvcc builds an NVSHMEM program" \
  bash -c "nvcc -arch=sm_$ARCH '$SRC/tests/consumers/nvshmem/ring.cu' -o '$W/nvring' \$(pkg-config --cflags --libs gshmem-nvshmem)"
if command -v cmake >/dev/null; then
  # separable compilation, as NVSHMEM projects build (the plain nvcc build is above)
  check "cmake NVSHMEM package: configure (find_package(NVSHMEM 3.0), CUDA_SEPARABLE_COMPILATION)" \
    cmake -S "$SRC/tests/consumers/nvshmem" -B "$W/nvcmake" -DCMAKE_PREFIX_PATH="$PREFIX" \
      -DCMAKE_CUDA_ARCHITECTURES="$ARCH" -DCMAKE_BUILD_TYPE=Release -DRDC=ON
  check "cmake NVSHMEM package: build on nvshmem::nvshmem_host/_device and nvshmem::nvshmem" \
    cmake --build "$W/nvcmake" -j 2
fi

# ---- meson subproject ------------------------------------------------------------------------
mkdir -p "$W/meson/subprojects"
cp "$SRC/tests/consumers/meson/meson.build" "$W/meson/"
cp "$SRC/tests/consumers/host.c" "$SRC/tests/consumers/kernel.cu" "$W/"
ln -s "$SRC" "$W/meson/subprojects/gshmem"
check "meson: configure with gshmem as a subproject" \
  meson setup "$W/meson/build" "$W/meson" --buildtype=release -Dgshmem:gpu_arch="$ARCH" \
    --force-fallback-for=gshmem
check "meson: build host and kernel (and the subproject's library)" ninja -C "$W/meson/build" -j 2
check "meson: the host program runs" bash -c "'$W/meson/build/host' | grep -q '^consumer: gshmem'"

# ---- the installed gshmem-info ---------------------------------------------------------------
runs env -u LD_LIBRARY_PATH "$PREFIX/bin/gshmem-info"; rc=$?
cp "$W/out" "$W/info"
check "gshmem-info: exit 0 (got $rc)" test $rc -eq 0
check "gshmem-info: prints the build" grep -q '^gshmem [0-9.]* .*' "$W/info"
check "gshmem-info: prints the variables" grep -q '^  GSHMEM_HEAP_MAX ' "$W/info"
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  check "gshmem-info: finds the driver" grep -q '^Driver: NVIDIA driver' "$W/info"
  runs "$PREFIX/bin/gshmem-info" --check; rc=$?
  check "gshmem-info --check: exit 0 on a GPU machine (got $rc)" test $rc -eq 0
else
  check "gshmem-info: says no driver was found" grep -q '^Driver: no NVIDIA driver' "$W/info"
  runs "$PREFIX/bin/gshmem-info" --check; rc=$?; cp "$W/out" "$W/check"
  check "gshmem-info --check: exit 1 without a driver (got $rc)" test $rc -eq 1
  check "gshmem-info --check: gives the reason" grep -q 'cannot run gshmem here: no NVIDIA driver' "$W/check"
fi

echo "consumers: $pass passed, $fail failed"
[ $fail -eq 0 ]
