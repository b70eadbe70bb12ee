#!/usr/bin/env bash
# One call on a GPU machine: build (with PMIx when headers are carried in .deps/pmix),
# run the unit tests, the GPU suite and the benchmarks, each with a timeout; logs go to
# $OUT (or ./gpu-run-out). usage: tools/gpu-run.sh [tests|bench|all] [NPES]
set -u
what=${1:-all}
N=${2:-}
OUT=${OUT:-$PWD/gpu-run-out}
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export CUDA_MODULE_LOADING=${CUDA_MODULE_LOADING:-EAGER}
B=build-gpu
echo "== machine =="
nvidia-smi -L; nvidia-smi topo -m 2>/dev/null | head -8

pmix_args=()
if [ -f .deps/pmix/include/pmix.h ]; then
  lib=$(ls /usr/lib/x86_64-linux-gnu/libpmix.so.2 /usr/lib/x86_64-linux-gnu/pmix2/lib/libpmix.so.2 \
        /usr/lib/x86_64-linux-gnu/openmpi/lib/libpmix.so.2 2>/dev/null | head -1)
  if [ -n "$lib" ]; then
    mkdir -p .deps/pmix/lib && ln -sf "$lib" .deps/pmix/lib/libpmix.so
    pmix_args=(-Dpmix_root=$PWD/.deps/pmix)
  else
    echo "no libpmix.so.2 found on this machine: building without PMIx"
  fi
fi

echo "== build =="
t0=$(date +%s)
if [ ! -d $B ]; then
  meson setup $B --buildtype=release "${pmix_args[@]}" >"$OUT/setup.log" 2>&1 || { tail -30 "$OUT/setup.log"; exit 1; }
fi
timeout 900 ninja -C $B >"$OUT/build.log" 2>&1 || { grep -E 'error|Error' -A3 "$OUT/build.log" | head -40; exit 1; }
grep -q 'PMIx bootstrap *: *YES' "$OUT/setup.log" 2>/dev/null && touch $B/.pmix_built
echo "built in $(( $(date +%s) - t0 )) s"
$B/tools/gshmem-info --gpus | sed -n '1,4p;/GPUs/,$p'

if [ "$what" = all ] || [ "$what" = tests ]; then
  echo "== unit tests =="
  timeout 300 meson test -C $B --suite unit --print-errorlogs 2>&1 | tail -12
  echo "== GPU tests =="
  timeout 1500 tests/gpu/run_gpu_tests.sh $B $N 2>&1 | tee "$OUT/gpu-tests.log"
fi
if [ "$what" = all ] || [ "$what" = bench ]; then
  echo "== benchmarks =="
  R="$B/tools/gshmrun -n 2"
  # NVSHMEM's -rdc builds are slow: start them now (CPU only) and run gshmem meanwhile
  NV=$(python3 -c "import nvidia.nvshmem as m; print(list(m.__path__)[0])" 2>/dev/null)
  nvb=(latency bandwidth atomics)
  if [ -n "$NV" ] && [ -f "$NV/include/nvshmem.h" ]; then
    for b in "${nvb[@]}"; do   # no stale binary survives a failed build
      rm -f $B/nv_$b
      timeout 300 nvcc -std=c++17 -O3 -rdc=true -arch=sm_90 -DBENCH_NVSHMEM -I"$NV/include" bench/$b.cu \
        -o $B/nv_$b -L"$NV/lib" -l:libnvshmem_host.so.3 -lnvshmem_device -lcuda >"$OUT/nvshmem-build-$b.log" 2>&1 &
    done
  fi
  timeout 60 $R -t 50 $B/bench/init 2>&1 | tee "$OUT/init.log"
  timeout 200 $R -t 190 $B/bench/latency 2>&1 | tee "$OUT/latency-gshmem.log"
  # the same run without the device-wait deadline: bench_compare.py prints what it costs
  GSHMEM_WAIT_TIMEOUT=0 timeout 120 $R -t 110 $B/bench/latency >"$OUT/latency-gshmem-nodeadline.log" 2>&1 \
    || tail -5 "$OUT/latency-gshmem-nodeadline.log"
  timeout 300 $R -t 290 $B/bench/bandwidth --csv "$OUT/bandwidth-gshmem.csv" 2>&1 | tee "$OUT/bandwidth.log"
  timeout 120 $R -t 110 $B/bench/atomics 2>&1 | tee "$OUT/atomics-gshmem.log"
  echo "== incumbent: NVSHMEM (same GPUs, same run, same benchmark sources) =="
  if [ -n "$NV" ] && [ -f "$NV/include/nvshmem.h" ]; then
    wait
    for b in "${nvb[@]}"; do [ -x $B/nv_$b ] || { echo "nv_$b did not build:"; tail -5 "$OUT/nvshmem-build-$b.log"; }; done
    export LD_LIBRARY_PATH="$NV/lib:${LD_LIBRARY_PATH:-}"
    timeout 200 $R -t 190 $B/nv_latency 2>&1 | tee "$OUT/latency-nvshmem.log"
    timeout 300 $R -t 290 $B/nv_bandwidth --csv "$OUT/bandwidth-nvshmem.csv" 2>&1 | tail -3
    timeout 120 $R -t 110 $B/nv_atomics 2>&1 | tee "$OUT/atomics-nvshmem.log"
  else
    echo "NVSHMEM not found (python3 package nvidia.nvshmem): skipped"
  fi
  echo "== gshmem beside NVSHMEM =="
  python3 tools/bench_compare.py "$OUT"
fi
