#!/usr/bin/env bash
# Runs bench/probes/memq_rate.cu: how many copy+ticket pairs a proxy-like thread gets through its
# stream while a kernel waits in each way, alone and as 2 MPS clients at once (the setting of a
# 2-node job on one GPU). One GPU; about a minute. Each line: tickets/s and us per ticket.
set -u
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 CUDA_MODULE_LOADING=EAGER
nvcc -O2 -arch=sm_90 -o /tmp/mr bench/probes/memq_rate.cu -lcuda || exit 1
run_all() { for w in none gpu host host256 hostback; do timeout 30 /tmp/mr $w 4096 16 2 | sed "s/^/$1 /"; done; }
run_all "no-MPS"
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mr-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mr-mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d; sleep 1
run_all "MPS"
for w in none gpu host host256 hostback; do
  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 timeout 30 /tmp/mr $w 4096 16 2 | sed 's/^/MPS-2clients-a /' &
  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 timeout 30 /tmp/mr $w 4096 16 2 | sed 's/^/MPS-2clients-b /' &
  wait
done
echo quit | nvidia-cuda-mps-control
