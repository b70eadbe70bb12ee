#!/usr/bin/env bash
# One call on a GPU machine: build (with PMIx when headers are carried in .deps/pmix),
# run the unit tests, the GPU suite and the benchmarks, each with a timeout; logs go to
# $OUT (or ./gpu-run-out). usage: tools/gpu-run.sh [tests|bench|coll|remote|all] [NPES]
# (coll: the build and the collectives benchmark alone, with its incumbents)
# NPES (default: every GPU of the machine) is used by the GPU tests, init and collectives;
# latency, bandwidth and atomics measure PE 0 <-> PE 1 and always run on 2 PEs.
# Logs, CSVs and the build's output go to $OUT/logs/; at the end they are packed into
# $OUT/logs.tar.gz beside summary.csv and summary.json (the device machine returns at most 8
# files; GPU_RUN_BUNDLE=0 leaves $OUT/logs/ as it is). Keep the console with
# `tools/gpu-run.sh bench 2>&1 | tee $OUT/console.log`. Charts: in logs/plots when matplotlib is
# installed on the machine; otherwise afterwards, anywhere: `tools/bench_compare.py --plots DIR`
# (DIR holding the fetched summary.json).
set -u
what=${1:-all}
N=${2:-}
OUT=${OUT:-$PWD/gpu-run-out}
L=$OUT/logs
mkdir -p "$L"
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
NP=${N:-$NGPU}
[ "$NP" -ge 2 ] 2>/dev/null || NP=2
# one GPU: the benchmarks run at 2 and at 4 PEs sharing it (gshmrun runs them under MPS); NVSHMEM
# runs in its "full MPG" mode, the only one where its on-stream reductions run
NPS="$NP"; [ "$NGPU" -eq 1 ] && [ -z "$N" ] && NPS="2 4"
export NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=1
# one GPU: collectives up to 16 MiB (PEs sharing a GPU move every byte through its one HBM)
COLL_ARGS=${COLL_ARGS:-}; [ "$NGPU" -eq 1 ] && [ -z "$COLL_ARGS" ] && COLL_ARGS="--max 16777216"
bundle() {
  [ -f "$L/summary.csv" ] && cp "$L/summary.csv" "$L/summary.json" "$OUT/" 2>/dev/null
  for d in "$L"/np*; do [ -f "$d/summary.json" ] && cp "$d/summary.json" "$OUT/summary-$(basename "$d").json"; done
  [ "${GPU_RUN_BUNDLE:-1}" = 0 ] && return
  tar czf "$OUT/logs.tar.gz" -C "$OUT" logs && rm -rf "$L"
}
trap bundle EXIT
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export CUDA_MODULE_LOADING=${CUDA_MODULE_LOADING:-EAGER}
B=build-gpu
# GPU_RUN_PREBUILT=DIR: run DIR's binaries (tools/pack_prebuilt.sh made it on a machine without a
# GPU; carry DIR) and build nothing here: the lease's ~190 s of building are saved
[ -n "${GPU_RUN_PREBUILT:-}" ] && B=$GPU_RUN_PREBUILT
BA=$(cd "$(dirname "$B")" 2>/dev/null && echo "$PWD/$(basename "$B")" || echo "$PWD/$B")   # absolute, for rpaths
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

# libfabric headers carried in .deps/fabric (the image has the runtime library only)
if [ -f .deps/fabric/include/rdma/fabric.h ]; then
  lib=$(ls /usr/lib/x86_64-linux-gnu/libfabric.so.1 2>/dev/null | head -1)
  if [ -n "$lib" ]; then
    mkdir -p .deps/fabric/lib && ln -sf "$lib" .deps/fabric/lib/libfabric.so
    pmix_args+=(-Dlibfabric_root=$PWD/.deps/fabric)
  else
    echo "no libfabric.so.1 on this machine: building without the proxy transport"
  fi
fi

# rdma-core headers carried in .deps/ibverbs (apt-get download libibverbs-dev; dpkg -x; its
# usr/include there): the ibgda transport's mlx5 setups build against the runtime libraries
if [ -f .deps/ibverbs/include/infiniband/mlx5dv.h ]; then
  v=$(ls /usr/lib/x86_64-linux-gnu/libibverbs.so.1 2>/dev/null | head -1)
  m=$(ls /usr/lib/x86_64-linux-gnu/libmlx5.so.1 2>/dev/null | head -1)
  if [ -n "$v" ] && [ -n "$m" ]; then
    mkdir -p .deps/ibverbs/lib && ln -sf "$v" .deps/ibverbs/lib/libibverbs.so && ln -sf "$m" .deps/ibverbs/lib/libmlx5.so
    pmix_args+=(-Dibverbs_root=$PWD/.deps/ibverbs)
  else
    echo "no libibverbs.so.1 / libmlx5.so.1 on this machine: building ibgda without its mlx5 setups (the software NIC stays)"
  fi
