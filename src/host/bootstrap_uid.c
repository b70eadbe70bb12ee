/* Unique-id bootstrap: a TCP rendezvous through rank 0. The id is "<ipv4>:<port>:<secret>"
 * (128 random bits); rank 0 listens, the others connect and present the secret, rank and
 * size. Collectives are a star through rank 0. Every wait is bounded by
 * GSHMEM_BOOTSTRAP_TIMEOUT, and a closed connection names the PE that went away. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap.h"
#include "config.h"
#include "gshmem/info.h"

#define HELLO_MAGIC 0x67736868656c6c6full  /* "gshhello" */
enum { FRAME_DATA = 1, FRAME_ABORT = 2 };

typedef struct frame_hdr {
    uint32_t type, code;
    uint64_t len;
} frame_hdr;

typedef struct hello {
    uint64_t magic;
    uint8_t secret[16];
    int32_t rank, size;
} hello;

typedef struct uid_ctx {
    int *fds;          /* rank 0: fds[r] for r >= 1; others: fds[0] = connection to rank 0 */
    int me, n;
    /* seconds added to the deadline of the next frame received: a PE that joined waits for PE
     * 0's first answer while PE 0 may still wait, up to GSHMEM_BOOTSTRAP_TIMEOUT, for others to
     * join; it must not give up first, so that PE 0's report (which PEs did not join) is the
     * one the job ends with */
    double grace;
} uid_ctx;

/* The last id this process created, so gshmemx_get_uniqueid + init_attr finds its socket. */
static struct { char uid[GSHMEMX_UNIQUEID_BYTES]; int fd; } created = {.fd = -1};

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static int wait_fd(int fd, short ev, double deadline) {
    for (;;) {
        double left = deadline - now_s();
        if (left <= 0) return 0;
        struct pollfd p = {.fd = fd, .events = ev};
        int r = poll(&p, 1, (int)(left * 1000) + 1);
        if (r > 0) return 1;
        if (r < 0 && errno != EINTR) return -1;
    }
}

/* 0 ok, GSHMEM_ERR_TIMEOUT, or GSHMEM_ERR_BOOTSTRAP (closed / error) */
static gshmemi_status io_all(int fd, void *buf, size_t len, bool send_dir, double deadline) {
    char *p = buf;
    while (len) {
        int w = wait_fd(fd, send_dir ? POLLOUT : POLLIN, deadline);
        if (w == 0) return GSHMEM_ERR_TIMEOUT;
        if (w < 0) return GSHMEM_ERR_BOOTSTRAP;
        ssize_t r = send_dir ? send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT)
                             : recv(fd, p, len, MSG_DONTWAIT);
        if (r == 0) return GSHMEM_ERR_BOOTSTRAP;
        if (r < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
            return GSHMEM_ERR_BOOTSTRAP;
        }
        p += r;
        len -= (size_t)r;
    }
    return GSHMEM_SUCCESS;
}

static double deadline_from_now(void) { return now_s() + gshmemi_cfg.BOOTSTRAP_TIMEOUT; }

static gshmemi_status peer_failed(gshmemi_status st, int pe, const char *what) {
    if (st == GSHMEM_ERR_TIMEOUT)
        gshmemi_error("bootstrap %s: PE %d did not answer within %.0f s (GSHMEM_BOOTSTRAP_TIMEOUT): "
                      "is it hung or stuck before gshmem_init?", what, pe, gshmemi_cfg.BOOTSTRAP_TIMEOUT);
    else
        gshmemi_error("bootstrap %s: PE %d closed its connection: did it exit or crash?", what, pe);
    return st;
}

static gshmemi_status send_frame(int fd, uint32_t type, uint32_t code, const void *data, size_t len) {
    frame_hdr h = {.type = type, .code = code, .len = len};
    double dl = deadline_from_now();
    gshmemi_status st = io_all(fd, &h, sizeof h, true, dl);
    if (st == GSHMEM_SUCCESS && len) st = io_all(fd, (void *)data, len, true, dl);
    return st;
}

static void forward_abort(uid_ctx *c, int from, uint32_t code, const char *msg);

