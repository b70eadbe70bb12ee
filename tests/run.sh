#!/usr/bin/env bash
# The test command: builds gshmem (CUDA code included, tests and benchmarks) in ./build, runs the
# unit tests (no GPU needed), and, on a machine with a GPU, the GPU suite (on one GPU, several
# PEs share it under CUDA MPS, which gshmrun starts and stops itself). Ends with one line
# "tests: N passed, M failed".
set -u
cd "$(dirname "$0")/.."
B=${BUILD_DIR:-build}
export PATH=/usr/local/cuda/bin:$PATH
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
# everything: a build directory the quick start made (library, tools, examples) gains the tests
# and benchmarks
if [ ! -f "$B/build.ninja" ]; then
  meson setup "$B" --buildtype=release -Dtests=true -Dbench=true || exit 1
else
  meson configure "$B" -Dtests=true -Dbench=true >/dev/null || exit 1
fi
ninja -C "$B" || exit 1
meson test -C "$B" --suite unit --print-errorlogs --num-processes 2
rc=$?
ok=$(sed -n 's/^Ok: *\([0-9]*\).*/\1/p' "$B/meson-logs/testlog.txt" | tail -1)
bad=$(sed -n 's/^Fail: *\([0-9]*\).*/\1/p' "$B/meson-logs/testlog.txt" | tail -1)
ok=${ok:-0}; bad=${bad:-0}
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "${ngpu:-0}" -ge 1 ]; then
  tests/gpu/run_gpu_tests.sh "$B" | tee "$B/gpu-tests.log"
  gp=$(sed -n 's/^GPU tests: \([0-9]*\) passed, \([0-9]*\) failed/\1/p' "$B/gpu-tests.log")
  gf=$(sed -n 's/^GPU tests: \([0-9]*\) passed, \([0-9]*\) failed/\2/p' "$B/gpu-tests.log")
  ok=$((ok + ${gp:-0})); bad=$((bad + ${gf:-1}))
else
  echo "GPU tests skipped: no GPU here; run tests/gpu/run_gpu_tests.sh $B on a machine with one"
fi
echo "tests: $ok passed, $bad failed"
[ "$rc" -eq 0 ] && [ "$bad" -eq 0 ]
