#!/usr/bin/env python3
"""The HTML reference of ndx, made from the public headers' own comments (zstd's way).

    docs_reference.py OUT_DIR HEADER...

A header reads as: a file comment (the overview), then sections opened by a banner

    /* ------------- */
    /* 3. Tensors    */
    /* ------------- */

each holding prose (a comment followed by a blank line) and entries: the comments right above a
run of declarations (NDX_API functions, typedefs, #defines), up to the next blank line or
comment. Every entry becomes a block of the page, its declarations as written and its comment
as the text; every name it declares gets an anchor and a line in the index.

Warnings, each "header:line: warning: ...", make the run fail (exit status 1) after writing:
a header with no comment at its top, a public declaration with no comment above it, a name declared twice, a name in a comment that
looks like ndx's (ndx_..., NDX_...) but that no header declares, and a line the reader does not
understand. Only the standard library is used.
"""
import html
import os
import re
import sys

# An ndx name in text; not a file name (ndx_mpi.h) nor a pattern (ndx_<op>_infer, ndx_op_*).
NAME_IN_TEXT = re.compile(r"\b(?:ndx|NDX)_[A-Za-z0-9_]*[A-Za-z0-9]\b(?![<{*]|\.h\b)")
BANNER = re.compile(r"^/\* -{10,} \*/$")


class Entry:
    def __init__(self, line):
        self.line = line      # first line of the entry in its header
        self.doc = []         # comment text lines
        self.decl = []        # declaration lines as written
        self.names = []       # (name, kind) declared here


class Section:
    def __init__(self, title, line):
        self.title = title
        self.line = line
        self.items = []  # ("prose", [text lines]) or ("entry", Entry)


class Header:
    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)
        self.overview = []
        self.sections = []
        self.warnings = []

    def warn(self, line, message):
        self.warnings.append(f"{self.path}:{line}: warning: {message}")


def comment_text(lines):
    """The text of a /* ... */ comment's lines, without its markers and leading ' * '."""
    text = []
    for i, line in enumerate(lines):
        s = line.strip()
        if i == 0:
            s = s[2:]
        if s.endswith("*/"):
            s = s[:-2]
        s = s.rstrip()
        if i > 0:
            s = re.sub(r"^\* ?", "", s)
        elif s.startswith(" "):
            s = s[1:]
        text.append(s)
    while text and not text[0].strip():
        text.pop(0)
    while text and not text[-1].strip():
        text.pop()
    return text


def strip_comments(code):
    return re.sub(r"/\*.*?\*/", " ", code, flags=re.S)


def top_level_statements(code):
    """The code cut at each ';' outside braces."""
    stmts, depth, start = [], 0, 0
    for k, c in enumerate(code):
        depth += (c == "{") - (c == "}")
        if c == ";" and depth == 0:
            stmts.append(code[start:k])
            start = k + 1
    stmts.append(code[start:])
    return stmts


def declared_names(decl_lines):
    """(name, kind) for everything a declaration introduces."""
    code = strip_comments("\n".join(decl_lines))
    names = []
    for m in re.finditer(r"^\s*#\s*define\s+(\w+)", code, re.M):
        names.append((m.group(1), "macro"))
    code = re.sub(r"^\s*#.*?(?<!\\)$", "", code, flags=re.M | re.S)
    for stmt in top_level_statements(code):
        stmt = " ".join(stmt.split())
        if not stmt:
            continue
        if stmt.startswith("typedef"):
            m = re.match(r"typedef (enum|struct) (\w+)", stmt)
            # The name: `(*name)(...)` for a function pointer, else the last word.
            pointer = None if m else re.search(r"\(\s*\*\s*(\w+)\s*\)\s*\(", stmt)
            last = pointer or re.search(r"(\w+)\s*$", stmt)
            kind = m.group(1) if m else "type"
            names.append((last.group(1), kind))
            if kind == "enum":
                body = stmt[stmt.index("{") + 1:stmt.rindex("}")]
                for item in body.split(","):
                    if item.strip():
                        names.append((item.split("=")[0].strip(), "enumerator"))
            continue
        if stmt.startswith("enum") and "{" in stmt:  # constants: enum [tag] { A = 1, B = 2 }
            tag = re.match(r"enum\s+(\w+)", stmt)
            if tag:
                names.append((tag.group(1), "enum"))
            body = stmt[stmt.index("{") + 1:stmt.rindex("}")]
            names.extend((item.split("=")[0].strip(), "enumerator") for item in body.split(",")
                         if item.strip())
            continue
        m = re.search(r"(\w+)\s*\(", stmt)
        if stmt.startswith(("NDX_API", "static inline")) and m:
            names.append((m.group(1), "function"))
        elif stmt.strip() != "}":
            names.append((stmt, "?"))
    return names


