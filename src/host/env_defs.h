/* The one list of gshmem's environment variables: GSHMEMI_ENV_FIELD(name, kind, ctype,
 * default, help). The variable is GSHMEM_<NAME>. config.c expands it into the parser and
 * the printer used by gshmem-info; config.h into the fields of gshmemi_config.
 * kinds: BOOL (0/1/yes/no/true/false), INT, SIZE (bytes, with k/M/G/T suffixes), STR,
 * DOUBLE. No other file calls getenv for GSHMEM_ variables. */
GSHMEMI_ENV_FIELD(BOOTSTRAP, STR, const char *, "auto",
                  "how PEs find each other: auto (uid if GSHMEM_UID set, pmix if PMIx env, else self), pmix, uid, self")
GSHMEMI_ENV_FIELD(BOOTSTRAP_TIMEOUT, DOUBLE, double, 120.0,
                  "seconds a bootstrap step waits for peers before failing (a PE died or hung)")
GSHMEMI_ENV_FIELD(BOOTSTRAP_IFADDR, STR, const char *, "",
                  "IPv4 address the unique-id rendezvous listens on (default: first non-loopback)")
GSHMEMI_ENV_FIELD(UID, STR, const char *, "",
                  "unique id text (set by gshmrun); selects the uid bootstrap")
GSHMEMI_ENV_FIELD(UID_FD, INT, int, -1,
                  "listening socket inherited by rank 0 from gshmrun")
GSHMEMI_ENV_FIELD(RANK, INT, int, -1, "this PE's rank for the uid bootstrap (set by gshmrun)")
GSHMEMI_ENV_FIELD(NPES, INT, int, -1, "number of PEs for the uid bootstrap (set by gshmrun)")
GSHMEMI_ENV_FIELD(HEAP_MAX, SIZE, uint64_t, 0,
                  "cap on the symmetric heap per PE (0 = GPU memory / PEs on the GPU)")
GSHMEMI_ENV_FIELD(HEAP_CHUNK_MIN, SIZE, uint64_t, 32ull << 20,
                  "first physical chunk of the heap; later chunks double, up to what is mapped")
GSHMEMI_ENV_FIELD(HEAP_BASE, SIZE, uint64_t, 0,
                  "first candidate base address of the heap (0 = chosen by the driver)")
GSHMEMI_ENV_FIELD(WAIT_TIMEOUT, DOUBLE, double, 120.0,
                  "seconds a device wait may spin before it reports the stuck wait and ends the job (0 = never)")
GSHMEMI_ENV_FIELD(DEBUG, INT, int, 0,
                  "0 quiet, 1 info messages (and, across nodes, the proxy's progress every 2 s while work is in flight), 2 also check every device call's PE and address")
GSHMEMI_ENV_FIELD(INFO, BOOL, bool, false,
                  "1: PE 0 prints gshmem's version and this table of variables at init (NVSHMEM_INFO and NVSHMEM_VERSION set it)")
GSHMEMI_ENV_FIELD(DEVICE, INT, int, -1,
                  "CUDA device for this PE if none is current (default: PE index on its machine modulo the GPUs it sees)")
GSHMEMI_ENV_FIELD(NODES, INT, int, 0,
                  "split each host's PEs into this many nodes (consecutive local ranks): PEs of different nodes never share memory by load/store, every byte between them takes the remote transport (testing on one machine; gshmrun --nodes K); 0 or 1 = one node per host")
GSHMEMI_ENV_FIELD(MPS, STR, const char *, "auto",
                  "gshmrun, when PEs share a GPU: auto (use the running CUDA MPS daemon, else start a private one for the job and stop it at the end), off (never)")
GSHMEMI_ENV_FIELD(TEAMS_MAX, INT, int, 1024,
                  "teams that may exist at once, GSHMEM_TEAM_WORLD and GSHMEM_TEAM_SHARED included (each costs a few KiB of heap)")
GSHMEMI_ENV_FIELD(COLL_XNODE_BYTES, SIZE, uint64_t, 16ull << 20,
                  "across nodes: each member's landing buffer for the data a collective reads from PEs of other nodes (GPU memory, per team whose members span nodes; larger messages go in chunks of this / team size)")
GSHMEMI_ENV_FIELD(COLL_XNODE_HIER, BOOL, bool, true,
                  "across nodes: all-reduce, reduce-scatter and fcollect of node-blocked teams (the same number of members on every node, each node's members consecutive) combine or gather inside each node first and cross the network once per node pair (0 = every member pulls from every member)")
