#!/usr/bin/env bash
# gshmrun's MPS handling when PEs share a GPU (one more PE than GPUs): it starts a private MPS
# daemon for the job and stops it (directory removed, daemon gone) when the job ends normally,
# when a PE dies, and when gshmrun itself is told to stop; the PEs run as MPS clients and say
# so; with GSHMEM_MPS=off the job still runs (time-sliced) and the library says what is wrong
# once. Skips the private-daemon checks, saying so, when an MPS daemon already runs.
# usage: tests/gpu/test_mps.sh BUILD_DIR NGPU
set -u
B=${1:?usage: test_mps.sh BUILD_DIR NGPU}
NGPU=${2:?}
N=$((NGPU + 1))
RUN="$B/tools/gshmrun"
pass=0; fail=0
ok() { pass=$((pass + 1)); echo "  ok: $*"; }
no() { fail=$((fail + 1)); echo "  FAIL: $*"; }
daemons() { local n; n=$(pgrep -c -f '^nvidia-cuda-mps-(control|server)' 2>/dev/null); echo "${n:-0}"; }

if [ -e "${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}/control" ]; then
  echo "test_mps: an MPS daemon already runs here; the private-daemon checks are skipped"
  GSHMEM_DEBUG=1 timeout 60 "$RUN" -n "$N" -t 50 "$B/examples/ring" >/tmp/mps-run.log 2>&1 \
    && grep -q 'the running MPS daemon' /tmp/mps-run.log && ok "uses the running daemon" || no "running daemon not used"
  echo "test_mps: $pass passed, $fail failed"; [ $fail -eq 0 ]; exit
fi
command -v nvidia-cuda-mps-control >/dev/null || { echo "test_mps: nvidia-cuda-mps-control not installed: skipped"; exit 0; }
before=$(daemons)

# check_gone LOG WHAT: the private directory named in LOG no longer exists, no daemon is left
check_gone() {
  local dir
  dir=$(sed -n 's/.*a private MPS daemon (\(\/tmp\/gshmrun-mps-[A-Za-z0-9]*\)).*/\1/p' "$1" | head -1)
  if [ -z "$dir" ]; then no "$2: gshmrun did not say it started a private daemon"; tail -5 "$1"; return; fi
  sleep 0.5
  [ ! -e "$dir" ] && ok "$2: $dir removed" || no "$2: $dir still exists"
  [ "$(daemons)" -le "$before" ] && ok "$2: no MPS daemon left" || { no "$2: MPS processes left"; pgrep -a -f nvidia-cuda-mps; }
}

echo "-- a job that ends normally"
GSHMEM_DEBUG=1 timeout 90 "$RUN" -n "$N" -t 80 "$B/examples/ring" >/tmp/mps-ok.log 2>&1
rc=$?
[ $rc -eq 0 ] && ok "ring on $N PEs exits 0" || { no "ring exit $rc"; tail -20 /tmp/mps-ok.log; }
grep -q 'shared under MPS' /tmp/mps-ok.log && ok "PEs report a GPU shared under MPS" || no "no PE reports MPS"
grep -Eq 'shared by [0-9]+ PEs .*MPS, SM share [0-9]+ of [0-9]+' /tmp/mps-ok.log \
  && ok "GSHMEM_DEBUG=1 prints the placement" || no "placement line missing"
check_gone /tmp/mps-ok.log "normal end"

echo "-- a PE that fails while the PEs are MPS clients (a device wait that times out)"
GSHMEM_DEBUG=1 GSHMEM_WAIT_TIMEOUT=3 timeout 90 "$RUN" -n "$N" -t 80 "$B/tests/gpu/test_errors" wait_timeout \
  >/tmp/mps-die.log 2>&1
rc=$?
[ $rc -ne 0 ] && ok "job fails (exit $rc)" || no "job with a dead PE exited 0"
check_gone /tmp/mps-die.log "PE died"

