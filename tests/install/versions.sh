#!/usr/bin/env bash
# One version number. The NDX_VERSION_* macros of include/ndx.h are its only source: CMake's
# project version, the library's ndx_version() (through `ndx --version`), the shared libraries'
# sonames and the Python package's version (python/setup.py) must all be that number, and no
# other file may spell it out for itself.
#   versions.sh SOURCE_DIR CMAKE_PROJECT_VERSION NDX_BINARY LIBNDX_SO PYTHON
set -euo pipefail
src=$1 cmake_version=$2 ndx=$3 lib=$4 python=$5
fail=0
part() { sed -n "s/^#define NDX_VERSION_$1 \([0-9]\+\)$/\1/p" "$src/include/ndx.h"; }
header="$(part MAJOR).$(part MINOR).$(part PATCH)"
[[ $header =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "versions: ndx.h has no NDX_VERSION_* macros" >&2; exit 1; }
check() { # what, value
  if [ "$2" != "$header" ]; then
    echo "versions: $1 is '$2' but ndx.h says $header" >&2
    fail=1
  fi
}
check "CMake's project version" "$cmake_version"
check "ndx --version" "$("$ndx" --version | sed -n 's/^ndx //p')"
check "python/setup.py --version" "$(cd "$src/python" && "$python" setup.py --version 2>/dev/null | tail -n 1)"
major=${header%%.*} minor=${header#*.}; minor=${minor%%.*}
want_soname="libndx.so.$major"; [ "$major" = 0 ] && want_soname="libndx.so.$major.$minor"
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ "$soname" != "$want_soname" ]; then
  echo "versions: libndx's soname is '$soname', want $want_soname (major.minor while the major is 0)" >&2
  fail=1
fi
# No second source: the number written out anywhere but ndx.h's macros.
if grep -nE '^version *=' "$src/python/pyproject.toml" >&2; then
  echo "versions: python/pyproject.toml spells the version out (it is dynamic, from ndx.h)" >&2
  fail=1
fi
if grep -nE 'project\(ndx VERSION [0-9]' "$src/CMakeLists.txt" >&2; then
  echo "versions: CMakeLists.txt spells the version out (it reads ndx.h)" >&2
  fail=1
fi
if grep -nF "\"$header\"" "$src/src/core/"*.c >&2; then
  echo "versions: src/core spells the version out (ndx_version() is made of the macros)" >&2
  fail=1
fi
[ "$fail" = 0 ] && echo "versions: $header everywhere (CMake, ndx --version, setup.py, soname $soname)"
exit "$fail"