GSHMEMI_ENV_FIELD(COLL_SCRATCH, SIZE, uint64_t, 1ull << 20,
                  "per-sender LL buffer of the one-shot collectives of TEAM_WORLD/TEAM_SHARED (at most 16 MiB / PEs): messages up to half of it take the one-shot path (0 = always two rounds)")
GSHMEMI_ENV_FIELD(COLL_PDL, BOOL, bool, true,
                  "launch on-stream collectives with programmatic dependent launch (overlaps a kernel's start with the previous one's end)")
GSHMEMI_ENV_FIELD(COLL_ONESHOT_CHUNK, SIZE, uint64_t, 4ull << 10,
                  "tuning: a one-shot collective runs one block (channel) per this many bytes of each member's message (up to GSHMEM_COLL_ONESHOT_CHANNELS)")
GSHMEMI_ENV_FIELD(COLL_ONESHOT_CHANNELS, INT, int, 64,
                  "tuning: most blocks (channels) a one-shot collective runs (1..64)")
GSHMEMI_ENV_FIELD(COLL_CE_MIN, SIZE, uint64_t, 64ull << 20,
                  "host/on-stream broadcast, fcollect and alltoall with at least this many bytes per member's message send through the copy engine while the SMs make the local copy (not while the stream is being captured; 0 = never)")
GSHMEMI_ENV_FIELD(COLL_CHANNEL_BYTES, SIZE, uint64_t, 64ull << 10,
                  "tuning: large collectives run one block (channel) per this many bytes of traffic")
GSHMEMI_ENV_FIELD(COLL_MAX_CHANNELS, INT, int, 128,
                  "tuning: most blocks (channels) a two-round reduction kernel runs (1..128)")
GSHMEMI_ENV_FIELD(COLL_MOVE_CHANNELS, INT, int, 128,
                  "tuning: most blocks (channels) a two-round broadcast/fcollect/alltoall(s) kernel runs (1..128)")
GSHMEMI_ENV_FIELD(COLL_ALLREAD_MIN, SIZE, uint64_t, 0,
                  "tuning: host/on-stream reductions on 2-member teams from this many bytes (not in "
                  "place, past the one-shot path) have each member read both sources whole instead "
                  "of owner-computes (0 = never)")
GSHMEMI_ENV_FIELD(COLL_PUSH_MIN, SIZE, uint64_t, 32ull << 20,
                  "tuning: host/on-stream reductions on 2-member teams from this many bytes (not in "
                  "place, past the one-shot path) move data only by NVLink writes: each member "
                  "writes the half of its source the other owns into the other's dest, then "
                  "combines and writes its half of the result to both (0 = never)")
GSHMEMI_ENV_FIELD(COLL_THREADS, INT, int, 256,
                  "tuning: threads per block of the two-round reduction kernels (32..512, a multiple of 32)")
GSHMEMI_ENV_FIELD(COLL_MOVE_THREADS, INT, int, 512,
                  "tuning: threads per block of the two-round broadcast/fcollect/alltoall(s) kernels (32..512, a multiple of 32)")
GSHMEMI_ENV_FIELD(REMOTE_TRANSPORT, STR, const char *, "auto",
                  "how PEs of other nodes are reached: auto (ibgda when every PE has a usable mlx5 NIC, else the proxy), proxy (a CPU thread per PE over libfabric), ibgda (GPU-initiated RDMA; init fails naming the PE that cannot)")
GSHMEMI_ENV_FIELD(IBGDA_NIC, STR, const char *, "mlx5",
                  "ibgda's device: mlx5 (a ConnectX NIC through rdma-core) or soft (the software NIC, a test device: a host thread plays the NIC on the GPU's queues and performs work requests over the proxy's link; only with GSHMEM_REMOTE_TRANSPORT=ibgda)")
GSHMEMI_ENV_FIELD(IBGDA_SETUP, STR, const char *, "verbs",
                  "ibgda's queues: verbs (QP and CQ made by rdma-core's verbs, queues in host memory mapped for the GPU, a ring CQ) or devx (DEVX objects, queues in GPU memory, a collapsed CQ)")
