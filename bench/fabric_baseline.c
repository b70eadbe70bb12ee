/* Raw libfabric between two processes, host memory, no gshmem: the floor the proxy transport
 * is compared with (same provider and interface). Prints fi_write one-way latency (8-byte
 * ping-pong / 2, each side polling its memory while reading its CQ: manual progress), fi_write
 * bandwidth (64 writes in flight, then one FI_DELIVERY_COMPLETE write) from 1 KiB to 64 MiB,
 * and the 8-byte fi_atomic (FI_SUM) rate.
 *   fabric_baseline [-p provider] [-i iface-or-ipv4] [-n ns0,ns1 -a ip0,ip1]
 * -p defaults to tcp;ofi_rxm, -i to lo; -n runs the two processes in the named network
 * namespaces (root), with -a the address each uses there. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#define BUF (64u << 20)
#define WINDOW 64

#define CHECK(call)                                                                            \
    do {                                                                                       \
        long r_ = (long)(call);                                                                \
        if (r_) {                                                                              \
            fprintf(stderr, "fabric_baseline: %s failed: %s\n", #call, fi_strerror((int)-r_)); \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

typedef struct side {
    struct fi_info *info;
    struct fid_fabric *fab;
    struct fid_domain *dom;
    struct fid_ep *ep;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_mr *mr;
    char *buf;
    fi_addr_t peer;
    uint64_t rkey, rbase;
    int rank;
} side;

typedef struct card {
    uint8_t addr[256];
    uint64_t addrlen, key, base;
} card;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static void ip_of(const char *iface, char *ip) {
    struct in_addr a;
    if (inet_pton(AF_INET, iface, &a) == 1) {
        strcpy(ip, iface);
        return;
    }
    struct ifaddrs *ifs;
    ip[0] = 0;
    if (getifaddrs(&ifs)) return;
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && !strcmp(i->ifa_name, iface))
            inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, ip, 64);
    freeifaddrs(ifs);
}

static void open_side(side *s, const char *prov, const char *node) {
    struct fi_info *h = fi_allocinfo();
    h->ep_attr->type = FI_EP_RDM;
    h->caps = FI_RMA | FI_ATOMIC | FI_MSG;
    h->mode = FI_CONTEXT | FI_CONTEXT2;
    h->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    h->domain_attr->av_type = FI_AV_TABLE;
    h->fabric_attr->prov_name = strdup(prov);
    CHECK(fi_getinfo(FI_VERSION(1, 12), node, NULL, FI_SOURCE, h, &s->info));
    fi_freeinfo(h);
    CHECK(fi_fabric(s->info->fabric_attr, &s->fab, NULL));
    CHECK(fi_domain(s->fab, s->info, &s->dom, NULL));
    struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_CONTEXT, .size = 4096};
    CHECK(fi_cq_open(s->dom, &cqa, &s->cq, NULL));
    struct fi_av_attr ava = {.type = FI_AV_TABLE, .count = 2};
    CHECK(fi_av_open(s->dom, &ava, &s->av, NULL));
    CHECK(fi_endpoint(s->dom, s->info, &s->ep, NULL));
    CHECK(fi_ep_bind(s->ep, &s->av->fid, 0));
    CHECK(fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV));
    CHECK(fi_enable(s->ep));
    if (posix_memalign((void **)&s->buf, 4096, BUF + 4096)) exit(1);
    memset(s->buf, 0, BUF + 4096);
    CHECK(fi_mr_reg(s->dom, s->buf, BUF + 4096, FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, 0,
                    0x5eed0000u + (uint64_t)s->rank, 0, &s->mr, NULL));
    if (s->info->domain_attr->mr_mode & FI_MR_ENDPOINT) {
        CHECK(fi_mr_bind(s->mr, &s->ep->fid, 0));
        CHECK(fi_mr_enable(s->mr));
    }
}

static void exchange(side *s, int sock) {
    /* FI_MR_VIRT_ADDR: remote addresses are the peer's virtual addresses, else offsets */
    card me = {.key = fi_mr_key(s->mr),
               .base = s->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR ? (uint64_t)(uintptr_t)s->buf : 0};
    size_t len = sizeof me.addr;
    CHECK(fi_getname(&s->ep->fid, me.addr, &len));
    me.addrlen = len;
    card other;
    if (write(sock, &me, sizeof me) != sizeof me || read(sock, &other, sizeof other) != sizeof other) exit(1);
    if (fi_av_insert(s->av, other.addr, 1, &s->peer, 0, NULL) != 1) exit(1);
    s->rkey = other.key;
    s->rbase = other.base;
}

