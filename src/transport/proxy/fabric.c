/* The libfabric layer of the proxy (fabric.h): choosing the provider and interface, opening
 * the RDM endpoint, exchanging addresses and heap keys, reading the completion queue and
 * handing each entry to the mode's handler. Every libfabric call is checked and its error
 * named with the call. */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_rma.h>

#include "config.h"
#include "fabric.h"

#define FAB_VERSION FI_VERSION(1, 12)
#define ADDR_MAX 256

/* Tried in this order when GSHMEM_FABRIC_PROVIDER is empty: hardware first, tcp last. */
static const char *default_providers[] = {"cxi", "efa", "verbs;ofi_rxm", "psm3", "tcp;ofi_rxm", "net;ofi_rxm",
                                          "sockets"};

/* What each PE publishes. */
typedef struct card {
    char prov[64];
    char mode[16];
    uint32_t addrlen;
    uint64_t key, base;
    uint8_t addr[ADDR_MAX];
} card;

const char *gshmemi_fab_strerror(int ret) { return fi_strerror(ret < 0 ? -ret : ret); }

#define FAB_CHECK(call, what)                                                                  \
    do {                                                                                       \
        int ret_ = (int)(call);                                                                \
        if (ret_) {                                                                            \
            gshmemi_error("proxy: %s failed: %s (provider %s)", what, gshmemi_fab_strerror(ret_), \
                          f->prov[0] ? f->prov : "?");                                         \
            return GSHMEM_ERR_NOT_AVAILABLE;                                                   \
        }                                                                                      \
    } while (0)

static bool is_loopback(const struct fi_info *i) {
    const struct sockaddr *sa = i->src_addr;
    if (!sa) return false;
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6)
        return !memcmp(&((const struct sockaddr_in6 *)sa)->sin6_addr, &in6addr_loopback, 16);
    return false;
}

/* GSHMEM_FABRIC_IFACE as an IPv4 address (a name is looked up); false if it names nothing. */
static bool iface_address(const char *iface, char *ip, size_t len) {
    struct in_addr a;
    if (inet_pton(AF_INET, iface, &a) == 1) {
        snprintf(ip, len, "%s", iface);
        return true;
    }
    struct ifaddrs *ifs;
    bool found = false;
    if (getifaddrs(&ifs) != 0) return false;
    for (struct ifaddrs *i = ifs; i && !found; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || strcmp(i->ifa_name, iface)) continue;
        inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, ip, (socklen_t)len);
        found = true;
    }
    freeifaddrs(ifs);
    return found;
}

static struct fi_info *make_hints(const pfabric *f, const char *prov) {
    struct fi_info *h = fi_allocinfo();
    if (!h) return NULL;
    h->ep_attr->type = FI_EP_RDM;
    h->caps = f->p.caps;
    h->mode = FI_CONTEXT | FI_CONTEXT2;
    /* FI_MR_LOCAL only for a mode whose every local buffer is registered */
    h->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT |
                              (f->p.mr_local ? FI_MR_LOCAL : 0);
    h->domain_attr->threading = FI_THREAD_DOMAIN;   /* only the proxy thread touches the endpoint */
    h->domain_attr->av_type = FI_AV_TABLE;
    h->fabric_attr->prov_name = strdup(prov);
    return h;
}

static bool ip_addressed(const struct fi_info *i) {
    return i->addr_format == FI_SOCKADDR_IN || i->addr_format == FI_SOCKADDR_IN6 || i->addr_format == FI_SOCKADDR;
}

static struct fi_info *getinfo(const pfabric *f, const char *prov, const char *node, bool quiet) {
    struct fi_info *h = make_hints(f, prov), *list = NULL;
    if (!h) return NULL;
    int ret = fi_getinfo(FAB_VERSION, node, NULL, node ? FI_SOURCE : 0, h, &list);
    fi_freeinfo(h);
    if (ret && !quiet)
        gshmemi_error("proxy: fi_getinfo(provider '%s'%s%s) failed: %s", prov, node ? ", address " : "",
                      node ? node : "", gshmemi_fab_strerror(ret));
    return ret ? NULL : list;
}

/* The first usable fi_info of provider `prov` on the configured interface, or NULL. The
 * interface's address is given only to IP-addressed providers (shm names its endpoints
 * otherwise). */
