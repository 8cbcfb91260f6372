#!/usr/bin/env bash
# After `cmake --install` into PREFIX: `man ndx` finds the installed page, renders it without a
# single warning, and the page documents every command `ndx --help` lists.
#   man_page.sh PREFIX
set -euo pipefail
prefix=$1
page=$prefix/share/man/man1/ndx.1
[ -f "$page" ] || { echo "man page: $page was not installed" >&2; exit 1; }
found=$(MANPATH="$prefix/share/man" man -w ndx)
[ "$found" = "$page" ] || { echo "man page: 'man -w ndx' finds '$found', not $page" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
MANPATH="$prefix/share/man" MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings=w ndx \
  >"$work/page.txt" 2>"$work/warnings.txt"
if [ -s "$work/warnings.txt" ]; then
  echo "man page: 'man ndx' warns:" >&2
  cat "$work/warnings.txt" >&2
  exit 1
fi
grep -q "^NAME" "$work/page.txt" &&
  grep -q "ndx - TensorFlow's index and sparse ops" "$work/page.txt" ||
  { echo "man page: 'man ndx' shows no NAME line for ndx" >&2; exit 1; }
# Every command of `ndx --help` (the two-space-indented lines under "Commands:") in COMMANDS.
# (man writes plain text, without bold or hyphenation breaks, when its output is a file.)
sed -n '/^COMMANDS/,/^OPTIONS/p' "$work/page.txt" >"$work/commands.txt"
missing=0
for cmd in $("$prefix/bin/ndx" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z_]*\) .*/\1/p'); do
  if ! grep -qw -- "$cmd" "$work/commands.txt"; then
    echo "man page: command '$cmd' (ndx --help) is not described under COMMANDS" >&2
    missing=1
  fi
done
[ "$missing" = 0 ]
echo "man page: 'man ndx' renders $(wc -l <"$work/page.txt") lines, no warnings, every command"