def parse(path):
    h = Header(path)
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    n = len(lines)
    i = 0
    section = None
    entry = None      # the entry being read (comments, then declarations), or None

    def close():
        """Ends the entry being read: comments with no declaration after them are prose."""
        nonlocal entry
        if entry is not None and entry.decl:
            place_entry(entry)
        elif entry is not None:
            place_prose((entry.line, entry.doc))
        entry = None

    def place_prose(p):
        if section is None:
            if not h.overview:
                h.overview = p[1]
            else:
                h.warn(p[0], "a comment before the first section that is not the overview")
        else:
            section.items.append(("prose", p[1]))

    def place_entry(e):
        nonlocal section
        if section is None:  # declarations before the first banner: an untitled section
            section = Section("", e.line)
            h.sections.append(section)
        section.items.append(("entry", e))

    while i < n:
        line = lines[i]
        s = line.strip()
        lineno = i + 1
        if not s:
            close()
            i += 1
            continue
        if BANNER.match(s):
            close()
            title = ""
            if i + 2 < n and BANNER.match(lines[i + 2].strip()):
                title = " ".join(comment_text([lines[i + 1]])).strip()
                i += 3
            else:
                i += 1
            if not title:
                h.warn(lineno, "a section banner without a title")
            section = Section(title, lineno)
            h.sections.append(section)
            continue
        if s.startswith("/*"):
            j = i
            while "*/" not in lines[j]:
                j += 1
            text = comment_text(lines[i:j + 1])
            if entry is not None and entry.decl:
                place_entry(entry)
                entry = None
            if entry is None:
                entry = Entry(lineno)
            entry.doc.extend(([""] if entry.doc else []) + text)
            i = j + 1
            continue
        # Scaffolding every header has: include guard, includes, extern "C".
        if re.match(r"#\s*(ifndef|define)\s+NDX\w*_H\s*$", s) or s.startswith("#include") or \
                re.match(r"#\s*endif\s*/\* NDX\w*_H \*/", s):
            i += 1
            continue
        if s == "#ifdef __cplusplus":
            while lines[i].strip() != "#endif":
                i += 1
            i += 1
            continue
        # A declaration: a preprocessor line with its continuations, or C up to ';' at depth 0.
        j = i
        if s.startswith("#"):
            while lines[j].rstrip().endswith("\\"):
                j += 1
        else:
            while True:
                code = strip_comments("\n".join(lines[i:j + 1]))
                depth = code.count("{") - code.count("}")
                closed = lines[j].count("/*") <= lines[j].count("*/")
                if depth == 0 and closed and code.rstrip().endswith(";"):
                    break
                # A function defined in the header (static inline): it ends with its body.
                if depth == 0 and closed and code.rstrip().endswith("}") and \
                        code[:code.find("{")].rstrip().endswith(")"):
                    break
                j += 1
                if j >= n:
                    h.warn(lineno, "a declaration that does not end")
                    return h
        if entry is None:
            entry = Entry(lineno)
        entry.decl.extend(lines[i:j + 1])
        for name, kind in declared_names(lines[i:j + 1]):
            if kind == "?":
                h.warn(lineno, f"a line the reference cannot read: {name!r}")
            else:
                entry.names.append((name, kind))
        i = j + 1
    close()
    return h


