#!/usr/bin/env bash
# Runs a PMIx unit test under Open MPI's mpirun (3 ranks on this host), bounded in time.
# usage: run_pmix_test.sh MPIRUN TEST_BINARY
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
export OMPI_MCA_btl=self,tcp OMPI_MCA_pml=ob1 OMPI_MCA_btl_tcp_if_include=lo
exec timeout -k 5 60 "$1" --allow-run-as-root --oversubscribe -np 3 "$2"
