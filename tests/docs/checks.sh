#!/usr/bin/env bash
# The document checks of scripts/docs.sh fail when they should: the reference warns about an
# undocumented declaration, a name no header declares and a name declared twice (and exits 1),
# and reads a clean header without a word; the link check finds a missing file and a missing
# heading, and nothing else.
#   checks.sh SOURCE_DIR
set -euo pipefail
src=$1
here=$src/tests/docs
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
expect() { # file, text that must be in it
  grep -qF -- "$2" "$1" || { echo "docs checks: no '$2' in:" >&2; cat "$1" >&2; fail=1; }
}

python3 "$src/scripts/docs_reference.py" "$work/good" "$here/good.h" >"$work/good.out" 2>&1 \
  || { echo "docs checks: the reference warns about good.h:" >&2; cat "$work/good.out" >&2
       fail=1; }
expect "$work/good.out" "reference: 3 names from 1 headers"

if python3 "$src/scripts/docs_reference.py" "$work/bad" "$here/bad.h" >"$work/bad.out" 2>&1; then
  echo "docs checks: the reference accepted bad.h" >&2
  fail=1
fi
expect "$work/bad.out" "bad.h:11: warning: ndx_undocumented: public declaration without a comment"
expect "$work/bad.out" "warning: the comment names ndx_no_such_function, which no public header"
expect "$work/bad.out" "bad.h:16: warning: ndx_documented is declared again"

if python3 "$src/scripts/docs_links.py" "$here/broken_links.md.in" >"$work/links.out" 2>&1; then
  echo "docs checks: the link check accepted tests/docs/broken_links.md.in" >&2
  fail=1
fi
expect "$work/links.out" "broken_links.md.in:5: warning: the link to missing.md names no file"
expect "$work/links.out" \
  "broken_links.md.in:6: warning: the link to #no-such-heading names no heading"
expect "$work/links.out" "links: 4 relative links in the Markdown files, 2 broken"
[ "$fail" = 0 ] && echo "docs checks: every fault found, the clean header passes"
exit "$fail"
