#!/usr/bin/env python3
"""bench_compare.py on made-up runs: every kind of log line the benchmarks print (as gshmrun
prefixes them, old and new prefixes) must land in summary.json, the ratios and the Markdown
tables must use them; the bandwidth and collectives tables must come from the logs when a run's
CSVs are empty or missing (a bandwidth CSV is written only when the benchmark closes it, and a
parser that reads those tables from the CSVs alone prints them empty); the runs across
nodes and raw libfabric are read; --page renders a template from a run's summary.
usage: test_bench_compare.py TOOLS_DIR"""
import json
import os
import subprocess
import sys
import tempfile

tool = os.path.join(sys.argv[1], "bench_compare.py")
fails = 0


def expect(ok, what):
    global fails
    if not ok:
        fails += 1
        print("FAIL", what)


def write(d, name, text):
    with open(os.path.join(d, name), "w") as f:
        f.write(text)


def run(*args):
    return subprocess.run([sys.executable, tool, *args], capture_output=True, text=True)


def finder(d):
    p = os.path.join(d, "summary.json")
    recs = json.load(open(p)) if os.path.exists(p) else []

    def find(lib, fam, metric, size=None, field="value"):
        return [r.get(field) for r in recs if r["lib"] == lib and r["family"] == fam and
                r["metric"] == metric and (size is None or r["size"] == size)]
    return find


# the benchmarks' own output, as bench/bandwidth.cu and bench/collectives.cu print it under gshmrun
BW_LOG = ("[PE 0] gshmem bandwidth GB/s (putN/getN: N blocks x 1024 threads, block scope; ...)\n"
          "[PE 0]       size       put1       put8\n"
          "[PE 0]      65536       44.1      155.3\n"
          "[PE 0]   16777216       45.9        0.0\n")
COLL_LOG = ("[PE 0] gshmem collectives on 2 PEs, team WORLD, float data; us per call: ...\n"
            "[PE 0] \n[PE 0] == barrier_all_on_stream (no NCCL counterpart) ==\n"
            "[PE 0]       size   gshmem us     GB/s\n"
            "[PE 0]          -        3.52     0.00\n"
            "[PE 0] \n[PE 0] == allreduce (float sum; size = the vector; NCCL: ncclAllReduce) ==\n"
            "[PE 0]       size   gshmem us     GB/s     nccl us     GB/s us ratio\n"
            "[PE 0]         8B        2.99     0.00        6.86     0.00     0.44\n"
            "[PE 0]       1MiB       11.81   177.56       WRONG                 0.00\n")

with tempfile.TemporaryDirectory() as d:
    write(d, "latency-gshmem.log", "[PE 0] gshmem p ping-pong one-way: 0.857 us (median over 16 flag placements "
          "of each one's median of 5 x 500 round trips; placements 0.601 .. 0.912)\n"
          "[PE 0] size         put+quiet+flag       put_signal\n"
          "[PE 0] 8B                    2.684            2.207\n"
          "[PE 0] 1MiB                 25.785           25.223\n"
          "[PE 0] gshmem device barrier_all (thread): 1.571 us\n")
    write(d, "latency-nvshmem.log", "[0] nvshmem p ping-pong one-way: 1.233 us (median of 5)\n"
          "[0] size         put+quiet+flag       put_signal\n"
          "[0] 8B                    2.744            2.127\n")
    write(d, "atomics-gshmem.log", "[PE 0] gshmem fetch_add one-word 8x256: 4393.97 Mops/s (K=512)\n")
    write(d, "bandwidth-gshmem.csv", "size,put1,put8\n65536,44.1,155.3\n")
    write(d, "bandwidth-nvshmem.csv", "size,put1,put8\n65536,35.8,109.8\n")
    write(d, "bandwidth.log", BW_LOG.replace("44.1", "99.9"))   # the CSV wins where it has the row
    write(d, "collectives-gshmem.csv", "lib,family,npes,bytes,us,GBps\n"
          "gshmem,allreduce,2,8,2.99,0.00\nnccl,allreduce,2,8,6.86,0.00\n"
          "gshmem,barrier,2,0,3.52,0\n")
    out = run(d)
    expect(out.returncode == 0, f"bench_compare exit {out.returncode}: {out.stderr[-500:]}")
    find = finder(d)
    expect(find("gshmem", "latency", "p ping-pong one-way") == [0.857], "gshmem p ('[PE 0] ' prefix)")
    expect(find("gshmem", "latency", "p ping-pong one-way", field="lo") == [0.601], "p's placement range")
    expect(find("nvshmem", "latency", "p ping-pong one-way") == [1.233], "nvshmem p ('[0] ' prefix)")
    expect(find("gshmem", "latency", "put_signal one-way", 8) == [2.207], "table row 8B put_signal")
    expect(find("gshmem", "latency", "put+quiet+flag one-way", 1 << 20) == [25.785], "table row 1MiB")
    expect(find("gshmem", "latency", "device barrier_all (thread)") == [1.571], "barrier line")
    expect(find("gshmem", "atomics", "fetch_add one-word 8x256") == [4393.97], "atomics line")
    expect(find("gshmem", "bandwidth", "put8", 65536) == [155.3], "bandwidth csv")
    expect(find("gshmem", "bandwidth", "put1", 65536) == [44.1], "the CSV's row, not the log's")
    expect(find("gshmem", "bandwidth", "put1", 16 << 20) == [45.9], "a row only the log holds")
    expect(find("nccl", "allreduce", "us per call", 8) == [6.86], "collectives csv, NCCL row")
    expect("0.70" in out.stdout, "p ratio 0.857 / 1.233 printed")
    expect(os.path.exists(os.path.join(d, "run.json")), "run.json written")

    md = run("--markdown", os.path.join(d, "summary.json"))
    expect(md.returncode == 0, f"--markdown exit {md.returncode}: {md.stderr[-500:]}")
    expect("| 8B | 2.99 | 6.86 | 0.44 |" in md.stdout, "markdown allreduce row with its ratio")
    expect("| 64KiB | 44.1 (35.8) | 155.3 (109.8) |" in md.stdout, "markdown bandwidth row")