static int reap(side *s) {
    struct fi_cq_entry e[64];
    ssize_t n = fi_cq_read(s->cq, e, 64);
    if (n > 0) return (int)n;
    if (n == -FI_EAVAIL) {
        struct fi_cq_err_entry ee = {0};
        fi_cq_readerr(s->cq, &ee, 0);
        fprintf(stderr, "fabric_baseline: error completion: %s\n", fi_strerror(ee.err));
        exit(1);
    }
    return 0;
}

/* The rate loops: nothing read, the core goes to whoever waits for it, as the proxy's loop
 * does (at once on a core of its own; on a shared machine two spinning processes would pass
 * the core only at the scheduler's tick). The latency loop spins. */
static int reap_or_yield(side *s) {
    int n = reap(s);
    if (!n) sched_yield();
    return n;
}

/* One write (retried while the provider asks for progress); raddr from remote_off. */
static void post_write(side *s, const void *src, size_t n, uint64_t raddr, uint64_t flags) {
    struct iovec iov = {.iov_base = (void *)src, .iov_len = n};
    void *desc = fi_mr_desc(s->mr);
    struct fi_rma_iov rio = {.addr = raddr, .len = n, .key = s->rkey};
    struct fi_msg_rma m = {.msg_iov = &iov, .desc = &desc, .iov_count = 1, .addr = s->peer, .rma_iov = &rio,
                           .rma_iov_count = 1};
    for (;;) {
        ssize_t r = fi_writemsg(s->ep, &m, flags | FI_COMPLETION);
        if (!r) return;
        if (r != -FI_EAGAIN) CHECK(r);
        reap(s);
    }
}

static uint64_t remote_off(side *s, uint64_t off) { return s->rbase + off; }

/* A peer that died leaves the other side waiting: it gives up after 20 s instead of spinning on. */
static void check_alive(double t0, const char *what) {
    if (now_s() - t0 < 20) return;
    fprintf(stderr, "fabric_baseline: no %s from the other process for 20 s (did it die?)\n", what);
    exit(1);
}

static volatile uint64_t *flag_of(side *s) { return (volatile uint64_t *)(s->buf + BUF); }

static void pingpong(side *s, int iters, int rank) {
    uint64_t v;
    double t0 = 0;
    for (int i = 1; i <= iters + 100; i++) {
        if (i == 101) t0 = now_s();   /* 100 warm-up rounds: connection set-up excluded */
        v = (uint64_t)i;
        if (rank == 0) {
            post_write(s, &v, 8, remote_off(s, BUF), 0);
            for (double tw = now_s(); *flag_of(s) != v; check_alive(tw, "answer")) reap(s);
        } else {
            for (double tw = now_s(); *flag_of(s) != v; check_alive(tw, "write")) reap(s);
            post_write(s, &v, 8, remote_off(s, BUF), 0);
        }
    }
    if (rank == 0)
        printf("fabric_baseline %s: fi_write 8 B one-way latency %.2f us (ping-pong / 2, %d rounds)\n",
               s->info->fabric_attr->prov_name, (now_s() - t0) / iters / 2 * 1e6, iters);
}

/* fi_send ping-pong of `size` bytes (the staged protocol's messages: a one-p request is 168 B):
 * each side keeps receives posted in its buffer and reads its CQ until the message came. */
