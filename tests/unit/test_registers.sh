#!/usr/bin/env bash
# Compiles reg_kernels.cu for one architecture and checks ptxas's register report against the
# block-size rules the docs promise. usage: test_registers.sh NVCC INCLUDE_DIR ARCH
set -u
nvcc=$1 inc=$2 arch=$3
src=$(dirname "$0")/reg_kernels.cu
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if ! "$nvcc" -std=c++17 -O3 --expt-relaxed-constexpr -gencode "arch=compute_$arch,code=sm_$arch" \
     -I"$inc" -cubin -o "$out/k.cubin" -Xptxas -v "$src" >"$out/log" 2>&1; then
  cat "$out/log"; echo "FAIL: reg_kernels.cu did not compile"; exit 1
fi
fail=0
# kernel, the most registers its rule allows, whether spills are allowed, the rule
check() {
  local k=$1 max=$2 nospill=$3 why=$4 block regs spill
  block=$(awk -v k="$k" '/Compiling entry function/ {on = index($0, k) > 0} on' "$out/log")
  regs=$(sed -n 's/.*Used \([0-9]*\) registers.*/\1/p' <<<"$block" | head -1)
  spill=$(sed -n 's/.* \([0-9]*\) bytes spill stores.*/\1/p' <<<"$block" | head -1)
  if [ -z "$regs" ]; then echo "FAIL $k: no register report from ptxas"; fail=1; return; fi
  if [ "$regs" -gt "$max" ]; then
    echo "FAIL $k: $regs registers > $max ($why)"; fail=1
  elif [ "$nospill" = 1 ] && [ "${spill:-0}" -gt 0 ]; then
    echo "FAIL $k: $spill bytes of spill stores ($why, without spilling)"; fail=1
  else
    echo "ok   $k: $regs registers, ${spill:-0} bytes spilled (<= $max: $why)"
  fi
}
check reg_plain_collectives 96 0 "block-scope collectives, 640 threads without a hint"
check reg_bounded_collectives 80 1 "block-scope collectives under __launch_bounds__(768)"
check reg_plain_block_rma 64 0 "block-scope puts and gets, 1024 threads"
exit $fail