fi

# device code for this machine's GPUs only (the default list covers several generations)
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d .)
[ -n "$cc" ] && pmix_args+=(-Dgpu_arch=$cc)

echo "== build =="
t0=$(date +%s)
if [ -n "${GPU_RUN_PREBUILT:-}" ]; then
  echo "prebuilt: $B (nothing built here; no unit tests: they need the build directory)"
  SKIP_UNIT=1
  ln -sf libgshmem.so.0 "$B/src/libgshmem.so"   # for the NCCL build of the collectives benchmark
else
if [ ! -d $B ]; then
  meson setup $B --buildtype=release "${pmix_args[@]}" >"$L/setup.log" 2>&1 || { tail -30 "$L/setup.log"; exit 1; }
fi
timeout 900 ninja -C $B >"$L/build.log" 2>&1 || { grep -E 'error|Error' -A3 "$L/build.log" | head -40; exit 1; }
echo "built in $(( $(date +%s) - t0 )) s"
fi
$B/tools/gshmem-info --gpus | sed -n '1,4p;/GPUs/,$p'

if [ "$what" = all ] || [ "$what" = tests ]; then
  if [ -z "${SKIP_UNIT:-}" ]; then   # SKIP_UNIT=1 (with GPU_TESTS=REGEX): a focused rerun
    echo "== unit tests =="
    timeout 300 meson test -C $B --suite unit --print-errorlogs 2>&1 | tail -12
  fi
  echo "== GPU tests =="
  timeout 1500 tests/gpu/run_gpu_tests.sh $B $N 2>&1 | tee "$L/gpu-tests.log"