GSHMEMI_ENV_FIELD(IBGDA_DEVICE, STR, const char *, "",
                  "ibgda: the mlx5 device, and optionally its port, e.g. mlx5_0 or mlx5_2:1 (default: the first device with an active port)")
GSHMEMI_ENV_FIELD(IBGDA_GID_INDEX, INT, int, -1,
                  "ibgda on RoCE: the GID index to use (-1 = the port's first RoCE v2 GID of an IPv4 address, else its first valid one)")
GSHMEMI_ENV_FIELD(IBGDA_SQ_SLOTS, INT, int, 1024,
                  "ibgda: 64-byte slots of each send queue, a power of two from 64 to 16384 (a work request takes 1 or 2)")
GSHMEMI_ENV_FIELD(IBGDA_CPU_DOORBELL, INT, int, -1,
                  "ibgda on a NIC: 1 = a CPU thread rings the doorbell for the GPU (which writes the work requests), 0 = the GPU rings it through the NIC's doorbell page mapped for it (-1 = the GPU where the page maps, else the CPU)")
GSHMEMI_ENV_FIELD(IBGDA_SOFT_ADVERSARIAL, BOOL, bool, false,
                  "the software NIC: start work requests after random delays, place fetched values late and write completions in batches, so a missing fence or quiet shows")
GSHMEMI_ENV_FIELD(IBGDA_SOFT_SEED, INT, int, 0,
                  "the software NIC's adversarial mode: seed of its random delays (0 = from the clock; each PE prints its seed)")
GSHMEMI_ENV_FIELD(FABRIC_PROVIDER, STR, const char *, "",
                  "libfabric provider of the proxy transport, e.g. verbs;ofi_rxm, efa, cxi, tcp;ofi_rxm (default: the first of cxi, efa, verbs;ofi_rxm, psm3, tcp;ofi_rxm, net;ofi_rxm, sockets found)")
GSHMEMI_ENV_FIELD(FABRIC_IFACE, STR, const char *, "",
                  "network interface (name, or its IPv4 address) the proxy transport uses (default: the provider's first non-loopback one)")
GSHMEMI_ENV_FIELD(PROXY_MODE, STR, const char *, "auto",
                  "proxy data mode: auto (direct for host memory, staged for GPU memory when the provider lacks FI_HMEM), direct, staged")
GSHMEMI_ENV_FIELD(PROXY_CHUNK, SIZE, uint64_t, 512ull << 10,
                  "staged mode: bytes per message (large transfers are pipelined in chunks of this size; small operations share messages of this size)")
GSHMEMI_ENV_FIELD(PROXY_STAGING, SIZE, uint64_t, 2ull << 20,
                  "staged mode: bytes in flight to one peer (credits = this / GSHMEM_PROXY_CHUNK); each PE pins about 4x this per peer")
GSHMEMI_ENV_FIELD(PROXY_RING_SLOTS, INT, int, 4096,
                  "descriptors per proxy ring (a power of two)")
GSHMEMI_ENV_FIELD(PROXY_GPU_COPIES, INT, int, 3,
                  "the GPU ring's waiters share GPU-memory copies of head (1), retired (2) or both (3), one reader at a time polling the host word; 0 = every waiter reads across PCIe (docs/design.md)")
GSHMEMI_ENV_FIELD(PROXY_SPIN_US, INT, int, 2000,
                  "microseconds the proxy thread keeps spinning after its last work before it starts sleeping")
GSHMEMI_ENV_FIELD(PROXY_IDLE_US, INT, int, 20,
                  "microseconds an idle proxy thread sleeps between polls: bounds its wake-up latency (0 = never sleep)")
GSHMEMI_ENV_FIELD(PROXY_ACK_HOLD_US, INT, int, 10,
                  "staged mode: microseconds a response may wait for a request to its PE to carry it (saves a message where traffic goes both ways; 0 = send every response at once)")
GSHMEMI_ENV_FIELD(PROXY_TRACE, STR, const char *, "",
                  "file prefix: the proxy records its events (pickups, sends, arrivals, placements) with their times and writes PREFIX.<pe> at finalize; tools/proxy_trace.py splits a p ping-pong's one-way time from the two files")
GSHMEMI_ENV_FIELD(PROXY_RELAY, INT, int, 1,
                  "staged mode under MPS: a GPU thread of the proxy's context performs 8-byte stores (p, signal SET) from other nodes, quicker than a stream memory operation (0 = stream memory operations only)")
