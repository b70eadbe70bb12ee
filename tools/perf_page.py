"""docs/performance.md from its template: each line `{{KIND RUN [key=value ...]}}` of the
template becomes a table (or a run's provenance line, or a plot) made from docs/perf/RUN/
summary.json (the records tools/bench_compare.py writes, read with bench_summary.py) and
docs/perf/RUN/run.json (machine, date, commit, command, note); every other line is copied.
Used by `bench_compare.py --page`."""
import json
import os
import re
import sys

import bench_summary as bs

LATENCY_LABELS = {
    "p ping-pong one-way": "`p` ping-pong, one-way",
    "g round trip": "`g` round trip",
    "long atomic_fetch_add round trip": "`long_atomic_fetch_add` round trip",
    "put_signal one-way 8B (thread)": "`putmem_signal` 8 B one-way, thread scope",
    "device barrier_all (thread)": "device `barrier_all`, thread scope",
    "device barrier_all (block)": "device `barrier_all`, block scope",
    "barrier_all_on_stream": "`barrier_all_on_stream`, back to back",
}
LIB_NAMES = {"gshmem": "gshmem", "nvshmem": "NVSHMEM", "nccl": "NCCL", "libfabric": "raw libfabric"}


def num(v, digits):
    return "—" if v is None else f"{v:.{digits}f}"


def rel(a, b):
    return "—" if a is None or not b else f"{a / b:.2f}"


def table(head, rows, align=None):
    align = align or ["---"] + ["---:"] * (len(head) - 1)
    return ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"] + \
        ["| " + " | ".join(r) + " |" for r in rows]


