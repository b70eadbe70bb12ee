#!/usr/bin/env bash
# Proves gshmem-info starts without a GPU or a driver and is honest about it: --help documents
# every flag; the plain report prints the build, the variables (values in one column) and a
# Driver line, exit 0; a bad GSHMEM_* value exits 2 naming the variable; an unknown GSHMEM_*
# variable is warned about with the nearest name; --check exits 0 only where a GPU is usable,
# else 1 with the reason.
# usage: test_info.sh GSHMEM_INFO
I=$1
pass=0; fail=0
check() { if eval "$2"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $1"; echo "$out" | head -20; fi; }
unset $(env | sed -n 's/^\(GSHMEM_[A-Z_]*\)=.*/\1/p')

out=$($I --help 2>&1); rc=$?
check "--help: exit 0" '[ $rc -eq 0 ]'
for f in --gpus --check --placement --help; do
  check "--help documents $f" 'echo "$out" | grep -q -- "^  $f "'
done
out=$($I --bogus 2>&1); rc=$?
check "unknown flag: exit 2 (got $rc)" '[ $rc -eq 2 ]'

out=$($I 2>&1); rc=$?
check "report: exit 0 (got $rc)" '[ $rc -eq 0 ]'
check "report: version" 'echo "$out" | grep -q "^gshmem [0-9]*\.[0-9]*\.[0-9]* "'
check "report: transports" 'echo "$out" | grep -q "^  transports: p2p"'
check "report: a Driver line" 'echo "$out" | grep -q "^Driver: "'
check "report: variables" 'echo "$out" | grep -q "^  GSHMEM_HEAP_MAX "'
check "report: the values in one column" \
  '[ $(echo "$out" | awk "match(\$0, /^  GSHMEM_[A-Z0-9_]+ +/) {print RLENGTH}" | sort -u | wc -l) -eq 1 ]'

out=$(GSHMEM_HEAP_MAX=junk $I 2>&1); rc=$?
check "bad value: exit 2 (got $rc)" '[ $rc -eq 2 ]'
check "bad value: names the variable" 'echo "$out" | grep -q "GSHMEM_HEAP_MAX=.junk. is not"'
out=$(GSHMEM_HEAP_MAX=junk $I --check 2>&1); rc=$?
check "bad value, --check: exit 2 (got $rc)" '[ $rc -eq 2 ]'

out=$(GSHMEM_HEAP_MAXX=1G $I 2>&1); rc=$?
check "unknown variable: still exit 0 (got $rc)" '[ $rc -eq 0 ]'
check "unknown variable: warned with the nearest name" \
  'echo "$out" | grep -q "GSHMEM_HEAP_MAXX is not a gshmem environment variable.*did you mean GSHMEM_HEAP_MAX?"'

out=$($I --check 2>&1); rc=$?
if echo "$out" | grep -q "ok: [0-9]* GPU"; then
  check "--check on a GPU machine: exit 0" '[ $rc -eq 0 ]'
else
  check "--check without a usable GPU: exit 1 (got $rc)" '[ $rc -eq 1 ]'
  check "--check gives the reason" 'echo "$out" | grep -q "cannot run gshmem here: ."'
fi
echo "info: $pass passed, $fail failed"
[ $fail -eq 0 ]
