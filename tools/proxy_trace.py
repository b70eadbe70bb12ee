#!/usr/bin/env python3
"""Splits the one-way time of a remote p ping-pong between two PEs (bench/latency_remote
--p-only, or any flag ping-pong of p's) from the proxies' event traces (GSHMEM_PROXY_TRACE=PREFIX
writes PREFIX.0 and PREFIX.1; both nodes of a one-machine job share CLOCK_MONOTONIC).

    tools/proxy_trace.py PREFIX [--skip N]

Each hop from one PE's pickup of its p descriptor to the other PE's pickup of the answer is
cut at the send call, the arrival, the enqueued placement: pickup -> send call begins, the send
call, send returned -> arrival at the other proxy (wire and its loop), arrival -> placement
enqueued (the CUDA call), placement enqueued -> the other GPU's answer picked up (the store
reaching GPU memory, the GPU's wait seeing it and posting its p, the post crossing PCIe, the
proxy's pickup). Prints p10 / median / p90 per part, and what the answering proxy did in the
last part (per hop). Event numbers: src/transport/proxy/trace.h."""
import bisect
import sys

NAMES = {1: 'pickup', 2: 'send request', 3: 'send request end', 4: 'arrival', 5: 'placement enqueued',
         6: 'response released', 7: 'send response', 8: 'send response end', 9: 'CQ read', 10: 'CQ read end',
         11: 'response arrived alone', 12: 'ticket write', 13: 'ticket write end', 14: 'GPU store call',
         15: 'GPU store call end'}
OP_P = 3


def load(path):
    ev = []
    with open(path) as f:
        for line in f:
            t, e, a = line.split()
            ev.append((float(t), int(e), int(a)))
    ev.sort()
    return ev


def after(ev, e, t, arg=None):
    i = bisect.bisect_left(ev, (t, 0, 0))
    while i < len(ev):
        if ev[i][1] == e and (arg is None or ev[i][2] == arg):
            return ev[i][0]
        i += 1
    return None


def q(v, f):
    return v[min(len(v) - 1, int(f * len(v)))] * 1e6


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith('-'):
        print(__doc__)
        return 2
    skip = int(args[args.index('--skip') + 1]) if '--skip' in args else 200
    ev = {pe: load(f'{args[0]}.{pe}') for pe in (0, 1)}
    parts = ['pickup -> send call', 'send call', 'send -> arrival', 'arrival -> placement enqueued',
             'placement -> answer picked up', 'one-way (pickup to pickup)']
    seg = {p: [] for p in parts}
    did = {}
    starts = [t for (t, e, a) in ev[0] if e == 1 and a == OP_P][skip:-5]
    for t in starts:
        pe, td = 0, t
        for _ in range(2):
            o = 1 - pe
            sb = after(ev[pe], 2, td)
            se = sb and after(ev[pe], 3, sb)
            rv = se and after(ev[o], 4, se)
            sv = rv and after(ev[o], 5, rv)
            dr = sv and after(ev[o], 1, sv, OP_P)
            if not dr:
                break
            for p, v in zip(parts, (sb - td, se - sb, rv - se, sv - rv, dr - sv, dr - td)):
                seg[p].append(v)
            i = bisect.bisect_right(ev[o], (sv, 99, 1 << 62))
            while i < len(ev[o]) and ev[o][i][0] < dr:
                k = NAMES.get(ev[o][i][1], str(ev[o][i][1]))
                if not k.endswith(' end'):
                    did[k] = did.get(k, 0) + 1
                i += 1
            pe, td = o, dr
    n = len(seg[parts[-1]])
    if not n:
        print('no complete p hop found in the traces (a p ping-pong between PEs 0 and 1?)')
        return 1
    print(f'{n} hops (the first {skip} pickups of PE 0 skipped), microseconds:')
    print(f'{"part":32s} {"p10":>8s} {"median":>8s} {"p90":>8s}')
    for p in parts:
        v = sorted(seg[p])
        print(f'{p:32s} {q(v, .1):8.2f} {q(v, .5):8.2f} {q(v, .9):8.2f}')
    print('the answering proxy, between placement and pickup, per hop: ' +
          ', '.join(f'{k} {c / n:.2f}' for k, c in sorted(did.items(), key=lambda kv: -kv[1])))
    return 0


if __name__ == '__main__':
    sys.exit(main())
