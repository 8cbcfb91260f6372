#!/usr/bin/env bash
# The functions libndx.so exports are exactly the NDX_API functions the public headers declare: the
# library is built with hidden visibility, so an internal function can only leak out by a
# mistake, and a public one can only go missing by one (declared but never defined, or defined
# without NDX_API).
#   exports.sh LIBNDX_SO HEADER...
set -euo pipefail
lib=$1
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Defined text symbols of the dynamic symbol table (T; W for a weak definition).
nm -D --defined-only "$lib" | awk '$2 == "T" || $2 == "W" { print $3 }' | sort -u >"$work/exported"
# "NDX_API <return type> name(" at the start of a line: the name is the last word before "(".
cat "$@" | grep -o '^NDX_API [^(]*(' | sed 's/($//; s/.*[ *]//' | sort -u >"$work/declared"
h=$(for f in "$@"; do basename "$f"; done | paste -sd+ -) l=$(basename "$lib")
comm -23 "$work/declared" "$work/exported" >"$work/missing"
comm -13 "$work/declared" "$work/exported" >"$work/extra"
if [ -s "$work/missing" ] || [ -s "$work/extra" ]; then
  if [ -s "$work/missing" ]; then
    echo "exports: declared NDX_API in $h but not exported by $l:" >&2
    sed 's/^/  /' "$work/missing" >&2
  fi
  if [ -s "$work/extra" ]; then
    echo "exports: exported by $l but not declared NDX_API in $h:" >&2
    sed 's/^/  /' "$work/extra" >&2
  fi
  exit 1
fi
echo "exports: $(wc -l <"$work/exported") functions, exactly the NDX_API declarations of $h"
