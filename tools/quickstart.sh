#!/usr/bin/env bash
# Installs what is missing (Debian/Ubuntu), builds gshmem in ./build and runs the ring
# example: one PE per GPU, or 2 PEs sharing the GPU of a one-GPU machine.
set -eu
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
command -v nvcc >/dev/null || { echo "quickstart: nvcc not found. Install the CUDA toolkit (12 or newer) first."; exit 1; }
need=()
command -v meson >/dev/null || need+=(meson)
command -v ninja >/dev/null || need+=(ninja-build)
command -v pkg-config >/dev/null || need+=(pkg-config)
pkg-config --exists pmix 2>/dev/null || need+=(libpmix-dev)
command -v mpirun >/dev/null || need+=(openmpi-bin)
if [ ${#need[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null; then
    echo "quickstart: installing ${need[*]}"
    SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -q && $SUDO apt-get install -y -q "${need[@]}" || \
      echo "quickstart: could not install ${need[*]}; continuing with what is there"
  else
    echo "quickstart: please install: ${need[*]}"
  fi
fi
[ -f build/build.ninja ] || meson setup build --buildtype=release
ninja -C build
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "${ngpu:-0}" -lt 1 ]; then
  echo "quickstart: built. No GPU is visible here, so the demo cannot run; on a machine with a"
  echo "GPU run: build/tools/gshmrun -n 2 build/examples/ring"
  exit 0
fi
if [ "$ngpu" -eq 1 ]; then
  echo "quickstart: running the ring demo as 2 PEs sharing this machine's one GPU (gshmrun runs"
  echo "them under CUDA MPS, starting a private MPS daemon for the job if none runs)"
  exec build/tools/gshmrun -n 2 -t 60 build/examples/ring
fi
echo "quickstart: running the ring demo on $ngpu GPUs, one PE each"
build/tools/gshmrun -n "$ngpu" -t 60 build/examples/ring
