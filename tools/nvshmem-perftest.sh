#!/usr/bin/env bash
# NVSHMEM's own perftests, unmodified, on gshmem and on NVSHMEM, side by side: builds every
# program of NVSHMEM_SRC/perftest (device and host; pt-to-pt, coll, init; not tile: gshmem has
# no tile API) with plain nvcc against gshmem's installed compatibility layer (no -rdc), and
# again against NVSHMEM itself (-rdc, its device library), runs each under gshmrun -n 2 (and
# -n 4 for the collectives and init, which accept more PEs) with a time limit per run, and
# prints a table: built / ran (started, and ended within the limit) / passed (exit status 0), per program,
# PE count and library. Both libraries take about 10 minutes on one GPU; `gshmem` and then
# `nvshmem` as two calls on the same machine give the same table (the second call shows both
# columns). NVSHMEM's programs run under gshmrun too, through gshmem's NVSHMEM
# bootstrap plugin (NVSHMEM_BOOTSTRAP=plugin): one launcher, one GPU placement, MPS when PEs
# share a GPU.
#
# usage: tools/nvshmem-perftest.sh NVSHMEM_SRC [gshmem|nvshmem|both|cmake]
#   NVSHMEM_SRC  NVSHMEM's sources (its perftest/ and src/include/), e.g. a git archive of
#                NVIDIA/nvshmem at the tag of the NVSHMEM that runs (v3.4.5-0)
#   cmake        instead: configure NVSHMEM's perftest CMake project, unmodified, against gshmem's
#                prefix (-DNVSHMEM_PREFIX=PREFIX -DNVSHMEM_MPI_SUPPORT=OFF), build what builds
#                (make -k) and list the programs built and those that did not (no GPU needed)
# environment (all optional):
#   NVSHMEM_HOME   NVSHMEM's install (include/, lib/libnvshmem_host.so.3, lib/libnvshmem_device.a);
#                  default: the python3 package nvidia.nvshmem (pip nvidia-nvshmem-cu13)
#   NVML_INCLUDE   a directory with nvml.h (the perftests' helper includes it); default: CUDA's
#                  include/, the python3 package nvidia (nvidia-nvml-dev), or .deps/nvml/include
#   BUILD          gshmem's build directory (default build-perftest; its prefix/ is installed into)
#   PERFTEST_ARGS  arguments of every run (default "-n 5 -w 2 -e 64K": 5 timed and 2 warm-up
#                  iterations up to 64 KiB, so the whole table fits a 10-minute lease)
#                  (host/pt-to-pt/stream_latency parses its own options: PERFTEST_ARGS_STREAM_LATENCY,
#                  default "-n 5 -S 65536")
#   PERFTEST_T     seconds each run may take (default 45)
#   PERFTEST_NPS   PE counts for the collectives and init (default "2 4"); pt-to-pt runs on 2
#   PERFTEST_ONLY  a regular expression: only the programs whose path matches
#   OUT            where the table and a tarball of the logs go (default BUILD/nvshmem-perftest-out)
set -u
SRC=${1:?usage: tools/nvshmem-perftest.sh NVSHMEM_SRC [gshmem|nvshmem|both]}
WHICH=${2:-both}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SRC=$(cd "$SRC" && pwd) || exit 2
PT=$SRC/perftest
[ -f "$PT/common/utils.cu" ] || { echo "nvshmem-perftest: $PT/common/utils.cu not found: NVSHMEM_SRC must hold NVSHMEM's sources"; exit 2; }
export PATH=/usr/local/cuda/bin:$PATH
NVCC=$(command -v nvcc) || { echo "nvshmem-perftest: nvcc not found"; exit 2; }
CUDA_HOME=$(cd "$(dirname "$NVCC")/.." && pwd)
BUILD=${BUILD:-build-perftest}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
PREFIX=$BUILD/prefix
OUT=${OUT:-$BUILD/nvshmem-perftest-out}
W=$BUILD/nvshmem-perftest
LOGS=$W/logs   # every build and run log; OUT gets the table and a tarball of these
rm -rf "$LOGS"
mkdir -p "$W" "$LOGS" "$OUT"
ARGS=${PERFTEST_ARGS:--n 5 -w 2 -e 64K}
T=${PERFTEST_T:-45}
NPS=${PERFTEST_NPS:-2 4}
JOBS=$(nproc)
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d .)
ARCH=${ARCH:-90}
# the workplace's rules for shared GPUs (NVLink multicast stays off) and NVSHMEM without NICs
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export CUDA_MODULE_LOADING=${CUDA_MODULE_LOADING:-EAGER}
t_start=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t_start )) s] $*"; }

