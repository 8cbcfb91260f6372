#!/usr/bin/env bash
# Installs what building and testing ndx needs on Debian 12, using sudo when not root.
# Only packages that are missing are installed, so a second run is quick and offline.
set -euo pipefail
packages=(gcc make cmake pkg-config libc6-dev libcmocka-dev zlib1g-dev python3 python3-numpy
          python3-dev python3-setuptools python3-wheel python3-pip python3-venv) # + the module
if [ "${1:-}" = "--test" ]; then
  packages+=(clang-14 libclang-rt-14-dev valgrind) # fuzz/run builds with clang (libFuzzer)
  packages+=(python3-pytest python3-hypothesis)                   # the Python module's tests
  packages+=(groff-base man-db) # scripts/docs.sh and the install test check the manual page
fi
packages+=(libopenmpi-dev openmpi-bin) # MPI: libndx_mpi and its tests (CMake skips them without it)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "installing: ${missing[*]}" >&2
$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
