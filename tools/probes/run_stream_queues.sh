#!/usr/bin/env bash
# Runs tools/probes/stream_queues.cu in the settings gshmem meets: alone, under MPS, with
# CUDA_MPS_ACTIVE_THREAD_PERCENTAGE as gshmrun sets it, 4 clients at once, the spinner
# launched like the library's barrier kernel (PDL), the proxy stream made first or last,
# copies into VMM memory like the heap. One GPU; ~1 minute.
set -u
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 CUDA_MODULE_LOADING=EAGER
nvcc -O2 -arch=sm_90 -o /tmp/sq tools/probes/stream_queues.cu -lcuda || exit 1
echo "=== no MPS"; timeout 60 /tmp/sq 8 1 0 | tail -1
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d; sleep 1
for first in 0 1; do for vmm in 0 1; do for hi in 1 0; do
  echo "=== MPS 25%, 4 clients, PDL spinner, proxy first=$first vmm=$vmm high-priority=$hi"
  for i in 1 2 3 4; do CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25 timeout 90 /tmp/sq 8 $hi 1 $first $vmm > /tmp/c$i.log 2>&1 & done; wait
  grep -hv " ok$" /tmp/c*.log | sort | uniq -c
done; done; done
echo quit | nvidia-cuda-mps-control
