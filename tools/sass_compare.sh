#!/usr/bin/env bash
# Compares the machine code of the NVLink hot paths (tests/unit/sass_kernels.cu: p + wait, block
# put, fetch_add, barrier_all) built against the installed headers of git revision BASE and of
# the working tree: per kernel, SASS instructions and registers, the kernel's own path (the
# instructions before its first out-of-line function: what a call to a load/store peer runs)
# with its reconvergence barriers (BSSY) and yields (YIELD), and the diff of the opcodes.
# No GPU needed. usage: tools/sass_compare.sh BASE [ARCH (default 90)] [NVCC FLAGS FOR BASE...]
set -eu
base=${1:?usage: sass_compare.sh BASE [ARCH] [BASE NVCC FLAGS]}
arch=${2:-90}
shift; shift || true
base_flags=("$@")
cd "$(dirname "$0")/.."
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/base"
git archive "$base" include | tar -x -C "$t/base"
build() {   # build INCLUDE_DIR OUT_PREFIX [FLAGS]
  local inc=$1 o=$2; shift 2
  nvcc -std=c++17 -arch=sm_$arch -cubin -O3 --expt-relaxed-constexpr -I"$inc" -Xptxas -v "$@" \
    tests/unit/sass_kernels.cu -o "$o.cubin" 2>"$o.ptxas"
  cuobjdump -sass "$o.cubin" >"$o.sass"
}
build "$t/base/include" "$t/old" "${base_flags[@]}"
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
# the kernel's own path: instructions below the lowest CALL.REL target, BSSY and YIELD among them
own() {
  python3 - "$1" <<'PY'
import re, sys
fn = None
body = {}
for line in open(sys.argv[1]):
    m = re.search(r'Function : (\S+)', line)
    if m:
        fn = m.group(1); body[fn] = []; continue
    m = re.match(r'\s+/\*([0-9a-f]+)\*/\s+(.*?);', line)
    if fn and m: body[fn].append((int(m.group(1), 16), m.group(2)))
for fn, ins in sorted(body.items()):
    calls = [int(x, 16) for _, op in ins for x in re.findall(r'CALL\.REL\.NOINC (0x[0-9a-f]+)', op)]
    lim = min(calls) if calls else 1 << 62
    mine = [op for a, op in ins if a < lim]
    print(fn, len(mine), sum('BSSY' in op for op in mine), sum('YIELD' in op for op in mine))
PY
}
printf "%-34s %24s %24s\n" "kernel's own path" "$base: instr BSSY YIELD" "now: instr BSSY YIELD"
join <(own "$t/old.sass") <(own "$t/new.sass") | while read -r k a ab ay b bb by; do
  printf "%-34s %12s %5s %5s %12s %5s %5s\n" "$(echo "$k" | c++filt | sed 's/(.*//')" "$a" "$ab" "$ay" "$b" "$bb" "$by"
done
echo "opcode diff (base < > now):"
diff <(sed 's@/\*[0-9a-f]*\*/@@; s/;.*//; s/ R[0-9]*/ R/g' "$t/old.sass" | grep -E '^\s+[A-Z@]') \
     <(sed 's@/\*[0-9a-f]*\*/@@; s/;.*//; s/ R[0-9]*/ R/g' "$t/new.sass" | grep -E '^\s+[A-Z@]') | head -40 || true
