#!/usr/bin/env python3
"""Proves that nvcc's host pass sees the whole public API: gshmem.h gives the host pass only
declarations (gshmem/forms.h: the device headers are read by the device pass alone), so every
gshmem_/gshmemx_ function the device pass defines must be declared in the host pass with the
same result and parameter types, or a kernel calling it would not compile; with and without
GSHMEM_REMOTE=1. A device family added without its host-pass declaration fails here with its
name.
usage: test_header_passes.py NVCC INCLUDE_DIR ARCH"""
import os
import re
import subprocess
import sys
import tempfile

# typedefs the two passes may spell differently (device forms take `int team`)
ALIAS = {'gshmem_team_t': 'int', 'int32_t': 'int'}
KEYWORDS = {'int', 'char', 'long', 'short', 'unsigned', 'signed', 'float', 'double', 'void'}


def chunks(text):
    """Top-level declarations and definition heads (extern "C" blocks are no nesting)."""
    text = re.sub(r'^#.*$', '', text, flags=re.M)
    text = re.sub(r'extern\s+"C"\s*\{', ' ', text)
    depth, start = 0, 0
    for m in re.finditer(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|[{};]', text):
        c = m.group(0)
        if c[0] in '"\'':
            continue
        if c == '{':
            if depth == 0:
                yield text[start:m.start()]
            depth += 1
        elif c == '}':
            if depth == 0:          # the end of an extern "C" block
                start = m.end()
                continue
            depth -= 1
            if depth == 0:
                start = m.end()
        elif depth == 0:
            yield text[start:m.start()]
            start = m.end()


def types(params):
    """'const float *dest, int pe' -> 'const float *, int' (parameter names dropped)."""
    out = []
    for p in [x for x in params.split(',') if x.strip()]:
        toks = p.replace('*', ' * ').split()
        if len(toks) > 1 and re.match(r'^[A-Za-z_]\w*$', toks[-1]) and toks[-1] not in KEYWORDS:
            toks = toks[:-1]
        out.append(' '.join(ALIAS.get(t, t) for t in toks))
    return ', '.join(out)


def signatures(path):
    sigs = {}
    for ch in chunks(open(path).read()):
        s = ' '.join(ch.split())
        s = re.sub(r'template\s*<int gshmemi_lazy_ = 0>', '', s)
        s = re.sub(r'__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)', '', s)
        s = re.sub(r'\b(static|inline|__inline__|extern)\b', '', s)
        m = re.match(r'^\s*(.*?)\b(gshmemx?_\w+)\s*\((.*)\)\s*$', s)
        if m and not m.group(2).startswith('gshmem_proxy_'):
            ret = ' '.join(ALIAS.get(t, t) for t in m.group(1).replace('*', ' * ').split())
            sigs.setdefault(m.group(2), set()).add(ret + ' (' + types(m.group(3)) + ')')
    return sigs


def check(nvcc, inc, arch, flags):
    """Compiles a unit with `flags` keeping both passes' text; returns the number of problems."""
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, 'u.cu')
        with open(src, 'w') as f:
            f.write('#include <gshmem.h>\n__global__ void k(int *p) { gshmem_int_p(p, 1, 0); }\n')
        r = subprocess.run([nvcc, '-std=c++17', '-arch=sm_' + arch, '-I' + inc] + flags +
                           ['-c', src, '-o', os.path.join(d, 'u.o'), '--keep', '--keep-dir', d],
                           capture_output=True, text=True)
        if r.returncode:
            print(r.stdout + r.stderr + 'FAIL: the unit did not compile')
            return 1
        host = signatures(os.path.join(d, 'u.cpp4.ii'))
        dev = signatures(os.path.join(d, 'u.cpp1.ii'))
    bad = 0
    for name in sorted(dev):
        if name not in host:
            print(f'FAIL {name}: defined in the device pass, not declared in the host pass')
            bad += 1
        elif not dev[name] <= host[name]:
            print(f'FAIL {name}: device pass {sorted(dev[name])}, host pass {sorted(host[name])}')
            bad += 1
    print(f'{" ".join(flags) or "default"}: {len(dev)} functions of the device pass checked, '
          f'{bad} not declared alike in the host pass')
    if len(dev) < 1000:
        print('FAIL: too few functions found: the preprocessed text was not read as expected')
        return 1
    return bad


def main():
    nvcc, inc, arch = sys.argv[1:4]
    bad = sum(check(nvcc, inc, arch, flags) for flags in ([], ['-DGSHMEM_REMOTE=1']))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
