#!/usr/bin/env python3
"""The docs check (a unit test; no GPU): what README.md and docs/ say must hold in the tree.
  links     every relative link and image of README.md and docs/*.md resolves (file, and the
            #anchor to a heading of the file it names); every repository path a page mentions
            (docs/..., tools/..., bench/..., tests/..., src/..., include/..., examples/...) exists
  env       every variable of src/host/env_defs.h (the table gshmem-info prints) has a row in
            docs/environment.md's table, with the same default: its value as the table states
            it (32ull << 20 -> 32M, 120.0 -> 120, true -> 1, "auto" -> auto), or, for an unset
            default, the words of the help text's "(default: ...)" / "(0 = ...)"; no row names
            a variable the table lacks
  api       every function libgshmem exports (nm -D) appears in docs/api.md (or in
            docs/collectives.md, which api.md names for teams and collectives): itself, or as its
            family's pattern (gshmem_TYPENAME_put, gshmem_putSIZE, gshmem_<T>_<op>_reduce, ...)
  readme    every C/CUDA code block of README.md compiles and links against this tree (nvcc for
            ```cuda, the C compiler for ```c) and every sh block passes `bash -n`
usage: check_docs.py --source DIR [--build DIR --lib LIBGSHMEM --nvcc NVCC --arch 90]
                     [--only links,env,api,readme]
Without --build/--lib/--nvcc the api and readme checks are skipped (said so)."""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

fails = []


def fail(what):
    fails.append(what)
    print("FAIL", what)


def pages(src):
    return [os.path.join(src, "README.md")] + sorted(glob.glob(os.path.join(src, "docs", "*.md")))


def prose(text):
    """the page without its fenced code blocks (their lines blanked: line numbers stay)"""
    out, fence = [], None
    for line in text.split("\n"):
        m = re.match(r"^\s*(```+|~~~+)", line)
        if m and (fence is None or m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence)):
            fence = None if fence else m.group(1)
            out.append("")
        else:
            out.append("" if fence else line)
    return out


def slug(heading):
    """GitHub's anchor of a heading: lower case, markup and punctuation dropped, spaces -> -"""
    h = re.sub(r"`|\*\*|__|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading.strip().lower())
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    for line in prose(open(path, encoding="utf-8").read()):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else f"{s}-{n}")
    return out


SOURCE_EXT = (".c", ".cu", ".cuh", ".h", ".sh", ".py", ".md")   # a program named by its source
PATH_REF = re.compile(r"(?<![\w./-])((?:docs|tools|bench|tests|src|include|examples)/[\w.+-]+(?:/[\w.+-]+)*)")


def check_links(src):
    for page in pages(src):
        rel = os.path.relpath(page, src)
        lines = prose(open(page, encoding="utf-8").read())
        for n, line in enumerate(lines, 1):
            for m in re.finditer(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", line):
                target = m.group(1)
                if re.match(r"^[a-z]+:", target):
                    continue   # http(s), mailto: not checked here
                file, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(page), file)) if file else page
                if not os.path.exists(dest):
                    fail(f"{rel}:{n}: link to {target}: {os.path.relpath(dest, src)} does not exist")
                elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                    fail(f"{rel}:{n}: link to {target}: no heading '#{anchor}' in {os.path.relpath(dest, src)}")
            # paths named in the text (code spans included): the tree must have them
            for m in PATH_REF.finditer(re.sub(r"\]\([^)]*\)", "]", line)):
                p = m.group(1).rstrip(".")
                if "*" in p or p.endswith("/"):
                    continue
                if not any(os.path.exists(os.path.join(src, p + ext)) for ext in ("",) + SOURCE_EXT):
                    fail(f"{rel}:{n}: names {p}, which the tree does not have")


ENV_FIELD = re.compile(r'GSHMEMI_ENV_FIELD\((\w+),\s*(\w+),\s*[^,]+?,\s*(.+?),\s*((?:"(?:[^"\\]|\\.)*"\s*)+)\)', re.S)


