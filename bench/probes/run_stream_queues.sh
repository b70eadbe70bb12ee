#!/usr/bin/env bash
# Runs bench/probes/stream_queues.cu in the settings gshmem meets: alone, under MPS, with
# CUDA_MPS_ACTIVE_THREAD_PERCENTAGE as gshmrun sets it, 4 clients at once, the spinner
# launched like the library's barrier kernel (PDL). One GPU; ~1 minute.
set -u
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 CUDA_MODULE_LOADING=EAGER
nvcc -O2 -arch=sm_90 -o /tmp/sq bench/probes/stream_queues.cu -lcuda || exit 1
echo "=== no MPS"; timeout 60 /tmp/sq 8 1 0 | tail -1
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d; sleep 1
echo "=== MPS"; timeout 60 /tmp/sq 8 1 0 | grep -v " ok$"
echo "=== MPS, PDL spinner"; timeout 60 /tmp/sq 8 1 1 | grep -v " ok$"
for p in 25 50; do
  echo "=== MPS, 4 clients at once, ACTIVE_THREAD_PERCENTAGE=$p, PDL spinner"
  for i in 1 2 3 4; do CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$p timeout 90 /tmp/sq 8 1 1 > /tmp/c$i.log & done; wait
  grep -hv " ok$" /tmp/c*.log
done
echo quit | nvidia-cuda-mps-control