static void msg_pingpong(side *s, int iters, int rank, size_t size, size_t SLOT) {
    enum { NRX = 8 };
    char *rx = s->buf + BUF - (NRX + 1) * SLOT, *tx = s->buf + BUF - SLOT;
    void *desc = fi_mr_desc(s->mr);
    /* the provider may use a context (FI_CONTEXT) until its completion: one per operation */
    static struct fi_context2 ctx[NRX], txc[64];
    int ntx = 0;
    for (int k = 0; k < NRX; k++) CHECK(fi_recv(s->ep, rx + k * SLOT, SLOT, desc, FI_ADDR_UNSPEC, &ctx[k]));
    double t0 = 0;
    for (int i = 1; i <= iters + 100; i++) {
        if (i == 101) t0 = now_s();
        for (int turn = 0; turn < 2; turn++) {
            if ((turn == 0) == (rank == 0)) {   /* send */
                for (;;) {
                    ssize_t r = fi_send(s->ep, tx, size, desc, s->peer, &txc[ntx % 64]);
                    if (!r) break;
                    if (r != -FI_EAGAIN) CHECK(r);
                    reap(s);
                }
                ntx++;
                continue;
            }
            double tw = now_s();
            for (int got = 0; !got; check_alive(tw, "message")) {   /* one completion of a posted buffer */
                struct fi_cq_entry e[8];
                ssize_t n = fi_cq_read(s->cq, e, 8);
                if (n == -FI_EAVAIL || (n < 0 && n != -FI_EAGAIN)) CHECK(n);
                for (ssize_t k = 0; k < n; k++) {
                    struct fi_context2 *c = e[k].op_context;
                    if (c < ctx || c >= ctx + NRX) continue;   /* one of our sends completed */
                    got = 1;
                    CHECK(fi_recv(s->ep, rx + (c - ctx) * SLOT, SLOT, desc, FI_ADDR_UNSPEC, c));
                }
            }
        }
    }
    if (rank == 0)
        printf("fabric_baseline %s: fi_send %zu B one-way latency %.2f us (ping-pong / 2, %d rounds, receives of %zu B)\n",
               s->info->fabric_attr->prov_name, size, (now_s() - t0) / iters / 2 * 1e6, iters, SLOT);
    /* both sides are past the last receive: cancel the posted ones, read every completion */
    for (int k = 0; k < NRX; k++) fi_cancel(&s->ep->fid, &ctx[k]);
    for (double t = now_s(); now_s() - t < 0.01;) {
        struct fi_cq_entry e[8];
        if (fi_cq_read(s->cq, e, 8) == -FI_EAVAIL) {
            struct fi_cq_err_entry ee = {0};
            fi_cq_readerr(s->cq, &ee, 0);
        }
    }
}

static void bandwidth(side *s, int rank, int sock) {
    static const size_t sizes[] = {1024, 4096, 65536, 1u << 20, 4u << 20, 16u << 20, 64u << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        int reps = n <= 65536 ? 2000 : n <= (4u << 20) ? 200 : 16;
        char go = 1;
        if (rank == 1) {   /* the target progresses until rank 0 says done */
            int fl = fcntl(sock, F_GETFL);
            fcntl(sock, F_SETFL, fl | O_NONBLOCK);
            while (read(sock, &go, 1) != 1) reap_or_yield(s);
            fcntl(sock, F_SETFL, fl);
            continue;
        }
        double t0 = now_s();
        int inflight = 0;
        for (int i = 0; i < reps; i++) {
            while (inflight >= WINDOW) inflight -= reap_or_yield(s);
            size_t off = n >= BUF ? 0 : (size_t)i * n % (BUF - n);
            post_write(s, s->buf + off, n, remote_off(s, off), 0);
            inflight++;
        }
        uint64_t v = 1;   /* everything before it is delivered once this completes */
        post_write(s, &v, 8, remote_off(s, BUF + 8), FI_DELIVERY_COMPLETE);
        inflight++;
        while (inflight > 0) inflight -= reap_or_yield(s);
        double dt = now_s() - t0;
        printf("fabric_baseline %s: fi_write %8zu B x %4d, %d in flight: %.2f GB/s\n",
               s->info->fabric_attr->prov_name, n, reps, WINDOW, (double)n * reps / dt / 1e9);
        if (write(sock, &go, 1) != 1) exit(1);
    }
}

