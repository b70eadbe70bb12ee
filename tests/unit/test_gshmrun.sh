#!/usr/bin/env bash
# Proves gshmrun: [PE i] prefixes on whole lines, the environment each PE gets (rank 0
# alone inherits the rendezvous socket), a 4-PE bootstrap, a failing or crashing PE ends
# the job quickly with its status and name, -t ends a hung job with 124, a missing program
# is a clear error, a last partial line is still forwarded, and the launcher arguments NVSHMEM
# users type (-np, -ppn) start the PEs they name.
# usage: test_gshmrun.sh GSHMRUN BUILD_DIR_WITH_gshmrun_child
R=$1; C=$2/gshmrun_child
pass=0; fail=0
check() { if eval "$2"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $1"; echo "$out" | head -20; fi; }

out=$(timeout 30 $R -n 3 $C env 2>&1); rc=$?
check "env: exit 0" '[ $rc -eq 0 ]'
check "env: three prefixed lines" '[ $(echo "$out" | grep -c "^\[PE [0-2]\] rank=") -eq 3 ]'
check "env: rank 0 has a valid fd" 'echo "$out" | grep -q "^\[PE 0\] rank=0 npes=3 fd=[0-9]* valid=1 nvls=0"'
check "env: rank 1 has no fd" 'echo "$out" | grep -q "^\[PE 1\] rank=1 npes=3 fd=none"'

out=$(timeout 30 $R -n 4 $C boot 2>&1); rc=$?
check "boot: exit 0" '[ $rc -eq 0 ]'
check "boot: 4 ranks ok" '[ $(echo "$out" | grep -c "rank [0-3] of 4 ok") -eq 4 ]'

s=$(date +%s); out=$(timeout 30 $R -n 3 $C fail 1 7 2>&1); rc=$?; d=$(( $(date +%s) - s ))
check "fail: status 7 (got $rc)" '[ $rc -eq 7 ]'
check "fail: names PE 1" 'echo "$out" | grep -q "PE 1 exited with status 7"'
check "fail: ends the others quickly ($d s)" '[ $d -lt 10 ]'

out=$(timeout 30 $R -n 2 $C segv 1 2>&1); rc=$?
check "segv: status 139 (got $rc)" '[ $rc -eq 139 ]'
check "segv: names the signal" 'echo "$out" | grep -q "PE 1 killed by signal SEGV"'

out=$(timeout 30 $R -n 2 -t 1 $C hang 2>&1); rc=$?
check "timeout: status 124 (got $rc)" '[ $rc -eq 124 ]'
check "timeout: names running PEs" 'echo "$out" | grep -q "PEs still running: 0 1"'

out=$(timeout 30 $R -np 2 $C env 2>&1); rc=$?
check "-np 2: two PEs" '[ $rc -eq 0 ] && [ $(echo "$out" | grep -c "^\[PE [0-1]\] rank=[0-1] npes=2 ") -eq 2 ]'
out=$(timeout 30 $R -ppn 3 $C env 2>&1); rc=$?
check "-ppn 3 alone: three PEs" '[ $rc -eq 0 ] && [ $(echo "$out" | grep -c "npes=3 ") -eq 3 ]'
out=$(timeout 30 $R -n 2 -ppn 2 $C env 2>&1); rc=$?
check "-n 2 -ppn 2: two PEs" '[ $rc -eq 0 ] && [ $(echo "$out" | grep -c "npes=2 ") -eq 2 ]'
out=$(timeout 30 $R -n 4 -ppn 2 $C env 2>&1); rc=$?
check "-n 4 -ppn 2: refused (one node), status 2 (got $rc)" '[ $rc -eq 2 ] && echo "$out" | grep -q "needs 2 nodes"'

out=$(timeout 30 $R -n 2 ./no-such-program 2>&1); rc=$?
check "missing program: non-zero" '[ $rc -ne 0 ]'
check "missing program: message" 'echo "$out" | grep -q "cannot execute"'

out=$(timeout 30 $R -n 1 $C partial 2>&1); rc=$?
check "partial line forwarded" 'echo "$out" | grep -q "^\[PE 0\] no newline at the end$"'

echo "gshmrun: $pass passed, $fail failed"
[ $fail -eq 0 ]
