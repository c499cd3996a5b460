#!/usr/bin/env python3
"""doclinks.py ROOT [FIRST] [--output FILE...] - every document citation resolves.

A citation is PATH.md#ANCHOR anywhere in a tracked text file (code comments, strings shown
to users, schemas, documents), or a Markdown link [text](TARGET) in a .md file. PATH is
taken from the repository root, else from the citing file's folder (as Markdown links are);
ANCHOR must be the GitHub anchor of a heading of that file: lowercase, punctuation dropped,
spaces turned into '-', a repeated heading numbered -1, -2, ...

Also refused, anywhere:
  - a citation of the research notes that live outside the repository and do not ship
    (they are cited through server/planner/SOURCES.md, which does);
  - a section cited by its quoted title (README "Limits") instead of PATH.md#ANCHOR.

With --output, the FILEs (a program's output) are read instead of the tracked files, their
citations from ROOT. Prints TAP lines ("ok N - ..." / "not ok N - ...") numbered from FIRST
(default 1), one per file with citations and one per broken citation; exits 1 if any is
broken. Fuzz corpora are inputs, not documents, and are skipped.
"""
import os
import re
import subprocess
import sys

SKIP_PREFIXES = ("tests/fuzz/corpus/",)
# The notes kept beside the repository, by the names they were cited by. Split so that
# this file does not cite them itself.
OUTSIDE = re.compile(
    "|".join(
        [
            r"tpu-" + "facts",
            r"tpu-" + "padding-rules",
            r"\ballocators" + r"\.md",
            r"ux-" + "anchors",
            r"c-" + r"service\.md",
            r"shared/" + "docs",
            r"\bfacts [0-9][a-h]\b",
            r"\brules [0-9]\b",
        ]
    )
)
CITE = re.compile(r"(?<![\w/.-])((?:\.\.?/)*(?:[\w.-]+/)*[\w.-]+\.md)#([\w-]+)")
MDLINK = re.compile(r"\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
QUOTED = re.compile(r"\b(README(?:\.md)?|[\w/.-]+\.md)(?:'s)?\s+(?:section\s+)?\\?\"[A-Za-z]")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")


def slug(text):
    """GitHub's anchor of a heading's text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link reads as its text
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


_anchors = {}


def anchors(path):
    """The anchors of a Markdown file's headings (and of <a id/name> tags)."""
    if path in _anchors:
        return _anchors[path]
    found, seen, fenced = set(), {}, False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if FENCE.match(line):
                fenced = not fenced
                continue
            if fenced:
                continue
            m = HEADING.match(line)
            if m:
                base = slug(m.group(2))
                n = seen.get(base, 0)
                seen[base] = n + 1
                found.add(base if n == 0 else "%s-%d" % (base, n))
            for m in re.finditer(r"<a\s+(?:id|name)=\"([^\"]+)\"", line):
                found.add(m.group(1))
    _anchors[path] = found
    return found


def resolve(root, citing, target, md_link):
    """The file a citation names, or None. Markdown links are relative to the citing file;
    a plain citation is from the root first, then from the citing file's folder."""
    here = os.path.dirname(citing)
    order = [here] if md_link else ["", here]
    for base in order:
        p = os.path.normpath(os.path.join(base, target))
        if not p.startswith("..") and os.path.exists(os.path.join(root, p)):
            return p
    return None


def check(root, citing, target, anchor, md_link):
    """None when the citation resolves, else why not."""
    if target:
        p = resolve(root, citing, target, md_link)
        if p is None:
            return "no file %s" % target
    else:
        p = citing
    if anchor is None:
        return None
    if not p.endswith(".md"):
        return None if not md_link else "%s is not a Markdown file with headings" % p
    if anchor not in anchors(os.path.join(root, p)):
        return "%s has no heading with the anchor #%s" % (p, anchor)
    return None


def citations(path, text):
    """(line, target, anchor, is_markdown_link) for every citation in a file."""
    out = []
    is_md = path.endswith(".md")
    fenced = False
    for i, line in enumerate(text.split("\n"), 1):
        if is_md and FENCE.match(line):
            fenced = not fenced
            continue
        spans = []
        if is_md and not fenced:
            for m in MDLINK.finditer(line):
                t = m.group(1)
                spans.append(m.span(1))
                if re.match(r"^[a-z][a-z0-9+.-]*:", t):  # https:, mailto:, ...
                    continue
                target, _, anchor = t.partition("#")
                out.append((i, target, anchor if "#" in t else None, True))
        for m in CITE.finditer(line):
            if any(a <= m.start() < b for a, b in spans):
                continue
            out.append((i, m.group(1), m.group(2), False))
    return out


def problems(root, name, text, md_rules):
    """Every broken citation in one text, as messages naming name:line."""
    broken = []
    cites = citations(name, text) if md_rules else [
        (i, m.group(1), m.group(2), False)
        for i, line in enumerate(text.split("\n"), 1)
        for m in CITE.finditer(line)
    ]
    for line, target, anchor, md in cites:
        # Program output is read from the root: the reader has the repository, not a file.
        why = check(root, name if md_rules else "", target, anchor, md)
        if why:
            shown = target + ("#" + anchor if anchor is not None else "")
            broken.append("%s:%d cites %s: %s" % (name, line, shown, why))
    for i, line in enumerate(text.split("\n"), 1):
        m = OUTSIDE.search(line)
        if m:
            broken.append(
                "%s:%d cites %r, a document that does not ship "
                "(cite server/planner/SOURCES.md#... or the upstream source)" % (name, i, m.group(0))
            )
        m = QUOTED.search(line)
        if m:
            broken.append(
                "%s:%d cites a section by its title (%s...): write PATH.md#anchor"
                % (name, i, m.group(0))
            )
    return cites, broken


def tracked(root):
    """The tracked text files to read, as (name, text)."""
    me = os.path.relpath(os.path.abspath(__file__), os.path.abspath(root))
    # This file and its test name the forms they look for (the test's fixture holds broken
    # citations on purpose), so they are not read as documents.
    skip = (me, os.path.join(os.path.dirname(me), "doclinks.sh"))
    files = subprocess.run(
        ["git", "-C", root, "ls-files", "-z"], capture_output=True, check=True
    ).stdout.decode().split("\0")
    for f in sorted(files):
        if not f or f in skip or f.startswith(SKIP_PREFIXES):
            continue
        full = os.path.join(root, f)
        if not os.path.isfile(full):
            continue
        with open(full, "rb") as fh:
            raw = fh.read()
        if b"\0" not in raw:
            yield f, raw.decode("utf-8", "replace")


def main():
    args = sys.argv[1:]
    outputs = []
    if "--output" in args:
        k = args.index("--output")
        args, outputs = args[:k], args[k + 1 :]
    root = args[0]
    n = int(args[1]) - 1 if len(args) > 1 else 0
    if outputs:
        texts = [
            ("output " + os.path.basename(o), open(o, encoding="utf-8", errors="replace").read())
            for o in outputs
        ]
    else:
        texts = list(tracked(root))
        if not texts:
            print("not ok %d - no tracked files under %s (not a git checkout?)" % (n + 1, root))
            return 1
    bad = 0
    for name, text in texts:
        cites, broken = problems(root, name, text, not outputs)
        for b in broken:
            n += 1
            bad += 1
            print("not ok %d - %s" % (n, b))
        if (cites or outputs) and not broken:
            n += 1
            print("ok %d - %s: %d citation(s) resolve" % (n, name, len(cites)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
