#!/usr/bin/env bash
# Tuning sweep: one family of bench/collectives at sizes MIN..MAX, once per setting (a
# space-separated list of VAR=value environment assignments; "" = the defaults), each run
# with a timeout. Prints one line per setting and size: the setting, the size, gshmem's us.
# usage: tools/coll-sweep.sh BUILD NPES FAMILY MIN MAX SETTING...
#   e.g. tools/coll-sweep.sh build-gpu 2 allreduce 2M 2M "" "GSHMEM_COLL_CHANNEL_BYTES=32K"
set -u
B=$1 NP=$2 FAM=$3 MIN=$4 MAX=$5
shift 5
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
bytes() { numfmt --from=iec "$1"; }
for setting in "$@"; do
  out=$(env $setting timeout 60 "$B/tools/gshmrun" -n "$NP" -t 55 "$B/bench/collectives" --no-nccl \
        --family "$FAM" --min "$(bytes "$MIN")" --max "$(bytes "$MAX")" 2>&1)
  rows=$(printf '%s\n' "$out" | sed 's/^\[PE [0-9]*\] *//' | awk '/^ *[0-9]+(B|KiB|MiB) /{print $1, $2}')
  if [ -z "$rows" ]; then echo "${setting:-defaults}: FAILED"; printf '%s\n' "$out" | tail -3; continue; fi
  printf '%s\n' "$rows" | while read -r size us; do printf '%-60s %10s %9s us\n' "${setting:-defaults}" "$size" "$us"; done
done