/* Receives one DATA frame of exactly len bytes from `pe`; an ABORT frame ends the process. */
static gshmemi_status recv_data(uid_ctx *c, int fd, int pe, void *buf, size_t len, const char *what) {
    frame_hdr h;
    gshmemi_status st = io_all(fd, &h, sizeof h, false, deadline_from_now() + c->grace);
    if (st) return peer_failed(st, pe, what);
    c->grace = 0;
    if (h.type == FRAME_ABORT) {
        char msg[512] = {0};
        size_t n = h.len < sizeof msg - 1 ? h.len : sizeof msg - 1;
        io_all(fd, msg, n, false, now_s() + 2);
        forward_abort(c, pe, h.code, msg);
        gshmemi_error("PE %d aborted the job: %s", pe, msg);
        _exit(h.code ? (int)h.code : 1);
    }
    if (h.type != FRAME_DATA || h.len != len) {
        gshmemi_error("bootstrap %s: PE %d sent %llu bytes where %zu were expected: the PEs are "
                      "not making the same collective calls", what, pe, (unsigned long long)h.len, len);
        return GSHMEM_ERR_BOOTSTRAP;
    }
    st = io_all(fd, buf, len, false, deadline_from_now());
    return st ? peer_failed(st, pe, what) : GSHMEM_SUCCESS;
}

/* Rank 0 gathers n blocks of `len` (its own from `mine`), into `all`. */
static gshmemi_status root_gather(uid_ctx *c, const void *mine, void *all, size_t len, const char *what) {
    memcpy(all, mine, len);
    for (int r = 1; r < c->n; r++)
        GSHMEMI_CHECK(recv_data(c, c->fds[r], r, (char *)all + (size_t)r * len, len, what));
    return GSHMEM_SUCCESS;
}

static gshmemi_status uid_allgather(gshmemi_bootstrap *b, const void *in, void *out, size_t len) {
    uid_ctx *c = b->priv;
    size_t total = (size_t)c->n * len;
    if (c->me != 0) {
        gshmemi_status st = send_frame(c->fds[0], FRAME_DATA, 0, in, len);
        if (st) return peer_failed(st, 0, "allgather");
        return recv_data(c, c->fds[0], 0, out, total, "allgather");
    }
    GSHMEMI_CHECK(root_gather(c, in, out, len, "allgather"));
    for (int r = 1; r < c->n; r++) {
        gshmemi_status st = send_frame(c->fds[r], FRAME_DATA, 0, out, total);
        if (st) return peer_failed(st, r, "allgather");
    }
    return GSHMEM_SUCCESS;
}

static gshmemi_status uid_alltoall(gshmemi_bootstrap *b, const void *in, void *out, size_t len) {
    uid_ctx *c = b->priv;
    size_t row = (size_t)c->n * len;
    if (c->me != 0) {
        gshmemi_status st = send_frame(c->fds[0], FRAME_DATA, 0, in, row);
        if (st) return peer_failed(st, 0, "alltoall");
        return recv_data(c, c->fds[0], 0, out, row, "alltoall");
    }
    char *m = malloc(row * (size_t)c->n), *col = malloc(row);
    gshmemi_status st = m && col ? root_gather(c, in, m, row, "alltoall") : GSHMEM_ERR_NO_MEMORY;
    for (int r = 0; st == GSHMEM_SUCCESS && r < c->n; r++) {
        for (int q = 0; q < c->n; q++)   /* rank r receives block r of every rank's row */
            memcpy(col + (size_t)q * len, m + (size_t)q * row + (size_t)r * len, len);
        if (r == 0) memcpy(out, col, row);
        else if ((st = send_frame(c->fds[r], FRAME_DATA, 0, col, row))) peer_failed(st, r, "alltoall");
    }
    free(m);
    free(col);
    return st;
}

static gshmemi_status uid_barrier(gshmemi_bootstrap *b) {
    uid_ctx *c = b->priv;
    char one = 1, *all = malloc((size_t)c->n);
    if (!all) return GSHMEM_ERR_NO_MEMORY;
    gshmemi_status st = uid_allgather(b, &one, all, 1);
    free(all);
    return st;
}

static void forward_abort(uid_ctx *c, int from, uint32_t code, const char *msg) {
    if (c->me != 0) return;
    for (int r = 1; r < c->n; r++)
        if (r != from && c->fds[r] >= 0) send_frame(c->fds[r], FRAME_ABORT, code, msg, strlen(msg));
}

static void uid_abort(gshmemi_bootstrap *b, int code, const char *msg) {
    uid_ctx *c = b->priv;
    if (!c) return;
    if (c->me == 0) forward_abort(c, 0, (uint32_t)code, msg);
    else if (c->fds[0] >= 0) send_frame(c->fds[0], FRAME_ABORT, (uint32_t)code, msg, strlen(msg));
}

static void uid_finalize(gshmemi_bootstrap *b) {
    uid_ctx *c = b->priv;
    if (!c) return;
    for (int r = 0; r < c->n; r++)
        if (c->fds[r] >= 0) close(c->fds[r]);
    free(c->fds);
    free(c);
    b->priv = NULL;
}