class Page:
    def __init__(self, template):
        self.base = os.path.dirname(os.path.abspath(template))
        self.runs = {}
        self.plotted = set()

    def run(self, name):
        if name not in self.runs:
            d = os.path.join(self.base, name)
            self.runs[name] = (bs.load_summary(os.path.join(d, "summary.json")),
                               json.load(open(os.path.join(d, "run.json"))))
        return self.runs[name]

    def recs(self, name, family, lib=None):
        return [r for r in self.run(name)[0] if r["family"] == family and (lib is None or r["lib"] == lib)]

    def val(self, name, lib, family, metric, size=None, npes=None):
        return bs.value(self.run(name)[0], lib, family, metric, size, npes)

    # ---- one function per template KIND -------------------------------------------------

    def k_run(self, name, opt):
        meta = self.run(name)[1]
        line = (f"Machine: {meta['machine']}. Date: {meta['date']}. Commit: `{meta['commit']}`. "
                f"Command: `{meta['command']}`.")
        return [line + (" " + meta["note"] if meta.get("note") else "")]

    def one_word(self, name, family, digits=3):
        """metric | gshmem | NVSHMEM | ratio, in the benchmark's order (placement range in brackets)"""
        rows = []
        for r in self.recs(name, family, "gshmem"):
            if r["size"] is not None:
                continue
            n = next((x for x in self.recs(name, family, "nvshmem") if x["metric"] == r["metric"] and x["size"] is None),
                     None)

            def cell(x):
                if x is None:
                    return "—"
                span = f" ({x['lo']:.{digits}f}–{x['hi']:.{digits}f})" if x.get("lo") is not None else ""
                return f"{x['value']:.{digits}f}{span}"
            rows.append([LATENCY_LABELS.get(r["metric"], r["metric"]), cell(r), cell(n),
                         rel(r["value"], n and n["value"])])
        return rows

    def k_latency(self, name, opt):
        return table(["µs", "gshmem", "NVSHMEM", "gshmem / NVSHMEM"], self.one_word(name, "latency"))

    def k_latency_sized(self, name, opt):
        rs = [r for r in self.recs(name, "latency") if r["size"] is not None]
        sizes = sorted({r["size"] for r in rs})
        rows = []
        for metric in dict.fromkeys(r["metric"] for r in rs):
            for lib in ("gshmem", "nvshmem"):
                rows.append([f"{LIB_NAMES[lib]} {metric.replace(' one-way', '')}"] +
                            [num(self.val(name, lib, "latency", metric, s), 3) for s in sizes])
            rows.append([f"ratio {metric.replace(' one-way', '')}"] +
                        [rel(self.val(name, "gshmem", "latency", metric, s),
                             self.val(name, "nvshmem", "latency", metric, s)) for s in sizes])
        return table(["one-way µs"] + [bs.fmt_size(s) for s in sizes], rows)

    def k_deadline(self, name, opt):
        rows = []
        for r in self.recs(name, "latency", "gshmem"):
            off = self.val(name, "gshmem", "latency-nodeadline", r["metric"], r["size"])
            if off is not None:
                rows.append([LATENCY_LABELS.get(r["metric"], r["metric"]), num(r["value"], 3), num(off, 3),
                             f"{r['value'] - off:+.3f}"])
        return table(["µs", "default deadline", "`GSHMEM_WAIT_TIMEOUT=0`", "difference"], rows)

    def bw_rows(self, name, family, cols, raw=None):
        rows = []
        for s in sorted({r["size"] for r in self.recs(name, family, "gshmem") if r["metric"] in cols}):
            cells = []
            for c in cols:
                g, n = self.val(name, "gshmem", family, c, s), self.val(name, "nvshmem", family, c, s)
                if raw:
                    cells.append(num(g, 1))
                else:
                    cells.append("—" if g is None else f"{g:.1f} ({num(n, 1)}; {rel(g, n)})")
            if raw:
                w = self.val(name, "libfabric", "remote-fabric", "fi_write", s)
                g = self.val(name, "gshmem", family, cols[0], s)
                cells += [num(w, 2), "—" if w is None or g is None else f"{g / w * 100:.0f} %"]
            rows.append([bs.fmt_size(s)] + cells)
        return rows

    def k_bandwidth(self, name, opt):
        family = opt.get("family", "bandwidth")
        cols = opt["cols"].split(",")
        raw = family.startswith("remote")
        head = ["size"] + cols + (["raw `fi_write`", f"{cols[0]} / raw"] if raw else [])
        return table(head, self.bw_rows(name, family, cols, raw))

    def k_atomics(self, name, opt):
        family = opt.get("family", "atomics")
        if family == "atomics":
            return table(["Mops/s per PE pair", "gshmem", "NVSHMEM", "gshmem / NVSHMEM"],
                         self.one_word(name, family, 0))
        rows = [[r["metric"], num(r["value"], 2)] for r in self.recs(name, family, "gshmem")]
        raw = self.val(name, "libfabric", "remote-fabric", "fi_atomic 8 B")
        return table(["Mops/s per PE pair", "gshmem"], rows) + \
            ([""] + [f"Raw `fi_atomic` (8 B FI_SUM, 64 in flight, host memory): {raw:.3f} Mops/s."] if raw else [])

    def k_collectives(self, name, opt):
        fam = opt["family"]
        rs = [r for r in self.recs(name, fam) if r["unit"] == "us"]
        libs = [l for l in ("gshmem", "nccl", "nvshmem") if any(r["lib"] == l for r in rs)]
        sizes = sorted({r["size"] for r in rs if r["size"] <= bs.parse_size(opt.get("max", "1T"))})
        if opt.get("sizes") == "x4":   # every other power of two: the full sweep is in the summary
            sizes = [s for s in sizes if (s.bit_length() - sizes[0].bit_length()) % 2 == 0 or s == sizes[-1]]
        rows = []
        for s in sizes:
            v = {l: self.val(name, l, fam, "us per call", s) for l in libs}
            rows.append([bs.fmt_size(s)] + [num(v[l], 2) for l in libs] +
                        [rel(v["gshmem"], v[l]) for l in libs[1:]])
        return table(["size"] + [LIB_NAMES[l] for l in libs] + [f"gshmem / {LIB_NAMES[l]}" for l in libs[1:]], rows)

    def k_collectives_floor(self, name, opt):
        rows = []
        for fam in ("barrier", "barrier_graph", "allreduce_graph", "empty_kernel_graph"):
            for s in sorted({r["size"] for r in self.recs(name, fam)}):
                g, n, c = (self.val(name, l, fam, "us per call", s) for l in ("gshmem", "nvshmem", "nccl"))
                what = bs.COLL_TITLES[fam] + ("" if fam in bs.DATALESS else f", {bs.fmt_size(s)}")
                rows.append([what, num(g, 2), num(c, 2), num(n, 2), rel(g, c), rel(g, n)])
        return table(["µs per call", "gshmem", "NCCL", "NVSHMEM", "gshmem / NCCL", "gshmem / NVSHMEM"], rows)

    def k_npes(self, name, opt):
        """several PEs on one GPU: each metric at each PE count, gshmem and NVSHMEM"""
        rs = self.run(name)[0]
        npes = sorted({r["npes"] for r in rs if r["npes"]})
        rows = []
        for fam, metric, size, what in (("latency", "p ping-pong one-way", None, "`p` ping-pong, one-way"),
                                        ("latency", "device barrier_all (thread)", None, "device `barrier_all`, thread"),
                                        ("barrier", "us per call", 0, "`barrier_all_on_stream`"),
                                        ("allreduce", "us per call", 8, "allreduce 8 B on a stream"),
                                        ("allreduce", "us per call", 128 << 10, "allreduce 128 KiB on a stream")):
            cells = []
            for n in npes:
                g, v = (bs.value(rs, l, fam, metric, size, n) for l in ("gshmem", "nvshmem"))
                cells += [num(g, 3 if fam == "latency" else 2), num(v, 3 if fam == "latency" else 2), rel(g, v)]
            rows.append([what] + cells)
        head = ["µs"] + [h for n in npes for h in (f"gshmem, {n} PEs", f"NVSHMEM, {n} PEs", "ratio")]
        return table(head, rows)

    def k_remote_latency(self, name, opt):
        rows = [[LATENCY_LABELS.get(r["metric"], r["metric"]), num(r["value"], 2)]
                for r in self.recs(name, "remote-latency", "gshmem") if r["size"] is None]
        raw = self.val(name, "libfabric", "remote-fabric", "fi_write 8 B one-way")
        if raw:
            rows.append(["raw `fi_write` 8 B one-way (host memory, no GPU)", num(raw, 2)])
        return table(["µs", "gshmem"], rows)

    def k_remote_collectives(self, name, opt):
        fams = [f for f in ("allreduce", "broadcast", "fcollect", "alltoall", "reducescatter")
                if self.recs(name, "remote-" + f)]
        sizes = sorted({r["size"] for f in fams for r in self.recs(name, "remote-" + f)})
        rows = []
        for s in sizes:
            cells = []
            for f in fams:
                us = self.val(name, "gshmem", "remote-" + f, "us per call", s)
                bw = self.val(name, "gshmem", "remote-" + f, "bus bandwidth", s)
                cells.append(num(us, 2) + (f" ({bw:.2f} GB/s)" if us is not None and bw is not None and s >= (1 << 20)
                                           else ""))
            rows.append([bs.fmt_size(s)] + cells)
        return table(["µs per call"] + fams, rows)

    def k_remote_floor(self, name, opt):
        """the link's put rates, the barriers and the graph-replayed allreduce across nodes"""
        rows = [[r["metric"], num(r["value"], 2) + " GB/s"] for r in self.recs(name, "remote-link")]
        for fam in ("barrier", "barrier_graph", "allreduce_graph"):
            for r in self.recs(name, "remote-" + fam):
                if r["unit"] == "us":
                    what = bs.COLL_TITLES[fam] + ("" if fam in bs.DATALESS else f", {bs.fmt_size(r['size'])}")
                    rows.append([what, num(r["value"], 2) + " µs"])
        return table(["", "gshmem"], rows)

    def k_remote_bus(self, name, opt):
        """bus GB/s of the large collectives across nodes, and as a share of the link"""
        link = self.val(name, "gshmem", "remote-link", "link put bandwidth")
        size = int(opt["size"])
        rows = []
        for f in ("allreduce", "reducescatter", "fcollect", "alltoall", "broadcast"):
            bw = self.val(name, "gshmem", "remote-" + f, "bus bandwidth", size)
            if bw is not None:
                rows.append([f, num(bw, 2), "—" if not link else f"{bw / link * 100:.0f} %"])
        return table([f"{bs.fmt_size(size)}", "bus GB/s", "of the link"], rows)

    def k_plot(self, name, opt):
        img = os.path.join(self.out_dir, "img")
        if name not in self.plotted:
            self.plotted.add(name)
            bs.plots(img, os.path.join(self.base, name, "summary.json"))
        f = opt["file"]
        if not os.path.exists(os.path.join(img, f)):
            print(f"perf_page: img/{f} is missing (no matplotlib here?)", file=sys.stderr)
        return [f"![{opt.get('alt', f)}](img/{f})"]


def render(template, out_dir):
    page = Page(template)
    page.out_dir = out_dir
    out = []
    for line in open(template):
        m = re.fullmatch(r"\{\{([a-z-]+) (\S+)((?: \S+=\S+)*)\}\}\s*", line)
        if not m:
            out.append(line.rstrip("\n"))
            continue
        opt = dict(kv.split("=", 1) for kv in m.group(3).split())
        fn = getattr(page, "k_" + m.group(1).replace("-", "_"), None)
        if fn is None:
            sys.exit(f"perf_page: unknown kind '{m.group(1)}' in {template}")
        out += fn(m.group(2), opt)
    return "\n".join(out) + "\n"


def write(template, out):
    text = render(template, os.path.dirname(os.path.abspath(out)))
    with open(out, "w") as f:
        f.write(text)
    print(f"wrote {out} ({text.count(chr(10))} lines)", file=sys.stderr)
