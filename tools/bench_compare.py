#!/usr/bin/env python3
"""gshmem beside the incumbents (NVSHMEM, NCCL, raw libfabric) from one run's logs, with ratios;
every metric goes to OUTDIR/summary.csv and OUTDIR/summary.json (lib, family, metric, size,
value, unit, npes, lo, hi) and the run's machine, date and commit to OUTDIR/run.json. Reads
what is there of (tools/gpu-run.sh writes these names):
  latency-<lib>.log      "<lib> <metric>: <value> us" lines (a one-word latency's placement
                         range "A .. B" becomes lo/hi), and tables of one-way us: a header
                         "size <col> <col>..." then rows "<size> <value> <value>..."
  latency-gshmem-nodeadline.log   the same gshmem run with GSHMEM_WAIT_TIMEOUT=0
  bandwidth-<lib>.csv    size,<col>,<col>... in GB/s; bandwidth.log (gshmem) and
                         bandwidth-<lib>.log hold the same table as printed
  atomics-<lib>.log      "<lib> <metric>: <value> Mops/s" lines
  collectives-<build>.csv  lib,family,npes,bytes,us,GBps rows of bench/collectives (the gshmem
                         build also holds NCCL's rows); collectives-<build>.log the same tables
                         as printed, and the link lines of a job across nodes
  remote-latency.log, remote-bandwidth.csv/.log, remote-atomics.log, remote-collectives.csv/.log
                         the same benchmarks across nodes (families remote-*), and
  remote-fabric.log      bench/fabric_baseline: raw libfabric (lib "libfabric")
A table comes from the CSV and, where the CSV lacks rows (missing, empty, cut short by a job
that ended before it closed the file), from the log. Ratios are gshmem / incumbent: < 1 is
better for times (us), > 1 for rates (GB/s, Mops/s).
usage: bench_compare.py [--command TEXT] OUTDIR
       bench_compare.py --plots OUTDIR [SUMMARY]   PNG charts (matplotlib) from OUTDIR/summary.json
                         (or SUMMARY: a summary.json/.csv), written to OUTDIR; needs no logs
       bench_compare.py --markdown SUMMARY [PREV]  the run's collectives and bandwidth tables in
                         Markdown; PREV: an earlier run's summary, whose gshmem times fill a
                         last column
       bench_compare.py --page TEMPLATE OUT        docs/performance.md from its template
                         (docs/perf/performance.md.in) and the runs it names (docs/perf/RUN/
                         summary.json + run.json); plots into OUT's img/ where matplotlib is"""
import csv
import datetime
import glob
import json
import math
import os
import re
import subprocess
import sys

import perf_page
from bench_summary import (COLL_FAMILIES, COLL_TITLES, DATALESS, INCUMBENTS, fmt_size, load_summary,
                           plots, value)

LIBS = ["gshmem", "nvshmem"]
# the first words of bench/collectives' table titles ("== <title> =="), family by family
COLL_LOG_TITLES = [("allreduce replayed", "allreduce_graph"), ("barrier_all_on_stream replayed", "barrier_graph"),
                   ("floor:", "empty_kernel_graph"), ("barrier_all_on_stream", "barrier"),
                   ("allreduce", "allreduce"), ("broadcast", "broadcast"), ("fcollect", "fcollect"),
                   ("alltoall", "alltoall"), ("reducescatter", "reducescatter")]
