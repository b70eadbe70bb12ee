#!/usr/bin/env bash
# bench_collectives.py at 2 and at 4 GPUs (one process per GPU, started by torchrun), each run
# under a timeout; the package runs from the checkout over BUILD_DIR's libgshmem. Tables go to
# the console and to $OUT/python-bench/np<N>.log, results to np<N>.json. 280 s per run keeps
# both under 10 min.
# usage: python/benchmarks/run_bench.sh BUILD_DIR [PYTHON] [NPES...]     (NPES default: 2 4)
set -u
cd "$(dirname "$0")/../.."
B=$(cd "${1:?usage: python/benchmarks/run_bench.sh BUILD_DIR [PYTHON] [NPES...]}" && pwd)
PY=${2:-python3}
shift $(( $# < 2 ? $# : 2 ))
NPS=${*:-2 4}
export GSHMEMPY_LIB=$B/src/libgshmem.so
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export GSHMEM_WAIT_TIMEOUT=${GSHMEM_WAIT_TIMEOUT:-60}
D=${OUT:-/tmp}/python-bench
mkdir -p "$D"
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
rc=0
for np in $NPS; do
  if [ "$np" -gt "$NGPU" ]; then
    echo "np=$np: skipped: this machine has $NGPU GPUs (NCCL needs one GPU per process)"
    continue
  fi
  echo "== bench_collectives at $np GPUs =="
  timeout -k 10 280 "$PY" -m torch.distributed.run --standalone --nproc-per-node "$np" \
    python/benchmarks/bench_collectives.py --out "$D/np$np.json" 2>&1 | tee "$D/np$np.log"
  st=${PIPESTATUS[0]}
  [ "$st" -eq 0 ] || { echo "np=$np: exit $st"; rc=1; }
done
exit $rc