static const struct gshmemi_bootstrap_ops uid_ops = {
    .name = "uid",
    .allgather = uid_allgather,
    .alltoall = uid_alltoall,
    .barrier = uid_barrier,
    .abort = uid_abort,
    .finalize = uid_finalize,
};

/* ---- the id ------------------------------------------------------------------------- */
typedef struct parsed_uid {
    struct sockaddr_in addr;
    uint8_t secret[16];
} parsed_uid;

static bool parse_uid(const char *uid, parsed_uid *p) {
    char ip[64];
    unsigned port;
    char hex[33];
    if (sscanf(uid, "%63[0-9.]:%u:%32[0-9a-f]", ip, &port, hex) != 3 || strlen(hex) != 32 || port > 65535)
        return false;
    memset(p, 0, sizeof *p);
    p->addr.sin_family = AF_INET;
    p->addr.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, ip, &p->addr.sin_addr) != 1) return false;
    for (int i = 0; i < 16; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        p->secret[i] = (uint8_t)v;
    }
    return true;
}

static void pick_address(struct in_addr *a, bool loopback) {
    a->s_addr = htonl(INADDR_LOOPBACK);
    if (loopback) return;
    if (gshmemi_cfg.BOOTSTRAP_IFADDR[0]) {
        if (inet_pton(AF_INET, gshmemi_cfg.BOOTSTRAP_IFADDR, a) != 1)
            gshmemi_warn("GSHMEM_BOOTSTRAP_IFADDR='%s' is not an IPv4 address; using loopback",
                         gshmemi_cfg.BOOTSTRAP_IFADDR);
        return;
    }
    struct ifaddrs *ifs, *i;
    if (getifaddrs(&ifs) != 0) return;
    for (i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
        struct in_addr x = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
        if ((ntohl(x.s_addr) >> 24) == 127) continue;
        *a = x;
        break;
    }
    freeifaddrs(ifs);
}

gshmemi_status gshmemi_uid_create(char *uid, size_t uid_len, int *listen_fd, bool loopback) {
    uint8_t secret[16];
    if (getrandom(secret, sizeof secret, 0) != (ssize_t)sizeof secret) {
        gshmemi_error("getrandom failed: %s", strerror(errno));
        return GSHMEM_ERR_INTERNAL;
    }
    struct sockaddr_in a = {.sin_family = AF_INET};
    pick_address(&a.sin_addr, loopback);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    socklen_t al = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 4096) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &al) != 0) {
        gshmemi_error("unique id: cannot listen on %s: %s (set GSHMEM_BOOTSTRAP_IFADDR to a local "
                      "address)", inet_ntoa(a.sin_addr), strerror(errno));
        if (fd >= 0) close(fd);
        return GSHMEM_ERR_BOOTSTRAP;
    }
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &a.sin_addr, ip, sizeof ip);
    int n = snprintf(uid, uid_len, "%s:%u:", ip, ntohs(a.sin_port));
    for (int i = 0; i < 16 && n + 2 < (int)uid_len; i++) n += snprintf(uid + n, uid_len - (size_t)n, "%02x", secret[i]);
    /* the caller owns fd (and may have closed an earlier one): only remember this one */
    snprintf(created.uid, sizeof created.uid, "%s", uid);
    created.fd = fd;
    *listen_fd = fd;
    return GSHMEM_SUCCESS;
}

int gshmemx_launcher_uniqueid(gshmemx_uniqueid_t *uid, int *listen_fd) {
    if (!uid || !listen_fd) {
        gshmemi_error("gshmemx_launcher_uniqueid: uid and listen_fd must not be NULL");
        return GSHMEM_ERR_INVALID_ARG;
    }
    memset(uid, 0, sizeof *uid);
    return gshmemi_uid_create(uid->internal, sizeof uid->internal, listen_fd, true);
}