# ---- the programs -------------------------------------------------------------------------------
mapfile -t PROGS < <(cd "$PT" && find device/pt-to-pt device/coll host/pt-to-pt host/coll host/init \
                       -name '*.cu' -o -name '*.cpp' | sort)
if [ -n "${PERFTEST_ONLY:-}" ]; then
  mapfile -t PROGS < <(printf '%s\n' "${PROGS[@]}" | grep -E "$PERFTEST_ONLY")
fi
stamp "${#PROGS[@]} programs in $PT (tile/ left out: no tile API in gshmem); GPUs: $NGPU (sm_$ARCH)"
name_of() { local p=${1%.*}; echo "${p//\//_}"; }
nps_of() { case $1 in *pt-to-pt/*) echo 2 ;; *) echo "$NPS" ;; esac; }

# ---- nvml.h for the perftests' helper -------------------------------------------------------------
NVML=${NVML_INCLUDE:-}
for d in "$CUDA_HOME/include" \
         "$(python3 -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13", "include"))' 2>/dev/null)" \
         "$ROOT/.deps/nvml/include"; do
  [ -z "$NVML" ] && [ -n "$d" ] && [ -f "$d/nvml.h" ] && NVML=$d
done
[ -n "$NVML" ] || { echo "nvshmem-perftest: nvml.h not found (CUDA's include/, pip nvidia-nvml-dev, or .deps/nvml/include); set NVML_INCLUDE"; exit 2; }

# ---- gshmem, installed (the compatibility layer is part of the install) -------------------------
build_gshmem() {
  stamp "building gshmem into $PREFIX"
  if [ ! -f "$BUILD/build.ninja" ]; then
    meson setup "$BUILD" --buildtype=release -Dgpu_arch="$ARCH" -Dtests=false -Dbench=false \
      -Dexamples=false --prefix="$PREFIX" >"$LOGS/gshmem-setup.log" 2>&1 \
      || { tail -20 "$LOGS/gshmem-setup.log"; return 1; }
  fi
  ninja -C "$BUILD" install >"$LOGS/gshmem-build.log" 2>&1 || { grep -E 'error' -A3 "$LOGS/gshmem-build.log" | head -30; return 1; }
  stamp "gshmem built and installed"
}

# ---- NVSHMEM -------------------------------------------------------------------------------------
NV=${NVSHMEM_HOME:-$(python3 -c "import nvidia.nvshmem as m; print(list(m.__path__)[0])" 2>/dev/null)}
if [ "$WHICH" = both ] || [ "$WHICH" = nvshmem ]; then
  if [ -z "$NV" ] || [ ! -f "$NV/include/nvshmem.h" ] || [ ! -f "$NV/lib/libnvshmem_device.a" ]; then
    echo "nvshmem-perftest: NVSHMEM not found (NVSHMEM_HOME, or the python3 package nvidia.nvshmem): its column is skipped"
    [ "$WHICH" = nvshmem ] && exit 2
    WHICH=gshmem
  fi
fi

# compile LIB PROG: one program against one library (a background job; its log in LOGS)
compile() {
  local lib=$1 prog=$2 n out log
  n=$(name_of "$prog"); out=$W/$lib/$n; log=$LOGS/build-$lib-$n.log
  rm -f "$out"
  if [ "$lib" = gshmem ]; then
    "$NVCC" -std=c++17 -O2 -arch=sm_$ARCH -I"$PT/common" -I"$NVML" \
      -I"$PREFIX/include/gshmem/nvshmem" -I"$PREFIX/include" "$PT/$prog" "$W/gshmem/utils.o" \
      -o "$out" -L"$PREFIX/lib" -lgshmem -L"$CUDA_HOME/lib64/stubs" -lcuda -ldl -Xlinker -rpath,"$PREFIX/lib" >"$log" 2>&1
  else
    "$NVCC" -std=c++17 -O2 -rdc=true -arch=sm_$ARCH -I"$PT/common" -I"$NVML" -I"$NV/include" \
      "$PT/$prog" "$W/nvshmem/utils.o" -o "$out" -L"$NV/lib" -l:libnvshmem_host.so.3 \
      -lnvshmem_device -L"$CUDA_HOME/lib64/stubs" -lcuda -ldl -Xlinker -rpath,"$NV/lib" >"$log" 2>&1
  fi
}
build_lib() {
  local lib=$1 flags
  mkdir -p "$W/$lib"
  if [ "$lib" = gshmem ]; then flags=(-I"$PREFIX/include/gshmem/nvshmem" -I"$PREFIX/include")
  else flags=(-rdc=true -I"$NV/include"); fi
  "$NVCC" -std=c++17 -O2 -arch=sm_$ARCH -I"$PT/common" -I"$NVML" "${flags[@]}" -c "$PT/common/utils.cu" \
    -o "$W/$lib/utils.o" >"$LOGS/build-$lib-utils.log" 2>&1 || { echo "$lib: the perftests' helper (common/utils.cu) did not build:"; head -20 "$LOGS/build-$lib-utils.log"; return 1; }
  local running=0
  for p in "${PROGS[@]}"; do
    compile "$lib" "$p" &
    running=$((running + 1))
    if [ $running -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
  done
  wait
  stamp "$lib: $(ls "$W/$lib" | grep -vc 'utils.o') of ${#PROGS[@]} programs built"
}

# run LIB PROG NP: one run; its result as "rc seconds" in W/LIB/NAME.npNP.rc
run_one() {
  local lib=$1 prog=$2 np=$3 n log bin t0 rc ARGS=$ARGS
  n=$(name_of "$prog"); bin=$W/$lib/$n; log=$LOGS/run-$lib-$n-np$np.log
  [ -x "$bin" ] || return 0
  # programs with options of their own (the common ones are utils.cu's read_args)
  case $n in host_pt-to-pt_stream_latency) ARGS=${PERFTEST_ARGS_STREAM_LATENCY:--n 5 -S 65536} ;; esac
  t0=$(date +%s%N)
  if [ "$lib" = gshmem ]; then
    timeout -k 5 $((T + 10)) "$PREFIX/bin/gshmrun" -n "$np" -t "$T" "$bin" $ARGS >"$log" 2>&1
  else
    NVSHMEM_BOOTSTRAP=plugin NVSHMEM_BOOTSTRAP_PLUGIN="$PREFIX/lib/gshmem/nvshmem_bootstrap_gshmrun.so" \
      NVSHMEM_REMOTE_TRANSPORT=none NVSHMEM_DISABLE_NCCL=1 NVSHMEM_IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=1 \
      LD_LIBRARY_PATH="$NV/lib:${LD_LIBRARY_PATH:-}" \
      timeout -k 5 $((T + 10)) "$PREFIX/bin/gshmrun" -n "$np" -t "$T" "$bin" $ARGS >"$log" 2>&1
  fi
  rc=$?
  echo "$rc $(( ($(date +%s%N) - t0) / 1000000 ))" >"$W/$lib/$n.np$np.rc"
}
run_lib() {
  local lib=$1
  for p in "${PROGS[@]}"; do
    for np in $(nps_of "$p"); do run_one "$lib" "$p" "$np"; done
  done
  stamp "$lib: runs done"
}

# ---- NVSHMEM's perftest CMake project against gshmem's prefix ----------------------------------
if [ "$WHICH" = cmake ]; then
  build_gshmem || exit 1
  command -v cmake >/dev/null || { echo "nvshmem-perftest cmake: cmake not found"; exit 2; }
  C=$W/cmake
  rm -rf "$C"
  mkdir -p "$C"
  stamp "configuring $PT against $PREFIX"
  # the project writes a configured header into its own tree: build from a copy of the sources
  cp -r "$SRC/perftest" "$C/perftest"
  mkdir -p "$C/src/include/non_abi/device/pt-to-pt"
  cp "$SRC/src/include/non_abi/device/pt-to-pt/transfer_device.cuh.in" "$C/src/include/non_abi/device/pt-to-pt/"
  NVSHMEM_PERFTEST_INSTALL=$C/install cmake -S "$C/perftest" -B "$C/build" -DNVSHMEM_PREFIX="$PREFIX" \
    -DNVSHMEM_MPI_SUPPORT=OFF -DCUDA_HOME="$CUDA_HOME" -DCMAKE_CUDA_ARCHITECTURES="$ARCH" \
    -DCMAKE_CUDA_FLAGS="-I$NVML" -DCMAKE_CXX_FLAGS="-I$NVML" \
    -DCMAKE_BUILD_TYPE=Release >"$LOGS/cmake-configure.log" 2>&1 \
    || { tail -30 "$LOGS/cmake-configure.log"; exit 1; }
  stamp "configured; building (make -k -j$JOBS)"
  make -C "$C/build" -k -j"$JOBS" >"$LOGS/cmake-build.log" 2>&1
  mapfile -t targets < <(cd "$C/build" && make help | sed -n 's/^\.\.\. \(perf_[a-z_]*\)$/\1/p' | sort)
  ok=0; bad=()
  for t in "${targets[@]}"; do
    n=${t#perf_device_}; n=${n#perf_host_}
    if find "$C/build" -type f -perm -u+x -name "$n" | grep -q .; then ok=$((ok + 1)); else bad+=("$t"); fi
  done
  {
    echo "NVSHMEM's perftest CMake project against gshmem ($PREFIX): ${#targets[@]} programs, $ok built"
    [ ${#bad[@]} -gt 0 ] && echo "not built: ${bad[*]}"
    grep -E 'error' "$LOGS/cmake-build.log" | grep -v '^make' | sed 's/^/  /' | sort -u | head -20
  } | tee "$OUT/nvshmem-perftest-cmake.txt"
  tar czf "$OUT/perftest-cmake-logs.tar.gz" -C "$W" logs 2>/dev/null
  exit 0
fi

# ---- build (NVSHMEM's builds overlap gshmem's runs) and run ---------------------------------------
build_gshmem || exit 1
# a library run now starts its column afresh; the other's results of an earlier call on this
# machine stay in the table (a lease too short for both runs them in two calls)
[ "$WHICH" != nvshmem ] && rm -f "$W"/gshmem/*.rc
[ "$WHICH" != gshmem ] && rm -f "$W"/nvshmem/*.rc
[ "$WHICH" != nvshmem ] && build_lib gshmem
if [ "$WHICH" = both ]; then build_lib nvshmem >"$LOGS/nvshmem-build-console.log" 2>&1 & nvb=$!; fi
[ "$WHICH" != nvshmem ] && run_lib gshmem
if [ "$WHICH" = both ]; then wait $nvb; cat "$LOGS/nvshmem-build-console.log"; fi
[ "$WHICH" = nvshmem ] && build_lib nvshmem
[ "$WHICH" != gshmem ] && run_lib nvshmem

# ---- the table ----------------------------------------------------------------------------------
# cell LIB NAME NP: "passed 1.2s" / "FAILED(rc) 1.2s" / "TIMEOUT" / "not built" / "-"
cell() {
  local f=$W/$1/$2.np$3.rc rc ms
  [ -d "$W/$1" ] || { echo "-"; return; }
  [ -x "$W/$1/$2" ] || { echo "not built"; return; }
  [ -f "$f" ] || { echo "not run"; return; }
  read -r rc ms <"$f"
  local s=$((ms / 1000)).$(( ms % 1000 / 100 ))s
  case $rc in 0) echo "passed $s" ;; 124|137) echo "TIMEOUT ${T}s" ;; 126|127) echo "NOT STARTED($rc)" ;;
    *) echo "FAILED($rc) $s" ;; esac
}
{
  echo "NVSHMEM perftests ($(basename "$SRC"); args: $ARGS; limit ${T}s a run) on $NGPU GPU(s), sm_$ARCH"
  printf '%-52s %3s  %-18s %-18s\n' program PEs gshmem NVSHMEM
  for p in "${PROGS[@]}"; do
    n=$(name_of "$p")
    for np in $(nps_of "$p"); do
      printf '%-52s %3s  %-18s %-18s\n' "$p" "$np" "$(cell gshmem "$n" "$np")" "$(cell nvshmem "$n" "$np")"
    done
  done
  for lib in gshmem nvshmem; do
    [ -d "$W/$lib" ] || continue
    built=0; runs=0; ran=0; passed=0
    for p in "${PROGS[@]}"; do
      n=$(name_of "$p"); [ -x "$W/$lib/$n" ] && built=$((built + 1))
      for np in $(nps_of "$p"); do
        f=$W/$lib/$n.np$np.rc; [ -f "$f" ] || continue
        runs=$((runs + 1)); read -r rc ms <"$f"
        case $rc in 124|126|127|137) ;; *) ran=$((ran + 1)) ;; esac   # not a timeout, not unstartable
        [ "$rc" = 0 ] && passed=$((passed + 1))
      done
    done
    echo "$lib: built $built of ${#PROGS[@]} programs; runs: $runs, ran $ran, passed $passed"
  done
  echo "logs: $LOGS and $OUT/perftest-logs.tar.gz (run-LIB-PROGRAM-npN.log, build-LIB-PROGRAM.log)"
} | tee "$OUT/nvshmem-perftest.txt"
tar czf "$OUT/perftest-logs.tar.gz" -C "$W" logs 2>/dev/null
stamp "done"
