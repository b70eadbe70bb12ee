// NVSHMEM's API as its perftests and typical programs use it, compiled against gshmem's
// compatibility headers (test_nvshmem_compat.sh; compile only, no GPU): a name or signature the
// layer lacks fails here with the name.
#include <nvshmem.h>
#include <nvshmemx.h>

__global__ void device_calls(nvshmem_team_t team, int *ib, double *db, uint64_t *sig, double2 *d2,
                             half *hb, __nv_bfloat16 *bb, size_t n, int pe) {
    nvshmem_int_p(ib, 1, pe);
    (void)nvshmem_int_g(ib, pe);
    nvshmem_double_p(db, 1.0, pe);
    (void)nvshmem_uint8_g((uint8_t *)ib, pe);
    nvshmem_int_put_nbi(ib, ib + 1, n, pe);
    nvshmem_int_get_nbi(ib, ib + 1, n, pe);
    nvshmemx_int_put_nbi_warp(ib, ib + 1, n, pe);
    nvshmemx_double_put_nbi_block(db, db + 1, n, pe);
    nvshmemx_double_get_nbi_block(db, db + 1, n, pe);
    nvshmem_putmem(ib, ib + 1, 4, pe);
    nvshmem_getmem_nbi(ib, ib + 1, 4, pe);
    nvshmemx_putmem_signal_block(ib, ib + 1, 4, sig, 1, NVSHMEM_SIGNAL_SET, pe);
    nvshmemx_signal_op(sig, 1, NVSHMEM_SIGNAL_ADD, pe);
    nvshmem_signal_wait_until(sig, NVSHMEM_CMP_GE, 1);
    nvshmem_uint64_wait_until(sig, NVSHMEM_CMP_EQ, 1);
    (void)nvshmem_uint64_atomic_fetch_add(sig, 1, pe);
    nvshmem_uint64_atomic_inc(sig, pe);
    (void)nvshmem_uint64_atomic_compare_swap(sig, 1, 2, pe);
    nvshmem_fence();
    nvshmem_quiet();
    nvshmem_barrier_all();
    nvshmemx_barrier_all_block();
    nvshmemx_sync_all_warp();
    nvshmemx_team_sync_block(team);
    nvshmem_int_sum_reduce(team, ib, ib + n, n);
    nvshmemx_double_max_reduce_block(team, db, db + n, n);
    nvshmemx_half_sum_reduce_block(team, hb, hb + n, n);
    nvshmemx_bfloat16_max_reduce_warp(team, bb, bb + n, n);
    nvshmemx_int_sum_reducescatter_block(team, ib, ib + n, n);
    nvshmemx_int_fcollect_block(team, ib, ib + n, n);
    nvshmemx_int_alltoall_block(team, ib, ib + n, n);
    nvshmemx_int_broadcast_block(team, ib, ib + n, n, 0);
    nvshmemx_double2_maxloc_reduce_block(team, d2, d2 + 1, 1);
    (void)nvshmem_ptr(ib, pe);
    (void)nvshmem_team_my_pe(team);
}

int host_calls(cudaStream_t st) {
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    if (nvshmemx_get_uniqueid(&id) != NVSHMEMX_SUCCESS) return 1;
    nvshmemx_set_attr_uniqueid_args(0, 1, &id, &attr);
    nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr);
    int *ib = (int *)nvshmem_malloc(64), *src = ib + 8;
    half *hb = (half *)nvshmem_align(256, 64);
    __nv_bfloat16 *bb = (__nv_bfloat16 *)nvshmem_calloc(16, 2);
    uint64_t *sig = (uint64_t *)nvshmem_malloc(8);
    nvshmemx_putmem_on_stream(ib, src, 4, 0, st);
    nvshmemx_putmem_nbi_on_stream(ib, src, 4, 0, st);
    nvshmemx_getmem_nbi_on_stream(ib, src, 4, 0, st);
    nvshmemx_long_put_on_stream((long *)ib, (long *)src, 1, 0, st);
    nvshmemx_int_get_nbi_on_stream(ib, src, 1, 0, st);
    nvshmemx_int_p_on_stream(ib, 5, 0, st);
    int v = nvshmemx_int_g_on_stream(ib, 0, st);
    nvshmemx_put32_nbi_on_stream(ib, src, 1, 0, st);
    nvshmemx_int_iput_on_stream(ib, src, 1, 1, 2, 0, st);
    nvshmemx_putmem_signal_nbi_on_stream(ib, src, 4, sig, 1, NVSHMEM_SIGNAL_SET, 0, st);
    nvshmemx_signal_wait_until_on_stream(sig, NVSHMEM_CMP_GE, 1, st);
    nvshmemx_quiet_on_stream(st);
    nvshmemx_barrier_all_on_stream(st);
    nvshmemx_barrier_on_stream(NVSHMEM_TEAM_WORLD, st);
    nvshmemx_team_sync_on_stream(NVSHMEM_TEAM_WORLD, st);
    nvshmemx_sync_all_on_stream(st);
    nvshmemx_int_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, ib, src, 1, st);
    nvshmemx_half_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, hb, hb + 4, 1, st);
    nvshmemx_half_alltoall_on_stream(NVSHMEM_TEAM_WORLD, hb, hb + 4, 1, st);
    nvshmemx_bfloat16_broadcast_on_stream(NVSHMEM_TEAM_WORLD, bb, bb + 4, 1, 0, st);
    nvshmemx_bfloat16_fcollect_on_stream(NVSHMEM_TEAM_WORLD, bb, bb + 4, 1, st);
    nvshmemx_int_fcollect_on_stream(NVSHMEM_TEAM_WORLD, ib, src, 1, st);
    nvshmemx_int_sum_reducescatter_on_stream(NVSHMEM_TEAM_WORLD, ib, src, 1, st);
    void *reg = nvshmemx_buffer_register_symmetric(ib, 64, 0);
    nvshmemx_buffer_unregister_symmetric(reg, 64);
    nvshmemx_buffer_register(src, 4);
    nvshmemx_buffer_unregister(src);
    nvshmemx_buffer_unregister_all();
    CUmodule mod = NULL;
    nvshmemx_cumodule_init(mod);
    nvshmemx_cumodule_finalize(mod);
    CUlibrary lib = NULL;
    nvshmemx_culibrary_init(lib);
    nvshmemx_culibrary_finalize(lib);
    void *args[] = {NULL};
    int grid = 0;
    nvshmemx_collective_launch_query_gridsize((const void *)device_calls, 32, args, 0, &grid);
    nvshmemx_collective_launch((const void *)device_calls, grid, 32, args, 0, st);
    int mype_node = nvshmem_team_my_pe(NVSHMEMX_TEAM_NODE);
    char name[NVSHMEM_MAX_NAME_LEN];
    nvshmem_info_get_name(name);
    nvshmem_free(ib);
    nvshmem_free(hb);
    nvshmem_free(bb);
    nvshmem_free(sig);
    nvshmem_finalize();
    return v + mype_node + (nvshmemx_init_status() == NVSHMEM_STATUS_NOT_INITIALIZED);
}
