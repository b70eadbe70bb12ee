#!/usr/bin/env python3
"""Prints gshmem beside the incumbents from one run's logs, with ratios, and writes every
metric to OUTDIR/summary.csv and OUTDIR/summary.json (lib, family, metric, size, value, unit,
npes). Reads what is there of:
  latency-<lib>.log      "<lib> <metric>: <value> us" lines, and tables of one-way us: a
                         header "size <col> <col>..." then rows "<size> <value> <value>..."
  latency-gshmem-nodeadline.log   the same gshmem run with GSHMEM_WAIT_TIMEOUT=0
  bandwidth-<lib>.csv    size,<col>,<col>... in GB/s
  atomics-<lib>.log      "<lib> <metric>: <value> Mops/s" lines
  collectives-<build>.csv  lib,family,npes,bytes,us,GBps rows of bench/collectives (the gshmem
                         build also holds NCCL's rows): families allreduce, broadcast, fcollect,
                         alltoall, reducescatter, barrier, allreduce_graph
Ratios are gshmem / incumbent: < 1 is better for times (us), > 1 for rates (GB/s, Mops/s).
usage: bench_compare.py OUTDIR
       bench_compare.py --plots OUTDIR [SUMMARY]   PNG charts (matplotlib) from OUTDIR/summary.json
                         (or SUMMARY: a summary.json/.csv), written to OUTDIR; needs no logs
       bench_compare.py --markdown SUMMARY [PREV]  the run's collectives and bandwidth tables in
                         Markdown (docs/performance.md); PREV: an earlier run's summary, whose
                         gshmem times fill a last column"""
import csv
import glob
import json
import math
import os
import re
import sys

LIBS = ["gshmem", "nvshmem"]
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
FIELDS = ["lib", "family", "metric", "size", "value", "unit", "npes"]
PREFIX = r"^(?:\[(?:PE )?\d+\] )?"   # gshmrun's "[PE rank] " (older: "[rank] ") unless --no-prefix
LINE = re.compile(PREFIX + r"(gshmem|nvshmem) (.+?): ([0-9.]+) (us|Mops/s|GB/s|s)\b")
HEADER = re.compile(PREFIX + r"size((?: +\S+)+)\s*$")
ROW = re.compile(PREFIX + r"([0-9]+)(B|KiB|MiB|GiB)((?: +[0-9.]+)+)\s*$")
SCALE = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
NAN = float("nan")


def fmt_size(n):
    for unit, s in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= s and n % s == 0:
            return f"{n // s}{unit}"
    return f"{n}B"


def rec(lib, family, metric, size, value, unit, npes=None):
    return {"lib": lib, "family": family, "metric": metric, "size": size, "value": value, "unit": unit,
            "npes": npes}


def parse_log(path, lib, family):
    """Standard lines and size tables of one benchmark log, in the order printed."""
    out, cols = [], None
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        m = LINE.search(line)
        if m:
            out.append(rec(m.group(1), family, m.group(2), None, float(m.group(3)), m.group(4)))
            continue
        m = HEADER.search(line)
        if m:
            cols = m.group(1).split()
            continue
        m = ROW.search(line)
        if m and cols:
            size = int(m.group(1)) * SCALE[m.group(2)]
            for c, v in zip(cols, m.group(3).split()):
                out.append(rec(lib, family, c + " one-way", size, float(v), "us"))
    return out


def parse_csv(path, lib, family, unit):
    out = []
    for row in csv.DictReader(open(path)):
        size = int(row.pop("size"))
        for c, v in row.items():
            if float(v) > 0:   # 0: not measured (the size does not split into the slices)
                out.append(rec(lib, family, c, size, float(v), unit))
    return out


def parse_collectives(path):
    """us per call and bus GB/s of each (lib, family, size) row"""
    out = []
    for row in csv.DictReader(open(path)):
        lib, fam, npes, size = row["lib"], row["family"], int(row["npes"]), int(row["bytes"])
        out.append(rec(lib, fam, "us per call", size, float(row["us"]), "us", npes))
        if float(row["GBps"]) > 0:
            out.append(rec(lib, fam, "bus bandwidth", size, float(row["GBps"]), "GB/s", npes))
    return out


def key(r):
    return (r["metric"], r["size"])


def label(r):
    return r["metric"] + (" " + fmt_size(r["size"]) if r["size"] is not None else "")


def index(recs, lib, family):
    return {key(r): r for r in recs if r["lib"] == lib and r["family"] == family}


def ratio(a, b):
    return a / b if b and not math.isnan(b) else NAN