echo "-- gshmrun stopped by SIGTERM"
GSHMEM_DEBUG=1 "$RUN" -n "$N" /bin/sleep 60 >/tmp/mps-term.log 2>&1 &
pid=$!
for i in $(seq 50); do grep -q 'a private MPS daemon' /tmp/mps-term.log && break; sleep 0.1; done
kill -TERM $pid
timeout 30 tail --pid=$pid -f /dev/null
wait $pid; rc=$?
[ $rc -eq 143 ] && ok "gshmrun exits 143" || no "gshmrun exit $rc after SIGTERM"
check_gone /tmp/mps-term.log "SIGTERM"

echo "-- GSHMEM_MPS=off: correct, and said once"
GSHMEM_MPS=off timeout 120 "$RUN" -n "$N" -t 110 "$B/examples/ring" >/tmp/mps-off.log 2>&1
rc=$?
[ $rc -eq 0 ] && ok "ring without MPS exits 0" || { no "ring without MPS: exit $rc"; tail -20 /tmp/mps-off.log; }
c=$(grep -c 'without CUDA MPS' /tmp/mps-off.log)
[ "$c" -eq 1 ] && ok "the time-slicing warning is printed once" || no "warning printed $c times"
grep -q 'shared, time-sliced' /tmp/mps-off.log && ok "PEs report a time-sliced GPU" || no "no PE reports time slicing"
grep -q 'a private MPS daemon' /tmp/mps-off.log && no "a daemon was started with GSHMEM_MPS=off" || ok "no daemon started"

# Across nodes each PE's proxy has a CUDA context of its own beside the program's: without MPS
# the two share the GPU by time slices (p one-way on 2 x H200, a GPU per PE: 1136 us, against
# 12-13 us under MPS), so gshmrun starts MPS for a job across nodes even at one PE per GPU, and the
# proxy says once per node what is wrong when MPS is off.
XN="env GSHMEM_FABRIC_IFACE=${GSHMEM_FABRIC_IFACE:-lo} GSHMEM_FABRIC_PROVIDER=${GSHMEM_FABRIC_PROVIDER:-tcp;ofi_rxm}"
if [ "$NGPU" -ge 2 ]; then
  echo "-- a job across nodes at one PE per GPU (2 PEs as 2 nodes on $NGPU GPUs)"
  GSHMEM_DEBUG=1 timeout 90 $XN "$RUN" -n 2 --nodes 2 -t 80 "$B/examples/ring" >/tmp/mps-nodes.log 2>&1
  rc=$?
  [ $rc -eq 0 ] && ok "ring across nodes exits 0" || { no "ring across nodes: exit $rc"; tail -20 /tmp/mps-nodes.log; }
  c=$(grep -Ec 'on GPU [0-9]+ \(its own; [0-9]+ SMs; MPS client\)' /tmp/mps-nodes.log)
  [ "$c" -eq 2 ] && ok "both PEs run as MPS clients, a GPU each" || { no "$c of 2 PEs report a GPU of their own under MPS"; grep -E 'on GPU' /tmp/mps-nodes.log; }
  check_gone /tmp/mps-nodes.log "across nodes"
fi
echo "-- across nodes with GSHMEM_MPS=off: the proxy's warning, once per node"
GSHMEM_MPS=off timeout 120 $XN "$RUN" -n 2 --nodes 2 -t 110 "$B/examples/ring" >/tmp/mps-nodes-off.log 2>&1
rc=$?
[ $rc -eq 0 ] && ok "ring across nodes without MPS exits 0" || { no "ring across nodes without MPS: exit $rc"; tail -20 /tmp/mps-nodes-off.log; }
c=$(grep -c 'proxy transport (staged mode) without CUDA MPS' /tmp/mps-nodes-off.log)
[ "$c" -eq 2 ] && ok "the proxy's warning is printed once per node (2)" || no "proxy warning printed $c times (2 nodes)"

echo "test_mps: $pass passed, $fail failed"
[ $fail -eq 0 ]
