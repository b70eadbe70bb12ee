#!/usr/bin/env python3
"""Prints gshmem beside the incumbent from one run's logs: latency lines
("<lib> <metric>: <value> us") and bandwidth CSVs, with ratios (gshmem / incumbent for
times, so < 1 is better; gshmem / incumbent for bandwidth, so > 1 is better).
usage: bench_compare.py OUTDIR  (expects latency-<lib>.log, bandwidth-<lib>.csv)"""
import csv
import os
import re
import sys


def latency(path):
    out = {}
    for line in open(path):
        m = re.search(r"\] (gshmem|nvshmem) (.+?): ([0-9.]+) us", line)
        if m:
            out[m.group(2)] = float(m.group(3))
        m = re.search(r"\] ([0-9]+[KM]?i?B) +([0-9.]+)$", line.strip())
        if m:
            out["put+signal one-way " + m.group(1)] = float(m.group(2))
    return out


def bandwidth(path):
    return {row["size"]: row for row in csv.DictReader(open(path))}


def main(d):
    libs = ["gshmem", "nvshmem"]
    lat = {l: latency(os.path.join(d, f"latency-{l}.log")) for l in libs
           if os.path.exists(os.path.join(d, f"latency-{l}.log"))}
    if "gshmem" in lat:
        print(f"{'latency (us)':40s} {'gshmem':>9s} {'nvshmem':>9s} {'ratio':>7s}")
        for k, v in lat["gshmem"].items():
            n = lat.get("nvshmem", {}).get(k)
            print(f"{k:40s} {v:9.3f} {n if n is not None else float('nan'):9.3f} "
                  f"{v / n if n else float('nan'):7.2f}")
    bw = {l: bandwidth(os.path.join(d, f"bandwidth-{l}.csv")) for l in libs
          if os.path.exists(os.path.join(d, f"bandwidth-{l}.csv"))}
    if "gshmem" in bw:
        cols = ["put1", "put8", "put132", "get1", "get8", "get132"]
        print("\nbandwidth GB/s: gshmem (nvshmem) ratio")
        print(f"{'size':>10s} " + " ".join(f"{c:>20s}" for c in cols))
        for size, row in bw["gshmem"].items():
            other = bw.get("nvshmem", {}).get(size, {})
            cells = []
            for c in cols:
                g = float(row[c])
                n = float(other[c]) if c in other else float("nan")
                cells.append(f"{g:6.1f} ({n:6.1f}) {g / n if n else float('nan'):4.2f}")
            print(f"{size:>10s} " + " ".join(f"{c:>20s}" for c in cells))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
