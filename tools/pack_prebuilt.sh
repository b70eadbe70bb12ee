#!/usr/bin/env bash
# Packs what the GPU suite and the benchmarks run, from a build directory made on a machine
# without a GPU, into DEST with the build's layout, to carry to a GPU machine and run there with
# `GPU_RUN_PREBUILT=DEST tools/gpu-run.sh ...` or `tests/gpu/run_gpu_tests.sh DEST` (no build on
# the lease). The build must match the GPU machine: same -Dgpu_arch, libpmix.so.2 and
# libfabric.so.1 at the same paths (Debian 12 builds run on the Ubuntu 24.04 device image).
# Headers changed since the build? meson 1.0 does not rebuild CUDA objects for them
# (docs/testing.md): build from a fresh directory. About 60 MB.
# usage: tools/pack_prebuilt.sh BUILD_DIR DEST
set -eu
b=${1:?usage: pack_prebuilt.sh BUILD_DIR DEST}
d=${2:?usage: pack_prebuilt.sh BUILD_DIR DEST}
rm -rf "$d"
mkdir -p "$d/src" "$d/tests/gpu" "$d/bench" "$d/tools" "$d/examples"
cp -L "$b/src/libgshmem.so.0" "$d/src/libgshmem.so.0"   # the SONAME, a file: no links to carry
cp "$b/gshmem_build_config.h" "$d/"
for f in "$b"/tests/gpu/* "$b"/bench/* "$b"/examples/*; do
  [ -f "$f" ] && [ -x "$f" ] && cp "$f" "${d}/${f#"$b"/}"
done
cp "$b/tools/gshmrun" "$b/tools/gshmem-info" "$d/tools/"
du -sh "$d"