def check(headers):
    where = {}
    kinds = {}
    for h in headers:
        for sec in h.sections:
            for kind, item in sec.items:
                if kind != "entry":
                    continue
                if not item.doc:
                    public = [nm for nm, _ in item.names] or ["?"]
                    h.warn(item.line, f"{', '.join(public)}: public declaration without a comment "
                                      "above it")
                for name, k in item.names:
                    if name in where and name != "NDX_API":
                        h.warn(item.line, f"{name} is declared again (first at {where[name][0]})")
                        continue
                    where.setdefault(name, (f"{h.name}:{item.line}", h, item))
                    kinds[name] = k
    for h in headers:
        if not h.overview:
            h.warn(1, "no comment at the top of the header to say what it holds")
        texts = [(h.overview, 1)]
        for sec in h.sections:
            for kind, item in sec.items:
                if kind == "prose":
                    texts.append((item, sec.line))
                else:
                    texts.append((item.doc, item.line))
                    inline = re.findall(r"/\*.*?\*/", "\n".join(item.decl), re.S)
                    texts.append(("\n".join(inline).split("\n"), item.line))
        for text, line in texts:
            for ln in text:
                for m in NAME_IN_TEXT.finditer(ln):
                    if resolve(m.group(0), where) is None:
                        h.warn(line, f"the comment names {m.group(0)}, which no public header "
                                     "declares")
    return where, kinds


def anchor(name):
    return name


def resolve(name, where):
    """The declared name a word of text means: itself, or a plural's ("ndx_outputs"), or None."""
    if name in where:
        return name
    if name.endswith("s") and name[:-1] in where:
        return name[:-1]
    return None


def linkify(text, where, current):
    """HTML-escaped text whose ndx names link to their entries."""
    out = []
    pos = 0
    for m in NAME_IN_TEXT.finditer(text):
        out.append(html.escape(text[pos:m.start()], quote=False))
        name = resolve(m.group(0), where)
        if name is not None and name != "NDX_API":
            target = where[name][1]
            href = ("" if target is current else page_of(target)) + "#" + anchor(name)
            out.append(f'<a href="{href}">{html.escape(m.group(0))}</a>')
        else:
            out.append(html.escape(m.group(0)))
        pos = m.end()
    out.append(html.escape(text[pos:], quote=False))
    return "".join(out)


def page_of(h):
    return h.name.replace(".", "_") + ".html"


def section_id(sec, k):
    m = re.match(r"(\d+[a-z]?)\.", sec.title)
    return "s" + (m.group(1) if m else str(k))


STYLE = """
body { font-family: sans-serif; max-width: 62rem; margin: 1rem auto; padding: 0 1rem;
       line-height: 1.4; color: #1b1b1b; }
pre { white-space: pre-wrap; font-size: 0.9rem; }
pre.decl { background: #f3f5f8; border-left: 3px solid #4a6fa5; padding: 0.5rem; margin: 0; }
pre.doc, pre.prose { margin: 0.4rem 0 0 0; }
div.entry { margin: 1.2rem 0; }
nav a, .index a { text-decoration: none; }
.index { column-width: 18rem; }
.kind { color: #777; font-size: 0.8rem; }
h2 { border-bottom: 1px solid #ccc; margin-top: 2.2rem; }
"""


def page(title, body):
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{html.escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n"
            f"<body>\n{body}\n</body>\n</html>\n")


