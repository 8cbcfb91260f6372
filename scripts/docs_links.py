#!/usr/bin/env python3
"""Checks every relative link of the project's Markdown files.

    docs_links.py PATH...

Each PATH is a Markdown file, or a directory whose *.md files are checked.

Each link [text](target) outside code blocks whose target is not a URL must name a file or
directory that exists (relative to the Markdown file), and a #fragment must name a heading of
the file it points into (GitHub's anchors: lower case, punctuation dropped, spaces as hyphens,
repeats numbered -1, -2, ...). Every broken link is printed as "file:line: warning: ..." and
makes the exit status 1. Markdown files under build*/ and hidden directories are skipped.
"""
import os
import re
import sys

LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def markdown_files(root):
    for top, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "build")))
        for f in sorted(files):
            if f.endswith(".md"):
                yield os.path.join(top, f)


def prose_lines(path):
    """(line number, text) of the lines outside fenced code blocks, inline code removed."""
    fenced = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            if not fenced and not line.startswith("    "):
                yield n, re.sub(r"`[^`]*`", "", line)


def anchors(path, cache={}):
    if path not in cache:
        seen = {}
        found = set()
        fenced = False
        with open(path, encoding="utf-8") as f:
            for line in f:
                if FENCE.match(line):
                    fenced = not fenced
                m = None if fenced else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
                if not m:
                    continue
                text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1))
                slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
                k = seen.get(slug, 0)
                seen[slug] = k + 1
                found.add(slug if k == 0 else f"{slug}-{k}")
        cache[path] = found
    return cache[path]


def main(argv):
    files = []
    for path in argv[1:] or ["."]:
        files.extend(markdown_files(path) if os.path.isdir(path) else [path])
    bad = checked = 0
    for md in files:
        for n, line in prose_lines(md):
            for m in LINK.finditer(line):
                target = m.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:, ...
                    continue
                checked += 1
                path, _, fragment = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
                where = os.path.relpath(md)
                if not os.path.exists(dest):
                    print(f"{where}:{n}: warning: the link to {target} names no file",
                          file=sys.stderr)
                    bad += 1
                elif fragment and (dest == md or dest.endswith(".md")) and \
                        fragment not in anchors(dest):
                    print(f"{where}:{n}: warning: the link to {target} names no heading of "
                          f"{os.path.relpath(dest)}", file=sys.stderr)
                    bad += 1
    print(f"links: {checked} relative links in the Markdown files"
          + (f", {bad} broken" if bad else ", all found"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