def print_family(recs, family, title):
    g, n = index(recs, "gshmem", family), index(recs, "nvshmem", family)
    if not g:
        return
    unit = next(iter(g.values()))["unit"]
    print(f"\n{title + ' (' + unit + ')':44s} {'gshmem':>10s} {'nvshmem':>10s} {'ratio':>7s}")
    for k, r in g.items():
        o = n.get(k, {}).get("value", NAN)
        print(f"{label(r):44s} {r['value']:10.3f} {o:10.3f} {ratio(r['value'], o):7.2f}")


def print_deadline(recs):
    on, off = index(recs, "gshmem", "latency"), index(recs, "gshmem", "latency-nodeadline")
    if not on or not off:
        return
    print(f"\n{'device-wait deadline (us)':44s} {'default':>10s} {'timeout=0':>10s} {'cost':>8s}")
    head = ("p ping-pong one-way", None)
    for k in [head] + [k for k in on if k != head]:
        if k in on and k in off:
            a, b = on[k]["value"], off[k]["value"]
            print(f"{label(on[k]):44s} {a:10.3f} {b:10.3f} {a - b:+8.3f}")
    if head in on and head in off:
        a, b = on[head]["value"], off[head]["value"]
        print(f"deadline overhead: p ping-pong one-way {a:.3f} us with the deadline, {b:.3f} us "
              f"without (GSHMEM_WAIT_TIMEOUT=0): {a - b:+.3f} us ({(a - b) / b * 100:+.1f} %)")


def print_bandwidth(recs, header):
    """header: the gshmem CSV's column names, in its order"""
    g, n = index(recs, "gshmem", "bandwidth"), index(recs, "nvshmem", "bandwidth")
    if not g:
        return
    cols = [c for c in header if c != "size"]
    sizes = list(dict.fromkeys(r["size"] for r in g.values()))
    for i in range(0, len(cols), 6):
        group = cols[i:i + 6]
        print("\nbandwidth GB/s: gshmem (nvshmem) ratio")
        print(f"{'size':>10s} " + " ".join(f"{c:>20s}" for c in group))
        for s in sizes:
            cells = []
            for c in group:
                gv = g.get((c, s), {}).get("value", NAN)
                nv = n.get((c, s), {}).get("value", NAN)
                cells.append(f"{gv:6.1f} ({nv:6.1f}) {ratio(gv, nv):4.2f}")
            print(f"{s:>10d} " + " ".join(f"{c:>20s}" for c in cells))


def print_collectives(recs):
    """one table per family: size, us (and bus GB/s) of each library, gshmem / incumbent of us"""
    for fam in COLL_FAMILIES:
        rs = [r for r in recs if r["family"] == fam]
        if not rs:
            continue
        libs = [l for l in ["gshmem"] + INCUMBENTS if any(r["lib"] == l for r in rs)]
        npes = sorted({r["npes"] for r in rs})
        for n in npes:
            t = {(r["lib"], r["size"]): r["value"] for r in rs if r["npes"] == n and r["unit"] == "us"}
            bw = {(r["lib"], r["size"]): r["value"] for r in rs if r["npes"] == n and r["unit"] == "GB/s"}
            sizes = sorted({s for (_, s) in t})
            inc = [l for l in libs if l != "gshmem"]
            print(f"\n{COLL_TITLES.get(fam, fam)}, {n} PEs: us per call (bus GB/s); ratio = gshmem / incumbent us")
            print(f"{'size':>10s} " + " ".join(f"{l:>20s}" for l in libs) +
                  "".join(f" {'/' + l:>9s}" for l in inc if "gshmem" in libs))
            for sz in sizes:
                cells = []
                for l in libs:
                    v, b = t.get((l, sz), NAN), bw.get((l, sz))
                    cells.append(f"{v:9.2f} ({b:8.2f})" if b is not None else f"{v:9.2f} {'':10s}")
                ratios = "".join(f" {ratio(t.get(('gshmem', sz), NAN), t.get((l, sz), NAN)):9.2f}"
                                 for l in inc if "gshmem" in libs)
                print(f"{fmt_size(sz) if fam not in DATALESS else '-':>10s} " + " ".join(f"{c:>20s}" for c in cells) + ratios)


def load_summary(path):
    if path.endswith(".json"):
        recs = json.load(open(path))
    else:
        recs = []
        for r in csv.DictReader(open(path)):
            r["size"] = int(r["size"]) if r.get("size") not in (None, "", "None") else None
            r["npes"] = int(r["npes"]) if r.get("npes") not in (None, "", "None") else None
            r["value"] = float(r["value"])
            recs.append(r)
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
        print("matplotlib not available: no plots (pip install matplotlib, then run --plots again)")
        return []
    if src is None:
        src = next((p for p in (os.path.join(outdir, "summary.json"), os.path.join(outdir, "summary.csv"))
                    if os.path.exists(p)), None)
    if not src:
        print(f"no summary.json/summary.csv in {outdir}: run bench_compare.py {outdir} first")
        return []
    recs = load_summary(src)
    os.makedirs(outdir, exist_ok=True)
    written = []

    def save(fig, name):
        p = os.path.join(outdir, name)
        fig.savefig(p, dpi=110, bbox_inches="tight")
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
        print("wrote", p)
    return written