def env_defs(src):
    """(name, kind, default text, help) of every variable, in the table's order"""
    text = open(os.path.join(src, "src", "host", "env_defs.h")).read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return [(m.group(1), m.group(2), m.group(3).strip(), "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(4))))
            for m in ENV_FIELD.finditer(text)]


def rendered(kind, default):
    """the default as a user writes it, or None for an unset one (empty string, -1)"""
    if kind == "STR":
        v = default.strip('"')
        return v or None
    if kind == "BOOL":
        return "1" if default == "true" else "0"
    v = default.replace("ull", "").replace("ll", "").replace("u", "")
    if kind == "SIZE":
        n = eval(v, {})   # an integer expression of env_defs.h, e.g. 32 << 20
        for unit, shift in (("T", 40), ("G", 30), ("M", 20), ("K", 10)):
            if n and n % (1 << shift) == 0:
                return f"{n >> shift}{unit}"
        return str(n)
    n = float(v)
    if kind == "INT" and n < 0:
        return None
    return f"{n:g}"


def norm(cell):
    c = re.sub(r"[`*]", "", cell).strip().lower()
    c = re.sub(r"^(the |default:? )", "", c)
    return re.sub(r"\s+", " ", c)


def check_env(src):
    page = os.path.join(src, "docs", "environment.md")
    rows = {}
    for line in open(page, encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) >= 3 and "GSHMEM_" in cells[0]:
            for name in re.findall(r"GSHMEM_\w+", cells[0]):
                rows[name] = cells[1]
    table = env_defs(src)
    if not table:
        fail("src/host/env_defs.h: no GSHMEMI_ENV_FIELD rows found")
    for name, kind, default, help_ in table:
        var = "GSHMEM_" + name
        if var not in rows:
            fail(f"docs/environment.md: {var} (src/host/env_defs.h) has no row")
            continue
        value = rendered(kind, default)
        m = re.search(r"\((?:default:? |0 = |-1 = )([^()]*(?:\([^()]*\)[^()]*)*)\)", help_)
        words = m.group(1) if m else None
        want = [w for w in (value, words) if w]
        if want and norm(rows[var]) not in [norm(w) for w in want]:
            fail(f"docs/environment.md: {var}'s default is '{rows[var]}'; env_defs.h (gshmem-info) says "
                 + " or ".join(f"'{w}'" for w in want))
    names = {"GSHMEM_" + t[0] for t in table}
    for var in rows:
        if var not in names:
            fail(f"docs/environment.md: {var} is not a variable of src/host/env_defs.h")


SUFFIXES = ("_on_stream", "_warp", "_block", "_nbi", "_vector")
OPS = ("and", "or", "xor", "min", "max", "sum", "prod")


def api_patterns(name, types):
    """the spellings under which a doc page may list an exported function"""
    base = name
    while base.endswith(SUFFIXES):
        base = base[:-len(next(x for x in SUFFIXES if base.endswith(x)))]
    out = {name, base, base.replace("gshmemx_", "gshmem_", 1)}
    m = re.match(r"(gshmemx?)_(\w+?)_(.+)$", base)
    if m and m.group(2) in types:
        pre, rest = m.group(1), m.group(3)
        out |= {f"{pre}_TYPENAME_{rest}", f"{pre}_TYPE_{rest}", f"`{rest}`"}
        op = re.match(r"(\w+?)_(reduce|reducescatter|inscan|exscan)$", rest)
        if op and op.group(1) in OPS:
            out.add(f"<op>_{op.group(2)}")
    m = re.match(r"(gshmemx?_i?(?:put|get))(8|16|32|64|128)(_.*)?$", base)
    if m:
        out.add(f"{m.group(1)}SIZE{m.group(3) or ''}")
    return out


def expand(text):
    """api.md's shorthand spelled out: in a line that names gshmem_TYPENAME_atomic_fetch_add,
    `_add(...)` or `.../_or/_xor` or `put/get` stand for the same name with its last part(s)
    replaced (every such spelling is tried); a line saying "(and get)" or "(and iget)" also names
    the get forms of its puts"""
    out = []
    for line in text.split("\n"):
        out.append(line)
        if re.search(r"\(and i?get\)", line):
            out.append(line.replace("put", "get"))
        names = re.findall(r"gshmemx?_\w+", line)
        short = re.findall(r"`(_\w+)", line) + re.findall(r"/_?(\w+)", line)
        for word in names:
            cuts = [i for i, c in enumerate(word) if c == "_"]
            for alt in short:
                alt = alt if alt.startswith("_") else "_" + alt
                out += [word[:i] + alt for i in cuts[1:]]
    return "\n".join(out)


def check_api(src, lib):
    try:
        syms = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True,
                              check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError) as e:
        fail(f"nm -D {lib}: {e}")
        return
    funcs = sorted({s for s in syms if re.match(r"gshmemx?_\w+$", s)})
    types = set(re.findall(r"X\((\w+),", open(os.path.join(src, "include", "gshmem", "types.h")).read()))
    types |= {"half", "bfloat16"}
    text = expand("".join(open(os.path.join(src, "docs", p), encoding="utf-8").read()
                          for p in ("api.md", "collectives.md")))
    missing = [f for f in funcs if not any(p in text for p in api_patterns(f, types))]
    for f in missing:
        fail(f"docs/api.md: {f} (exported by libgshmem) is not documented")
    print(f"api: {len(funcs) - len(missing)} of {len(funcs)} exported functions documented")