/* ---- connection setup -------------------------------------------------------------- */
static gshmemi_status root_accept(uid_ctx *c, int lfd, const parsed_uid *u) {
    double deadline = deadline_from_now();
    int joined = 0;
    while (joined < c->n - 1) {
        int w = wait_fd(lfd, POLLIN, deadline);
        if (w <= 0) {
            char missing[256] = "";
            size_t m = 0;
            for (int r = 1; r < c->n && m < sizeof missing - 12; r++)
                if (c->fds[r] < 0) m += (size_t)snprintf(missing + m, sizeof missing - m, " %d", r);
            char msg[512];
            snprintf(msg, sizeof msg, "bootstrap: PE(s)%s did not join within %.0f s (GSHMEM_BOOTSTRAP_TIMEOUT): "
                     "did they exit before gshmem_init, or get another unique id?", missing,
                     gshmemi_cfg.BOOTSTRAP_TIMEOUT);
            gshmemi_error("%s", msg);
            forward_abort(c, 0, 1, msg);   /* the PEs that joined end with the same report */
            return GSHMEM_ERR_TIMEOUT;
        }
        struct sockaddr_in pa;
        socklen_t pl = sizeof pa;
        int fd = accept4(lfd, (struct sockaddr *)&pa, &pl, SOCK_CLOEXEC);
        if (fd < 0) continue;
        hello h;
        gshmemi_status st = io_all(fd, &h, sizeof h, false, now_s() + 10);
        const char *why = st ? "sent no greeting"
                        : h.magic != HELLO_MAGIC || memcmp(h.secret, u->secret, 16) ? "presented a wrong secret"
                        : h.size != c->n ? "belongs to a job of another size"
                        : h.rank <= 0 || h.rank >= c->n ? "claimed an invalid rank"
                        : c->fds[h.rank] >= 0 ? "claimed a rank already taken" : NULL;
        if (why) {
            gshmemi_warn("bootstrap: refused a connection from %s:%u that %s", inet_ntoa(pa.sin_addr),
                         ntohs(pa.sin_port), why);
            close(fd);
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        c->fds[h.rank] = fd;
        joined++;
    }
    return GSHMEM_SUCCESS;
}

static gshmemi_status connect_root(uid_ctx *c, const parsed_uid *u) {
    double deadline = deadline_from_now(), backoff = 0.001;
    while (now_s() < deadline) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) return GSHMEM_ERR_BOOTSTRAP;
        if (connect(fd, (const struct sockaddr *)&u->addr, sizeof u->addr) == 0) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            hello h = {.magic = HELLO_MAGIC, .rank = c->me, .size = c->n};
            memcpy(h.secret, u->secret, 16);
            if (io_all(fd, &h, sizeof h, true, deadline) == GSHMEM_SUCCESS) {
                c->fds[0] = fd;
                c->grace = gshmemi_cfg.BOOTSTRAP_TIMEOUT + 5;
                return GSHMEM_SUCCESS;
            }
        }
        close(fd);
        usleep((useconds_t)(backoff * 1e6));
        if (backoff < 0.1) backoff *= 2;
    }
    gshmemi_error("bootstrap: could not reach PE 0 at %s:%u within %.0f s: is PE 0 running, and "
                  "was this unique id made by it?", inet_ntoa(u->addr.sin_addr), ntohs(u->addr.sin_port),
                  gshmemi_cfg.BOOTSTRAP_TIMEOUT);
    return GSHMEM_ERR_TIMEOUT;
}

gshmemi_status gshmemi_bootstrap_uid_init(gshmemi_bootstrap *b, const char *uid, int rank,
                                          int size, int listen_fd) {
    parsed_uid u;
    if (!parse_uid(uid, &u)) {
        gshmemi_error("unique id '%s' is malformed (expected <ipv4>:<port>:<32 hex digits>)", uid);
        return GSHMEM_ERR_INVALID_ARG;
    }
    if (rank < 0 || rank >= size) {
        gshmemi_error("uid bootstrap: rank %d is not in [0, %d)", rank, size);
        return GSHMEM_ERR_INVALID_ARG;
    }
    uid_ctx *c = calloc(1, sizeof *c);
    if (!c || !(c->fds = malloc((size_t)size * sizeof *c->fds))) { free(c); return GSHMEM_ERR_NO_MEMORY; }
    for (int r = 0; r < size; r++) c->fds[r] = -1;
    c->me = rank;
    c->n = size;
    b->ops = &uid_ops;
    b->priv = c;
    b->rank = rank;
    b->size = size;
    gshmemi_status st;
    if (rank == 0) {
        if (listen_fd < 0 && !strcmp(created.uid, uid)) listen_fd = created.fd;
        if (listen_fd < 0) {
            gshmemi_error("uid bootstrap: this process is rank 0 but did not create the unique id "
                          "'%s': the id must be made (gshmemx_get_uniqueid) by the process that "
                          "becomes PE 0", uid);
            st = GSHMEM_ERR_INVALID_ARG;
        } else {
            st = root_accept(c, listen_fd, &u);
            close(listen_fd);   /* everyone has joined: nobody else may */
            if (listen_fd == created.fd) created.fd = -1;
        }
    } else {
        st = connect_root(c, &u);
    }
    if (st == GSHMEM_SUCCESS) st = uid_barrier(b);
    if (st != GSHMEM_SUCCESS) uid_finalize(b);
    return st;
}
