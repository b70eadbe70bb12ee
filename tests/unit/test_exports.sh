#!/usr/bin/env bash
# Proves libgshmem's boundary: every function the installed headers declare for the host
# (gshmem.h, gshmemx.h and gshmem/coll_api.h through it, gshmem/info.h) is exported, and no
# gshmemi_* internal is (the library is built with hidden visibility; GSHMEM_EXPORT marks the
# API). The declarations are read by the C compiler itself (-aux-info), not by a pattern.
# usage: test_exports.sh CC INCLUDE_DIR LIBGSHMEM
set -u
cc=$1 inc=$2 lib=$3
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
pass=0; fail=0
printf '#include "gshmem.h"\n#include "gshmem/info.h"\n' >"$w/api.c"
if ! "$cc" -std=c99 -I"$inc" -aux-info "$w/aux" -fsyntax-only "$w/api.c" 2>"$w/err"; then
  cat "$w/err"; echo "FAIL: the public headers do not compile as C"; exit 1
fi
# extern declarations of the installed headers: "/* .../include/...:LINE:NC */ extern T name (...);"
grep "$inc/" "$w/aux" | grep -v '\*/ static ' | sed -n 's/.*[ *]\(gshmemx\{0,1\}_[a-z0-9_]*\) (.*/\1/p' | sort -u >"$w/declared"
nm -D --defined-only "$lib" | awk '$2 ~ /^[TW]$/ {print $3}' | sort -u >"$w/exported"
n_decl=$(wc -l <"$w/declared")
missing=$(comm -23 "$w/declared" "$w/exported")
if [ "$n_decl" -lt 1000 ]; then
  fail=$((fail + 1)); echo "FAIL: only $n_decl public functions found in the headers (the scan is broken)"
elif [ -n "$missing" ]; then
  fail=$((fail + 1)); echo "FAIL: $(echo "$missing" | wc -l) declared functions are not exported:"; echo "$missing" | head -20
else
  pass=$((pass + 1)); echo "ok   all $n_decl functions of the public headers are exported"
fi
internal=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -c '^gshmemi_')
if [ "$internal" -ne 0 ]; then
  fail=$((fail + 1)); echo "FAIL: $internal gshmemi_ symbols are exported:"
  nm -D --defined-only "$lib" | awk '{print $3}' | grep '^gshmemi_' | head -20
else
  pass=$((pass + 1)); echo "ok   no gshmemi_ symbol is exported"
fi
# (the half and bfloat16 reductions are declared for CUDA C++ only, where their types exist)
extra=$(comm -13 "$w/declared" "$w/exported" | grep '^gshmem' | grep -v '^gshmemx\{0,1\}_\(half\|bfloat16\)_')
if [ -n "$extra" ]; then
  fail=$((fail + 1)); echo "FAIL: exported gshmem functions no public header declares:"; echo "$extra" | head -20
else
  pass=$((pass + 1)); echo "ok   every exported gshmem function is declared in a public header"
fi
echo "exports: $pass passed, $fail failed"
[ $fail -eq 0 ]
