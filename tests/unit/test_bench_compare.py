#!/usr/bin/env python3
"""bench_compare.py on a made-up run: every kind of log line the benchmarks print (as gshmrun
prefixes them, old and new prefixes) must land in summary.json, the ratios and the Markdown
tables must use them. usage: test_bench_compare.py TOOLS_DIR"""
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


with tempfile.TemporaryDirectory() as d:
    def write(name, text):
        with open(os.path.join(d, name), "w") as f:
            f.write(text)

    write("latency-gshmem.log", "[PE 0] gshmem p ping-pong one-way: 0.857 us (median of 5)\n"
          "[PE 0] size         put+quiet+flag       put_signal\n"
          "[PE 0] 8B                    2.684            2.207\n"
          "[PE 0] 1MiB                 25.785           25.223\n"
          "[PE 0] gshmem device barrier_all (thread): 1.571 us\n")
    write("latency-nvshmem.log", "[0] nvshmem p ping-pong one-way: 1.233 us (median of 5)\n"
          "[0] size         put+quiet+flag       put_signal\n"
          "[0] 8B                    2.744            2.127\n")
    write("atomics-gshmem.log", "[PE 0] gshmem fetch_add one-word 8x256: 4393.97 Mops/s (K=512)\n")
    write("bandwidth-gshmem.csv", "size,put1,put8\n65536,44.1,155.3\n")
    write("bandwidth-nvshmem.csv", "size,put1,put8\n65536,35.8,109.8\n")
    write("collectives-gshmem.csv", "lib,family,npes,bytes,us,GBps\n"
          "gshmem,allreduce,2,8,2.99,0.00\nnccl,allreduce,2,8,6.86,0.00\n"
          "gshmem,barrier,2,0,3.52,0\n")
    out = subprocess.run([sys.executable, tool, d], capture_output=True, text=True)
    expect(out.returncode == 0, f"bench_compare exit {out.returncode}: {out.stderr[-500:]}")
    recs = json.load(open(os.path.join(d, "summary.json")))

    def find(lib, fam, metric, size=None):
        return [r["value"] for r in recs if r["lib"] == lib and r["family"] == fam and
                r["metric"] == metric and (size is None or r["size"] == size)]

    expect(find("gshmem", "latency", "p ping-pong one-way") == [0.857], "gshmem p ('[PE 0] ' prefix)")
    expect(find("nvshmem", "latency", "p ping-pong one-way") == [1.233], "nvshmem p ('[0] ' prefix)")
    expect(find("gshmem", "latency", "put_signal one-way", 8) == [2.207], "table row 8B put_signal")
    expect(find("gshmem", "latency", "put+quiet+flag one-way", 1 << 20) == [25.785], "table row 1MiB")
    expect(find("gshmem", "latency", "device barrier_all (thread)") == [1.571], "barrier line")
    expect(find("gshmem", "atomics", "fetch_add one-word 8x256") == [4393.97], "atomics line")
    expect(find("gshmem", "bandwidth", "put8", 65536) == [155.3], "bandwidth csv")
    expect(find("nccl", "allreduce", "us per call", 8) == [6.86], "collectives csv, NCCL row")
    expect("0.70" in out.stdout, "p ratio 0.857 / 1.233 printed")

    md = subprocess.run([sys.executable, tool, "--markdown", os.path.join(d, "summary.json")],
                        capture_output=True, text=True)
    expect(md.returncode == 0, f"--markdown exit {md.returncode}: {md.stderr[-500:]}")
    expect("| 8B | 2.99 | 6.86 | 0.44 |" in md.stdout, "markdown allreduce row with its ratio")
    expect("| 64KiB | 44.1 (35.8) | 155.3 (109.8) |" in md.stdout, "markdown bandwidth row")

print(f"bench_compare: {'failed' if fails else 'passed'} ({fails} failures)")
sys.exit(1 if fails else 0)
