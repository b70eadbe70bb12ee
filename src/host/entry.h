/* The functions behind the public calls: the host forms of the calls of both sides and the
 * on-stream families, which api.c defines from the public headers' families (gshmem/forms.h),
 * call these. Implemented in rma.c, amo.c, wait.c, init.c and, for teams and collectives, in
 * src/team/. Users never see them. */
#ifndef GSHMEMI_ENTRY_H
#define GSHMEMI_ENTRY_H

#include <stddef.h>
#include <stdint.h>

#include "gshmem/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st;  /* gshmemx_stream_t */
int gshmemi_host_my_pe(void);
int gshmemi_host_n_pes(void);
void gshmemi_host_putmem(void *dest, const void *src, size_t nbytes, int pe);
void gshmemi_host_getmem(void *dest, const void *src, size_t nbytes, int pe);
void gshmemi_host_quiet(void);
void gshmemi_host_barrier_all(void);
void *gshmemi_host_ptr(const void *dest, int pe);
void gshmemi_host_iput(void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                       size_t elem_size, int pe, const char *call);
void gshmemi_host_iget(void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                       size_t elem_size, int pe, const char *call);
void gshmemi_host_put_signal(void *dest, const void *src, size_t nbytes, uint64_t *sig_addr,
                             uint64_t signal, int sig_op, int pe, const char *call);
/* One atomic of `size` (4/8) bytes: GSHMEMI_AMO_* op; value/cond/result point to host
 * values of that size (result may be NULL). */
void gshmemi_host_amo(int op, void *dest, size_t size, const void *value, const void *cond,
                      void *result, int pe, const char *call);
/* Wait (wait=1) or test over ivars[0..n) of `size` bytes; mode GSHMEMI_WAIT_ALL/ANY/SOME;
 * values (NULL: every entry compares with *value); snapshot (may be NULL) receives the
 * values that satisfied the wait. Returns as the device forms do. */
size_t gshmemi_host_wait_set(int mode, int wait, void *ivars, size_t n, size_t size, int is_signed,
                             const int *status, int cmp, const void *values, const void *value,
                             size_t *indices, void *snapshot, const char *call);
void gshmemi_host_pe_quiet(const int *target_pes, size_t npes);
/* The on-stream waits: later work on `stream` waits until the condition holds. */
void gshmemi_stream_wait(void *ivars, size_t n, size_t size, int is_signed, const int *status,
                         int cmp, const void *values, uint64_t value, struct CUstream_st *stream,
                         const char *call);
/* The on-stream RMA families (gshmemx.h): n bytes (get: from src on pe); a p of `size` bytes
 * at *value; a g of `size` bytes into *out (waits for the stream); strided; put with signal.
 * `call` names the public function in messages. */
void gshmemi_stream_rma(int get, void *dest, const void *src, size_t n, int pe,
                        struct CUstream_st *stream, const char *call);
void gshmemi_stream_p(void *dest, const void *value, size_t size, int pe,
                      struct CUstream_st *stream, const char *call);
void gshmemi_stream_g(void *out, const void *src, size_t size, int pe, struct CUstream_st *stream,
                      const char *call);
void gshmemi_stream_strided(int get, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst,
                            size_t n, size_t elem_size, int pe, struct CUstream_st *stream,
                            const char *call);
void gshmemi_stream_put_signal(void *dest, const void *src, size_t n, uint64_t *sig_addr,
                               uint64_t signal, int sig_op, int pe, struct CUstream_st *stream,
                               const char *call);
int gshmemi_host_team_my_pe(gshmem_team_t team);
int gshmemi_host_team_n_pes(gshmem_team_t team);
int gshmemi_host_team_translate_pe(gshmem_team_t src_team, int src_pe, gshmem_team_t dest_team);
/* blocking != 0: the host form (runs on an internal stream and waits); else enqueued on
 * `stream`. Return 0 or a GSHMEM_ERR_* status (after a message naming `call`). */
int gshmemi_host_team_sync(gshmem_team_t team, struct CUstream_st *stream, int blocking,
                           const char *call);
int gshmemi_host_move(int what, gshmem_team_t team, void *dest, const void *src, size_t nelems,
                      size_t elem_size, int root, ptrdiff_t dst, ptrdiff_t sst,
                      struct CUstream_st *stream, int blocking, const char *call);
int gshmemi_host_reduce(int what, int op, int type_code, gshmem_team_t team, void *dest,
                        const void *src, size_t nelems, struct CUstream_st *stream, int blocking,
                        const char *call);

#ifdef __cplusplus
}
#endif

#endif