static struct fi_info *try_provider(const pfabric *f, const char *prov, const char *node, bool quiet) {
    struct fi_info *list = getinfo(f, prov, NULL, quiet);
    if (list && node && ip_addressed(list)) {
        fi_freeinfo(list);
        list = getinfo(f, prov, node, quiet);
    } else {
        node = NULL;
    }
    struct fi_info *pick = NULL;
    for (struct fi_info *i = list; i && !pick; i = i->next)   /* exact provider name, not a layering */
        if (!strcmp(i->fabric_attr->prov_name, prov) && (node || !is_loopback(i))) pick = i;
    for (struct fi_info *i = list; i && !pick; i = i->next)
        if (!strcmp(i->fabric_attr->prov_name, prov)) pick = i;
    struct fi_info *dup = pick ? fi_dupinfo(pick) : NULL;
    fi_freeinfo(list);
    return dup;
}

static gshmemi_status choose_info(pfabric *f) {
    const char *want = gshmemi_cfg.FABRIC_PROVIDER, *iface = gshmemi_cfg.FABRIC_IFACE;
    char ip[64], *node = NULL;
    if (iface[0]) {
        if (!iface_address(iface, ip, sizeof ip)) {
            gshmemi_error("proxy: GSHMEM_FABRIC_IFACE='%s' is neither an IPv4 address nor an interface with one "
                          "on this host; set it to the interface that reaches the other nodes", iface);
            return GSHMEM_ERR_INVALID_ARG;
        }
        node = ip;
    }
    if (want[0]) {
        f->info = try_provider(f, want, node, false);
    } else {
        size_t n = sizeof default_providers / sizeof *default_providers;
        for (size_t k = 0; k < n && !f->info; k++) f->info = try_provider(f, default_providers[k], node, true);
    }
    if (!f->info) {
        gshmemi_error("proxy: no libfabric provider offers %s RDM endpoints%s%s (GSHMEM_FABRIC_PROVIDER='%s'): "
                      "set GSHMEM_FABRIC_PROVIDER to one this host has (e.g. tcp;ofi_rxm)",
                      f->p.caps & FI_RMA ? "RMA+atomic" : "message", node ? " on " : "", node ? node : "", want);
        return GSHMEM_ERR_NOT_AVAILABLE;
    }
    snprintf(f->prov, sizeof f->prov, "%s", f->info->fabric_attr->prov_name);
    if (is_loopback(f->info) && !f->p.single_host) {
        gshmemi_error("proxy: provider %s would publish a loopback address to PEs on other hosts (their traffic "
                      "would go nowhere): set GSHMEM_FABRIC_IFACE to the interface that reaches them", f->prov);
        return GSHMEM_ERR_INVALID_ARG;
    }
    return GSHMEM_SUCCESS;
}

