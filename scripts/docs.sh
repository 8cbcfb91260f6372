#!/usr/bin/env bash
# Builds every document of ndx and fails on any warning:
#   - the HTML reference of the public headers (include/*.h: every declaration with the comment
#     above it, by section, with an index) into build-docs/reference/index.html;
#   - the manual page ndx(1) (docs/man/ndx.1.in, as CMake installs it), through groff and man
#     with every warning on;
#   - every relative link of the Markdown files (README.md, docs/*.md, ...), files and #headings;
#   - CHANGELOG.md's newest version against include/ndx.h's NDX_VERSION_*.
#   bash scripts/docs.sh [OUT_DIR]      (default: build-docs)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build-docs}
fail=0

echo "== reference: HTML from the public headers"
python3 scripts/docs_reference.py "$out/reference" include/*.h || fail=1

echo "== manual page: ndx(1)"
part() { sed -n "s/^#define NDX_VERSION_$1 \([0-9]\+\)$/\1/p" include/ndx.h; }
version="$(part MAJOR).$(part MINOR).$(part PATCH)"
page=$out/man/man1/ndx.1
mkdir -p "$out/man/man1"
sed "s/@PROJECT_VERSION@/$version/" docs/man/ndx.1.in >"$page"
if grep -n '@[A-Z_]*@' "$page" >&2; then
  echo "docs/man/ndx.1.in: a placeholder CMake does not fill" >&2
  fail=1
fi
warnings=$( { groff -man -ww -z "$page"
              LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings=w -l "$page" >/dev/null; } 2>&1)
if [ -n "$warnings" ]; then
  echo "docs/man/ndx.1.in: warnings:" >&2
  echo "$warnings" >&2
  fail=1
else
  echo "manual page: $page, no warnings"
fi

echo "== CHANGELOG.md: its newest version is ndx.h's"
newest=$(sed -n '/^## \[[0-9]/{s/^## \[\([^]]*\)\].*/\1/p;q}' CHANGELOG.md)
if [ "$newest" != "$version" ]; then
  echo "CHANGELOG.md: the newest version is '$newest' but include/ndx.h says $version" >&2
  fail=1
else
  echo "CHANGELOG.md: $version"
fi

echo "== links: the Markdown files"
python3 scripts/docs_links.py . || fail=1

if [ "$fail" != 0 ]; then
  echo "docs: FAILED (warnings are errors)" >&2
  exit 1
fi
echo "docs: all built, no warnings"
