/* Passing file descriptors between the PEs of one node: each PE binds an abstract-namespace
 * Unix datagram socket named after the job and its local index; an exchange sends this
 * PE's fd to every local peer (SCM_RIGHTS) and receives theirs. No filesystem entries, no
 * ptrace or pidfd_getfd: only processes of the same job and network namespace meet. */
#ifndef GSHMEMI_FDPASS_H
#define GSHMEMI_FDPASS_H

#include <stdint.h>
#include "status.h"

typedef struct gshmemi_fdpass {
    int sock;
    uint64_t job_id;
    int me, n;          /* local index, local count */
} gshmemi_fdpass;

gshmemi_status gshmemi_fdpass_open(gshmemi_fdpass *f, uint64_t job_id, int me, int n);
/* Sends `fd` tagged `tag` to every other local index; fds[q] receives the fd local peer q
 * sent with the same tag (fds[me] = -1). Fails after timeout seconds naming the missing
 * peers. Messages with another tag are an error (exchanges are separated by barriers). */
gshmemi_status gshmemi_fdpass_exchange(gshmemi_fdpass *f, int fd, uint64_t tag, int *fds,
                                       double timeout);
void gshmemi_fdpass_close(gshmemi_fdpass *f);

#endif
