/* fd exchange between local PEs over abstract Unix datagram sockets (see fdpass.h). Sends
 * and receives are non-blocking and interleaved, so a full receive queue on one peer can
 * never deadlock the exchange. */
#include <errno.h>
#include <stdio.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fdpass.h"

typedef struct {
    uint64_t job_id, tag;
    int32_t from;
} fd_msg;

static socklen_t peer_addr(struct sockaddr_un *a, uint64_t job, int idx) {
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    /* abstract namespace: sun_path[0] = 0, the name follows; no file to clean up */
    int n = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "gshmem-%016llx-%d",
                     (unsigned long long)job, idx);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

gshmemi_status gshmemi_fdpass_open(gshmemi_fdpass *f, uint64_t job_id, int me, int n) {
    f->sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    f->job_id = job_id;
    f->me = me;
    f->n = n;
    if (f->sock < 0) {
        gshmemi_error("socket(AF_UNIX) for sharing GPU memory with local PEs failed: %s",
                      strerror(errno));
        return GSHMEM_ERR_INTERNAL;
    }
    struct sockaddr_un a;
    socklen_t len = peer_addr(&a, job_id, me);
    if (bind(f->sock, (struct sockaddr *)&a, len) != 0) {
        gshmemi_error("bind of the local fd-passing socket '@%s' failed: %s (another job with "
                      "the same id on this node?)", a.sun_path + 1, strerror(errno));
        close(f->sock);
        f->sock = -1;
        return GSHMEM_ERR_INTERNAL;
    }
    return GSHMEM_SUCCESS;
}

static int send_fd(gshmemi_fdpass *f, int to, int fd, uint64_t tag) {
    fd_msg m = {.job_id = f->job_id, .tag = tag, .from = f->me};
    struct iovec iov = {.iov_base = &m, .iov_len = sizeof m};
    union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct sockaddr_un a;
    struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                       .msg_controllen = sizeof ctl.buf};
    h.msg_name = &a;
    h.msg_namelen = peer_addr(&a, f->job_id, to);
    struct cmsghdr *c = CMSG_FIRSTHDR(&h);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    return sendmsg(f->sock, &h, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)sizeof m ? 0 : errno;
}

/* Returns 1 and fills from and fd when a message was read, 0 when none is waiting, -1 on a
 * malformed message (logged). */
static int recv_fd(gshmemi_fdpass *f, uint64_t tag, int *from, int *fd) {
    fd_msg m;
    struct iovec iov = {.iov_base = &m, .iov_len = sizeof m};
    union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } ctl;
    struct msghdr h = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                       .msg_controllen = sizeof ctl.buf};
    ssize_t r = recvmsg(f->sock, &h, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (r < 0) return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0 : -1;
    struct cmsghdr *c = CMSG_FIRSTHDR(&h);
    int got = -1;
    if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
        memcpy(&got, CMSG_DATA(c), sizeof got);
    if (r != (ssize_t)sizeof m || got < 0 || m.job_id != f->job_id || m.tag != tag ||
        m.from < 0 || m.from >= f->n || m.from == f->me) {
        gshmemi_error("unexpected message on the fd-passing socket (from local PE %d, tag %llu, "
                      "expected tag %llu)", m.from, (unsigned long long)m.tag,
                      (unsigned long long)tag);
        if (got >= 0) close(got);
        return -1;
    }
    *from = m.from;
    *fd = got;
    return 1;
}

gshmemi_status gshmemi_fdpass_exchange(gshmemi_fdpass *f, int fd, uint64_t tag, int *fds,
                                       double timeout) {
    int n_sent = 0, n_recv = 0, others = f->n - 1;
    char *sent = calloc((size_t)f->n, 1);
    if (!sent) return GSHMEM_ERR_NO_MEMORY;
    for (int q = 0; q < f->n; q++) fds[q] = -1;
    double deadline = now_s() + timeout;
    gshmemi_status st = GSHMEM_SUCCESS;
    while (n_sent < others || n_recv < others) {
        for (int q = 0; q < f->n; q++) {
            if (q == f->me || sent[q]) continue;
            int e = send_fd(f, q, fd, tag);
            if (e == 0) { sent[q] = 1; n_sent++; }
            else if (e != EAGAIN && e != EWOULDBLOCK && e != ECONNREFUSED && e != ENOENT && e != EINTR) {
                gshmemi_error("sending GPU memory handle to local PE index %d failed: %s", q, strerror(e));
                st = GSHMEM_ERR_INTERNAL;
                goto out;
            }
        }
        int from, got;
        int r;
        while ((r = recv_fd(f, tag, &from, &got)) == 1) {
            if (fds[from] >= 0) close(fds[from]);
            else n_recv++;
            fds[from] = got;
        }
        if (r < 0) { st = GSHMEM_ERR_INTERNAL; goto out; }
        if (n_sent == others && n_recv == others) break;
        if (now_s() > deadline) {
            for (int q = 0; q < f->n; q++)
                if (q != f->me && (fds[q] < 0 || !sent[q]))
                    gshmemi_error("local PE index %d did not exchange GPU memory handles within "
                                  "%.0f s (%s): did it exit or hang?", q, timeout,
                                  fds[q] < 0 ? "nothing received" : "could not send");
            st = GSHMEM_ERR_TIMEOUT;
            goto out;
        }
        struct pollfd p = {.fd = f->sock, .events = POLLIN};
        poll(&p, 1, 1);
    }
out:
    if (st != GSHMEM_SUCCESS)
        for (int q = 0; q < f->n; q++)
            if (fds[q] >= 0) { close(fds[q]); fds[q] = -1; }
    free(sent);
    return st;
}

void gshmemi_fdpass_close(gshmemi_fdpass *f) {
    if (f->sock >= 0) close(f->sock);
    f->sock = -1;
}
