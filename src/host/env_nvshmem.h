/* NVSHMEM's environment variables as gshmem reads them, so an NVSHMEM program's settings keep
 * their meaning (docs/nvshmem.md): GSHMEMI_NV_ENV(NAME, HOW, meaning) for NVSHMEM_<NAME>.
 *   MAP     sets a gshmem setting, unless the GSHMEM_ variable it maps to is set (config.c,
 *           nvshmem_map, says how each one maps);
 *   HOLDS   gshmem already behaves as the variable asks (a feature it never uses is off, a
 *           size it never needs): nothing to do, nothing said;
 *   IGNORED gshmem cannot do what it asks: one warning at the first load names it.
 * NVSHMEM_* names not listed here are not NVSHMEM library variables (a program's own, such as
 * the perftests' NVSHMEM_MACHINE_READABLE_OUTPUT) and are left alone. config.c expands this
 * list; docs/environment.md has a row for each. */
GSHMEMI_NV_ENV(DEBUG, MAP, "INFO or TRACE: GSHMEM_DEBUG=1")
GSHMEMI_NV_ENV(VERSION, MAP, "1: GSHMEM_INFO=1 (PE 0 prints the version at init)")
GSHMEMI_NV_ENV(INFO, MAP, "1: GSHMEM_INFO=1 (PE 0 prints the version and the variables at init)")
GSHMEMI_NV_ENV(MAX_TEAMS, MAP, "GSHMEM_TEAMS_MAX = this + 4 (gshmem counts its 4 predefined teams) when that is more than the default")
GSHMEMI_NV_ENV(CUMEM_GRANULARITY, MAP, "GSHMEM_HEAP_CHUNK_MIN")
GSHMEMI_NV_ENV(BOOTSTRAP_UID_SOCK_IFNAME, MAP, "GSHMEM_BOOTSTRAP_IFADDR = the interface's IPv4 address")
GSHMEMI_NV_ENV(BOOTSTRAP, MAP, "PMI: GSHMEM_BOOTSTRAP=auto; UID and MPI need the matching init flag (gshmemx_init_flags); SHMEM and plugin: not available (warned)")
GSHMEMI_NV_ENV(IB_ENABLE_IBGDA, MAP, "1: GSHMEM_REMOTE_TRANSPORT=ibgda; 0: GSHMEM_REMOTE_TRANSPORT=proxy")
GSHMEMI_NV_ENV(REMOTE_TRANSPORT, MAP, "ibrc, ucx, libfabric, ibdevx (CPU-driven): GSHMEM_REMOTE_TRANSPORT=proxy unless NVSHMEM_IB_ENABLE_IBGDA is true; none: not available (warned)")
GSHMEMI_NV_ENV(BOOTSTRAP_PMI, MAP, "PMIX: found by GSHMEM_BOOTSTRAP=auto; PMI and PMI-2: not available, use a PMIx launcher (warned)")
GSHMEMI_NV_ENV(SYMMETRIC_SIZE, HOLDS, "the heap grows on demand: no size to reserve")
GSHMEMI_NV_ENV(MAX_MEMORY_PER_GPU, HOLDS, "the heap is capped by the GPU's memory (GSHMEM_HEAP_MAX)")
GSHMEMI_NV_ENV(DISABLE_NVLS, HOLDS, "gshmem does not use NVLink SHARP")
GSHMEMI_NV_ENV(DISABLE_NVLS_SHARING, HOLDS, "gshmem does not use NVLink SHARP")
GSHMEMI_NV_ENV(DISABLE_NCCL, HOLDS, "gshmem's collectives never call NCCL")
GSHMEMI_NV_ENV(DISABLE_MNNVL, HOLDS, "gshmem does not use multi-node NVLink")
GSHMEMI_NV_ENV(IGNORE_CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, HOLDS, "PEs sharing a GPU run under MPS with any percentage (docs/mps.md)")
GSHMEMI_NV_ENV(CUDA_PATH, HOLDS, "libgshmem reaches the driver through the CUDA runtime")
GSHMEMI_NV_ENV(DEBUG_SUBSYS, HOLDS, "gshmem's messages have no subsystems")
GSHMEMI_NV_ENV(BOOTSTRAP_UID_SOCK_FAMILY, MAP, "AF_INET: what gshmem's rendezvous uses; any other family is warned about")
GSHMEMI_NV_ENV(BOOTSTRAP_PLUGIN, IGNORED, "gshmem has no bootstrap plugins")
GSHMEMI_NV_ENV(DISABLE_P2P, IGNORED, "PEs of a node always reach each other by load/store")
GSHMEMI_NV_ENV(DISABLE_CUDA_VMM, IGNORED, "the symmetric heap is made of CUDA VMM memory")
GSHMEMI_NV_ENV(DEBUG_FILE, IGNORED, "messages go to stderr")
GSHMEMI_NV_ENV(ENABLE_ERROR_CHECKS, IGNORED, "use GSHMEM_DEBUG=2 for checks of every device call")
