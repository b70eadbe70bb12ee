#!/usr/bin/env bash
# Proves a failing gshmem_init ends the process with status 1 and a message, and that the
# program's output printed before it (stdout buffered: a pipe or a file) is not lost. No GPU
# needed: the bootstrap fails before any CUDA call.
# usage: test_init_fail.sh INIT_FAIL
P=$1
pass=0; fail=0
check() { if eval "$2"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $1"; echo "$out"; cat "$err"; fi; }
err=$(mktemp)
trap 'rm -f "$err"' EXIT
out=$(env -u GSHMEM_UID GSHMEM_BOOTSTRAP=no-such-bootstrap "$P" 2>"$err" | cat)
rc=$(env -u GSHMEM_UID GSHMEM_BOOTSTRAP=no-such-bootstrap "$P" >/dev/null 2>&1; echo $?)
check "exit status 1 (got $rc)" '[ "$rc" -eq 1 ]'
check "stdout to a pipe keeps what was printed before" 'echo "$out" | grep -q "^printed before gshmem_init$"'
check "gshmem_init does not return" '! echo "$out" | grep -q "returned"'
check "the failure is said on stderr" 'grep -q "gshmem_init failed" "$err"'
echo "init_fail: $pass passed, $fail failed"
[ $fail -eq 0 ]