# A run whose CSVs did not survive: the bandwidth CSV empty (the benchmark never closed it), no
# collectives CSV; the logs hold every row. The tables must come from the logs.
with tempfile.TemporaryDirectory() as d:
    write(d, "bandwidth-gshmem.csv", "")
    write(d, "bandwidth.log", BW_LOG)
    write(d, "collectives-gshmem.log", COLL_LOG)
    write(d, "remote-collectives.log", "[PE 0] gshmem collectives on 4 PEs, team WORLD, ...\n"
          "[PE 0] across nodes: remote put bandwidth of the link, PE 0 -> PE 2 (16 MiB on-stream puts): 3.64 GB/s\n"
          "[PE 0] \n[PE 0] == reducescatter (float sum; size = each PE's result; NCCL: ncclReduceScatter) ==\n"
          "[PE 0]       size   gshmem us     GB/s\n"
          "[PE 0]         8B       92.35     0.00\n")
    write(d, "remote-fabric.log", "fabric_baseline tcp;ofi_rxm: fi_write 8 B one-way latency 4.98 us (ping-pong / 2, 2000 rounds)\n"
          "fabric_baseline tcp;ofi_rxm: fi_write  4194304 B x   64, 64 in flight: 3.74 GB/s\n"
          "fabric_baseline tcp;ofi_rxm: fi_atomic 8 B FI_SUM rate 0.210 million/s (64 in flight)\n")
    out = run(d)
    expect(out.returncode == 0, f"bench_compare on logs alone: exit {out.returncode}: {out.stderr[-300:]}")
    find = finder(d)
    expect(find("gshmem", "bandwidth", "put8", 65536) == [155.3], "bandwidth row from the log")
    expect(find("gshmem", "bandwidth", "put8", 16 << 20) == [], "a 0.0 cell (not measured) is no row")
    expect(find("gshmem", "allreduce", "us per call", 1 << 20) == [11.81], "collectives row from the log")
    expect(find("nccl", "allreduce", "us per call", 8) == [6.86], "NCCL's pair of the log row")
    expect(find("nccl", "allreduce", "us per call", 1 << 20) == [], "a WRONG cell is no row")
    expect(find("gshmem", "barrier", "us per call", 0) == [3.52], "a dataless row ('-') from the log")
    expect(find("gshmem", "remote-reducescatter", "us per call", 8) == [92.35], "across nodes, from the log")
    expect(find("gshmem", "remote-link", "link put bandwidth") == [3.64], "the link line")
    expect(find("libfabric", "remote-fabric", "fi_write", 4 << 20) == [3.74], "raw fi_write bandwidth")
    expect(find("libfabric", "remote-fabric", "fi_atomic 8 B") == [0.21], "raw fi_atomic rate")
    expect("155.3" in out.stdout and "11.81" in out.stdout, "the printed tables hold the logs' rows")

    # the performance page from this run's summary
    perf = os.path.join(d, "perf")
    os.makedirs(os.path.join(perf, "r"))
    os.replace(os.path.join(d, "summary.json"), os.path.join(perf, "r", "summary.json"))
    write(os.path.join(perf, "r"), "run.json", json.dumps({"machine": "M", "date": "D", "commit": "C", "command": "X"}))
    write(perf, "page.md.in", "# P\n{{run r}}\n{{collectives r family=allreduce}}\n{{bandwidth r cols=put1,put8}}\n")
    page = run("--page", os.path.join(perf, "page.md.in"), os.path.join(d, "page.md"))
    expect(page.returncode == 0, f"--page exit {page.returncode}: {page.stderr[-300:]}")
    text = open(os.path.join(d, "page.md")).read() if page.returncode == 0 else ""
    expect("Machine: M. Date: D. Commit: `C`. Command: `X`." in text, "the run's provenance line")
    expect("| 8B | 2.99 | 6.86 | 0.44 |" in text, "page: collectives row with its ratio")
    expect("| 64KiB | 44.1 (—; —) | 155.3 (—; —) |" in text, "page: bandwidth row")

print(f"bench_compare: {'failed' if fails else 'passed'} ({fails} failures)")
sys.exit(1 if fails else 0)
