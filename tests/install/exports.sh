#!/usr/bin/env bash
# The functions libndx.so exports are exactly the NDX_API functions include/ndx.h declares: the
# library is built with hidden visibility, so an internal function can only leak out by a
# mistake, and a public one can only go missing by one.
#   exports.sh LIBNDX_SO NDX_H
set -euo pipefail
lib=$1 header=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nm -D --defined-only "$lib" | awk '$2 == "T" || $2 == "W" { print $3 }' | sort -u >"$work/exported"
grep -o '^NDX_API [^(]*(' "$header" | sed 's/($//; s/.*[ *]//' | sort -u >"$work/declared"
if ! diff -u --label declared-in-ndx.h "$work/declared" --label exported-by-libndx.so \
    "$work/exported"; then
  echo "exports: libndx.so's exported functions differ from ndx.h's NDX_API declarations" >&2
  exit 1
fi
echo "exports: $(wc -l <"$work/exported") functions, exactly the NDX_API declarations of ndx.h"
