#!/usr/bin/env bash
# Compares the machine code of the NVLink hot paths (tests/unit/sass_kernels.cu: p + wait, block
# put, fetch_add, barrier_all) built against the installed headers of git revision BASE and of
# the working tree: per kernel, SASS instructions and registers, and the diff of the opcodes.
# No GPU needed. usage: tools/sass_compare.sh BASE [ARCH (default 90)]
set -eu
base=${1:?usage: sass_compare.sh BASE [ARCH]}
arch=${2:-90}
cd "$(dirname "$0")/.."
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/base"
git archive "$base" include | tar -x -C "$t/base"
build() {   # build INCLUDE_DIR OUT_PREFIX
  nvcc -std=c++17 -arch=sm_$arch -cubin -O3 --expt-relaxed-constexpr -I"$1" -Xptxas -v \
    tests/unit/sass_kernels.cu -o "$2.cubin" 2>"$2.ptxas"
  cuobjdump -sass "$2.cubin" >"$2.sass"
}
build "$t/base/include" "$t/old"
build include "$t/new"
# per kernel: instruction count (lines with an /*addr*/ opcode) and registers (ptxas -v)
count() {
  awk '/Function :/ {f=$3} /^ +\/\*[0-9a-f]+\*\// {n[f]++} END {for (k in n) print k, n[k]}' "$1" | sort
}
regs() { sed -n "s/.*Compiling entry function '\([^']*\)'.*/\1/p; s/.*Used \([0-9]*\) registers.*/R \1/p" "$1" \
         | paste - - | awk '{print $1, $3}' | sort; }
printf "%-34s %12s %12s %8s %8s\n" kernel "instr $base" "instr now" "regs b" "regs n"
join <(count "$t/old.sass") <(count "$t/new.sass") | join - <(regs "$t/old.ptxas") | join - <(regs "$t/new.ptxas") |
  while read -r k a b ra rb; do
    printf "%-34s %12s %12s %8s %8s%s\n" "$(echo "$k" | c++filt | sed 's/(.*//')" "$a" "$b" "$ra" "$rb" \
      "$([ "$a" = "$b" ] && [ "$ra" = "$rb" ] && echo "" || echo "   <- differs")"
  done
echo "opcode diff (base < > now):"
diff <(sed 's@/\*[0-9a-f]*\*/@@; s/;.*//; s/ R[0-9]*/ R/g' "$t/old.sass" | grep -E '^\s+[A-Z@]') \
     <(sed 's@/\*[0-9a-f]*\*/@@; s/;.*//; s/ R[0-9]*/ R/g' "$t/new.sass" | grep -E '^\s+[A-Z@]') | head -40 || true