def readme_blocks(src):
    """(language, first line, code) of every fenced block of README.md"""
    out, lang, start, body = [], None, 0, []
    for n, line in enumerate(open(os.path.join(src, "README.md"), encoding="utf-8"), 1):
        m = re.match(r"^```(\w*)\s*$", line)
        if m and lang is None:
            lang, start, body = m.group(1) or "text", n + 1, []
        elif line.startswith("```") and lang is not None:
            out.append((lang, start, "".join(body)))
            lang = None
        elif lang is not None:
            body.append(line)
    return out


def check_readme(src, build, lib, nvcc, arch):
    cc = os.environ.get("CC", "cc")
    inc = ["-I" + os.path.join(src, "include"), "-I" + build]
    link = ["-L" + os.path.dirname(lib), "-lgshmem", "-Wl,-rpath," + os.path.dirname(lib)]
    with tempfile.TemporaryDirectory() as tmp:
        for lang, line, code in readme_blocks(src):
            where = f"README.md:{line} ({lang})"
            if lang in ("sh", "bash", "shell"):
                r = subprocess.run(["bash", "-n"], input=code, capture_output=True, text=True)
            elif lang in ("c", "cuda"):
                f = os.path.join(tmp, f"block{line}." + ("cu" if lang == "cuda" else "c"))
                open(f, "w").write(code)
                if lang == "cuda":
                    cmd = [nvcc, "-std=c++17", f"-arch=sm_{arch}", *inc, f, "-o", f + ".out",
                           "-L" + os.path.dirname(lib), "-lgshmem", "-Xlinker", "-rpath=" + os.path.dirname(lib)]
                else:
                    cuda_inc = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))), "include")
                    cmd = [cc, "-std=c99", "-Wall", "-Werror", *inc, "-I" + cuda_inc, f, "-o", f + ".out", *link]
                r = subprocess.run(cmd, capture_output=True, text=True)
            else:
                continue   # text, console output: nothing to run
            if r.returncode:
                fail(f"{where} does not {'parse' if lang in ('sh', 'bash', 'shell') else 'compile'}:\n"
                     + (r.stderr or r.stdout)[-1500:])
            else:
                print(f"readme: {where} ok")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--build")
    ap.add_argument("--lib")
    ap.add_argument("--nvcc")
    ap.add_argument("--arch", default="90")
    ap.add_argument("--only", default="links,env,api,readme")
    a = ap.parse_args()
    only = a.only.split(",")
    src = os.path.abspath(a.source)
    if "links" in only:
        check_links(src)
    if "env" in only:
        check_env(src)
    if "api" in only:
        if a.lib:
            check_api(src, a.lib)
        else:
            print("api: skipped (no --lib)")
    if "readme" in only:
        if a.build and a.lib and a.nvcc:
            check_readme(src, os.path.abspath(a.build), os.path.abspath(a.lib), a.nvcc, a.arch)
        else:
            print("readme: skipped (needs --build, --lib and --nvcc)")
    print(f"docs: {'failed' if fails else 'passed'} ({len(fails)} failures)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
