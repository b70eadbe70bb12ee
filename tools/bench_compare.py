#!/usr/bin/env python3
"""Prints gshmem beside the incumbent from one run's logs, with ratios, and writes every
metric to OUTDIR/summary.csv and OUTDIR/summary.json (lib, family, metric, size, value, unit).
Reads what is there of:
  latency-<lib>.log      "<lib> <metric>: <value> us" lines, and tables of one-way us: a
                         header "size <col> <col>..." then rows "<size> <value> <value>..."
  latency-gshmem-nodeadline.log   the same gshmem run with GSHMEM_WAIT_TIMEOUT=0
  bandwidth-<lib>.csv    size,<col>,<col>... in GB/s
  atomics-<lib>.log      "<lib> <metric>: <value> Mops/s" lines
Ratios are gshmem / incumbent: < 1 is better for times (us), > 1 for rates (GB/s, Mops/s).
usage: bench_compare.py OUTDIR"""
import csv
import json
import math
import os
import re
import sys

LIBS = ["gshmem", "nvshmem"]
PREFIX = r"^(?:\[\d+\] )?"   # gshmrun's "[rank] " unless --no-prefix
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


def rec(lib, family, metric, size, value, unit):
    return {"lib": lib, "family": family, "metric": metric, "size": size, "value": value, "unit": unit}


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

    print_family(recs, "latency", "latency")
    print_deadline(recs)
    p = os.path.join(d, "bandwidth-gshmem.csv")
    print_bandwidth(recs, next(csv.reader(open(p))) if os.path.exists(p) else [])
    print_family(recs, "atomics", "atomics, per PE pair")

    with open(os.path.join(d, "summary.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["lib", "family", "metric", "size", "value", "unit"])
        w.writeheader()
        w.writerows(recs)
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump(recs, f, indent=1)
    print(f"\n{len(recs)} metrics in {os.path.join(d, 'summary.csv')} and summary.json")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