static void atomic_rate(side *s, int rank, int sock) {
    char go = 1;
    if (rank == 1) {
        int fl = fcntl(sock, F_GETFL);
        fcntl(sock, F_SETFL, fl | O_NONBLOCK);
        while (read(sock, &go, 1) != 1) reap_or_yield(s);
        return;
    }
    uint64_t one = 1;
    int n = 20000, inflight = 0;
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        while (inflight >= WINDOW) inflight -= reap_or_yield(s);
        for (;;) {
            ssize_t r = fi_atomic(s->ep, &one, 1, fi_mr_desc(s->mr), s->peer, remote_off(s, BUF + 16), s->rkey,
                                  FI_UINT64, FI_SUM, NULL);
            if (!r) break;
            if (r != -FI_EAGAIN) CHECK(r);
            reap_or_yield(s);
        }
        inflight++;
    }
    while (inflight > 0) inflight -= reap_or_yield(s);
    printf("fabric_baseline %s: fi_atomic 8 B FI_SUM rate %.3f million/s (%d in flight)\n",
           s->info->fabric_attr->prov_name, n / (now_s() - t0) / 1e6, WINDOW);
    if (write(sock, &go, 1) != 1) exit(1);
}

static int run(int rank, int sock, const char *prov, const char *node, const char *ns) {
    if (ns) {
        char path[128];
        snprintf(path, sizeof path, "/run/netns/%s", ns);
        int fd = open(path, O_RDONLY);
        if (fd < 0 || setns(fd, CLONE_NEWNET)) {
            perror(path);
            return 1;
        }
    }
    side s = {.rank = rank};
    open_side(&s, prov, node);
    exchange(&s, sock);
    if (rank == 0) printf("fabric_baseline: provider %s, address %s\n", s.info->fabric_attr->prov_name, node);
    pingpong(&s, 2000, rank);
    msg_pingpong(&s, 2000, rank, 8, 4096);
    msg_pingpong(&s, 2000, rank, 168, 4096);
    msg_pingpong(&s, 2000, rank, 168, 512u << 10);
    bandwidth(&s, rank, sock);
    atomic_rate(&s, rank, sock);
    char bye = 0;   /* neither closes while the other may still need its progress */
    if (write(sock, &bye, 1) != 1 || read(sock, &bye, 1) != 1) return 1;
    fi_close(&s.ep->fid);
    fi_close(&s.mr->fid);
    return 0;
}

int main(int argc, char **argv) {
    const char *prov = "tcp;ofi_rxm", *iface = "lo", *nss = NULL, *ips = NULL;
    int o;
    while ((o = getopt(argc, argv, "p:i:n:a:")) != -1) {
        if (o == 'p') prov = optarg;
        else if (o == 'i') iface = optarg;
        else if (o == 'n') nss = optarg;
        else if (o == 'a') ips = optarg;
        else {
            fprintf(stderr, "usage: %s [-p provider] [-i iface-or-ipv4] [-n ns0,ns1 -a ip0,ip1]\n", argv[0]);
            return 2;
        }
    }
    char ns[2][64] = {"", ""}, ip[2][64];
    if (nss && (!ips || sscanf(nss, "%63[^,],%63s", ns[0], ns[1]) != 2 || sscanf(ips, "%63[^,],%63s", ip[0], ip[1]) != 2)) {
        fprintf(stderr, "-n needs two namespaces and -a their two addresses\n");
        return 2;
    }
    if (!nss) {
        ip_of(iface, ip[0]);
        strcpy(ip[1], ip[0]);
    }
    if (!ip[0][0]) {
        fprintf(stderr, "no IPv4 address for '%s'\n", iface);
        return 2;
    }
    int sv[2];
    socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
    alarm(300);
    pid_t child = fork();
    if (child == 0) {
        close(sv[0]);
        _exit(run(1, sv[1], prov, ip[1], nss ? ns[1] : NULL));
    }
    close(sv[1]);
    int r = run(0, sv[0], prov, ip[0], nss ? ns[0] : NULL), st = 0;
    waitpid(child, &st, 0);
    return r || !WIFEXITED(st) || WEXITSTATUS(st);
}