FIELDS = ["lib", "family", "metric", "size", "value", "unit", "npes", "lo", "hi"]
PREFIX = r"^(?:\[(?:PE )?\d+\] )?"   # gshmrun's "[PE rank] " (older: "[rank] ") unless --no-prefix
LINE = re.compile(PREFIX + r"(gshmem|nvshmem) (.+?): ([0-9.]+) (us|Mops/s|GB/s|s)\b(.*)$")
RANGE = re.compile(r"([0-9.]+) \.\. ([0-9.]+)")
HEADER = re.compile(PREFIX + r"\s*size((?: +\S+)+)\s*$")
ROW = re.compile(PREFIX + r"\s*([0-9]+)(B|KiB|MiB|GiB)?((?: +\S+)+)\s*$")
NUM = re.compile(r"^[0-9]+(?:\.[0-9]+)?$")
SCALE = {None: 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
NAN = float("nan")


def rec(lib, family, metric, size, value, unit, npes=None, lo=None, hi=None):
    return {"lib": lib, "family": family, "metric": metric, "size": size, "value": value, "unit": unit,
            "npes": npes, "lo": lo, "hi": hi}


def lines_of(path):
    for line in open(path, errors="replace"):
        yield line.rstrip("\n")


def parse_log(path, lib, family):
    """Standard lines and size tables of one benchmark log, in the order printed. A table is a
    header "size <col>..." and rows "<size> <value>...": latency's sizes carry a unit and its
    values are one-way us; bench/bandwidth's sizes are bytes, its values GB/s (0: not measured),
    its library named by the line "<lib> bandwidth GB/s" before the table."""
    out, cols = [], None
    for line in lines_of(path):
        m = LINE.search(line)
        if m:
            r = RANGE.search(m.group(5))
            out.append(rec(m.group(1), family, m.group(2), None, float(m.group(3)), m.group(4),
                           lo=float(r.group(1)) if r else None, hi=float(r.group(2)) if r else None))
            continue
        m = re.search(PREFIX + r"(gshmem|nvshmem) bandwidth GB/s", line)
        if m:
            lib = m.group(1)
            continue
        m = HEADER.search(line)
        if m:
            cols = m.group(1).split()
            continue
        m = ROW.search(line)
        if not (m and cols and lib):
            continue
        size = int(m.group(1)) * SCALE[m.group(2)]
        for c, v in zip(cols, m.group(3).split()):
            if not NUM.match(v):
                continue
            if m.group(2):
                out.append(rec(lib, family, c + " one-way", size, float(v), "us"))
            elif float(v) > 0:
                out.append(rec(lib, family, c, size, float(v), "GB/s"))
    return out


def parse_csv(path, lib, family, unit):
    out = []
    for row in csv.DictReader(open(path)):
        size = int(row.pop("size"))
        for c, v in row.items():
            if float(v) > 0:   # 0: not measured (the size does not split into the slices)
                out.append(rec(lib, family, c, size, float(v), unit))
    return out


def coll_recs(lib, fam, npes, size, us, gbps):
    out = [rec(lib, fam, "us per call", size, us, "us", npes)]
    if gbps > 0:
        out.append(rec(lib, fam, "bus bandwidth", size, gbps, "GB/s", npes))
    return out


def parse_collectives(path):
    """us per call and bus GB/s of each (lib, family, size) row"""
    out = []
    for row in csv.DictReader(open(path)):
        out += coll_recs(row["lib"], row["family"], int(row["npes"]), int(row["bytes"]), float(row["us"]),
                         float(row["GBps"]))
    return out


def parse_coll_log(path, prefix=""):
    """bench/collectives' tables as printed: "<lib> collectives on N PEs", then per family
    "== <title> ==", a header "size <lib> us GB/s ... us ratio" and rows "<size> <us> <GB/s>..."
    (WRONG or skipped in place of a library's pair); across nodes also the link lines."""
    out, npes, fam, libs = [], None, None, []
    for line in lines_of(path):
        m = re.search(PREFIX + r"(?:gshmem|nvshmem) collectives on (\d+) PEs", line)
        if m:
            npes = int(m.group(1))
            continue
        m = re.search(PREFIX + r"across nodes: (remote put bandwidth of the link|every PE at once).*: ([0-9.]+) GB/s",
                      line)
        if m:
            metric = "link put bandwidth" if m.group(1).startswith("remote") else "put bandwidth, every PE at once"
            out.append(rec("gshmem", prefix + "link", metric, None, float(m.group(2)), "GB/s", npes))
            continue
        m = re.search(PREFIX + r"== (.+) ==\s*$", line)
        if m:
            fam = next((f for t, f in COLL_LOG_TITLES if m.group(1).startswith(t)), None)
            continue
        m = HEADER.search(line)
        if m and fam:
            tok = m.group(1).split()
            libs = [tok[i - 1] for i in range(1, len(tok)) if tok[i] == "us" and tok[i - 1] not in ("us", "GB/s")]
            continue
        m = re.search(PREFIX + r"\s*(-|[0-9]+(?:B|KiB|MiB|GiB))((?: +\S+)+)\s*$", line)
        if not (m and fam and libs and npes):
            continue
        size = 0 if m.group(1) == "-" else int(re.match(r"\d+", m.group(1)).group()) * \
            SCALE[re.search(r"[A-Za-z]+$", m.group(1)).group()]
        tok, i = m.group(2).split(), 0
        for lib in libs:
            if i < len(tok) and NUM.match(tok[i]) and i + 1 < len(tok) and NUM.match(tok[i + 1]):
                out += coll_recs(lib, prefix + fam, npes, size, float(tok[i]), float(tok[i + 1]))
                i += 2
            else:
                i += 1   # WRONG / skipped: one word, no bandwidth
    return out


def parse_fabric_log(path):
    """bench/fabric_baseline: raw libfabric between two processes (lib "libfabric")"""
    out = []
    for line in lines_of(path):
        m = re.search(r"fabric_baseline \S+: (fi_write 8 B|fi_send \d+ B) one-way latency ([0-9.]+) us", line)
        if m:
            out.append(rec("libfabric", "remote-fabric", m.group(1) + " one-way", None, float(m.group(2)), "us"))
        m = re.search(r"fabric_baseline \S+: fi_write +(\d+) B x +\d+, \d+ in flight: ([0-9.]+) GB/s", line)
        if m:
            out.append(rec("libfabric", "remote-fabric", "fi_write", int(m.group(1)), float(m.group(2)), "GB/s"))
        m = re.search(r"fabric_baseline \S+: fi_atomic 8 B FI_SUM rate ([0-9.]+) million/s", line)
        if m:
            out.append(rec("libfabric", "remote-fabric", "fi_atomic 8 B", None, float(m.group(1)), "Mops/s"))
    return out


def merge(recs, more):
    """recs plus the records of more that recs has no value for (a CSV's rows win over its log's)"""
    have = {(r["lib"], r["family"], r["metric"], r["size"], r["npes"]) for r in recs}
    return recs + [r for r in more if (r["lib"], r["family"], r["metric"], r["size"], r["npes"]) not in have]


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


def print_bandwidth(recs, family="bandwidth"):
    g, n = index(recs, "gshmem", family), index(recs, "nvshmem", family)
    if not g:
        return
    cols = list(dict.fromkeys(r["metric"] for r in g.values()))   # in the benchmark's order
    sizes = sorted({r["size"] for r in g.values()})
    for i in range(0, len(cols), 6):
        group = cols[i:i + 6]
        print(f"\n{family} GB/s: gshmem (nvshmem) ratio")
        print(f"{'size':>10s} " + " ".join(f"{c:>20s}" for c in group))
        for s in sizes:
            cells = []
            for c in group:
                gv = g.get((c, s), {}).get("value", NAN)
                nv = n.get((c, s), {}).get("value", NAN)
                cells.append(f"{gv:6.1f} ({nv:6.1f}) {ratio(gv, nv):4.2f}")
            print(f"{s:>10d} " + " ".join(f"{c:>20s}" for c in cells))


def print_collectives(recs, prefix=""):
    """one table per family: size, us (and bus GB/s) of each library, gshmem / incumbent of us"""
    for fam in COLL_FAMILIES:
        rs = [r for r in recs if r["family"] == prefix + fam]
        if not rs:
            continue
        libs = [l for l in ["gshmem"] + INCUMBENTS if any(r["lib"] == l for r in rs)]
        npes = sorted({r["npes"] for r in rs})
        for n in npes:
            t = {(r["lib"], r["size"]): r["value"] for r in rs if r["npes"] == n and r["unit"] == "us"}
            bw = {(r["lib"], r["size"]): r["value"] for r in rs if r["npes"] == n and r["unit"] == "GB/s"}
            sizes = sorted({s for (_, s) in t})
            inc = [l for l in libs if l != "gshmem"]
            print(f"\n{prefix}{COLL_TITLES.get(fam, fam)}, {n} PEs: us per call (bus GB/s); ratio = gshmem / incumbent us")
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


def table_of(d, csvs, logs, from_csv, from_log):
    """one table of a run: its CSVs' rows, then what only its logs hold"""
    out = []
    for p in csvs:
        if os.path.exists(os.path.join(d, p)):
            out += from_csv(os.path.join(d, p))
    for p in logs:
        if os.path.exists(os.path.join(d, p)):
            out = merge(out, from_log(os.path.join(d, p)))
    return out


def read_run(d):
    """every benchmark output of one run directory, as records"""
    recs = []
    for lib in LIBS:
        recs += table_of(d, [], [f"latency-{lib}.log"], None, lambda p: parse_log(p, lib, "latency"))
        recs += table_of(d, [f"bandwidth-{lib}.csv"], [f"bandwidth-{lib}.log", "bandwidth.log"],
                         lambda p: parse_csv(p, lib, "bandwidth", "GB/s"),
                         lambda p: [r for r in parse_log(p, None, "bandwidth") if r["lib"] == lib])
        recs += table_of(d, [], [f"atomics-{lib}.log"], None, lambda p: parse_log(p, lib, "atomics"))
    recs += table_of(d, [], ["latency-gshmem-nodeadline.log"], None,
                     lambda p: parse_log(p, "gshmem", "latency-nodeadline"))
    recs += table_of(d, sorted(os.path.basename(p) for p in glob.glob(os.path.join(d, "collectives-*.csv"))),
                     sorted(os.path.basename(p) for p in glob.glob(os.path.join(d, "collectives-*.log"))),
                     parse_collectives, parse_coll_log)
    # across nodes (tools/gpu-run.sh remote)
    for fam in ("latency", "atomics"):
        recs += table_of(d, [], [f"remote-{fam}.log"], None, lambda p: parse_log(p, "gshmem", "remote-" + fam))
    recs += table_of(d, ["remote-bandwidth.csv"], ["remote-bandwidth.log"],
                     lambda p: parse_csv(p, "gshmem", "remote-bandwidth", "GB/s"),
                     lambda p: parse_log(p, "gshmem", "remote-bandwidth"))
    recs += table_of(d, ["remote-collectives.csv"], ["remote-collectives.log"],
                     lambda p: [dict(r, family="remote-" + r["family"]) for r in parse_collectives(p)],
                     lambda p: parse_coll_log(p, "remote-"))
    recs += table_of(d, [], ["remote-fabric.log"], None, parse_fabric_log)
    return recs


def dump_summary(path, recs):
    """JSON, one record a line (docs/perf/ keeps runs' summaries in git: small diffs)"""
    with open(path, "w") as f:
        f.write("[\n" + ",\n".join(json.dumps(r) for r in recs) + "\n]\n")


def run_info(command):
    """what machine, when, which commit: run.json beside the summary"""
    def out(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    gpus = [re.sub(r" \(UUID.*", "", l.split(": ", 1)[-1]) for l in out(["nvidia-smi", "-L"]).splitlines()]
    machine = f"{len(gpus)} x {gpus[0]}" if gpus and len(set(gpus)) == 1 else ", ".join(gpus)
    return {"machine": machine, "date": datetime.date.today().isoformat(),
            "commit": out(["git", "rev-parse", "--short", "HEAD"]), "command": command}


def main(d, command=""):
    recs = read_run(d)
    print_family(recs, "latency", "latency")
    print_deadline(recs)
    print_bandwidth(recs)
    print_family(recs, "atomics", "atomics, per PE pair")
    print_collectives(recs)
    print_family(recs, "remote-latency", "across nodes: latency")
    print_bandwidth(recs, "remote-bandwidth")
    print_family(recs, "remote-atomics", "across nodes: atomics, per PE pair")
    print_collectives(recs, "remote-")

    with open(os.path.join(d, "summary.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(recs)
    dump_summary(os.path.join(d, "summary.json"), recs)
    with open(os.path.join(d, "run.json"), "w") as f:
        json.dump(run_info(command), f, indent=1)
    print(f"\n{len(recs)} metrics in {os.path.join(d, 'summary.csv')} and summary.json; run.json")


def f2(v):
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.2f}"


def markdown(src, prev=None):
    """Markdown tables of one run (a summary.json/.csv): every collective family, us per call
    of gshmem, NCCL and NVSHMEM with gshmem's ratios (and gshmem in an earlier run's summary,
    prev, in the last column), and the block-scope bandwidth table."""
    recs = load_summary(src)
    old = load_summary(prev) if prev else []
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
            v = {l: value(recs, l, fam, "us per call", size) for l in libs}
            ratios = [f"{v['gshmem'] / v[l]:.2f}" if v["gshmem"] and v[l] else "—" for l in libs[1:]]
            name = "-" if fam in DATALESS else fmt_size(size)
            before = f" | {f2(value(old, 'gshmem', fam, 'us per call', size))}" if old else ""
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
                g, n = value(recs, "gshmem", "bandwidth", c, size), value(recs, "nvshmem", "bandwidth", c, size)
                f1 = lambda x: "—" if x is None else f"{x:.1f}"
                cells.append(f"{f1(g)} ({f1(n)})")
            print(f"| {fmt_size(size)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) > 1 and args[0] == "--markdown":
        markdown(args[1], args[2] if len(args) > 2 else None)
    elif args and args[0] == "--plots":
        plots(args[1] if len(args) > 1 else ".", args[2] if len(args) > 2 else None)
    elif len(args) == 3 and args[0] == "--page":
        perf_page.write(args[1], args[2])
    else:
        cmd = ""
        if len(args) > 1 and args[0] == "--command":
            cmd, args = args[1], args[2:]
        main(args[0] if args else ".", cmd)