def main(d):
    recs = []
    for lib in LIBS:
        p = os.path.join(d, f"latency-{lib}.log")
        if os.path.exists(p):
            recs += parse_log(p, lib, "latency")
        p = os.path.join(d, f"bandwidth-{lib}.csv")
        if os.path.exists(p):
            recs += parse_csv(p, lib, "bandwidth", "GB/s")
        p = os.path.join(d, f"atomics-{lib}.log")
        if os.path.exists(p):
            recs += parse_log(p, lib, "atomics")
    p = os.path.join(d, "latency-gshmem-nodeadline.log")
    if os.path.exists(p):
        recs += parse_log(p, "gshmem", "latency-nodeadline")
    for p in sorted(glob.glob(os.path.join(d, "collectives-*.csv"))):
        recs += parse_collectives(p)

    print_family(recs, "latency", "latency")
    print_deadline(recs)
    p = os.path.join(d, "bandwidth-gshmem.csv")
    print_bandwidth(recs, next(csv.reader(open(p))) if os.path.exists(p) else [])
    print_family(recs, "atomics", "atomics, per PE pair")
    print_collectives(recs)

    with open(os.path.join(d, "summary.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(recs)
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump(recs, f, indent=1)
    print(f"\n{len(recs)} metrics in {os.path.join(d, 'summary.csv')} and summary.json")


def markdown(src, prev=None):
    """Markdown tables of one run (a summary.json/.csv): every collective family, us per call
    of gshmem, NCCL and NVSHMEM with gshmem's ratios (and gshmem in an earlier run's summary,
    prev, in the last column), and the block-scope bandwidth table."""
    recs = load_summary(src)
    old = load_summary(prev) if prev else []
    def val(lib, fam, metric, size, rs=None):
        for r in (recs if rs is None else rs):
            if r["lib"] == lib and r["family"] == fam and r["metric"] == metric and r["size"] == size:
                return r["value"]
        return None
    f2 = lambda v: "—" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.2f}"
    for fam in COLL_FAMILIES:
        rows = [r for r in recs if r["family"] == fam and r["metric"] == "us per call"]
        if not rows:
            continue
        npes = max(r["npes"] or 0 for r in rows)
        libs = [l for l in ("gshmem", "nccl", "nvshmem") if any(r["lib"] == l for r in rows)]
        print(f"\n**{COLL_TITLES.get(fam, fam)}**, µs per call, {npes} PEs\n")
        print("| size | " + " | ".join(libs) + "".join(f" | gshmem/{l}" for l in libs[1:]) +
              (" | gshmem before" if old else "") + " |")
        print("|---:" * (len(libs) * 2 + (1 if old else 0)) + "|")
        for size in sorted({r["size"] for r in rows}):
            v = {l: val(l, fam, "us per call", size) for l in libs}
            ratios = [f"{v['gshmem'] / v[l]:.2f}" if v["gshmem"] and v[l] else "—" for l in libs[1:]]
            name = "-" if fam in DATALESS else fmt_size(size)
            before = f" | {f2(val('gshmem', fam, 'us per call', size, old))}" if old else ""
            print(f"| {name} | " + " | ".join(f2(v[l]) for l in libs) +
                  "".join(f" | {x}" for x in ratios) + before + " |")
    cols = [c for c in ("put1", "put8", "put132", "get1", "get8", "get132")
            if any(r["family"] == "bandwidth" and r["metric"] == c for r in recs)]
    if cols:
        print("\n**Bandwidth, block scope**, GB/s (NVSHMEM in parentheses)\n")
        print("| size | " + " | ".join(cols) + " |")
        print("|---:" * (len(cols) + 1) + "|")
        for size in sorted({r["size"] for r in recs if r["family"] == "bandwidth"}):
            cells = []
            for c in cols:
                g, n = val("gshmem", "bandwidth", c, size), val("nvshmem", "bandwidth", c, size)
                f1 = lambda x: "—" if x is None else f"{x:.1f}"
                cells.append(f"{f1(g)} ({f1(n)})")
            print(f"| {fmt_size(size)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--markdown":
        markdown(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
    elif len(sys.argv) > 1 and sys.argv[1] == "--plots":
        plots(sys.argv[2] if len(sys.argv) > 2 else ".", sys.argv[3] if len(sys.argv) > 3 else None)
    else:
        main(sys.argv[1] if len(sys.argv) > 1 else ".")
