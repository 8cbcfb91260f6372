#!/usr/bin/env bash
# Builds ndx and runs every test: the release build under CTest, then the whole suite again
# built with AddressSanitizer and UndefinedBehaviorSanitizer (any report fails the run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --test
jobs=$(nproc)
# Each stage prints the seconds since the start, so a slow stage shows in the log.
stage() { echo "== $* (at ${SECONDS} s)"; }

# The documents first (seconds): the HTML reference of the headers, the manual page and every
# relative link of the Markdown files, warnings as errors.
stage "documents: scripts/docs.sh"
bash scripts/docs.sh

stage "release build: all tests"
# Tests and tools are asked for explicitly: scripts/demo.sh configures the same build/ without
# tests, and CMake would keep that cached choice. No tests at all is a failure, not a pass.
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DNDX_BUILD_TESTS=ON -DNDX_BUILD_TOOLS=ON >/dev/null
cmake --build build -j"$jobs" >/dev/null
ctest --test-dir build --output-on-failure --no-tests=error -j"$jobs"

# The Python module, as a user installs it: pip into a venv over Debian's NumPy (no package index),
# then pytest from outside the source tree so the installed module is the one imported; once more
# with CPython's debug allocator and dev-mode checks (misused references and buffers show there).
stage "Python module: pip install into a venv, pytest"
rm -rf build-py && /usr/bin/python3 -m venv --system-site-packages build-py/venv
build-py/venv/bin/pip install --quiet --no-build-isolation --no-index ./python
(cd build-py && venv/bin/python -m pytest -q -p no:cacheprovider ../tests/python)
(cd build-py && PYTHONMALLOC=debug venv/bin/python -X dev -m pytest -q -p no:cacheprovider \
  -W error::ResourceWarning ../tests/python -k "not reference_counts")

stage "AddressSanitizer + UndefinedBehaviorSanitizer build: all tests"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNDX_SANITIZE=address,undefined \
  -DNDX_BUILD_TESTS=ON -DNDX_BUILD_TOOLS=ON >/dev/null
cmake --build build-asan -j"$jobs" >/dev/null
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure --no-tests=error -j"$jobs"

# Every C test under ThreadSanitizer: ndx's threads are its own (src/core/pool.c, pthreads), so
# parallel ops are checked too. tests/tsan.supp names the races two tests make on purpose
# (threads rewriting indices while a call reads them); die_after_fork=0 lets test_pool's forked
# child start threads.
stage "ThreadSanitizer: all C tests"
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNDX_SANITIZE=thread \
  -DNDX_BUILD_TESTS=ON -DNDX_BUILD_TOOLS=OFF >/dev/null
cmake --build build-tsan -j"$jobs" >/dev/null
TSAN_OPTIONS="halt_on_error=1:die_after_fork=0:suppressions=$PWD/tests/tsan.supp" \
  ctest --test-dir build-tsan --output-on-failure --no-tests=error -j"$jobs"

# Fuzzing: every libFuzzer harness (clang, ASan + UBSan) for a short fixed time on its seed corpus;
# any finding fails the run (fuzz/run leaves the input in build-fuzz/artifacts/). The long runs
# are `fuzz/run 600`.
stage "libFuzzer: ${NDX_CI_FUZZ_SECONDS:-10} s per harness"
NDX_FUZZ_JOBS=$jobs bash fuzz/run "${NDX_CI_FUZZ_SECONDS:-10}"

# Valgrind memcheck over the release build's C test programs (uninstrumented code: catches what
# the sanitizer build cannot, e.g. uninitialised reads), as many programs at a time as cores: a
# new one starts as soon as any finishes, so one slow program does not hold a core idle. Each
# line gives the program's seconds, so a slow one shows in the log.
stage "valgrind memcheck: release C test programs"
vg_one() {
  local t=$1 start=$SECONDS
  if CMOCKA_MESSAGE_OUTPUT=stdout valgrind -q --error-exitcode=1 --leak-check=full \
      --errors-for-leak-kinds=definite,possible --suppressions=scripts/valgrind.supp \
      "$t" >"$t.valgrind.log" 2>&1; then
    echo "valgrind: $(basename "$t") clean ($((SECONDS - start)) s)"
  else
    echo "valgrind: $(basename "$t") FAILED" >&2
    grep -E '^==[0-9]+==|FAILED|ERROR' "$t.valgrind.log" | head -60 >&2
    return 1
  fi
}
vg_pass=0 vg_fail=0 running=0
vg_reap() {  # waits for whichever program finishes first and counts it
  if wait -n; then vg_pass=$((vg_pass + 1)); else vg_fail=$((vg_fail + 1)); fi
  running=$((running - 1))
}
for t in build/tests/test_*; do
  [ -x "$t" ] || continue
  vg_one "$t" &
  running=$((running + 1))
  [ "$running" -lt "$jobs" ] || vg_reap
done
while [ "$running" -gt 0 ]; do vg_reap; done
echo "valgrind: $vg_pass passed, $vg_fail failed"
[ "$vg_fail" -eq 0 ] && [ "$vg_pass" -gt 0 ]
echo "== every stage passed in ${SECONDS} s"