def write_header_page(h, where, out_dir, version):
    parts = [f'<nav><a href="index.html">ndx {version} reference</a></nav>',
             f"<h1>{html.escape(h.name)}</h1>",
             f'<pre class="prose">{linkify(chr(10).join(h.overview), where, h)}</pre>']
    titled = [(k, sec) for k, sec in enumerate(h.sections) if sec.title]
    if titled:
        parts.append("<h2>Sections</h2><ul>")
        parts.extend(f'<li><a href="#{section_id(sec, k)}">{html.escape(sec.title)}</a></li>'
                     for k, sec in titled)
        parts.append("</ul>")
    for k, sec in enumerate(h.sections):
        if sec.title:
            parts.append(f'<h2 id="{section_id(sec, k)}">{html.escape(sec.title)}</h2>')
        for kind, item in sec.items:
            if kind == "prose":
                parts.append(f'<pre class="prose">{linkify(chr(10).join(item), where, h)}</pre>')
                continue
            anchors = "".join(f'<span id="{anchor(nm)}"></span>' for nm, _ in item.names
                              if where.get(nm, (None, None, None))[2] is item)
            parts.append(f'<div class="entry">{anchors}')
            parts.append(f'<pre class="decl">{linkify(chr(10).join(item.decl), where, h)}</pre>')
            parts.append(f'<pre class="doc">{linkify(chr(10).join(item.doc), where, h)}</pre>')
            parts.append("</div>")
    with open(os.path.join(out_dir, page_of(h)), "w", encoding="utf-8") as f:
        f.write(page(f"{h.name} — ndx {version}", "\n".join(parts)))


def write_index(headers, where, kinds, out_dir, version):
    parts = [f"<h1>ndx {version} reference</h1>",
             "<p>Made from the comments of the public headers: every function, type and macro "
             "with the comment above it, by section. The headers themselves say the same.</p>"]
    for h in headers:
        first = []
        for ln in h.overview:
            if not ln.strip():
                break
            first.append(ln)
        parts.append(f'<h2><a href="{page_of(h)}">{html.escape(h.name)}</a></h2>')
        parts.append(f'<pre class="prose">{linkify(chr(10).join(first), where, h)}</pre><ul>')
        for k, sec in enumerate(h.sections):
            if sec.title:
                parts.append(f'<li><a href="{page_of(h)}#{section_id(sec, k)}">'
                             f"{html.escape(sec.title)}</a></li>")
        parts.append("</ul>")
    parts.append('<h2 id="index">Index</h2><div class="index">')
    for name in sorted(where, key=lambda s: (s.lower().lstrip("_"), s)):
        if name == "NDX_API":
            continue
        h = where[name][1]
        parts.append(f'<a href="{page_of(h)}#{anchor(name)}">{html.escape(name)}</a> '
                     f'<span class="kind">{kinds[name]}, {html.escape(h.name)}</span><br>')
    parts.append("</div>")
    with open(os.path.join(out_dir, "index.html"), "w", encoding="utf-8") as f:
        f.write(page(f"ndx {version} reference", "\n".join(parts)))


def version_of(headers):
    for h in headers:
        with open(h.path, encoding="utf-8") as f:
            text = f.read()
        parts = [re.search(rf"^#define NDX_VERSION_{p} (\d+)$", text, re.M) for p in
                 ("MAJOR", "MINOR", "PATCH")]
        if all(parts):
            return ".".join(m.group(1) for m in parts)
    return "?"


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__.strip().split("\n\n")[1])
    out_dir, paths = argv[1], argv[2:]
    headers = [parse(p) for p in paths]
    where, kinds = check(headers)
    version = version_of(headers)
    os.makedirs(out_dir, exist_ok=True)
    for h in headers:
        write_header_page(h, where, out_dir, version)
    write_index(headers, where, kinds, out_dir, version)
    warnings = [w for h in headers for w in h.warnings]
    for w in warnings:
        print(w, file=sys.stderr)
    count = sum(1 for nm in where if nm != "NDX_API")
    print(f"reference: {count} names from {len(headers)} headers in {out_dir}/index.html"
          + (f", {len(warnings)} warnings" if warnings else ""))
    return 1 if warnings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
