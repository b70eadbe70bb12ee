#!/usr/bin/env bash
# Compiles reg_kernels.cu for one architecture, with device routing (the default) and with
# GSHMEM_LOAD_STORE_ONLY, and checks ptxas's register report against the block-size rules the
# docs promise (docs/collectives.md, "Block sizes"). usage: test_registers.sh NVCC INCLUDE_DIR ARCH
set -u
nvcc=$1 inc=$2 arch=$3
src=$(dirname "$0")/reg_kernels.cu
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
# build VARIANT [FLAGS]: ptxas's report into $out/VARIANT.log
build() {
  local v=$1; shift
  if ! "$nvcc" -std=c++17 -O3 --expt-relaxed-constexpr -gencode "arch=compute_$arch,code=sm_$arch" \
       -I"$inc" -cubin -o "$out/$v.cubin" -Xptxas -v "$@" "$src" >"$out/$v.log" 2>&1; then
    cat "$out/$v.log"; echo "FAIL: reg_kernels.cu ($v) did not compile"; fail=1
  fi
}
# check VARIANT KERNEL MAX_REGS MAX_SPILL_BYTES RULE: the kernel's registers, and the spill
# stores of its entry and of every function it calls
check() {
  local v=$1 k=$2 max=$3 maxspill=$4 why=$5 block regs spill
  block=$(awk -v k="$k" '/Compiling entry function/ {on = index($0, k) > 0} on' "$out/$v.log")
  regs=$(sed -n 's/.*Used \([0-9]*\) registers.*/\1/p' <<<"$block" | head -1)
  spill=$(sed -n 's/.* \([0-9]*\) bytes spill stores.*/\1/p' <<<"$block" | awk '{s += $1} END {print s + 0}')
  if [ -z "$regs" ]; then echo "FAIL $v $k: no register report from ptxas"; fail=1; return; fi
  if [ "$regs" -gt "$max" ]; then
    echo "FAIL $v $k: $regs registers > $max ($why)"; fail=1
  elif [ "$spill" -gt "$maxspill" ]; then
    echo "FAIL $v $k: $spill bytes of spill stores > $maxspill ($why)"; fail=1
  else
    echo "ok   $v $k: $regs registers, $spill bytes spilled (<= $max, <= $maxspill: $why)"
  fi
}
build routed
build ls_only -DGSHMEM_LOAD_STORE_ONLY
# Routed: the kernel holds the cross-node algorithms too (they run when a team spans nodes)
check routed reg_plain_collectives 128 1000000 "block-scope collectives, 512 threads without a hint"
# (the spills are in the cross-node functions, gshmemi_xnode_move / _reduce, where a NIC or
# proxy round trip dwarfs them)
check routed reg_bounded_collectives 80 640 "block-scope collectives under __launch_bounds__(768); the cross-node path spills a little"
check routed reg_plain_block_rma 64 1000000 "block-scope puts and gets, 1024 threads"
# Load/store only: the one-node code alone
check ls_only reg_plain_collectives 96 1000000 "block-scope collectives, 640 threads without a hint"
check ls_only reg_bounded_collectives 80 0 "block-scope collectives under __launch_bounds__(768), without spilling"
check ls_only reg_plain_block_rma 64 1000000 "block-scope puts and gets, 1024 threads"
exit $fail