static gshmemi_status open_objects(pfabric *f) {
    struct fi_info *i = f->info;
    FAB_CHECK(fi_fabric(i->fabric_attr, &f->fabric, NULL), "fi_fabric");
    FAB_CHECK(fi_domain(f->fabric, i, &f->domain, NULL), "fi_domain");
    struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_MSG, .wait_obj = FI_WAIT_NONE,
                             .size = i->tx_attr->size + i->rx_attr->size};
    FAB_CHECK(fi_cq_open(f->domain, &cqa, &f->cq, NULL), "fi_cq_open");
    struct fi_av_attr ava = {.type = FI_AV_TABLE, .count = (size_t)f->p.npes};
    FAB_CHECK(fi_av_open(f->domain, &ava, &f->av, NULL), "fi_av_open");
    FAB_CHECK(fi_endpoint(f->domain, i, &f->ep, NULL), "fi_endpoint");
    FAB_CHECK(fi_ep_bind(f->ep, &f->av->fid, 0), "fi_ep_bind(av)");
    FAB_CHECK(fi_ep_bind(f->ep, &f->cq->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind(cq)");
    FAB_CHECK(fi_enable(f->ep), "fi_enable");
    f->mr_local = i->domain_attr->mr_mode & FI_MR_LOCAL;
    f->mr_endpoint = i->domain_attr->mr_mode & FI_MR_ENDPOINT;
    f->virt_addr = i->domain_attr->mr_mode & FI_MR_VIRT_ADDR;
    f->max_msg = i->ep_attr->max_msg_size ? i->ep_attr->max_msg_size : (1ull << 30);
    if (f->max_msg > (1ull << 30)) f->max_msg = 1ull << 30;
    f->n_xfers = i->tx_attr->size ? i->tx_attr->size : 256;
    f->xfers = calloc(f->n_xfers, sizeof *f->xfers);
    if (!f->xfers) return GSHMEM_ERR_NO_MEMORY;
    for (size_t k = 0; k < f->n_xfers; k++) {
        f->xfers[k].next = f->free_xfers;
        f->free_xfers = &f->xfers[k];
    }
    return GSHMEM_SUCCESS;
}

/* A key nobody can guess: random per PE and job (mr_mode without FI_MR_PROV_KEY lets the
 * application choose it), trimmed to the provider's key size. */
uint64_t gshmemi_fab_random_key(const pfabric *f) {
    uint64_t k = 0;
    if (getrandom(&k, sizeof k, 0) != (ssize_t)sizeof k) k = (uint64_t)(uintptr_t)&k ^ (uint64_t)gshmemi_proxy_now();
    size_t ks = f->info->domain_attr->mr_key_size;
    if (ks && ks < 8) k &= (1ull << (8 * ks)) - 1;
    return k;
}

gshmemi_status gshmemi_fab_register(pfabric *f, void *buf, size_t len, uint64_t access, uint64_t key,
                                    struct fid_mr **mr, const char *what) {
    char call[96];
    snprintf(call, sizeof call, "fi_mr_reg(%s, %zu bytes)", what, len);
    FAB_CHECK(fi_mr_reg(f->domain, buf, len, access, 0, key, 0, mr, NULL), call);
    if (f->mr_endpoint) {
        FAB_CHECK(fi_mr_bind(*mr, &f->ep->fid, 0), "fi_mr_bind");
        FAB_CHECK(fi_mr_enable(*mr), "fi_mr_enable");
    }
    return GSHMEM_SUCCESS;
}

static void format_addr(pfabric *f, const void *addr, size_t len) {
    size_t n = sizeof f->addr;
    if (!fi_av_straddr(f->av, addr, f->addr, &n)) snprintf(f->addr, sizeof f->addr, "?");
}

/* Allgather of the cards; every PE must run the same provider and mode. */
gshmemi_status gshmemi_fab_exchange(pfabric *f, uint64_t key, const void *heap_base) {
    int n = f->p.npes;
    card me = {.key = key, .base = f->virt_addr ? 0 : (uint64_t)(uintptr_t)heap_base};
    snprintf(me.prov, sizeof me.prov, "%s", f->prov);
    snprintf(me.mode, sizeof me.mode, "%s", f->p.mode);
    size_t len = sizeof me.addr;
    FAB_CHECK(fi_getname(&f->ep->fid, me.addr, &len), "fi_getname");
    me.addrlen = (uint32_t)len;
    format_addr(f, me.addr, len);
    card *all = calloc((size_t)n, sizeof *all);
    uint8_t *addrs = calloc((size_t)n, len);
    fi_addr_t *fa = calloc((size_t)n, sizeof *fa);
    f->rkey = calloc((size_t)n, sizeof *f->rkey);
    f->rbase = calloc((size_t)n, sizeof *f->rbase);
    gshmemi_status st = all && addrs && fa && f->rkey && f->rbase ? GSHMEM_SUCCESS : GSHMEM_ERR_NO_MEMORY;
    if (!st) st = f->p.allgather(f->p.allgather_ctx, &me, all, sizeof me);
    for (int pe = 0; !st && pe < n; pe++) {
        if (strcmp(all[pe].prov, me.prov) || strcmp(all[pe].mode, me.mode) || all[pe].addrlen != me.addrlen) {
            gshmemi_error("proxy: PE %d uses provider '%s' in %s mode, this PE '%s' in %s mode: set "
                          "GSHMEM_FABRIC_PROVIDER and GSHMEM_PROXY_MODE alike on every PE", pe, all[pe].prov,
                          all[pe].mode, me.prov, me.mode);
            st = GSHMEM_ERR_INVALID_ARG;
            break;
        }
        memcpy(addrs + (size_t)pe * len, all[pe].addr, len);
        f->rkey[pe] = all[pe].key;
        f->rbase[pe] = all[pe].base;
    }
    if (!st) {
        int ret = fi_av_insert(f->av, addrs, (size_t)n, fa, 0, NULL);
        if (ret != n) {
            gshmemi_error("proxy: fi_av_insert of %d addresses inserted %d: %s", n, ret,
                          ret < 0 ? gshmemi_fab_strerror(ret) : "some address was refused");
            st = GSHMEM_ERR_NOT_AVAILABLE;
        }
        for (int pe = 0; !st && pe < n; pe++)
            if (fa[pe] != (fi_addr_t)pe) {   /* FI_AV_TABLE promises fi_addr = index */
                gshmemi_error("proxy: fi_av_insert gave PE %d the address %llu", pe, (unsigned long long)fa[pe]);
                st = GSHMEM_ERR_INTERNAL;
            }
    }
    free(all);
    free(addrs);
    free(fa);
    return st;
}

gshmemi_status gshmemi_fab_open(pfabric *f, const gshmemi_fab_params *p) {
    f->p = *p;
    GSHMEMI_CHECK(choose_info(f));
    return open_objects(f);
}

static void close_fid(struct fid *fid, const char *what) {
    if (!fid) return;
    int ret = fi_close(fid);
    if (ret) gshmemi_warn("proxy: fi_close(%s): %s", what, gshmemi_fab_strerror(ret));
}

void gshmemi_fab_close(pfabric *f) {
    close_fid(f->ep ? &f->ep->fid : NULL, "endpoint");
    close_fid(f->heap_mr ? &f->heap_mr->fid : NULL, "heap registration");
    close_fid(f->bufs_mr ? &f->bufs_mr->fid : NULL, "buffer registration");
    close_fid(f->av ? &f->av->fid : NULL, "address vector");
    close_fid(f->cq ? &f->cq->fid : NULL, "completion queue");
    close_fid(f->domain ? &f->domain->fid : NULL, "domain");
    close_fid(f->fabric ? &f->fabric->fid : NULL, "fabric");
    if (f->info) fi_freeinfo(f->info);
    free(f->xfers);
    free(f->rkey);
    free(f->rbase);
    memset(f, 0, sizeof *f);
}

uint64_t gshmemi_fab_raddr(const pfabric *f, int pe, uint64_t sym) { return sym - f->rbase[pe]; }

xfer *gshmemi_xfer_get(pfabric *f, struct op_rec *rec, uint64_t ticket) {
    xfer *x = f->free_xfers;
    if (!x) return NULL;
    f->free_xfers = x->next;
    x->kind = XF_RMA;
    x->rec = rec;
    x->ticket = ticket;
    return x;
}

void gshmemi_xfer_put(pfabric *f, xfer *x) {
    x->next = f->free_xfers;
    f->free_xfers = x;
}

static void dispatch(pfabric *f, void *ctx, size_t len, int err) {
    if (ctx) f->p.on_completion(f->p.handler_ctx, ctx, len, err);
}

int gshmemi_fab_progress(pfabric *f) {
    struct fi_cq_msg_entry e[32];
    ssize_t n = fi_cq_read(f->cq, e, 32);
    if (n > 0) {
        for (ssize_t k = 0; k < n; k++) dispatch(f, e[k].op_context, e[k].len, 0);
        return (int)n;
    }
    if (n == -FI_EAGAIN) return 0;
    if (n != -FI_EAVAIL) {
        gshmemi_perr_fail(f->p.err, GSHMEM_ERR_INTERNAL, "proxy: fi_cq_read failed: %s", gshmemi_fab_strerror((int)n));
        return 0;
    }
    struct fi_cq_err_entry ee;
    memset(&ee, 0, sizeof ee);
    if (fi_cq_readerr(f->cq, &ee, 0) != 1) return 0;
    char buf[256];
    const char *why = fi_cq_strerror(f->cq, ee.prov_errno, ee.err_data, buf, sizeof buf);
    gshmemi_info("proxy: error completion: %s (%s)", gshmemi_fab_strerror(ee.err), why ? why : "");
    dispatch(f, ee.op_context, 0, ee.err ? ee.err : FI_EIO);
    return 1;
}
