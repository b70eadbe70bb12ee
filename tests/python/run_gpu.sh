#!/usr/bin/env bash
# The Python package's tests on a GPU machine, each step under a timeout: the CPU tests, the GPU
# tests (tests/python/test_gpu.py, one pytest per PE) under gshmrun at 2 and at 4 PEs (PEs share
# GPUs under CUDA MPS where there are fewer GPUs), and the Python examples at 2 PEs. The package
# runs from the checkout (PYTHONPATH=python) over BUILD_DIR's libgshmem. Ends with one line:
#   python tests: P passed, F failed (cpu 47/0, np2 75/0, np4 75/0, examples 2/0)
# usage: tests/python/run_gpu.sh BUILD_DIR [PYTHON]       (PE counts: PY_NPES, default "2 4")
# The timeouts (60 s CPU, 180 s per PE count, 60 s per example) keep a whole run under 10 min.
# PYTHON: an interpreter with torch (and cupy for the cupy cases and the MoE example). Without
# pytest there, wheels of pytest in ./.whl are installed into a scratch directory
# (`pip download -d .whl pytest` on a machine with network).
set -u
cd "$(dirname "$0")/../.."
B=${1:?usage: tests/python/run_gpu.sh BUILD_DIR [PYTHON]}
PY=${2:-python3}
B=$(cd "$B" && pwd)
export GSHMEMPY_LIB=$B/src/libgshmem.so
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
export PATH=/usr/local/cuda/bin:$PATH
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export CUDA_MODULE_LOADING=${CUDA_MODULE_LOADING:-EAGER}
# a lost peer or a mismatched collective fails in 30 s, not the default 120
export GSHMEM_WAIT_TIMEOUT=${GSHMEM_WAIT_TIMEOUT:-30}
export GSHMEMPY_GPU_TESTS=1          # test_gpu.py: a failing init is a failure, not a skip
LOGS=${OUT:-/tmp}/python-tests
mkdir -p "$LOGS"
RUN="$B/tools/gshmrun"

if ! "$PY" -c 'import pytest' 2>/dev/null; then
  if ls .whl/pytest-*.whl >/dev/null 2>&1; then
    "$PY" -m pip install -q --no-index --find-links .whl --target "$LOGS/site" pytest ||
      { echo "python tests: 0 passed, 1 failed (pytest: install from .whl failed)"; exit 1; }
    export PYTHONPATH=$PYTHONPATH:$LOGS/site
  else
    echo "python tests: 0 passed, 1 failed (no pytest for $PY: carry its wheels in .whl/)"
    exit 1
  fi
fi

pass=0 fail=0 parts=()
# pytest's "N passed, M failed" (one process)
count_pytest() {
  local log=$1 p f e
  p=$(grep -Eo '[0-9]+ passed' "$log" | tail -1 | cut -d' ' -f1)
  f=$(grep -Eo '[0-9]+ failed' "$log" | tail -1 | cut -d' ' -f1)
  e=$(grep -Eo '[0-9]+ errors?' "$log" | tail -1 | cut -d' ' -f1)
  echo "${p:-0} $(( ${f:-0} + ${e:-0} ))"
}

echo "== python: CPU tests =="
timeout -k 5 60 "$PY" -m pytest -q -p no:cacheprovider tests/python/test_cpu.py \
  >"$LOGS/cpu.log" 2>&1
rc=$?
read -r p f < <(count_pytest "$LOGS/cpu.log")
[ $rc -ne 0 ] && [ "$f" -eq 0 ] && f=1
tail -3 "$LOGS/cpu.log"
pass=$((pass + p)); fail=$((fail + f)); parts+=("cpu $p/$f")

# one pytest per PE: a test passes when it passed on every PE
for np in ${PY_NPES:-2 4}; do
  echo "== python: GPU tests at $np PEs =="
  log=$LOGS/gpu-np$np.log
  timeout -k 10 180 "$RUN" -n "$np" -t 170 "$PY" -m pytest -q -p no:cacheprovider \
    -o faulthandler_timeout=120 tests/python/test_gpu.py >"$log" 2>&1
  rc=$?
  lines=$(grep -E 'gshmem-pytest PE [0-9]+ of' "$log")
  echo "${lines:-no per-PE summary (exit $rc)}"
  got=$(printf '%s\n' "$lines" | grep -c 'gshmem-pytest')
  p=$(printf '%s\n' "$lines" | sed -n 's/.*: \([0-9]*\) passed.*/\1/p' | sort -n | head -1)
  f=$(printf '%s\n' "$lines" | sed -n 's/.* \([0-9]*\) failed.*/\1/p' | sort -n | tail -1)
  p=${p:-0}; f=${f:-0}
  # a PE that died before its summary, or a job that exited non-zero, is a failure
  { [ "$got" -lt "$np" ] || [ $rc -ne 0 ]; } && [ "$f" -eq 0 ] && f=1
  [ "$f" -gt 0 ] && grep -E '^(\[PE [0-9]+\] )?(FAILED|ERROR)|Error|error:' "$log" | head -20
  [ "$got" -lt "$np" ] && tail -15 "$log" | sed 's/^/    /'
  pass=$((pass + p)); fail=$((fail + f)); parts+=("np$np $p/$f")
done

echo "== python: examples at 2 PEs =="
ep=0 ef=0
for ex in allreduce.py moe_dispatch.py; do
  log=$LOGS/example-${ex%.py}.log
  if timeout -k 10 60 "$RUN" -n 2 -t 55 "$PY" "examples/python/$ex" >"$log" 2>&1; then
    ep=$((ep + 1)); echo "PASS $ex"; grep -E 'OK|module' "$log" | head -4 | sed 's/^/    /'
  else
    ef=$((ef + 1)); echo "FAIL $ex"; tail -15 "$log" | sed 's/^/    /'
  fi
done
pass=$((pass + ep)); fail=$((fail + ef)); parts+=("examples $ep/$ef")

IFS=,; summary="${parts[*]}"; unset IFS
echo "python tests: $pass passed, $fail failed (${summary//,/, }) logs: $LOGS"
[ "$fail" -eq 0 ]
