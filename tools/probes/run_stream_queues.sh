set -u
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
nvcc -O2 -arch=sm_90 -o /tmp/sq tools/probes/stream_queues.cu -lcuda || exit 1
echo "=== no MPS"; timeout 60 /tmp/sq 8 1 | tail -1
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d; sleep 1
echo "=== MPS"; timeout 60 /tmp/sq 8 1 | grep -v " ok$"
echo "=== MPS low prio"; timeout 60 /tmp/sq 8 0 | tail -1
for c in 2 4 8 16 32; do echo "=== MPS MAX_CONNECTIONS=$c"; CUDA_DEVICE_MAX_CONNECTIONS=$c timeout 60 /tmp/sq 8 1 | grep -v " ok$"; done
echo "=== MPS, 4 clients at once"; for i in 1 2 3 4; do timeout 90 /tmp/sq 8 1 > /tmp/c$i.log & done; wait; tail -qn1 /tmp/c*.log
echo quit | nvidia-cuda-mps-control