fi
if [ "$what" = all ] || [ "$what" = bench ] || [ "$what" = coll ]; then
  p2p=1; [ "$what" = coll ] && p2p=
  echo "== benchmarks on ${NPS// / and } PEs (latency between PE 0 and 1${p2p:+; bandwidth, atomics on 2}) =="
  # Incumbents: NVSHMEM (python3 package nvidia.nvshmem, or NVSHMEM_HOME) builds the same
  # sources with -DBENCH_NVSHMEM; NCCL (nvidia.nccl, or NCCL_HOME) is timed inside the gshmem
  # collectives run (-DBENCH_NCCL). Their builds are slow (-rdc): start them now (CPU only)
  # and run gshmem meanwhile.
  NV=${NVSHMEM_HOME:-$(python3 -c "import nvidia.nvshmem as m; print(list(m.__path__)[0])" 2>/dev/null)}
  NC=${NCCL_HOME:-$(python3 -c "import nvidia.nccl as m; print(list(m.__path__)[0])" 2>/dev/null)}
  [ -n "$NV" ] && [ -f "$NV/include/nvshmem.h" ] || NV=
  [ -n "$NC" ] && [ -f "$NC/include/nccl.h" ] && [ -f "$NC/lib/libnccl.so.2" ] || NC=
  nc_skip=; [ "$NGPU" -eq 1 ] && [ -n "$NC" ] && { NC=; nc_skip=1; }
  nv_ver=$( [ -n "$NV" ] && sed -n 's/^#define NVSHMEM_VENDOR_\(MAJOR\|MINOR\|PATCH\)_VERSION \([0-9]*\).*/\2/p' \
            "$NV"/include/non_abi/nvshmem_version.h 2>/dev/null | paste -sd. )
  nc_ver=$( [ -n "$NC" ] && sed -n 's/^#define NCCL_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\).*/\2/p' "$NC/include/nccl.h" | paste -sd. )
  nv_msg="NVSHMEM ${nv_ver:-?} found ($NV)"; [ -n "$NV" ] || nv_msg="NVSHMEM not found (python3 package nvidia.nvshmem or NVSHMEM_HOME): skipped"
  nc_msg="NCCL ${nc_ver:-?} found ($NC)"; [ -n "$NC" ] || nc_msg="NCCL not found (python3 package nvidia.nccl or NCCL_HOME): skipped"
  [ -n "$nc_skip" ] && nc_msg="NCCL skipped: it refuses two ranks on one GPU"
  echo "incumbents: $nv_msg; $nc_msg"
  nvb=(collectives); [ -n "$p2p" ] && nvb=(latency bandwidth atomics collectives)
  if [ -n "$NV" ]; then
    for b in "${nvb[@]}"; do   # no stale binary survives a failed build
      rm -f $B/nv_$b
      timeout 300 nvcc -std=c++17 -O3 -rdc=true -arch=sm_90 -DBENCH_NVSHMEM -I"$NV/include" bench/$b.cu \
        -o $B/nv_$b -L"$NV/lib" -l:libnvshmem_host.so.3 -lnvshmem_device -lcuda >"$L/nvshmem-build-$b.log" 2>&1 &
    done
  fi
  if [ -n "$NC" ]; then   # collectives once more, against this libgshmem and NCCL
    rm -f $B/nccl_collectives
    timeout 300 nvcc -std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -DBENCH_NCCL -Iinclude -I"$NC/include" \
      bench/collectives.cu -o $B/nccl_collectives -L$B/src -lgshmem -Xlinker -rpath,"$BA/src" \
      -L"$NC/lib" -l:libnccl.so.2 -Xlinker -rpath,"$NC/lib" >"$L/nccl-build-collectives.log" 2>&1 &
  fi
  # bench_at NP DIR: init and collectives on NP PEs, latency (+ bandwidth and atomics when
  # NP is 2) between PE 0 and PE 1 with the others alive, gshmem then NVSHMEM, logs in DIR
  bench_at() {
  local NP=$1 D=$2
  mkdir -p "$D"
  RN="$B/tools/gshmrun -n $NP"
  R="$RN"
  timeout 60 $RN -t 50 $B/bench/init 2>&1 | tee "$D/init.log"
  if [ -n "$p2p" ]; then
    timeout 200 $R -t 190 $B/bench/latency 2>&1 | tee "$D/latency-gshmem.log"
    # the same run without the device-wait deadline: bench_compare.py prints what it costs
    [ "$NGPU" -gt 1 ] && { GSHMEM_WAIT_TIMEOUT=0 timeout 120 $R -t 110 $B/bench/latency >"$D/latency-gshmem-nodeadline.log" 2>&1 \
      || tail -5 "$D/latency-gshmem-nodeadline.log"; }
    if [ "$NP" -eq 2 ]; then
      timeout 300 $R -t 290 $B/bench/bandwidth --csv "$D/bandwidth-gshmem.csv" 2>&1 | tee "$D/bandwidth.log"
      timeout 120 $R -t 110 $B/bench/atomics 2>&1 | tee "$D/atomics-gshmem.log"
    fi
  fi
  echo "== collectives on $NP PEs: gshmem${NC:+ and NCCL (same job, same GPUs)} =="
  wait   # the NCCL build (and the NVSHMEM builds)
  coll=$B/bench/collectives
  if [ -n "$NC" ]; then
    if [ -x $B/nccl_collectives ]; then coll=$B/nccl_collectives
    else echo "NCCL build of collectives failed (gshmem alone):"; tail -5 "$L/nccl-build-collectives.log"; fi
  fi
  t0=$(date +%s)
  timeout 160 $RN -t 150 $coll $COLL_ARGS --csv "$D/collectives-gshmem.csv" 2>&1 | tee "$D/collectives-gshmem.log"
  echo "collectives (gshmem${NC:+, NCCL}): $(( $(date +%s) - t0 )) s"
  echo "== incumbent: NVSHMEM (same GPUs, same run, same benchmark sources) =="
  if [ -n "$NV" ]; then
    for b in "${nvb[@]}"; do [ -x $B/nv_$b ] || { echo "nv_$b did not build:"; tail -5 "$L/nvshmem-build-$b.log"; }; done
    export LD_LIBRARY_PATH="$NV/lib:${LD_LIBRARY_PATH:-}"
    if [ -n "$p2p" ]; then
      timeout 200 $R -t 190 $B/nv_latency 2>&1 | tee "$D/latency-nvshmem.log"
      if [ "$NP" -eq 2 ]; then
        timeout 300 $R -t 290 $B/nv_bandwidth --csv "$D/bandwidth-nvshmem.csv" 2>&1 | tail -3
        timeout 120 $R -t 110 $B/nv_atomics 2>&1 | tee "$D/atomics-nvshmem.log"
      fi
    fi
    # NVSHMEM's own collectives: with libnccl.so.2 in reach NVSHMEM would hand its on-stream
    # collectives to NCCL (timed above already) unless NVSHMEM_DISABLE_NCCL=1. Heap: 2 x 256 MiB
    # of buffers plus NVSHMEM's collective scratch.
    t0=$(date +%s)
    NVSHMEM_DISABLE_NCCL=1 NVSHMEM_SYMMETRIC_SIZE=${NVSHMEM_SYMMETRIC_SIZE:-2G} timeout 160 $RN -t 150 \
      $B/nv_collectives $COLL_ARGS --csv "$D/collectives-nvshmem.csv" 2>&1 | tee "$D/collectives-nvshmem.log"
    echo "collectives (NVSHMEM): $(( $(date +%s) - t0 )) s"
  else
    echo "NVSHMEM not found: skipped"
  fi
  }
  for np in $NPS; do
    D=$L; [ "$NPS" != "$NP" ] && D=$L/np$np
    echo "== $np PEs =="
    bench_at "$np" "$D"
    echo "== gshmem beside the incumbents ($np PEs) =="
    python3 tools/bench_compare.py "$D"
  done
  # the plots, where matplotlib is installed (else afterwards, anywhere, from summary.json)
  if python3 -c "import matplotlib" 2>/dev/null; then python3 tools/bench_compare.py --plots "$L/plots" "$D/summary.json"
  else echo "matplotlib not installed here: plots skipped (tools/bench_compare.py --plots DIR summary.json)"; fi
