#!/usr/bin/env python3
"""Plan StableHLO files with dynamic dims (?), binding every dynamic argument dim to one size.

usage: dynbind.py [--bin bin/tpuplan] [--size 8] [--jobs 2] [--show 30] [--timeout 60] FILE_OR_DIR...

Each file's entry function (@main, else the first public one, else the first: the
translator's choice) gives the bindings: an argument whose type has a ? is bound to its shape
with every ? the size (--bind arg1=8x1), a scalar integer argument without jax.arg_info (a
dimension variable's value, as stablehlo-testdata's leading %arg0: tensor<i64>) to the size.
Files without a ? in their text are skipped. Prints how many plan (exit 0 or 1), and the
refusals grouped by their message with line:column, names and numbers taken out.
"""
import argparse, collections, concurrent.futures as cf, os, re, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument("paths", nargs="+")
ap.add_argument("--bin", default="bin/tpuplan")
ap.add_argument("--size", type=int, default=8)
ap.add_argument("--jobs", type=int, default=2)
ap.add_argument("--show", type=int, default=30)
ap.add_argument("--timeout", type=float, default=60)
a = ap.parse_args()

files = []
for p in a.paths:
    if os.path.isdir(p):
        files += [os.path.join(p, n) for n in sorted(os.listdir(p)) if n.endswith(".mlir")]
    else:
        files.append(p)
FUNC = re.compile(r"func\.func\s+(public\s+|private\s+)?@([\w.$-]+)\(")
ARG = re.compile(r"%([\w.$-]+)\s*:\s*tensor<([^>]*)>")


def entry_args(text):
    """The entry function's argument list text."""
    best = None
    for m in FUNC.finditer(text):
        if m.group(2) == "main":
            best = m
            break
        if best is None or (m.group(1) or "").strip() == "public" and not (best.group(1) or "").strip() == "public":
            best = best if best is not None and (best.group(1) or "").strip() == "public" else m
    if best is None:
        return ""
    depth, q = 1, best.end()
    while q < len(text) and depth > 0:
        depth += text[q] == "("
        depth -= text[q] == ")"
        q += 1
    return text[best.end():q - 1]


def bindings(text):
    out = []
    args = entry_args(text)
    for m in ARG.finditer(args):
        name, ty = m.group(1), m.group(2)
        rest = args[m.end():m.end() + 400].split("%", 1)[0]
        lead = re.match(r"((?:[0-9]+|\?)x)*", ty).group(0)  # "?x4x" of "?x4xcomplex<f32"
        dims = lead.split("x")[:-1]
        if "?" in dims:
            out.append(f"{name}={'x'.join(str(a.size) if d == '?' else d for d in dims)}")
        elif not dims and re.fullmatch(r"[su]?i(8|16|32|64)", ty) and "jax.arg_info" not in rest:
            out.append(f"{name}={a.size}")
    return ",".join(out)


def run(f):
    text = open(f, errors="replace").read()
    if not re.search(r"tensor<[^>]*\?", text):
        return None
    b = bindings(text)
    try:
        p = subprocess.run([a.bin, "plan", f, "--format", "json"] + (["--bind", b] if b else []),
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           errors="replace", timeout=a.timeout)
        return f, p.returncode, p.stderr.strip()
    except subprocess.TimeoutExpired:
        return f, "timeout", ""


def shape_of(f, msg):
    m = msg.splitlines()[0] if msg else "(no message)"
    m = re.sub(r"^(tpuplan: )?", "", m.replace(f, "FILE"))
    m = re.sub(r"^(FILE: )?", "", m)
    m = re.sub(r"\d+:\d+", "L:C", m)
    m = re.sub(r"'[^']*'|\"[^\"]*\"|%[\w.#-]+|@[\w.$-]+", "X", m)
    return re.sub(r"\d+", "N", m)[:160]


with cf.ThreadPoolExecutor(a.jobs) as ex:
    res = [r for r in ex.map(run, sorted(files)) if r is not None]
planned = [r for r in res if r[1] in (0, 1)]
refused = [r for r in res if r[1] == 2]
crashed = [r for r in res if r not in planned and r not in refused]
groups = collections.defaultdict(list)
for f, _, msg in refused:
    groups[shape_of(f, msg)].append((f, msg))
print(f"{len(res)} files with a ?: {len(planned)} planned, {len(refused)} refused, "
      f"{len(crashed)} crashed or timed out (every dynamic dim bound to {a.size})")
for f, rc, msg in crashed:
    print(f"  CRASH {rc} {f}: {msg.splitlines()[-1] if msg else ''}")
for k, v in sorted(groups.items(), key=lambda kv: -len(kv[1]))[: a.show]:
    print(f"  {len(v):5d}  {k}\n         e.g. {os.path.basename(v[0][0])}: {v[0][1].splitlines()[0][-160:]}")
sys.exit(1 if crashed else 0)
