#!/usr/bin/env bash
# Installs what is missing (Debian/Ubuntu), builds the library, its tools and the examples in
# ./build for the GPU this machine has (sm_90 where it has none), and runs the ring example:
# one PE per GPU, or 2 PEs sharing the GPU of a one-GPU machine. The tests and benchmarks are
# built afterwards by tests/run.sh (the same build directory, reconfigured).
set -eu
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
command -v nvcc >/dev/null || { echo "quickstart: nvcc not found. Install the CUDA toolkit (12 or newer) first."; exit 1; }
need=()
command -v meson >/dev/null || need+=(meson)
command -v ninja >/dev/null || need+=(ninja-build)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v mpirun >/dev/null || need+=(openmpi-bin)
pkg-config --exists pmix 2>/dev/null || need+=(libpmix-dev)           # mpirun / srun
pkg-config --exists libfabric 2>/dev/null || need+=(libfabric-dev)    # jobs across nodes
pkg-config --exists libibverbs 2>/dev/null || need+=(libibverbs-dev)  # rdma-core
if [ ${#need[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null; then
    echo "quickstart: installing ${need[*]}"
    SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null &&
      $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null ||
      echo "quickstart: could not install ${need[*]}; continuing with what is there"
  else
    echo "quickstart: please install: ${need[*]}"
  fi
fi
# the GPU's compute capability (9.0 -> 90), sm_90 without one
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '. ' || true)
case "$arch" in ''|*[!0-9]*) arch=90 ;; esac
opts=(-Dgpu_arch="$arch" -Dtests=false -Dbench=false -Dexamples=true)
if [ -f build/build.ninja ]; then meson configure build "${opts[@]}" >/dev/null
else meson setup build --buildtype=release "${opts[@]}" >/dev/null; fi
echo "quickstart: building for sm_$arch in ./build ($(nproc) cores)"
ninja -C build
build/tools/gshmem-info | sed -n '1,/^$/p'
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