fi
if [ "$what" = all ] || [ "$what" = remote ]; then
  # Remote: 2 PEs as 2 nodes of this one machine (GSHMEM_NODES): every byte between them takes
  # the proxy transport (tcp;ofi_rxm over loopback, GPU memory staged), beside raw libfabric
  # between two processes on the same provider and interface (host memory).
  # REMOTE_PARTS picks the parts (default all, in this order); REMOTE_BW_ARGS the bandwidth sizes
  # (small transfers are one descriptor each: 1 KiB .. 64 KiB take minutes at tcp's op rate)
  parts=${REMOTE_PARTS:-fabric atomics bandwidth split coll latency}
  # (the 132-block and thread/warp columns post thousands of small descriptors: through the proxy
  # a 1 MiB trial of them takes minutes)
  has() { [[ " $parts " == *" $1 "* ]]; }
  echo "== remote: 2 PEs as 2 nodes on one GPU (proxy, tcp;ofi_rxm on lo) beside raw libfabric ($parts) =="
  if [ -x $B/bench/fabric_baseline ]; then
    export GSHMEM_FABRIC_IFACE=lo GSHMEM_FABRIC_PROVIDER='tcp;ofi_rxm'
    has fabric && timeout 120 $B/bench/fabric_baseline -p 'tcp;ofi_rxm' -i lo 2>&1 | tee "$L/remote-fabric.log"
    # the rates first (atomics, bandwidth), then the latencies
    has atomics && timeout 120 $B/tools/gshmrun -n 2 --nodes 2 -t 110 $B/bench/atomics 2>&1 | tee "$L/remote-atomics.log"
    has bandwidth && timeout 240 $B/tools/gshmrun -n 2 --nodes 2 -t 230 $B/bench/bandwidth \
      ${REMOTE_BW_ARGS:---min-size 64K --max-size 16M --only put1,put8,get1,get8} --csv "$L/remote-bandwidth.csv" 2>&1 | tee "$L/remote-bandwidth.log"
    # the time split of p alone: the proxies' counters (GSHMEM_DEBUG=1 prints them at finalize)
    # and the GPU <-> proxy round trip with nothing on the wire (test_channel)
    has split && GSHMEM_DEBUG=1 timeout 100 $B/tools/gshmrun -n 2 --nodes 2 -t 90 $B/bench/latency --iters 200 --p-only \
      2>&1 | grep -E "one-way|requests sent|CUDA calls" | tee "$L/remote-split.log"
    has split && [ -x $B/tests/gpu/test_channel ] && timeout 100 $B/tests/gpu/test_channel 2>&1 | grep -E "round trip|drain" \
      | tee -a "$L/remote-split.log"
    # collectives across nodes: 4 PEs as 2 nodes x 2 (WORLD spans them), the link's put
    # bandwidth in the same job
    has coll && timeout 200 $B/tools/gshmrun -n 4 --nodes 2 -t 190 $B/bench/collectives --max 16M \
      --csv "$L/remote-collectives.csv" 2>&1 | tee "$L/remote-collectives.log"
    has latency && timeout 200 $B/tools/gshmrun -n 2 --nodes 2 -t 190 $B/bench/latency --iters 200 2>&1 | tee "$L/remote-latency.log"
    unset GSHMEM_FABRIC_IFACE GSHMEM_FABRIC_PROVIDER
  else
    echo "no fabric_baseline: this build has no libfabric"
  fi
fi
