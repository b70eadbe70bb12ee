"""A run's summary: the records tools/bench_compare.py writes to summary.json / summary.csv
(lib, family, metric, size, value, unit, npes, lo, hi), the names and sizes both tools print,
reading a summary back, looking one value up, and its PNG charts. bench_compare.py and
perf_page.py use it; it uses neither."""
import csv
import json
import os
import re
import sys

INCUMBENTS = ["nvshmem", "nccl"]
COLL_FAMILIES = ["allreduce", "broadcast", "fcollect", "alltoall", "reducescatter", "barrier",
                 "allreduce_graph", "barrier_graph", "empty_kernel_graph"]
COLL_TITLES = {
    "allreduce": "allreduce, float sum (size = the vector; NCCL ncclAllReduce)",
    "broadcast": "broadcast, root 0 (size = the vector; NCCL ncclBroadcast)",
    "fcollect": "fcollect (size = each PE's part; NCCL ncclAllGather)",
    "alltoall": "alltoall (size = block per PE; NCCL ncclAlltoAll)",
    "reducescatter": "reducescatter, float sum (size = each PE's result; NCCL ncclReduceScatter)",
    "barrier": "barrier_all_on_stream",
    "allreduce_graph": "allreduce in a CUDA graph of 100 calls (per call)",
    "barrier_graph": "barrier_all_on_stream in a CUDA graph of 100 calls (per call)",
    "empty_kernel_graph": "floor: an empty kernel in a CUDA graph of 100 (per kernel)",
}
DATALESS = ("barrier", "barrier_graph", "empty_kernel_graph")


def fmt_size(n):
    for unit, s in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= s and n % s == 0:
            return f"{n // s}{unit}"
    return f"{n}B"


def parse_size(text):
    """bytes of "64", "16K", "32M", "1G", "1T" (binary suffixes)"""
    m = re.fullmatch(r"([0-9]+)([KMGT]?)", text)
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30, "T": 40}[m.group(2)]


def load_summary(path):
    if path.endswith(".json"):
        recs = json.load(open(path))
    else:
        recs = []
        for r in csv.DictReader(open(path)):
            for f in ("size", "npes"):
                r[f] = int(r[f]) if r.get(f) not in (None, "", "None") else None
            for f in ("lo", "hi"):
                r[f] = float(r[f]) if r.get(f) not in (None, "", "None") else None
            r["value"] = float(r["value"])
            recs.append(r)
    for r in recs:   # summaries written before lo/hi existed
        r.setdefault("lo", None)
        r.setdefault("hi", None)
    return recs


STYLE = {"gshmem": dict(color="tab:blue", marker="o"), "nvshmem": dict(color="tab:green", marker="s"),
         "nccl": dict(color="tab:red", marker="^")}


def plots(outdir, src=None):
    """PNG charts from a summary: per collective family us and bus GB/s vs size (every library on
    one chart), put/get bandwidth and sized latency of gshmem beside NVSHMEM. Log axes."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not available: no plots (pip install matplotlib, then run --plots again)",
              file=sys.stderr)
        return []
    if src is None:
        src = next((p for p in (os.path.join(outdir, "summary.json"), os.path.join(outdir, "summary.csv"))
                    if os.path.exists(p)), None)
    if not src:
        print(f"no summary.json/summary.csv in {outdir}: run bench_compare.py {outdir} first", file=sys.stderr)
        return []
    recs = load_summary(src)
    os.makedirs(outdir, exist_ok=True)
    written = []

    def save(fig, name):
        p = os.path.join(outdir, name)
        fig.savefig(p, dpi=110, bbox_inches="tight", metadata={"Software": None})
        plt.close(fig)
        written.append(p)

    for fam in COLL_FAMILIES:
        rs = [r for r in recs if r["family"] == fam and r["size"]]
        sizes = {r["size"] for r in rs}
        if len(sizes) < 2:
            continue   # barrier: one number, in the table
        npes = sorted({r["npes"] for r in rs})
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
        for ax, unit, ylabel in ((axes[0], "us", "us per call (lower is better)"),
                                 (axes[1], "GB/s", "bus bandwidth GB/s (higher is better)")):
            for n in npes:
                for lib in ["gshmem"] + INCUMBENTS:
                    pts = sorted((r["size"], r["value"]) for r in rs
                                 if r["lib"] == lib and r["unit"] == unit and r["npes"] == n and r["value"] > 0)
                    if pts:
                        st = dict(STYLE.get(lib, {}))
                        ax.plot([p[0] for p in pts], [p[1] for p in pts], label=f"{lib}, {n} PEs",
                                linestyle="-" if n == npes[-1] else "--", markersize=3, **st)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("size per PE (bytes)")
            ax.set_ylabel(ylabel)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
        fig.suptitle(COLL_TITLES.get(fam, fam))
        save(fig, f"coll-{fam}.png")

    def two_libs(recs_, cols, fname, ylabel, title, legend_cols):
        """one chart: each column a colour, gshmem solid and NVSHMEM dashed, log-log"""
        fig, ax = plt.subplots(figsize=(8, 5))
        cmap = plt.get_cmap("tab10")
        for i, c in enumerate(cols):
            for lib, ls in (("gshmem", "-"), ("nvshmem", "--")):
                pts = sorted((r["size"], r["value"]) for r in recs_ if r["lib"] == lib and r["metric"] == c)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], ls, color=cmap(i % 10), marker=".",
                            label=f"{lib} {c}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("size (bytes)")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, ncol=legend_cols)
        ax.set_title(title)
        save(fig, fname)

    bw = [r for r in recs if r["family"] == "bandwidth"]
    if bw:
        two_libs(bw, [c for c in ("put8", "put132", "get8", "get132", "putwarp132") if any(r["metric"] == c for r in bw)],
                 "bandwidth.png", "GB/s, PE 0 -> PE 1 (higher is better)",
                 "put/get bandwidth: gshmem (solid) and NVSHMEM (dashed)", 2)
    lat = [r for r in recs if r["family"] == "latency" and r["size"]]
    if lat:
        two_libs(lat, list(dict.fromkeys(r["metric"] for r in lat)), "latency.png", "us (lower is better)",
                 "block put ping-pong latency: gshmem (solid) and NVSHMEM (dashed)", 1)
    for p in written:
        print("wrote", p, file=sys.stderr)
    return written


def value(recs, lib, fam, metric, size=None, npes=None):
    for r in recs:
        if (r["lib"] == lib and r["family"] == fam and r["metric"] == metric and r["size"] == size and
                (npes is None or r["npes"] == npes)):
            return r["value"]
    return None
